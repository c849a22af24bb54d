// Opening the files an edit changed that no tab shows, in the background: the user sees every change,
// and the editor keeps a document it saved for the language servers (VS Code drops a saved document
// that nothing shows, and its diagnostics with it).
import * as vscode from 'vscode';
import { uriOf } from './util';
import { LspWorkspaceEdit, workspaceEditFiles } from './workspaceEdit';

/** The files an edit leaves in place: a renamed one at its new place, a deleted one not at all. */
export function filesLeft(edit: LspWorkspaceEdit | undefined) {
  return workspaceEditFiles(edit)
    .filter((f) => f.kind !== 'delete')
    .map((f) => (f.newUri ? { ...f, uri: f.newUri } : f));
}

/** Tabs opened for one edit at most: a plan over hundreds of files (a rename) must not bury the user's own tabs. */
export const MAX_OPENED = 10;

/** Opens, as tabs that keep the focus where it was, the edit's files that no tab shows (at most `MAX_OPENED`); returns how many. */
export async function openUnshown(edit: LspWorkspaceEdit | undefined, log: vscode.LogOutputChannel): Promise<number> {
  const shown = new Set(
    vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .map((t) => (t.input instanceof vscode.TabInputText ? t.input.uri.toString() : undefined))
      .filter(Boolean),
  );
  const active = vscode.window.activeTextEditor;
  let opened = 0;
  for (const f of filesLeft(edit)) {
    const uri = uriOf(f.uri);
    if (shown.has(uri.toString())) continue;
    if (opened === MAX_OPENED) break;
    try {
      await vscode.window.showTextDocument(uri, { preview: false, preserveFocus: true });
      opened++;
    } catch (e) {
      log.warn(`could not open ${uri.fsPath}: ${e}`);
    }
  }
  // Opening tabs must not take the user away from the editor they were in.
  if (opened && active && !active.document.isClosed) {
    await vscode.window.showTextDocument(active.document, { viewColumn: active.viewColumn, preserveFocus: false, preview: false });
  }
  return opened;
}
