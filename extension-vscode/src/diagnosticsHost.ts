// Answers the server's `multiedit/diagnostics` from VS Code's diagnostics (every extension's
// language servers): `vscode.languages.getDiagnostics` for the snapshots, `onDidChangeDiagnostics` to
// know when the documents of an applied plan have been checked again.
import * as vscode from 'vscode';
import { ChangeRecorder, hasProvider, idleTime, toLsp } from './diagnostics';
import { DiagnosticsAnswer, DiagnosticsParams, ReportedDiagnostic } from './lsp_ext';
import { LspWorkspaceEdit } from './workspaceEdit';

const key = (uri: string) => vscode.Uri.parse(uri).toString();

/** The documents a WorkspaceEdit edits (as URI keys). */
function editedKeys(edit: LspWorkspaceEdit | undefined): Set<string> {
  const keys = new Set<string>();
  for (const change of (edit?.documentChanges ?? []) as { textDocument?: { uri?: string } }[]) {
    if (change.textDocument?.uri) keys.add(key(change.textDocument.uri));
  }
  for (const uri of Object.keys(edit?.changes ?? {})) keys.add(key(uri));
  return keys;
}

export class DiagnosticsHost implements vscode.Disposable {
  private recorder: ChangeRecorder | undefined;
  /** Languages some language server has published diagnostics for in this session. */
  private readonly seenLanguages = new Set<string>();
  /** The documents of the current plan that were open before its edit (the "before" phase). */
  private openBefore = new Set<string>();
  /** Per language, how long its servers took to publish after a plan's edit (the last 20). */
  private readonly latencies = new Map<string, number[]>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.disposables.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) {
          if (vscode.languages.getDiagnostics(uri).length === 0) continue;
          const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
          if (doc) this.seenLanguages.add(doc.languageId);
        }
        this.recorder?.record(e.uris.map((u) => u.toString()));
      }),
    );
  }

  /** A plan's WorkspaceEdit is about to be applied: record diagnostics changes from now on. */
  editStarting(edit: LspWorkspaceEdit | undefined): void {
    this.recorder = new ChangeRecorder(editedKeys(edit));
  }

  /** ... and VS Code has applied it (after the user's review, if there was one). */
  editApplied(): void {
    this.recorder?.applied();
  }

  private languageOf(k: string): string | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === k)?.languageId;
  }

  private providerFor(k: string): boolean {
    const languageId = this.languageOf(k);
    if (!languageId) return false;
    const events = vscode.extensions.all.flatMap((e) => (e.id === 'multiedit.multiedit' ? [] : ((e.packageJSON?.activationEvents as string[] | undefined) ?? [])));
    return hasProvider(languageId, this.seenLanguages, events);
  }

  private snapshot(uris: string[]): Record<string, ReportedDiagnostic[]> {
    return Object.fromEntries(uris.map((u) => [u, vscode.languages.getDiagnostics(vscode.Uri.parse(u)).map(toLsp)]));
  }

  async handle(params: DiagnosticsParams): Promise<DiagnosticsAnswer> {
    const uris = Array.isArray(params?.uris) ? params.uris.filter((u): u is string => typeof u === 'string') : [];
    const keys = uris.map(key);
    if (params?.phase !== 'after') {
      this.openBefore = new Set(keys.filter((k) => this.languageOf(k) !== undefined));
      return { diagnostics: this.snapshot(uris) };
    }
    const asked = performance.now();
    const recorder = this.recorder && keys.every((k) => this.recorder!.keys.has(k)) ? this.recorder : new ChangeRecorder(new Set(keys));
    const waitFor = keys.filter((k) => this.providerFor(k));
    // Silence means "unchanged" only for a document its language server had already checked: one
    // opened by the edit itself is waited for up to the bound.
    const idle = (k: string) => (this.openBefore.has(k) ? idleTime(this.latencies.get(this.languageOf(k) ?? '') ?? []) : Number.POSITIVE_INFINITY);
    const settled = await recorder.settle(waitFor, typeof params.settleMs === 'number' ? params.settleMs : 2000, idle);
    // Learned from documents already checked before the edit (a first check takes longer).
    for (const k of waitFor) {
      const at = recorder.changed.get(k);
      const languageId = this.languageOf(k);
      if (at === undefined || !languageId || !this.openBefore.has(k)) continue;
      const seen = this.latencies.get(languageId) ?? [];
      this.latencies.set(languageId, [...seen, at - recorder.started].slice(-20));
    }
    const pending = uris.filter((_, i) => settled.pending.includes(keys[i]));
    const quiet = uris.filter((_, i) => settled.quiet.includes(keys[i]));
    const unchecked = uris.filter((_, i) => !waitFor.includes(keys[i]));
    this.log.info(
      `diagnostics: ${uris.length} document(s), waited ${settled.waitedMs} ms` +
        (settled.publishedMs !== undefined ? ` (last update ${settled.publishedMs} ms after the edit)` : '') +
        (pending.length ? `; still pending: ${pending.join(', ')}` : '') +
        (quiet.length ? `; no update for ${quiet.join(', ')}` : '') +
        (unchecked.length ? `; no language server for ${unchecked.join(', ')}` : '') +
        `; answered ${Math.round(performance.now() - asked)} ms after the request`,
    );
    return { diagnostics: this.snapshot(uris), pending, quiet, unchecked, waitedMs: settled.waitedMs, publishedMs: settled.publishedMs };
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
