import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { connectAgents } from './agents';
import { registerMcpServer } from './mcp';
import {
  AssistDeps,
  PATCH_TOOL_NAME,
  PatchToolInput,
  handleChatRequest,
  invokePatchTool,
  invokeTool,
  preparePatchToolInvocation,
  prepareToolInvocation,
  refusedToolResult,
} from './assist';
import { MultiEditClient, ServerError, showErrorWithLogs } from './client';
import { EditRequest, Plan, PlanError, isPatchRequest, needsTarget, parseRequestText, planFromPairs, prepareRequest } from './plan';
import {
  ApplyResult,
  Refusal,
  applyTextEdits,
  isPartial,
  planTitle,
  renderApplyNotification,
  renderRefusalNotification,
  renderRefusalText,
  refusalLocation,
  requestNoun,
  rangesAfterEdits,
  toRefusal,
  workspaceEditFiles,
  LspWorkspaceEdit,
} from './render';
import { fileIndexOf, hintLines, locateEdit } from './locate';
import { LastOutcome, statusText } from './status';

const PREVIEW_SCHEME = 'multiedit-preview';
const TOOL_NAME = 'multiedit';

let client: MultiEditClient | undefined;

/** What the last operations did; used by "Undo Last Applied Plan" and the test commands. */
const state: {
  lastApplied?: { files: string[]; result: ApplyResult };
  lastRefusal?: Refusal;
  lastNotification?: string;
  lastToolResult?: string;
  lastPreview?: { title: string; diff: string | null; entries: string[][] };
  status?: { text: string; tooltip: string };
  openedFiles?: number;
  highlighted?: number;
} = {};

/** Recently active text editors' documents (most recent first), to find a plan's target. */
const recentDocuments: vscode.Uri[] = [];

function rememberEditor(editor: vscode.TextEditor | undefined): void {
  if (!editor) return;
  const uri = editor.document.uri;
  if (uri.scheme !== 'file' && uri.scheme !== 'untitled') return;
  const i = recentDocuments.findIndex((u) => u.toString() === uri.toString());
  if (i >= 0) recentDocuments.splice(i, 1);
  recentDocuments.unshift(uri);
  recentDocuments.length = Math.min(recentDocuments.length, 20);
}

function settings() {
  const c = vscode.workspace.getConfiguration('multiedit');
  return {
    defaults: {
      mode: c.get<string>('defaults.mode'),
      dialect: c.get<string>('defaults.dialect'),
      match: c.get<string>('defaults.match'),
    },
    previewBeforeApply: c.get<boolean>('previewBeforeApply') ?? false,
    testCommands: c.get<boolean>('testing.enableTestCommands') === true || process.env.MULTIEDIT_TEST_MODE === '1',
    stateFile: c.get<string>('testing.stateFile') || process.env.MULTIEDIT_TEST_STATE_FILE || '',
  };
}

function activeFilePath(): string | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc && doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
}

function baseDir(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** The file a plan without file_path applies to when the plan itself is in the active editor. */
function targetOtherThan(planDoc: vscode.TextDocument): string | undefined {
  const visible = vscode.window.visibleTextEditors
    .map((e) => e.document)
    .filter((d) => d !== planDoc && d.uri.scheme === 'file');
  for (const uri of recentDocuments) {
    if (uri.toString() === planDoc.uri.toString() || uri.scheme !== 'file') continue;
    if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString() && !d.isClosed)) return uri.fsPath;
  }
  return visible.length === 1 ? visible[0].uri.fsPath : undefined;
}

function prepare(plan: EditRequest, targetPath: string | undefined, base?: string): EditRequest {
  return prepareRequest(plan, { targetPath, baseDir: base ?? baseDir(), defaults: settings().defaults });
}

async function notifyResult(result: ApplyResult, plan?: EditRequest): Promise<void> {
  const text = renderApplyNotification(result, plan);
  state.lastNotification = text;
  const pick = isPartial(result)
    ? await vscode.window.showWarningMessage(text, 'Show Logs', 'Undo')
    : await vscode.window.showInformationMessage(text, 'Undo', 'Show Logs');
  if (pick === 'Undo') await undoLastBatch();
  else if (pick === 'Show Logs') client?.log.show(true);
}

