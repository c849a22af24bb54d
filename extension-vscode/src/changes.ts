// After an apply, every change is seen: edited files no tab shows are opened, and the changed ranges
// are highlighted for a moment.
import * as vscode from 'vscode';
import { openEditedFiles } from './config';
import type { Ctx } from './ctx';
import { uriOf } from './util';
import { hasConfirmation, LspWorkspaceEdit, rangesAfterEdits, workspaceEditFiles } from './workspaceEdit';

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
    ctx.shown({ openedFiles: opened });
  }
  if (edit && hasConfirmation(edit)) return; // after a review, what was kept is not known here
  const highlighted = ctx.highlighter.show(
    files.map((f) => ({
      uri: uriOf(f.uri),
      ranges: rangesAfterEdits(f.edits).map((r) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character)),
    })),
  );
  ctx.shown({ highlighted });
}
