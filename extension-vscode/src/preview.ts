// The palette's preview: the changes as a diff (read-only documents of a private scheme), then
// "Apply" or "Cancel".
import { applyPlan, notifyRefusal, notifyResult, PlanSource } from './apply';
import type { Ctx } from './ctx';
import { PlanResult } from './lsp_ext';
import { EditRequest, isPatchRequest } from './plan';
import { PREVIEW_SCHEME, PreviewContent } from './previewContent';
import { planTitle } from './render';
import { uriOf } from './util';
import { applyTextEdits, LspWorkspaceEdit, workspaceEditFiles } from './workspaceEdit';
import * as path from 'node:path';
import * as vscode from 'vscode';

async function closePreviewTabs(): Promise<void> {
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
async function previewEntries(previews: PreviewContent, edit: LspWorkspaceEdit | undefined): Promise<[vscode.Uri, vscode.Uri, vscode.Uri][]> {
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

/**
 * Shows the changes as a diff, then offers to apply them. A plan's: each file's diff; a patch's: the
 * unified diff the server answers (renamed and deleted files included), read-only.
 */
export async function previewWithUi(ctx: Ctx, plan: EditRequest, source?: PlanSource): Promise<void> {
  let result: PlanResult;
  try {
    result = await ctx.client.preview(plan);
  } catch (err) {
    await notifyRefusal(ctx, err, plan, source);
    return;
  }
  const title = `MultiEdit Preview: ${planTitle(plan, result)}`;
  const entries = await previewEntries(ctx.previews, result.edit as LspWorkspaceEdit | undefined);
  if (isPatchRequest(plan) && result.diff) {
    const doc = await vscode.workspace.openTextDocument(ctx.previews.add(`/MultiEdit Preview of the patch.diff`, result.diff));
    if (doc.languageId !== 'diff') await Promise.resolve(vscode.languages.setTextDocumentLanguage(doc, 'diff')).catch(() => undefined);
    await vscode.window.showTextDocument(doc, { preview: true });
  } else if (entries.length === 1) {
    await vscode.commands.executeCommand('vscode.diff', entries[0][1], entries[0][2], title, { preview: true });
  } else if (entries.length > 1) {
    await vscode.commands.executeCommand('vscode.changes', title, entries);
  } else if (result.diff) {
    const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: result.diff });
    await vscode.window.showTextDocument(doc, { preview: true });
  }
  const preview = { title, diff: result.diff ?? null, entries: entries.map(([, l, r]) => [l.toString(), r.toString()]) };
  const text = `MultiEdit: apply ${planTitle(plan, result)}?`;
  ctx.shown({ preview, notification: text });
  const pick = await vscode.window.showInformationMessage(text, 'Apply', 'Cancel');
  await closePreviewTabs();
  if (pick !== 'Apply') return;
  try {
    await notifyResult(ctx, await applyPlan(ctx, plan, { source }), plan);
  } catch (err) {
    await notifyRefusal(ctx, err, plan, source);
  }
}
