// Choice of the server executable. No `vscode` import: unit-tested.
import * as os from 'node:os';
import * as path from 'node:path';

export interface ServerPathInput {
  /** The `multiedit.server.path` setting. */
  configured?: string | null;
  /** Whether the workspace is trusted (an untrusted one may not pick the executable). */
  trusted: boolean;
  /** Absolute path of the binary bundled in the extension. */
  bundled: string;
  exists(p: string): boolean;
}

export interface ServerPathChoice {
  command: string;
  source: 'setting' | 'bundled' | 'PATH';
}

export function expandHome(p: string): string {
  if (p === '~') return os.homedir();
  if (p.startsWith('~/') || p.startsWith('~\\')) return path.join(os.homedir(), p.slice(2));
  return p;
}

/** Setting (in a trusted workspace) → bundled binary → `multiedit` on PATH. */
export function chooseServerPath(input: ServerPathInput): ServerPathChoice {
  const configured = input.configured?.trim();
  if (configured && input.trusted) return { command: expandHome(configured), source: 'setting' };
  if (input.exists(input.bundled)) return { command: input.bundled, source: 'bundled' };
  return { command: process.platform === 'win32' ? 'multiedit.exe' : 'multiedit', source: 'PATH' };
}

/** Finds an executable on PATH (or checks a path containing a separator); undefined when absent. */
export function findExecutable(command: string, env: NodeJS.ProcessEnv, isFile: (p: string) => boolean): string | undefined {
  if (command.includes('/') || command.includes('\\')) return isFile(command) ? command : undefined;
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
  const exts = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      if (isFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The commands that put `multiedit` on PATH, named when no server can be found. */
export const INSTALL_COMMANDS = ['cargo install multiedit', 'pipx install multiedit', 'npm install -g multiedit'] as const;

/**
 * What to tell the user when the chosen server executable does not exist: for PATH (nothing bundled
 * for this platform), how to install one and which setting points at it; never a stack trace.
 */
export function noServerMessage(choice: ServerPathChoice, platform = `${process.platform}-${process.arch}`): string {
  if (choice.source === 'PATH') {
    const [first, ...others] = INSTALL_COMMANDS.map((c) => `\`${c}\``);
    return (
      `MultiEdit: no server found: this extension bundles none for ${platform} and \`${choice.command}\` is not on PATH. ` +
      `Install it with ${first} (or ${others.join(', ')}), then run "MultiEdit: Restart Server"; ` +
      `or set "multiedit.server.path" to the executable.`
    );
  }
  return `MultiEdit: could not start the server: ${choice.command} does not exist.${choice.source === 'setting' ? ' Check the "multiedit.server.path" setting.' : ''}`;
}
