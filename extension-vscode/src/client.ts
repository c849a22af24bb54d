// The language client: starts `multiedit lsp` over stdio, restarts it on settings changes and
// sends the server's `multiedit.apply` / `multiedit.preview` commands.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';
import { affectsServer, formatEdits, openEditedFiles, reviewPolicy, serverSettings } from './config';
import { DiagnosticsHost } from './diagnosticsHost';
import { formatTouched } from './formatHost';
import * as ext from './lsp_ext';
import { PlanResult, SERVER_APPLY, SERVER_PREVIEW, SERVER_SYMBOLS, SymbolsResult } from './lsp_ext';
import { EditRequest, reviewArgument, serverArguments } from './plan';
import { isPlanResult } from './render';
import { SaveHost } from './saveHost';
import { ApproveHost } from './approveHost';
import { Positions, SymbolsHost } from './symbolsHost';
import { PreviewContent } from './previewContent';
import { openUnshown } from './tabs';
import { chooseServerPath, findExecutable, INSTALL_COMMANDS, noServerMessage, type ServerPathChoice } from './serverPath';
import { LspWorkspaceEdit } from './workspaceEdit';


export class ServerError extends Error {
  constructor(
    message: string,
    readonly data?: unknown,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'ServerError';
  }
}

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

export class MultiEditClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  /** The server's state, for the status bar: starting, running, stopped, failed. */
  readonly onDidChangeServerState = this.stateEmitter.event;
  serverState: ServerState = 'stopped';
  /** How many of its files no tab showed and were opened (`multiedit.openEditedFiles`). */
  lastOpenedFiles = 0;
  /** The running plan's own `format_edits`; unset, the setting decides (an agent's plan over the bridge). */
  private formatNext: boolean | undefined;
  private readonly appliedEmitter = new vscode.EventEmitter<string>();
  /** An edit of the server was applied in the buffers (a plan of this window's, or an agent's over the bridge): its label. */
  readonly onDidApplyEdit = this.appliedEmitter.event;
  /** Answers the server's multiedit/diagnostics. */
  private readonly diagnostics: DiagnosticsHost;
  /** Answers the server's multiedit/save. */
  readonly saves: SaveHost;
  /** Answers the server's multiedit/approve. */
  private readonly approvals: ApproveHost;
  /** Answers the server's multiedit/symbols and multiedit/rename. */
  private readonly symbolsHost: SymbolsHost;

  private setState(state: ServerState): void {
    this.serverState = state;
    this.stateEmitter.fire(state);
  }

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
    previews: PreviewContent,
  ) {
    this.diagnostics = new DiagnosticsHost(log);
    this.saves = new SaveHost(log);
    this.approvals = new ApproveHost(previews, log);
    this.symbolsHost = new SymbolsHost(log, () => new Positions(this.client?.initializeResult?.capabilities.positionEncoding ?? 'utf-16'));
    this.disposables.push(
      this.diagnostics,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsServer(e)) {
          this.log.info('server settings changed; restarting the server');
          void this.restart().catch(() => undefined);
        }
      }),
    );
  }

  /** The executable the client starts, and where it was found. */
  serverCommand(): ServerPathChoice {
    const exe = process.platform === 'win32' ? 'multiedit.exe' : 'multiedit';
    const bundled = path.join(this.context.extensionPath, 'bin', exe);
    return chooseServerPath({
      configured: serverSettings().path,
      trusted: vscode.workspace.isTrusted,
      bundled,
      exists: (p) => fs.existsSync(p),
    });
  }

  /** Starts the server if it is not running; resolves with the running client. */
  async ensureStarted(): Promise<LanguageClient> {
    if (this.client && this.client.state === State.Running) return this.client;
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async start(): Promise<LanguageClient> {
    this.setState('starting');
    try {
      const client = await this.startClient();
      this.setState('running');
      client.onDidChangeState((e) => {
        if (this.client === client) this.setState(e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped');
      });
      return client;
    } catch (err) {
      this.setState('failed');
      throw err;
    }
  }

  private async startClient(): Promise<LanguageClient> {
    if (this.client) {
      const old = this.client;
      this.client = undefined;
      await old.dispose().catch(() => undefined);
    }
    const settings = serverSettings();
    const { command, source } = this.serverCommand();
    if (source === 'bundled') {
      try {
        fs.accessSync(command, fs.constants.X_OK);
      } catch {
        try {
          fs.chmodSync(command, 0o755);
        } catch (e) {
          this.log.warn(`could not make ${command} executable: ${e}`);
        }
      }
    }
    const env = { ...process.env, ...settings.extraEnv };
    const isFile = (p: string) => {
      try {
        return fs.statSync(p).isFile();
      } catch {
        return false;
      }
    };
    if (!findExecutable(command, env, isFile)) {
      const message = noServerMessage({ command, source });
      this.log.error(message);
      void showErrorWithLogs(message, this.log, 'Open Settings').then((pick) => {
        if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'multiedit.server');
      });
      throw new ServerError(message);
    }
    // The server sends its log as window/logMessage at each line's level; lines below the channel's
    // level (Developer: Set Log Level...) are not even sent. Routine "applied ..." lines are LSP `log`
    // messages, which the client prints at info, so info and below ask for everything.
    const args = ['lsp', '--log-level', serverLogLevel(this.log.logLevel), ...settings.extraArgs];
    this.log.info(`starting the server (${source}): ${command} ${args.join(' ')}`);
    const run = { command, args, options: { env } };
    const serverOptions: ServerOptions = { run, debug: run };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
      initializationOptions: {
        allowOutsideWorkspace: settings.allowOutsideWorkspace,
        bridge: settings.bridge,
        review: settings.review,
        // Agents outside VS Code (MCP): their own client asked the user already, unless this is set.
        agentReview: settings.approveAgentPlans ? 'always' : 'never',
        // An approval waits for the user: give it time (the server bounds an agent's own wait).
        applyEditTimeoutMs: 30 * 60 * 1000,
        // What an applied plan did to the diagnostics of the edited files, answered by this.diagnostics.
        diagnostics: settings.diagnostics,
        // Which edited files are saved once a plan is applied, answered by this.saves.
        save: settings.save,
        // What agents' plans may write without asking (the server's gate); the user's settings only.
        allowAgentConfig: settings.allowAgentConfig,
        allowDotGit: settings.allowDotGit,
      },
      middleware: {
        workspace: {
          // Seen on its way to VS Code: the edit of each plan, to highlight what changed.
          handleApplyEdit: async (params, next) => {
            // The formatted text goes into the same WorkspaceEdit: one undo step, applied once.
            if (this.formatNext ?? formatEdits()) {
              params = { ...params, edit: (await formatTouched(params.edit as LspWorkspaceEdit, this.log)) as typeof params.edit };
            }
            this.diagnostics.editStarting(params.edit as LspWorkspaceEdit);
            const result = await next(params, undefined as never);
            this.diagnostics.editApplied();
            if (result && !(result instanceof Error) && (result as { applied?: boolean }).applied) {
              // Before the answer, so before the server asks to save: a saved document nothing shows
              // would be dropped, and its diagnostics with it.
              this.lastOpenedFiles = openEditedFiles() ? await openUnshown(params.edit as LspWorkspaceEdit, this.log) : 0;
              this.appliedEmitter.fire(params.label ?? 'MultiEdit');
            }
            return result;
          },
        },
      },
      initializationFailedHandler: (err) => {
        this.log.error(`the server failed to initialize: ${err}`);
        return false;
      },
    };
    const client = new LanguageClient('multiedit', 'MultiEdit', serverOptions, clientOptions);
    // Each request typed with its params and answer (lsp_ext.ts), under the server's own method names.
    client.onRequest(ext.diagnostics, (params) => this.diagnostics.handle(params));
    client.onRequest(ext.save, (params) => this.saves.handle(params));
    client.onRequest(ext.approve, (params) => this.approvals.handle(params));
    client.onRequest(ext.symbols, (params) => this.symbolsHost.symbols(params));
    client.onRequest(ext.rename, (params) => this.symbolsHost.rename(params));
    // LSP has no request to save a document, nor one for a single approval of a whole edit, nor for a
    // client to give its other language servers' symbols and renames: multiedit's are announced as
    // experimental capabilities.
    client.registerFeature({
      fillClientCapabilities: (capabilities) => {
        capabilities.experimental = { ...(capabilities.experimental as object | undefined), multiedit: { save: true, approve: true, symbols: true, rename: true } };
      },
      initialize: () => undefined,
      getState: () => ({ kind: 'static' }),
      clear: () => undefined,
    });
    try {
      await client.start();
    } catch (err) {
      await client.dispose().catch(() => undefined);
      const hint =
        source === 'PATH'
          ? `No server is bundled with this extension for this platform; install one with ${INSTALL_COMMANDS.map((c) => `\`${c}\``).join(' or ')}, or set "multiedit.server.path".`
          : source === 'setting'
            ? 'Check the "multiedit.server.path" setting.'
            : '';
      const message = `MultiEdit: could not start the server ${command}: ${(err as Error)?.message ?? err}. ${hint}`.trim();
      this.log.error(message);
      void showErrorWithLogs(message, this.log);
      throw new ServerError(message);
    }
    this.client = client;
    const info = client.initializeResult?.serverInfo;
    this.log.info(`server started${info ? `: ${info.name} ${info.version ?? ''}` : ''}`);
    return client;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.ensureStarted();
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) await c.stop().catch(() => undefined);
    this.setState('stopped');
  }

  isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  private async execute(command: string, plan: EditRequest, agent?: string): Promise<PlanResult> {
    const client = await this.ensureStarted();
    const args = serverArguments(plan, reviewArgument(plan, reviewPolicy()), agent);
    this.log.info(`${command}: ${JSON.stringify(args).slice(0, 2000)}`);
    let result: unknown;
    try {
      result = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    } catch (err) {
      const e = err as { message?: string; data?: unknown; code?: number };
      this.log.warn(`${command} refused: ${e.message ?? err}${e.data ? ` ${JSON.stringify(e.data)}` : ''}`);
      throw new ServerError(e.message ?? String(err), e.data, e.code);
    }
    if (!isPlanResult(result)) {
      this.log.error(`${command}: unexpected result ${JSON.stringify(result)}`);
      throw new ServerError(`Unexpected answer from the server: ${JSON.stringify(result)}`);
    }
    this.log.info(`${command}: ${result.message}`);
    return result;
  }

  /** Applies `plan`; `agent`: who sent it, for the edit's label. A plan's `format_edits` overrides the setting. */
  async apply(plan: EditRequest, agent?: string): Promise<PlanResult> {
    const own = (plan as { format_edits?: unknown }).format_edits;
    this.formatNext = typeof own === 'boolean' ? own : undefined;
    try {
      return await this.execute(SERVER_APPLY, plan, agent);
    } finally {
      this.formatNext = undefined;
    }
  }

  preview(plan: EditRequest): Promise<PlanResult> {
    return this.execute(SERVER_PREVIEW, plan);
  }

  /** A file's outline from the language servers (`multiedit.symbols`). */
  /** `agent`: the caller the server keeps an edit's late diagnostics for (as a plan's options name it). */
  async symbols(filePath: string, agent?: string): Promise<SymbolsResult> {
    const client = await this.ensureStarted();
    try {
      const args: unknown[] = agent ? [{ file_path: filePath }, { agent }] : [{ file_path: filePath }];
      return (await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_SYMBOLS, arguments: args })) as SymbolsResult;
    } catch (err) {
      const e = err as { message?: string; data?: unknown; code?: number };
      this.log.warn(`${SERVER_SYMBOLS} refused: ${e.message ?? err}`);
      throw new ServerError(e.message ?? String(err), e.data, e.code);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.stateEmitter.dispose();
    this.appliedEmitter.dispose();
    void this.stop();
  }
}

/** The server's `--log-level` for the output channel's level. */
export function serverLogLevel(level: vscode.LogLevel): string {
  // vscode.LogLevel: Off 0, Trace 1, Debug 2, Info 3, Warning 4, Error 5
  if (level >= 1 && level <= 3) return 'debug';
  return level === 4 ? 'warn' : 'error';
}

export async function showErrorWithLogs(message: string, log: vscode.LogOutputChannel, ...extra: string[]): Promise<string | undefined> {
  const pick = await vscode.window.showErrorMessage(message, 'Show Logs', ...extra);
  if (pick === 'Show Logs') log.show(true);
  return pick;
}
