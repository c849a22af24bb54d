// The read-only documents a preview shows (the proposed side of each diff), under a scheme of our own,
// and the diff entries of a WorkspaceEdit made of them.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { uriOf } from './util';
import { applyTextEdits, LspWorkspaceEdit, workspaceEditFiles } from './workspaceEdit';

export const PREVIEW_SCHEME = 'multiedit-preview';

/** The texts of the preview documents (the proposed side of each diff). */
export class PreviewContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private counter = 0;

  add(label: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: label, query: String(++this.counter) });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

export async function closePreviewTabs(): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  const ours = tabs.filter((t) => {
    const input = t.input;
    if (input instanceof vscode.TabInputTextDiff) return input.modified.scheme === PREVIEW_SCHEME;
    if (input instanceof vscode.TabInputText) return input.uri.scheme === PREVIEW_SCHEME;
    return (input as { textDiffs?: unknown[] } | undefined)?.textDiffs !== undefined && t.label.startsWith('MultiEdit');
  });
  if (ours.length) await vscode.window.tabGroups.close(ours, true);
}

/**
 * The diff entries of a preview's WorkspaceEdit, [file, before, after] for `vscode.changes`: a new
 * file against an empty text, a renamed file shown under its new name, a deleted one against nothing.
 */
export async function previewEntries(previews: PreviewContent, edit: LspWorkspaceEdit | undefined): Promise<[vscode.Uri, vscode.Uri, vscode.Uri][]> {
  const entries: [vscode.Uri, vscode.Uri, vscode.Uri][] = [];
  for (const f of workspaceEditFiles(edit)) {
    const uri = uriOf(f.uri);
    let original = '';
    if (f.kind !== 'create') {
      try {
        original = (await vscode.workspace.openTextDocument(uri)).getText();
      } catch {
        original = '';
      }
    }
    let proposed: string;
    try {
      proposed = f.kind === 'delete' ? '' : applyTextEdits(original, f.edits);
    } catch {
      continue;
    }
    const name = path.basename(uri.fsPath);
    const left = f.kind === 'create' ? previews.add(`${name} (new file)`, '') : uri;
    let right: vscode.Uri;
    if (f.kind === 'rename' && f.newUri) {
      const to = uriOf(f.newUri);
      right = previews.add(`${to.path} (renamed from ${name})`, proposed);
    } else if (f.kind === 'delete') right = previews.add(`${uri.path} (deleted)`, '');
    else right = previews.add(uri.path, proposed);
    entries.push([uri, left, right]);
  }
  return entries;
}
