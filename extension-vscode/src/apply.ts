// Running a prepared plan or patch through the server, and telling the user what came of it: the
// notification, the status bar, the log, and on a plan file the mark on the edit that failed.
import * as vscode from 'vscode';
import { showChanges } from './changes';
import type { Ctx } from './ctx';
import { fileIndexOf, hintLines, locateEdit } from './locate';
import { PlanResult } from './lsp_ext';
import { EditRequest, isPatchRequest, PlanError } from './plan';
import { isPartial, planTitle, Refusal, refusalLocation, renderApplyNotification, renderRefusalNotification, renderRefusalText, toRefusal } from './render';
import { uriOf } from './util';
import { LspWorkspaceEdit } from './workspaceEdit';

/** Where a plan came from when it came from an editor (for "Open Plan" and the mark on the failing edit). */
export interface PlanSource {
  uri: vscode.Uri;
  /** The plan's text (the selection, or the whole document) and its offset in the document. */
  text: string;
  offset: number;
  version: number;
  plan: EditRequest;
}

const GO_TO_CLOSEST = 'Go to Closest Text';
const OPEN_PLAN = 'Open Plan';
const OPEN_PATCH = 'Open Patch';
const SHOW_LOGS = 'Show Logs';

function filesOf(plan: EditRequest): string[] {
  if (isPatchRequest(plan)) return [];
  return plan.files ? plan.files.map((f) => f.file_path ?? '') : [plan.file_path ?? ''];
}

/** The files an applied result leaves in place: a moved file at its new path, deleted files left out. */
function filesAfter(result: PlanResult): string[] {
  return (result.files ?? []).filter((f) => !f.deleted).map((f) => f.moved_to ?? f.file_path).filter(Boolean);
}

/** A plan the user discarded when asked to approve it: not a refusal, nothing was applied. */
function declinedInReview(err: unknown): boolean {
  const kind = toRefusal(err).data?.kind;
  return kind === 'declined' || kind === 'undecided';
}

/** Where a plan comes from: the editor it was taken from, or who sent it (the undo entry names them). */
export interface PlanOrigin {
  source?: PlanSource;
  agent?: string;
}

/** Applies a prepared plan or patch through the server (one WorkspaceEdit, one undo step). */
export async function applyPlan(ctx: Ctx, plan: EditRequest, { source, agent }: PlanOrigin = {}): Promise<PlanResult> {
  let result: PlanResult;
  try {
    result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `MultiEdit: applying ${planTitle(plan)}` }, () =>
      ctx.client.apply(plan, agent),
    );
  } catch (err) {
    if (declinedInReview(err)) ctx.updateStatus({ outcome: 'declined', text: planTitle(plan) });
    else ctx.updateStatus({ outcome: 'refused', text: refusalLocation(toRefusal(err)) || planTitle(plan) });
    throw err;
  }
  const files = filesAfter(result);
  ctx.lastApplied = { files: files.length ? files : filesOf(plan), result };
  ctx.shown({ refusal: undefined });
  if (source) ctx.planDiagnostics.delete(source.uri);
  // The edit's label ("Chat agent: 2 edits to 2 files"), as the undo entry shows it.
  // The answer carries what the editor applied and its label (the undo entry's name, "Chat agent: 2
  // edits to 2 files"): nothing kept aside that another plan could overwrite before it arrives.
  ctx.updateStatus({ outcome: 'applied', text: result.label ?? planTitle(plan, result) });
  await showChanges(ctx, result.edit as LspWorkspaceEdit | undefined);
  return result;
}

export async function notifyResult(ctx: Ctx, result: PlanResult, plan?: EditRequest): Promise<void> {
  const text = renderApplyNotification(result, plan);
  ctx.shown({ notification: text });
  const pick = isPartial(result)
    ? await vscode.window.showWarningMessage(text, 'Show Logs', 'Undo')
    : await vscode.window.showInformationMessage(text, 'Undo', 'Show Logs');
  if (pick === 'Undo') await undoLastBatch(ctx);
  else if (pick === 'Show Logs') ctx.log.show(true);
}

async function notifyDeclined(ctx: Ctx, plan: EditRequest): Promise<void> {
  const text = `MultiEdit: ${planTitle(plan)} not applied: discarded, nothing changed.`;
  ctx.shown({ notification: text, refusal: undefined });
  ctx.log.info(text);
  ctx.updateStatus({ outcome: 'declined', text: planTitle(plan) });
  void vscode.window.showInformationMessage(text);
}

