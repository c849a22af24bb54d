// The palette commands: where their plan or patch comes from (active editor, clipboard, a file,
// input boxes), and applying or previewing it.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { applyPlan, notifyRefusal, notifyResult, PlanSource, undoLastBatch } from './apply';
import { planDefaults, previewBeforeApply } from './config';
import { Ctx } from './ctx';
import { EditRequest, isPatchRequest, needsTarget, parseRequestText, PlanError, planFromPairs, prepareRequest } from './plan';
import { previewWithUi } from './preview';
import { activeFilePath, baseDir } from './util';

/** A plan or patch ready to run, with the editor it was taken from, if any. */
interface Prepared {
  plan: EditRequest;
  source?: PlanSource;
}

function prepare(plan: EditRequest, targetPath: string | undefined, base?: string): EditRequest {
  return prepareRequest(plan, { targetPath, baseDir: base ?? baseDir(), defaults: planDefaults() });
}

/** A .diff/.patch file, or an editor in the `diff` language: its whole text is a patch. */
function isPatchDocument(doc: vscode.TextDocument): boolean {
  return doc.languageId === 'diff' || /\.(diff|patch)$/i.test(doc.uri.path);
}

/** The file a plan without file_path applies to when the plan itself is in the active editor. */
function targetOtherThan(ctx: Ctx, planDoc: vscode.TextDocument): string | undefined {
  const visible = vscode.window.visibleTextEditors.map((e) => e.document).filter((d) => d !== planDoc && d.uri.scheme === 'file');
  for (const uri of ctx.recentDocuments()) {
    if (uri.toString() === planDoc.uri.toString() || uri.scheme !== 'file') continue;
    if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString() && !d.isClosed)) return uri.fsPath;
  }
  return visible.length === 1 ? visible[0].uri.fsPath : undefined;
}

/**
 * The plan or patch in the active editor (its selection if any) with its target filled in; `asPatch`
 * (the title action of .diff/.patch files): the text is sent as a patch as it is.
 */
function planFromActiveEditor(ctx: Ctx, asPatch = false): Prepared {
  const editor = vscode.window.activeTextEditor;
  if (!editor) throw new PlanError(asPatch ? 'Open the patch in an editor first.' : 'Open the plan (JSON) or the patch in an editor first.');
  const doc = editor.document;
  const text = editor.selection.isEmpty ? doc.getText() : doc.getText(editor.selection);
  const offset = editor.selection.isEmpty ? 0 : doc.offsetAt(editor.selection.start);
  ctx.planDiagnostics.delete(doc.uri);
  const plan: EditRequest = asPatch || (isPatchDocument(doc) && !/^\s*[[{]/.test(text)) ? { patch: text } : parseRequestText(text);
  const target = needsTarget(plan) ? targetOtherThan(ctx, doc) : undefined;
  const base = doc.uri.scheme === 'file' ? path.dirname(doc.uri.fsPath) : undefined;
  const prepared = prepare(plan, target, baseDir() ?? base);
  return { plan: prepared, source: { uri: doc.uri, text, offset, version: doc.version, plan: prepared } };
}

async function planFromClipboard(): Promise<Prepared> {
  const text = await vscode.env.clipboard.readText();
  return { plan: prepare(parseRequestText(text), activeFilePath()) };
}

/** The clipboard as a patch: recognised like a plan, and a text with no marker is still sent to the server, which says why it is no patch. */
async function patchFromClipboard(): Promise<Prepared> {
  const text = await vscode.env.clipboard.readText();
  if (!text.trim()) throw new PlanError('The clipboard is empty: copy a patch (a unified diff, an apply_patch envelope or SEARCH/REPLACE blocks) first.');
  let req: EditRequest;
  try {
    req = parseRequestText(text);
  } catch (err) {
    if (!(err instanceof PlanError)) throw err;
    req = { patch: text };
  }
  return { plan: prepare(req, activeFilePath()) };
}

async function planFromPicker(): Promise<Prepared | undefined> {
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: 'Apply',
    filters: { 'MultiEdit plans and patches': ['json', 'jsonc', 'md', 'diff', 'patch'], 'All files': ['*'] },
  });
  if (!picked || picked.length === 0) return undefined;
  const bytes = await vscode.workspace.fs.readFile(picked[0]);
  const text = new TextDecoder().decode(bytes);
  const req = /\.(diff|patch)$/i.test(picked[0].path) && !/^\s*[[{]/.test(text) ? { patch: text } : parseRequestText(text);
  // A plan's relative paths start at its file's folder; a patch's (git's) at the workspace folder.
  const base = isPatchRequest(req) ? (baseDir() ?? path.dirname(picked[0].fsPath)) : path.dirname(picked[0].fsPath);
  return { plan: prepare(req, activeFilePath(), base) };
}

async function applyWithUi(ctx: Ctx, plan: EditRequest, source?: PlanSource): Promise<void> {
  if (previewBeforeApply()) return previewWithUi(ctx, plan, source);
  try {
    const result = await applyPlan(ctx, plan, { source });
    await notifyResult(ctx, result, plan);
  } catch (err) {
    await notifyRefusal(ctx, err, plan, source);
  }
}

async function runPlanCommand(ctx: Ctx, getPlan: () => Prepared | undefined | Promise<Prepared | undefined>, preview: boolean): Promise<void> {
  let prepared: Prepared | undefined;
  try {
    prepared = await getPlan();
  } catch (err) {
    await notifyRefusal(ctx, err);
    return;
  }
  if (!prepared) return;
  await (preview ? previewWithUi : applyWithUi)(ctx, prepared.plan, prepared.source);
}

async function replaceInFile(ctx: Ctx): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    void vscode.window.showErrorMessage('MultiEdit: open a saved file first (Replace in This File works on files on disk or their open buffers).');
    return;
  }
  const filePath = editor.document.uri.fsPath;
  const pairs: { old: string; new: string; all?: boolean }[] = [];
  const initial = editor.selection.isEmpty ? '' : editor.document.getText(editor.selection);
  for (;;) {
    const n = pairs.length + 1;
    const oldText = await vscode.window.showInputBox({
      title: `MultiEdit: Replace in ${path.basename(filePath)} (edit ${n})`,
      prompt: pairs.length ? 'Text to find (leave empty to finish)' : 'Text to find (exact, use \\n for a line break)',
      value: pairs.length === 0 ? initial : '',
      ignoreFocusOut: true,
    });
    if (oldText === undefined) return;
    if (oldText === '') break;
    const newText = await vscode.window.showInputBox({
      title: `MultiEdit: Replace in ${path.basename(filePath)} (edit ${n})`,
      prompt: `Replace ${JSON.stringify(oldText)} with (use \\n for a line break)`,
      ignoreFocusOut: true,
    });
    if (newText === undefined) return;
    pairs.push({ old: unescapeInput(oldText), new: unescapeInput(newText) });
    const next = await vscode.window.showQuickPick(
      [
        { label: 'Apply', description: `${pairs.length} edit${pairs.length === 1 ? '' : 's'}` },
        { label: 'Add Another Replacement' },
        { label: 'Replace All Occurrences of This One', description: 'and apply' },
        { label: 'Preview' },
      ],
      { title: `MultiEdit: ${pairs.length} replacement${pairs.length === 1 ? '' : 's'} in ${path.basename(filePath)}`, ignoreFocusOut: true },
    );
    if (!next) return;
    if (next.label === 'Add Another Replacement') continue;
    if (next.label === 'Replace All Occurrences of This One') pairs[pairs.length - 1].all = true;
    const plan = prepare(planFromPairs(filePath, pairs), filePath);
    await (next.label === 'Preview' ? previewWithUi(ctx, plan) : applyWithUi(ctx, plan));
    return;
  }
  if (pairs.length) await applyWithUi(ctx, prepare(planFromPairs(filePath, pairs), filePath));
}