/** Where the plan being run came from, when it came from an editor (for "Open Plan" and diagnostics). */
interface PlanSource {
  uri: vscode.Uri;
  /** The plan's text (the selection, or the whole document) and its offset in the document. */
  text: string;
  offset: number;
  version: number;
  plan: EditRequest;
}

/** Set while a plan taken from an editor runs. */
let planSource: PlanSource | undefined;

let statusItem: vscode.StatusBarItem | undefined;
let lastOutcome: LastOutcome | undefined;

function updateStatus(outcome?: Omit<LastOutcome, 'time'>): void {
  if (outcome) lastOutcome = { ...outcome, time: new Date() };
  if (!statusItem || !client) return;
  const s = statusText(client.serverState, lastOutcome);
  statusItem.text = s.text;
  statusItem.tooltip = s.tooltip;
  statusItem.backgroundColor = s.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  state.status = { text: s.text, tooltip: s.tooltip };
}

/** Diagnostics on plan files: the edit a refusal names, until the plan changes. */
let planDiagnostics: vscode.DiagnosticCollection;

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

function markFailingEdit(source: PlanSource, refusal: Refusal): vscode.Range | undefined {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === source.uri.toString());
  if (!doc || doc.version !== source.version) return undefined;
  const range = failingEditRange(source, refusal, doc);
  if (!range) return undefined;
  const d = new vscode.Diagnostic(range, renderRefusalText(refusal), vscode.DiagnosticSeverity.Error);
  d.source = 'MultiEdit';
  if (refusal.data?.kind) d.code = refusal.data.kind;
  planDiagnostics.set(source.uri, [d]);
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

/** A plan the user discarded in the Refactor Preview: not a refusal, nothing was applied. */
function declinedInReview(plan: EditRequest | undefined, err: unknown): boolean {
  return !!plan && !!client?.reviews(plan) && toRefusal(err).data?.kind === 'not_applied';
}

async function notifyDeclined(plan: EditRequest): Promise<void> {
  const text = `MultiEdit: ${planTitle(plan)} not applied: the review was discarded, nothing changed.`;
  state.lastNotification = text;
  state.lastRefusal = undefined;
  client?.log.info(text);
  updateStatus({ outcome: 'declined', text: planTitle(plan) });
  void vscode.window.showInformationMessage(text);
}

async function notifyRefusal(err: unknown, plan?: EditRequest): Promise<void> {
  if (declinedInReview(plan, err)) return notifyDeclined(plan!);
  const refusal = toRefusal(err);
  state.lastRefusal = refusal;
  const text = err instanceof PlanError ? `MultiEdit: ${err.message}` : renderRefusalNotification(refusal, plan ?? planSource?.plan);
  state.lastNotification = text;
  client?.log.warn(renderRefusalText(refusal));
  updateStatus({ outcome: 'refused', text: refusalLocation(refusal) || 'refused' });
  const source = planSource;
  const planRange = source ? markFailingEdit(source, refusal) : undefined;
  const actions: string[] = [];
  if (hintLines(refusal.data?.hint) && refusal.data?.file_path) actions.push(GO_TO_CLOSEST);
  const openSource = source && isPatchRequest(source.plan) ? OPEN_PATCH : OPEN_PLAN;
  if (source) actions.push(openSource);
  actions.push(SHOW_LOGS);
  const pick = await vscode.window.showErrorMessage(text, ...actions);
  if (pick === GO_TO_CLOSEST) await goToClosestText(refusal);
  else if (pick === openSource && source) await openPlanAt(source, planRange);
  else if (pick === SHOW_LOGS) client?.log.show(true);
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
function filesAfter(result: ApplyResult): string[] {
  return (result.files ?? []).filter((f) => !f.deleted).map((f) => f.moved_to ?? f.file_path).filter(Boolean);
}

/** Applies a prepared plan or patch through the server (one WorkspaceEdit, one undo step). */
async function applyPlan(plan: EditRequest): Promise<ApplyResult> {
  let result: ApplyResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `MultiEdit: applying ${planTitle(plan)}` },
      () => client!.apply(plan),
    );
  } catch (err) {
    if (declinedInReview(plan, err)) updateStatus({ outcome: 'declined', text: planTitle(plan) });
    else updateStatus({ outcome: 'refused', text: refusalLocation(toRefusal(err)) || planTitle(plan) });
    throw err;
  }
  state.lastApplied = { files: filesAfter(result), result };
  if (state.lastApplied.files.length === 0) state.lastApplied.files = filesOf(plan);
  state.lastRefusal = undefined;
  if (planSource) planDiagnostics.delete(planSource.uri);
  updateStatus({ outcome: 'applied', text: planTitle(plan, result) });
  await showChanges(client!.lastAppliedEdit as LspWorkspaceEdit | undefined);
  return result;
}

