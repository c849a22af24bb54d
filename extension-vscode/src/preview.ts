// The palette's preview: the changes as a diff (read-only documents of a private scheme), then
// "Apply" or "Cancel".
import * as vscode from 'vscode';
import { applyPlan, notifyRefusal, notifyResult, PlanSource } from './apply';
import type { Ctx } from './ctx';
import { PlanResult } from './lsp_ext';
import { EditRequest, isPatchRequest } from './plan';
import { closePreviewTabs, previewEntries } from './previewContent';
import { planTitle } from './render';
import { LspWorkspaceEdit } from './workspaceEdit';

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
