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