const HIGHLIGHT_MS = 2500;
let highlight: { added: vscode.TextEditorDecorationType; removed: vscode.TextEditorDecorationType } | undefined;

/**
 * After an apply: edited files that no tab shows are opened as tabs (`multiedit.openEditedFiles`),
 * and the changed ranges are highlighted for a moment in the visible editors, so every change is seen.
 */
async function showChanges(edit: LspWorkspaceEdit | undefined): Promise<void> {
  // A deleted file is gone; a renamed one is shown (and highlighted) at its new place.
  const files = workspaceEditFiles(edit)
    .filter((f) => f.kind !== 'delete')
    .map((f) => (f.newUri ? { ...f, uri: f.newUri } : f));
  if (!files.length) return;
  const c = vscode.workspace.getConfiguration('multiedit');
  if (c.get<boolean>('openEditedFiles') !== false) {
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
        client?.log.warn(`could not open ${uri.fsPath}: ${e}`);
      }
    }
    // Opening tabs must not take the user away from the editor they were in.
    if (opened && active && !active.document.isClosed) {
      await vscode.window.showTextDocument(active.document, { viewColumn: active.viewColumn, preserveFocus: false, preview: false });
    }
    state.openedFiles = opened;
  }
  if (edit && hasConfirmation(edit)) return; // after a review, what was kept is not known here
  if (!highlight) {
    highlight = {
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
  }
  // Editors visible now are highlighted at once; files shown in the next seconds (a tab opened in the
  // background and then clicked) when they come into view.
  pendingHighlights.clear();
  let count = 0;
  for (const f of files) {
    const ranges = rangesAfterEdits(f.edits).map((r) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character));
    pendingHighlights.set(uriOf(f.uri).toString(), { ranges, until: Date.now() + PENDING_HIGHLIGHT_MS });
    count += ranges.length;
  }
  state.highlighted = count;
  highlightVisible(vscode.window.visibleTextEditors);
}

const PENDING_HIGHLIGHT_MS = 15_000;
const pendingHighlights = new Map<string, { ranges: vscode.Range[]; until: number }>();

function highlightVisible(editors: readonly vscode.TextEditor[]): void {
  const h = highlight;
  if (!h) return;
  for (const editor of editors) {
    const key = editor.document.uri.toString();
    const pending = pendingHighlights.get(key);
    if (!pending) continue;
    pendingHighlights.delete(key);
    if (pending.until < Date.now()) continue;
    editor.setDecorations(h.added, pending.ranges.filter((r) => !r.isEmpty));
    editor.setDecorations(h.removed, pending.ranges.filter((r) => r.isEmpty));
    setTimeout(() => {
      editor.setDecorations(h.added, []);
      editor.setDecorations(h.removed, []);
    }, HIGHLIGHT_MS);
  }
}

function hasConfirmation(edit: LspWorkspaceEdit): boolean {
  const annotations = (edit as { changeAnnotations?: Record<string, { needsConfirmation?: boolean }> }).changeAnnotations;
  return !!annotations && Object.values(annotations).some((a) => a.needsConfirmation);
}

async function applyWithUi(plan: EditRequest): Promise<void> {
  if (settings().previewBeforeApply) return previewWithUi(plan);
  try {
    const result = await applyPlan(plan);
    await notifyResult(result, plan);
  } catch (err) {
    await notifyRefusal(err, plan);
  }
}