export async function notifyRefusal(ctx: Ctx, err: unknown, plan?: EditRequest, source?: PlanSource): Promise<void> {
  if (plan && declinedInReview(err)) return notifyDeclined(ctx, plan);
  const refusal = toRefusal(err);
  const text = err instanceof PlanError ? `MultiEdit: ${err.message}` : renderRefusalNotification(refusal, plan ?? source?.plan);
  ctx.shown({ notification: text, refusal });
  ctx.log.warn(renderRefusalText(refusal));
  ctx.updateStatus({ outcome: 'refused', text: refusalLocation(refusal) || 'refused' });
  const planRange = source ? markFailingEdit(ctx, source, refusal) : undefined;
  const actions: string[] = [];
  if (hintLines(refusal.data?.hint) && refusal.data?.file_path) actions.push(GO_TO_CLOSEST);
  const openSource = source && isPatchRequest(source.plan) ? OPEN_PATCH : OPEN_PLAN;
  if (source) actions.push(openSource);
  actions.push(SHOW_LOGS);
  const pick = await vscode.window.showErrorMessage(text, ...actions);
  if (pick === GO_TO_CLOSEST) await goToClosestText(refusal);
  else if (pick === openSource && source) await openPlanAt(source, planRange);
  else if (pick === SHOW_LOGS) ctx.log.show(true);
}

export async function undoLastBatch(ctx: Ctx): Promise<void> {
  const last = ctx.lastApplied;
  if (!last || last.files.length === 0) {
    void vscode.window.showInformationMessage('MultiEdit: no plan was applied in this window.');
    return;
  }
  const uri = last.files[0].startsWith('file:') ? vscode.Uri.parse(last.files[0]) : vscode.Uri.file(last.files[0]);
  await vscode.window.showTextDocument(uri, { preserveFocus: false });
  await vscode.commands.executeCommand('undo');
}

/** The failing edit's `old_string` in the plan's editor, or undefined when it cannot be found. */
function failingEditRange(source: PlanSource, refusal: Refusal, doc: vscode.TextDocument): vscode.Range | undefined {
  const index = refusal.data?.edit_index;
  if (typeof index !== 'number' || isPatchRequest(source.plan)) return undefined;
  const fileIndex = source.plan.files ? fileIndexOf(source.plan.files, refusal.data?.file_path) : undefined;
  if (source.plan.files && fileIndex === undefined) return undefined;
  const span = locateEdit(source.text, index, fileIndex);
  if (!span) return undefined;
  return new vscode.Range(doc.positionAt(source.offset + span.start), doc.positionAt(source.offset + span.end));
}

function markFailingEdit(ctx: Ctx, source: PlanSource, refusal: Refusal): vscode.Range | undefined {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === source.uri.toString());
  if (!doc || doc.version !== source.version) return undefined;
  const range = failingEditRange(source, refusal, doc);
  if (!range) return undefined;
  const d = new vscode.Diagnostic(range, renderRefusalText(refusal), vscode.DiagnosticSeverity.Error);
  d.source = 'MultiEdit';
  if (refusal.data?.kind) d.code = refusal.data.kind;
  ctx.planDiagnostics.set(source.uri, [d]);
  return range;
}

/** Opens the file a hint points at and selects the lines of the closest text. */
async function goToClosestText(refusal: Refusal): Promise<void> {
  const lines = hintLines(refusal.data?.hint);
  const file = refusal.data?.file_path;
  if (!lines || !file) return;
  const doc = await vscode.workspace.openTextDocument(uriOf(file));
  const last = Math.min(lines.last, doc.lineCount) - 1;
  const first = Math.min(lines.first - 1, last);
  const range = new vscode.Range(first, 0, last, doc.lineAt(last).text.length);
  const editor = await vscode.window.showTextDocument(doc, { selection: range, preview: false });
  editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

async function openPlanAt(source: PlanSource, range: vscode.Range | undefined): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(source.uri);
  const selection = range ?? new vscode.Range(doc.positionAt(source.offset), doc.positionAt(source.offset));
  const editor = await vscode.window.showTextDocument(doc, { selection, preview: false });
  editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}