/** Input boxes are one line: `\n` and `\t` stand for a line break and a tab, `\\` for a backslash. */
export function unescapeInput(s: string): string {
  return s.replace(/\\(\\|n|t)/g, (_, c) => (c === 'n' ? '\n' : c === 't' ? '\t' : '\\'));
}

/** Registers the palette commands (and `multiedit.applyPlan`, the chat's "Apply" button). */
export function registerCommands(ctx: Ctx): vscode.Disposable[] {
  const run = (getPlan: () => Prepared | undefined | Promise<Prepared | undefined>, preview: boolean) => () => runPlanCommand(ctx, getPlan, preview);
  const reg = vscode.commands.registerCommand;
  return [
    reg('multiedit.applyPlanFromEditor', run(() => planFromActiveEditor(ctx), false)),
    reg('multiedit.previewPlanFromEditor', run(() => planFromActiveEditor(ctx), true)),
    reg('multiedit.applyPlanFromClipboard', run(planFromClipboard, false)),
    reg('multiedit.previewPlanFromClipboard', run(planFromClipboard, true)),
    reg('multiedit.applyPlanFromFile', run(planFromPicker, false)),
    reg('multiedit.applyPatchFromClipboard', run(patchFromClipboard, false)),
    reg('multiedit.previewPatchFromClipboard', run(patchFromClipboard, true)),
    reg('multiedit.applyPatchFromEditor', run(() => planFromActiveEditor(ctx, true), false)),
    reg('multiedit.previewPatchFromEditor', run(() => planFromActiveEditor(ctx, true), true)),
    reg('multiedit.replaceInFile', () => replaceInFile(ctx)),
    reg('multiedit.undoLastBatch', () => undoLastBatch(ctx)),
    reg('multiedit.applyPlan', (plan: EditRequest) => runPlanCommand(ctx, () => ({ plan: prepare(plan, activeFilePath()) }), false)),
    reg('multiedit.restartServer', async () => {
      try {
        await ctx.client.restart();
        void vscode.window.showInformationMessage('MultiEdit: server restarted.');
      } catch {
        // start() already reported the failure
      }
    }),
    reg('multiedit.showLogs', () => ctx.log.show(true)),
  ];
}