async function undoLastBatch(): Promise<void> {
  const last = state.lastApplied;
  if (!last || last.files.length === 0) {
    void vscode.window.showInformationMessage('MultiEdit: no plan was applied in this window.');
    return;
  }
  const uri = last.files[0].startsWith('file:') ? vscode.Uri.parse(last.files[0]) : vscode.Uri.file(last.files[0]);
  await vscode.window.showTextDocument(uri, { preserveFocus: false });
  await vscode.commands.executeCommand('undo');
}

// ---- preview ----------------------------------------------------------------------------------

class PreviewContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
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

let previewContent: PreviewContent;

function uriOf(fileOrUri: string): vscode.Uri {
  return /^file:\/\//i.test(fileOrUri) ? vscode.Uri.parse(fileOrUri) : vscode.Uri.file(fileOrUri);
}

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
async function previewEntries(edit: LspWorkspaceEdit | undefined): Promise<[vscode.Uri, vscode.Uri, vscode.Uri][]> {
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
    const left = f.kind === 'create' ? previewContent.add(`${name} (new file)`, '') : uri;
    let right: vscode.Uri;
    if (f.kind === 'rename' && f.newUri) {
      const to = uriOf(f.newUri);
      right = previewContent.add(`${to.path} (renamed from ${name})`, proposed);
    } else if (f.kind === 'delete') right = previewContent.add(`${uri.path} (deleted)`, '');
    else right = previewContent.add(uri.path, proposed);
    entries.push([uri, left, right]);
  }
  return entries;
}

/**
 * Shows the changes as a diff, then offers to apply them. A plan's: each file's diff; a patch's: the
 * unified diff the server answers (renamed and deleted files included), read-only.
 */
