// The extension's one piece of state: the language client, the status bar item, what the last
// operations did, and the editor-side helpers every module is handed (no module keeps state).
import * as vscode from 'vscode';
import { MultiEditClient } from './client';
import { Highlighter } from './highlight';
import { PlanResult } from './lsp_ext';
import { PreviewContent } from './previewContent';
import { Refusal } from './render';
import { LastOutcome, statusText } from './status';

/** What the last applied plan left in place, for "Undo Last Applied Plan". */
export interface LastApplied {
  files: string[];
  result: PlanResult;
}

/**
 * What the extension just showed the user or a model. Nothing in the extension reads it back: it is an
 * event so that the end-to-end tests' commands (testCommands.ts) can record what a user would have seen.
 */
export interface Shown {
  refusal?: Refusal;
  notification?: string;
  toolResult?: string;
  preview?: { title: string; diff: string | null; entries: string[][] };
  status?: { text: string; tooltip: string };
  openedFiles?: number;
  highlighted?: number;
}

export class Ctx implements vscode.Disposable {
  readonly client: MultiEditClient;
  lastApplied: LastApplied | undefined;
  private readonly shownEmitter = new vscode.EventEmitter<Shown>();
  readonly onDidShow = this.shownEmitter.event;
  /** Diagnostics on plan files: the edit a refusal names, until the plan changes. */
  readonly planDiagnostics = vscode.languages.createDiagnosticCollection('multiedit');
  readonly previews: PreviewContent;
  readonly highlighter = new Highlighter();
  private readonly statusItem = vscode.window.createStatusBarItem('multiedit.status', vscode.StatusBarAlignment.Right, 100);
  private lastOutcome: LastOutcome | undefined;
  /** Recently active text editors' documents (most recent first), to find a plan's target. */
  private readonly recent: vscode.Uri[] = [];
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    this.previews = new PreviewContent();
    this.client = new MultiEditClient(context, log, this.previews);
    this.statusItem.name = 'MultiEdit';
    this.statusItem.command = 'multiedit.showLogs';
    this.disposables.push(
      this.client,
      this.statusItem,
      this.planDiagnostics,
      this.highlighter,
      this.shownEmitter,
      this.client.onDidChangeServerState(() => this.updateStatus()),
      // Every edit, an agent's over the bridge too, is logged and shown by who made it.
      this.client.onDidApplyEdit((label) => {
        log.info(`edit applied in the buffers: ${label}`);
        this.updateStatus({ outcome: 'applied', text: label });
      }),
      vscode.window.onDidChangeActiveTextEditor((e) => this.rememberEditor(e)),
      // The mark on a failing edit holds until the plan changes.
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && this.planDiagnostics.has(e.document.uri)) this.planDiagnostics.delete(e.document.uri);
      }),
      vscode.workspace.onDidCloseTextDocument((d) => this.planDiagnostics.delete(d.uri)),
    );
    this.updateStatus();
    this.statusItem.show();
    this.rememberEditor(vscode.window.activeTextEditor);
  }

  /** Shows the server's state and, given one, the outcome of the plan that just ran. */
  updateStatus(outcome?: Omit<LastOutcome, 'time'>): void {
    if (outcome) this.lastOutcome = { ...outcome, time: new Date() };
    const s = statusText(this.client.serverState, this.lastOutcome);
    this.statusItem.text = s.text;
    this.statusItem.tooltip = s.tooltip;
    this.statusItem.backgroundColor = s.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.shown({ status: { text: s.text, tooltip: s.tooltip } });
  }

  private rememberEditor(editor: vscode.TextEditor | undefined): void {
    if (!editor) return;
    const uri = editor.document.uri;
    if (uri.scheme !== 'file' && uri.scheme !== 'untitled') return;
    const i = this.recent.findIndex((u) => u.toString() === uri.toString());
    if (i >= 0) this.recent.splice(i, 1);
    this.recent.unshift(uri);
    this.recent.length = Math.min(this.recent.length, 20);
  }

  /** Tells the listeners (the test commands) what was just shown. */
  shown(what: Shown): void {
    this.shownEmitter.fire(what);
  }

  /** The documents of the recently active editors, most recent first. */
  recentDocuments(): readonly vscode.Uri[] {
    return this.recent;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
