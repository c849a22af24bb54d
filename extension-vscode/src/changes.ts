// After an apply, every change is seen: edited files no tab shows are opened, and the changed ranges
// are highlighted for a moment.
import * as vscode from 'vscode';
import { openEditedFiles } from './config';
import type { Ctx } from './ctx';
import { uriOf } from './ctx';
import { LspWorkspaceEdit, hasConfirmation, rangesAfterEdits, workspaceEditFiles } from './render';

const HIGHLIGHT_MS = 2500;
const PENDING_HIGHLIGHT_MS = 15_000;

/**
 * Highlights changed ranges: at once in the visible editors, and in files shown in the next seconds
 * (a tab opened in the background and then clicked) when they come into view.
 */
export class Highlighter implements vscode.Disposable {
  private decorations: { added: vscode.TextEditorDecorationType; removed: vscode.TextEditorDecorationType } | undefined;
  private readonly pending = new Map<string, { ranges: vscode.Range[]; until: number }>();
  private readonly disposables: vscode.Disposable[] = [
    vscode.window.onDidChangeVisibleTextEditors((editors) => this.highlightVisible(editors)),
    // A highlight waiting for its editor is stale once the text changes.
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length) this.pending.delete(e.document.uri.toString());
    }),
  ];

  /** Highlights `ranges` of each file; returns how many ranges. */
  show(files: { uri: vscode.Uri; ranges: vscode.Range[] }[]): number {
    this.decorations ??= {
      added: vscode.window.createTextEditorDecorationType({
        backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
        overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
      }),
      removed: vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
      }),
    };
    this.pending.clear();
    let count = 0;
    for (const f of files) {
      this.pending.set(f.uri.toString(), { ranges: f.ranges, until: Date.now() + PENDING_HIGHLIGHT_MS });
      count += f.ranges.length;
    }
    this.highlightVisible(vscode.window.visibleTextEditors);
    return count;
  }

  private highlightVisible(editors: readonly vscode.TextEditor[]): void {
    const h = this.decorations;
    if (!h) return;
    for (const editor of editors) {
      const key = editor.document.uri.toString();
      const pending = this.pending.get(key);
      if (!pending) continue;
      this.pending.delete(key);
      if (pending.until < Date.now()) continue;
      editor.setDecorations(h.added, pending.ranges.filter((r) => !r.isEmpty));
      editor.setDecorations(h.removed, pending.ranges.filter((r) => r.isEmpty));
      setTimeout(() => {
        editor.setDecorations(h.added, []);
        editor.setDecorations(h.removed, []);
      }, HIGHLIGHT_MS);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.decorations?.added.dispose();
    this.decorations?.removed.dispose();
  }
}

/**
 * After an apply: edited files that no tab shows are opened as tabs (`multiedit.openEditedFiles`),
 * and the changed ranges are highlighted for a moment in the visible editors, so every change is seen.
 */
export async function showChanges(ctx: Ctx, edit: LspWorkspaceEdit | undefined): Promise<void> {
  // A deleted file is gone; a renamed one is shown (and highlighted) at its new place.
  const files = workspaceEditFiles(edit)
    .filter((f) => f.kind !== 'delete')
    .map((f) => (f.newUri ? { ...f, uri: f.newUri } : f));
  if (!files.length) return;
  if (openEditedFiles()) {
    const shown = new Set(
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .map((t) => (t.input instanceof vscode.TabInputText ? t.input.uri.toString() : undefined))
        .filter(Boolean),
    );
    const active = vscode.window.activeTextEditor;
    let opened = 0;
    for (const f of files) {
      const uri = uriOf(f.uri);
      if (shown.has(uri.toString())) continue;
      try {
        await vscode.window.showTextDocument(uri, { preview: false, preserveFocus: true });
        opened++;
      } catch (e) {
        ctx.log.warn(`could not open ${uri.fsPath}: ${e}`);
      }
    }
    // Opening tabs must not take the user away from the editor they were in.
    if (opened && active && !active.document.isClosed) {
      await vscode.window.showTextDocument(active.document, { viewColumn: active.viewColumn, preserveFocus: false, preview: false });
    }
    ctx.state.openedFiles = opened;
  }
  if (edit && hasConfirmation(edit)) return; // after a review, what was kept is not known here
  ctx.state.highlighted = ctx.highlighter.show(
    files.map((f) => ({
      uri: uriOf(f.uri),
      ranges: rangesAfterEdits(f.edits).map((r) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character)),
    })),
  );
}