async function previewWithUi(plan: EditRequest): Promise<void> {
  let result: ApplyResult;
  try {
    result = await client!.preview(plan);
  } catch (err) {
    await notifyRefusal(err, plan);
    return;
  }
  const title = `MultiEdit Preview: ${planTitle(plan, result)}`;
  const entries = await previewEntries(result.edit as LspWorkspaceEdit | undefined);
  if (isPatchRequest(plan) && result.diff) {
    const doc = await vscode.workspace.openTextDocument(previewContent.add(`/MultiEdit Preview of the patch.diff`, result.diff));
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
  state.lastPreview = { title, diff: result.diff ?? null, entries: entries.map(([, l, r]) => [l.toString(), r.toString()]) };
  const text = `MultiEdit: apply ${planTitle(plan, result)}?`;
  state.lastNotification = text;
  const pick = await vscode.window.showInformationMessage(text, 'Apply', 'Cancel');
  await closePreviewTabs();
  if (pick !== 'Apply') return;
  try {
    await notifyResult(await applyPlan(plan), plan);
  } catch (err) {
    await notifyRefusal(err, plan);
  }
}

// ---- palette commands -------------------------------------------------------------------------

/** A .diff/.patch file, or an editor in the `diff` language: its whole text is a patch. */
function isPatchDocument(doc: vscode.TextDocument): boolean {
  return doc.languageId === 'diff' || /\.(diff|patch)$/i.test(doc.uri.path);
}

/**
 * The plan or patch in the active editor (its selection if any) with its target filled in; `asPatch`
 * (the title action of .diff/.patch files): the text is sent as a patch as it is.
 */
function planFromActiveEditor(asPatch = false): EditRequest {
  const editor = vscode.window.activeTextEditor;
  if (!editor) throw new PlanError(asPatch ? 'Open the patch in an editor first.' : 'Open the plan (JSON) or the patch in an editor first.');
  const doc = editor.document;
  const text = editor.selection.isEmpty ? doc.getText() : doc.getText(editor.selection);
  const offset = editor.selection.isEmpty ? 0 : doc.offsetAt(editor.selection.start);
  planDiagnostics.delete(doc.uri);
  const plan: EditRequest = asPatch || (isPatchDocument(doc) && !/^\s*[[{]/.test(text)) ? { patch: text } : parseRequestText(text);
  const target = needsTarget(plan) ? targetOtherThan(doc) : undefined;
  const base = doc.uri.scheme === 'file' ? path.dirname(doc.uri.fsPath) : undefined;
  const prepared = prepare(plan, target, baseDir() ?? base);
  planSource = { uri: doc.uri, text, offset, version: doc.version, plan: prepared };
  return prepared;
}

async function planFromClipboard(): Promise<EditRequest> {
  const text = await vscode.env.clipboard.readText();
  return prepare(parseRequestText(text), activeFilePath());
}

/** The clipboard as a patch: recognised like a plan, and a text with no marker is still sent to the server, which says why it is no patch. */
async function patchFromClipboard(): Promise<EditRequest> {
  const text = await vscode.env.clipboard.readText();
  if (!text.trim()) throw new PlanError('The clipboard is empty: copy a patch (a unified diff, an apply_patch envelope or SEARCH/REPLACE blocks) first.');
  let req: EditRequest;
  try {
    req = parseRequestText(text);
  } catch (err) {
    if (!(err instanceof PlanError)) throw err;
    req = { patch: text };
  }
  return prepare(req, activeFilePath());
}

async function planFromPicker(): Promise<EditRequest | undefined> {
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
  return prepare(req, activeFilePath(), base);
}

async function runPlanCommand(getPlan: () => EditRequest | undefined | Promise<EditRequest | undefined>, preview: boolean): Promise<void> {
  planSource = undefined;
  try {
    let plan: EditRequest | undefined;
    try {
      plan = await getPlan();
    } catch (err) {
      await notifyRefusal(err);
      return;
    }
    if (!plan) return;
    await (preview ? previewWithUi(plan) : applyWithUi(plan));
  } finally {
    planSource = undefined;
  }
}

async function replaceInFile(): Promise<void> {
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
    await (next.label === 'Preview' ? previewWithUi(plan) : applyWithUi(plan));
    return;
  }
  if (pairs.length) await applyWithUi(prepare(planFromPairs(filePath, pairs), filePath));
}

/** Input boxes are one line: `\n` and `\t` stand for a line break and a tab, `\\` for a backslash. */
export function unescapeInput(s: string): string {
  return s.replace(/\\(\\|n|t)/g, (_, c) => (c === 'n' ? '\n' : c === 't' ? '\t' : '\\'));
}

// ---- chat participant and language model tool ------------------------------------------------

function assistDeps(model?: vscode.LanguageModelChat, token?: vscode.CancellationToken): AssistDeps {
  return {
    activeFilePath,
    activeFileText: () => vscode.window.activeTextEditor?.document.getText(),
    baseDir,
    defaults: settings().defaults,
    apply: applyPlan,
    preview: (plan) => client!.preview(plan),
    askModel: model
      ? async (prompt) => {
          const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(prompt)], {}, token);
          let text = '';
          for await (const chunk of response.text) text += chunk;
          return text;
        }
      : undefined,
  };
}

function referencedFiles(request: vscode.ChatRequest): string[] {
  const out: string[] = [];
  for (const ref of request.references ?? []) {
    const v = ref.value;
    if (v instanceof vscode.Uri && v.scheme === 'file') out.push(v.fsPath);
    else if (v instanceof vscode.Location && v.uri.scheme === 'file') out.push(v.uri.fsPath);
  }
  return out;
}

const chatHandler: vscode.ChatRequestHandler = async (request, _context, stream, token) => {
  await handleChatRequest(
    { prompt: request.prompt, command: request.command, referencedFiles: referencedFiles(request) },
    assistDeps(request.model, token),
    {
      progress: (t) => stream.progress(t),
      markdown: (t) => stream.markdown(t),
      button: (command, title, args) => stream.button({ command, title, arguments: args }),
    },
  );
  return {};
};

/** Key of a tool input, to hand a refusal found in prepareInvocation to the invoke that follows. */
function toolInputKey(input: unknown): string {
  return JSON.stringify(input);
}

/**
 * Refusals a tool found while preparing a call, by input (the last 20): its invoke returns them
 * without running the plan or patch, so the model gets them at once and nothing is confirmed.
 */
class EarlyRefusals {
  private readonly refused = new Map<string, Refusal>();

