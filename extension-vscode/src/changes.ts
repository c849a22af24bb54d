// After an apply, every change is seen: the changed ranges are highlighted for a moment (the edited
// files no tab showed were opened as the edit was applied: client.ts, tabs.ts).
import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import { filesLeft } from './tabs';
import { uriOf } from './util';
import { hasConfirmation, LspWorkspaceEdit, rangesAfterEdits } from './workspaceEdit';

/** After an apply: the changed ranges highlighted for a moment in the visible editors, so every change is seen. */
export async function showChanges(ctx: Ctx, edit: LspWorkspaceEdit | undefined): Promise<void> {
  // A deleted file is gone; a renamed one is highlighted at its new place.
  const files = filesLeft(edit);
  if (!files.length) return;
  ctx.shown({ openedFiles: ctx.client.lastOpenedFiles });
  if (edit && hasConfirmation(edit)) return; // after a review, what was kept is not known here
  const highlighted = ctx.highlighter.show(
    files.map((f) => ({
      uri: uriOf(f.uri),
      ranges: rangesAfterEdits(f.edits).map((r) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character)),
    })),
  );
  ctx.shown({ highlighted });
}