  /** Keeps `refusal` for `input`, or forgets an older one when the call is fine now. */
  remember(input: unknown, refusal: Refusal | undefined): void {
    const key = toolInputKey(input);
    if (!refusal) {
      this.refused.delete(key);
      return;
    }
    this.refused.set(key, refusal);
    while (this.refused.size > 20) this.refused.delete(this.refused.keys().next().value as string);
  }

  /** The refusal kept for `input`, if any, removed. */
  take(input: unknown): Refusal | undefined {
    const key = toolInputKey(input);
    const early = this.refused.get(key);
    this.refused.delete(key);
    return early;
  }
}

/** A tool's answer to the model, remembered for the test commands. */
function toolResult({ text, outcome }: { text: string; outcome: { refusal?: Refusal } }): vscode.LanguageModelToolResult {
  if (outcome.refusal) state.lastRefusal = outcome.refusal;
  state.lastToolResult = text;
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}

class MultiEditTool implements vscode.LanguageModelTool<EditRequest> {
  private readonly early = new EarlyRefusals();

  async prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<EditRequest>) {
    const p = await prepareToolInvocation(options.input, assistDeps());
    this.early.remember(options.input, p.refusal);
    if (p.refusal) {
      // Nothing to confirm: the model gets the refusal at once, and nothing is applied.
      return { invocationMessage: p.invocationMessage };
    }
    return {
      invocationMessage: p.invocationMessage,
      confirmationMessages: { title: p.title, message: new vscode.MarkdownString(p.message) },
    };
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<EditRequest>) {
    const early = this.early.take(options.input);
    return toolResult(early ? refusedToolResult(early) : await invokeTool(options.input, assistDeps()));
  }
}

/**
 * `multiedit_patch`: a unified diff, apply_patch envelope or SEARCH/REPLACE blocks, sent to the server
 * as {patch, format, root, match}; `preview: true` answers with the diff and changes nothing.
 */
class MultiEditPatchTool implements vscode.LanguageModelTool<PatchToolInput> {
  private readonly early = new EarlyRefusals();

  async prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<PatchToolInput>) {
    const p = await preparePatchToolInvocation(options.input, assistDeps());
    this.early.remember(options.input, p.refusal);
    if (!p.confirm) return { invocationMessage: p.invocationMessage };
    return {
      invocationMessage: p.invocationMessage,
      confirmationMessages: { title: p.title, message: new vscode.MarkdownString(p.message) },
    };
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<PatchToolInput>) {
    const early = this.early.take(options.input);
    return toolResult(early ? refusedToolResult(early, true) : await invokePatchTool(options.input, assistDeps()));
  }
}

// ---- test-only commands -----------------------------------------------------------------------

function writeState(extra: Record<string, unknown>): void {
  const file = settings().stateFile;
  if (!file) throw new Error('multiedit.testing.stateFile is not set');
  const editor = vscode.window.activeTextEditor;
  const docs = vscode.workspace.textDocuments
    .filter((d) => d.uri.scheme === 'file' || d.uri.scheme === 'untitled')
    .map((d) => ({
      path: d.uri.scheme === 'file' ? d.uri.fsPath : d.uri.toString(),
      text: d.getText(),
      dirty: d.isDirty,
      version: d.version,
      languageId: d.languageId,
      diagnostics: vscode.languages.getDiagnostics(d.uri).map((x) => x.message),
    }));
  const data = {
    time: new Date().toISOString(),
    activeEditor: editor
      ? {
          path: editor.document.uri.fsPath,
          text: editor.document.getText(),
          dirty: editor.document.isDirty,
          version: editor.document.version,
          selection: { start: editor.selection.start, end: editor.selection.end },
        }
      : null,
    documents: docs,
    serverRunning: client?.isRunning() ?? false,
    tools: vscode.lm?.tools?.map((t) => t.name) ?? [],
    lastApplied: state.lastApplied ?? null,
    lastRefusal: state.lastRefusal ?? null,
    lastNotification: state.lastNotification ?? null,
    lastToolResult: state.lastToolResult ?? null,
    lastPreview: state.lastPreview ?? null,
    status: state.status ?? null,
    openedFiles: state.openedFiles ?? null,
    highlighted: state.highlighted ?? null,
    tabs: vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => (t.input instanceof vscode.TabInputText ? t.input.uri.fsPath : t.label)),
    ...extra,
  };
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(data, null, 2));
  fs.renameSync(tmp, file);
}

function registerTestCommands(context: vscode.ExtensionContext): void {
  void vscode.commands.executeCommand('setContext', 'multiedit.testMode', true);
  context.subscriptions.push(
    vscode.commands.registerCommand('multiedit.test.dumpState', () => writeState({ command: 'dumpState' })),
    // An input with `patch` goes to the multiedit_patch tool, any other to the multiedit tool.
    vscode.commands.registerCommand('multiedit.test.invokeTool', async (input?: EditRequest) => {
      let toolInput = input;
      if (!toolInput) {
        const inputFile = `${settings().stateFile}.tool-input.json`;
        toolInput = JSON.parse(fs.readFileSync(inputFile, 'utf8')) as EditRequest;
      }
      let text: string;
      try {
        const result = await vscode.lm.invokeTool(isPatchRequest(toolInput) ? PATCH_TOOL_NAME : TOOL_NAME, { input: toolInput, toolInvocationToken: undefined });
        text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
      } catch (err) {
        text = `invokeTool threw: ${(err as Error).message}`;
      }
      state.lastToolResult = text;
      writeState({ command: 'invokeTool', toolResult: text });
    }),
    // Changes a setting through the configuration service (as the Settings editor does).
    vscode.commands.registerCommand('multiedit.test.updateSetting', async (input?: { key: string; value: unknown }) => {
      const req = input ?? (JSON.parse(fs.readFileSync(`${settings().stateFile}.setting-input.json`, 'utf8')) as { key: string; value: unknown });
      await vscode.workspace.getConfiguration().update(req.key, req.value, vscode.ConfigurationTarget.Global);
      writeState({ command: 'updateSetting', setting: req });
    }),
    // Runs the chat participant's handler with a recorded response stream (the chat view itself
    // needs a signed-in chat provider).
    // `modelAnswer` stands in for the chat's language model (none is signed in here).
    vscode.commands.registerCommand('multiedit.test.chat', async (input?: { prompt: string; command?: string; modelAnswer?: string }) => {
      const req =
        input ?? (JSON.parse(fs.readFileSync(`${settings().stateFile}.chat-input.json`, 'utf8')) as { prompt: string; command?: string; modelAnswer?: string });
      const prompts: string[] = [];
      const model =
        req.modelAnswer === undefined
          ? undefined
          : {
              id: 'test-model',
              sendRequest: async (messages: vscode.LanguageModelChatMessage[]) => {
                for (const m of messages) for (const part of m.content) if (part instanceof vscode.LanguageModelTextPart) prompts.push(part.value);
                return {
                  text: (async function* () {
                    yield req.modelAnswer!;
                  })(),
                };
              },
            };
      const parts: string[] = [];
      const stream = {
        markdown: (v: string | vscode.MarkdownString) => parts.push(typeof v === 'string' ? v : v.value),
        progress: (v: string) => parts.push(`[progress] ${v}`),
        button: (b: vscode.Command) => parts.push(`[button] ${b.title} -> ${b.command}`),
        reference: () => undefined,
        anchor: () => undefined,
        filetree: () => undefined,
        push: () => undefined,
      } as unknown as vscode.ChatResponseStream;
      const request = { prompt: req.prompt, command: req.command, references: [], toolReferences: [], toolInvocationToken: undefined, model } as unknown as vscode.ChatRequest;
      const cts = new vscode.CancellationTokenSource();
      try {
        await chatHandler(request, { history: [] } as unknown as vscode.ChatContext, stream, cts.token);
      } catch (err) {
        parts.push(`[threw] ${(err as Error).message}`);
      }
      writeState({ command: 'chat', chatResponse: parts.join('\n'), modelPrompts: prompts });
    }),
  );
}

// ---- activation -------------------------------------------------------------------------------

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('MultiEdit', { log: true });
  context.subscriptions.push(log);
  client = new MultiEditClient(context, log);
  context.subscriptions.push(client);
  previewContent = new PreviewContent();
  planDiagnostics = vscode.languages.createDiagnosticCollection('multiedit');
  statusItem = vscode.window.createStatusBarItem('multiedit.status', vscode.StatusBarAlignment.Right, 100);
  statusItem.name = 'MultiEdit';
  statusItem.command = 'multiedit.showLogs';
  context.subscriptions.push(statusItem, client.onDidChangeServerState(() => updateStatus()));
  updateStatus();
  statusItem.show();
  rememberEditor(vscode.window.activeTextEditor);

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, previewContent),
    vscode.window.onDidChangeActiveTextEditor(rememberEditor),
    planDiagnostics,
    // The mark on a failing edit holds until the plan changes.
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length && planDiagnostics.has(e.document.uri)) planDiagnostics.delete(e.document.uri);
    }),
    vscode.workspace.onDidCloseTextDocument((d) => planDiagnostics.delete(d.uri)),
    vscode.window.onDidChangeVisibleTextEditors(highlightVisible),
    // A highlight waiting for its editor is stale once the text changes.
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length) pendingHighlights.delete(e.document.uri.toString());
    }),
    vscode.commands.registerCommand('multiedit.applyPlanFromEditor', () => runPlanCommand(() => planFromActiveEditor(), false)),
    vscode.commands.registerCommand('multiedit.previewPlanFromEditor', () => runPlanCommand(() => planFromActiveEditor(), true)),
    vscode.commands.registerCommand('multiedit.applyPlanFromClipboard', () => runPlanCommand(planFromClipboard, false)),
    vscode.commands.registerCommand('multiedit.previewPlanFromClipboard', () => runPlanCommand(planFromClipboard, true)),
    vscode.commands.registerCommand('multiedit.applyPlanFromFile', () => runPlanCommand(planFromPicker, false)),
    vscode.commands.registerCommand('multiedit.applyPatchFromClipboard', () => runPlanCommand(patchFromClipboard, false)),
    vscode.commands.registerCommand('multiedit.previewPatchFromClipboard', () => runPlanCommand(patchFromClipboard, true)),
    vscode.commands.registerCommand('multiedit.applyPatchFromEditor', () => runPlanCommand(() => planFromActiveEditor(true), false)),
    vscode.commands.registerCommand('multiedit.previewPatchFromEditor', () => runPlanCommand(() => planFromActiveEditor(true), true)),
    vscode.commands.registerCommand('multiedit.replaceInFile', replaceInFile),
    vscode.commands.registerCommand('multiedit.undoLastBatch', undoLastBatch),
    vscode.commands.registerCommand('multiedit.applyPlan', (plan: EditRequest) => runPlanCommand(() => prepare(plan, activeFilePath()), false)),
    vscode.commands.registerCommand('multiedit.restartServer', async () => {
      try {
        await client!.restart();
        void vscode.window.showInformationMessage('MultiEdit: server restarted.');
      } catch {
        // start() already reported the failure
      }
    }),
    vscode.commands.registerCommand('multiedit.showLogs', () => log.show(true)),
    vscode.commands.registerCommand('multiedit.connectAgents', () => connectAgents(client!.serverCommand().command, log)),
  );

  if (vscode.chat?.createChatParticipant) {
    const participant = vscode.chat.createChatParticipant('multiedit.chat', chatHandler);
    participant.iconPath = new vscode.ThemeIcon('replace-all');
    context.subscriptions.push(participant);
  }
  if (vscode.lm?.registerTool) {
    context.subscriptions.push(vscode.lm.registerTool(TOOL_NAME, new MultiEditTool()), vscode.lm.registerTool(PATCH_TOOL_NAME, new MultiEditPatchTool()));
  }
  const offersMcp = registerMcpServer(context, () => client!.serverCommand().command);
  log.info(offersMcp ? 'offering `multiedit mcp` to VS Code agents' : 'this VS Code has no MCP server provider API; `multiedit mcp` is not offered');

  if (settings().testCommands) registerTestCommands(context);

  client.ensureStarted().catch((err) => {
    if (!(err instanceof ServerError)) log.error(`server start failed: ${err}`);
  });
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
