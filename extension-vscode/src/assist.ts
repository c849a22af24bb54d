// Logic of the chat participant and the language model tool, written against small interfaces
// so that it runs (and is unit-tested) without VS Code.
import { PlanResult, ReviewPolicy, SymbolsResult } from './lsp_ext';
import { EditRequest, fileUriToPath, findRequest, isPatchRequest, PatchRequest, PlanError, planTargets, PrepareOptions, preparePatch, prepareRequest, reviewFor } from './plan';
import { planTitle, Refusal, renderConfirmationMarkdown, renderRefusalMarkdown, diagnosticsMarkdown, renderEarlier, renderRefusalText, renderResultMarkdown, renderToolResult, toRefusal } from './render';

/** What the chat participant and the tool need from the editor and the server. */
export interface AssistDeps {
  /** Absolute path of the active editor's file, if any. */
  activeFilePath(): string | undefined;
  /** Text of the active editor (unsaved changes included), if any. */
  activeFileText?(): string | undefined;
  /** Folder for relative paths (the first workspace folder). */
  baseDir?(): string | undefined;
  defaults?: PrepareOptions['defaults'];
  apply(plan: EditRequest): Promise<PlanResult>;
  preview(plan: EditRequest): Promise<PlanResult>;
  /** The user's `multiedit.review` setting (only `always` reviews a tool call: see `toolReviews`). */
  reviewSetting?: ReviewPolicy;
  /** Sends a prompt to a language model and returns its whole answer; absent without a model. */
  askModel?(prompt: string): Promise<string>;
  /** A file's outline from the language servers (`multiedit.symbols`). */
  symbols?(filePath: string): Promise<SymbolsResult>;
}

export interface ChatOutput {
  progress(text: string): void;
  markdown(text: string): void;
  button(command: string, title: string, args?: unknown[]): void;
}

export interface ChatRequestLike {
  prompt: string;
  command?: string;
  /** Absolute paths of files attached to the request (#file references). */
  referencedFiles?: string[];
}

export interface ChatOutcome {
  plan?: EditRequest;
  result?: PlanResult;
  refusal?: Refusal;
}

export const APPLY_PLAN_COMMAND = 'multiedit.applyPlan';
export const UNDO_COMMAND = 'multiedit.undoLastBatch';

export const CHAT_HELP =
  'Give me a MultiEdit plan as JSON (or in a ```json block), for example:\n\n' +
  '```json\n{"file_path": "/abs/path/file.txt", "edits": [{"old_string": "foo", "new_string": "bar"}]}\n```\n\n' +
  'Without `file_path` the plan edits the active file (or the one file attached with #file). ' +
  'A patch works too: a unified diff (as `git diff` writes it, in a ```diff block or as is), an apply_patch envelope ' +
  '(`*** Begin Patch` … `*** End Patch`) or SEARCH/REPLACE blocks; its relative paths start at the workspace folder, and ' +
  'new, deleted and renamed files are part of the one undoable change. ' +
  'Use `/preview` to see the diff first. With a language model available you can also describe the change in words.';

function prepare(plan: EditRequest, deps: AssistDeps, referenced?: string[]): EditRequest {
  const target = referenced && referenced.length === 1 ? referenced[0] : deps.activeFilePath();
  return prepareRequest(plan, { targetPath: target, baseDir: deps.baseDir?.(), defaults: deps.defaults });
}

/** Prompt asking a model to turn an instruction about a file into a MultiEdit plan. */
export function buildPlanPrompt(filePath: string, text: string, instruction: string): string {
  return [
    'You write MultiEdit plans: exact find-and-replace edits applied in order to one file.',
    'Answer with ONE JSON object in a ```json block and nothing else, of the form',
    '{"edits": [{"old_string": "exact text from the file", "new_string": "replacement"}]}.',
    'Each old_string must be copied exactly from the file (whitespace included) and occur exactly once,',
    'unless you add "replace_all": true. Keep each old_string short but unique.',
    '',
    `File: ${filePath}`,
    '```',
    text,
    '```',
    '',
    `Instruction: ${instruction}`,
  ].join('\n');
}

async function applyOrPreview(plan: EditRequest, preview: boolean, deps: AssistDeps, out: ChatOutput): Promise<ChatOutcome> {
  try {
    if (preview) {
      out.progress(`Previewing ${planTitle(plan)}…`);
      const result = await deps.preview(plan);
      out.markdown(`**Preview: ${planTitle(plan, result)}** (nothing applied yet)\n\n`);
      if (result.diff) out.markdown('```diff\n' + result.diff.replace(/\n$/, '') + '\n```\n\n');
      else out.markdown(renderResultMarkdown(result));
      out.button(APPLY_PLAN_COMMAND, 'Apply', [plan]);
      return { plan, result };
    }
    out.progress(`Applying ${planTitle(plan)}…`);
    const result = await deps.apply(plan);
    if (result.diagnostics?.deferred) {
      // The sentence for an agent ("with your next call") only if the delta never comes here.
      out.markdown(renderResultMarkdown({ ...result, diagnostics_text: undefined }));
      out.progress('Waiting for the language servers to check the change…');
      if (!(await settledDelta(result, deps, out)) && result.diagnostics_text) out.markdown(diagnosticsMarkdown(result.diagnostics_text));
    } else out.markdown(renderResultMarkdown(result));
    out.markdown('Undo with Ctrl+Z in the editor, or:\n\n');
    out.button(UNDO_COMMAND, 'Undo');
    return { plan, result };
  } catch (err) {
    const refusal = toRefusal(err);
    out.markdown(renderRefusalMarkdown(refusal, plan));
    return { plan, refusal };
  }
}

/**
 * A person reads `@multiedit`'s answer, and has no next call to carry a delta still settling when the
 * edit was answered: the answer goes on, asking for the edited files' outline (which carries what the
 * server kept for this caller) every `everyMs` until the delta comes, for at most 40 times that.
 */
export async function settledDelta(result: PlanResult, deps: AssistDeps, out: ChatOutput, everyMs = 250): Promise<boolean> {
  const files = result.files.filter((f) => !f.deleted).map((f) => f.file_path);
  for (let i = 0; i < 40 && deps.symbols && files.length; i++) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    let earlier: SymbolsResult['earlier_diagnostics'];
    try {
      earlier = (await deps.symbols(files[0])).earlier_diagnostics;
    } catch {
      // No outline for that file (no language server gives its symbols): the next file, if any.
      files.shift();
      continue;
    }
    if (earlier?.length) {
      out.markdown(diagnosticsMarkdown(earlier.map((e) => e.text).join('\n')));
      return true;
    }
  }
  return false;
}

/** Handles one `@multiedit` chat request. */
export async function handleChatRequest(req: ChatRequestLike, deps: AssistDeps, out: ChatOutput): Promise<ChatOutcome> {
  const preview = req.command === 'preview';
  const found = findRequest(req.prompt);
  if (found) {
    let plan: EditRequest;
    try {
      plan = prepare(found, deps, req.referencedFiles);
    } catch (err) {
      out.markdown(`**${(err as Error).message}**\n\n`);
      return { refusal: toRefusal(err) };
    }
    return applyOrPreview(plan, preview, deps, out);
  }
  if (req.command === 'apply' || req.command === 'preview' || !req.prompt.trim()) {
    out.markdown(req.prompt.trim() ? `**No MultiEdit plan or patch found in the message.**\n\n${CHAT_HELP}` : CHAT_HELP);
    return {};
  }
  // A plain instruction: let the model write a plan for the active (or attached) file.
  const file = req.referencedFiles?.length === 1 ? req.referencedFiles[0] : deps.activeFilePath();
  const text = file === deps.activeFilePath() ? deps.activeFileText?.() : undefined;
  if (!deps.askModel || !file || text === undefined) {
    out.markdown(
      !deps.askModel
        ? `No language model is available to turn the instruction into a plan.\n\n${CHAT_HELP}`
        : `Open the file to edit first, so that I know which file the instruction is about.\n\n${CHAT_HELP}`,
    );
    return {};
  }
  out.progress('Writing a plan…');
  let answer: string;
  try {
    answer = await deps.askModel(buildPlanPrompt(file, text, req.prompt));
  } catch (err) {
    out.markdown(`**The language model failed:** ${(err as Error).message}\n\n`);
    return {};
  }
  const generated = findRequest(answer);
  if (!generated) {
    out.markdown(`The model did not produce a plan. Its answer:\n\n${answer}\n\n`);
    return {};
  }
  let plan: EditRequest;
  try {
    plan = isPatchRequest(generated) ? prepare(generated, deps) : prepare({ ...generated, file_path: generated.files ? undefined : file }, deps);
  } catch (err) {
    out.markdown(`**${(err as Error).message}**\n\n`);
    return {};
  }
  if (isPatchRequest(plan)) out.markdown('Patch:\n\n```diff\n' + plan.patch.replace(/\n$/, '') + '\n```\n\n');
  else out.markdown('Plan:\n\n```json\n' + JSON.stringify(plan, null, 2) + '\n```\n\n');
  return applyOrPreview(plan, preview, deps, out);
}

// ---- language model tool ----------------------------------------------------------------------

export interface ToolPreparation {
  invocationMessage: string;
  title: string;
  message: string;
  /** Whether VS Code asks the user before the call runs (the one approval of a call that is not reviewed). */
  confirm: boolean;
  /**
   * The plan is refused as it stands (the server's preview, or the plan itself): no point asking the
   * user; the tool returns this refusal to the model at once, without confirmation and without
   * applying anything.
   */
  refusal?: Refusal;
}

/**
 * The tool's confirmation: what will change (per file: each edit and the diff), or, when the server
 * already refuses the plan in its preview, the refusal to return without asking.
 */
export async function prepareToolInvocation(input: EditRequest, deps: AssistDeps): Promise<ToolPreparation> {
  let plan: EditRequest;
  try {
    plan = prepare(input, deps);
  } catch (err) {
    const refusal: Refusal = { message: err instanceof PlanError ? err.message : String(err) };
    return { invocationMessage: 'MultiEdit: checking the plan', title: 'MultiEdit', message: refusal.message, refusal, confirm: false };
  }
  let result: PlanResult;
  try {
    result = await deps.preview(plan);
  } catch (err) {
    const refusal = toRefusal(err);
    return {
      invocationMessage: `MultiEdit: ${planTitle(plan)} refused`,
      title: `MultiEdit: ${planTitle(plan)}`,
      message: renderRefusalMarkdown(refusal, plan),
      refusal,
      confirm: false,
    };
  }
  return {
    invocationMessage: `MultiEdit: applying ${planTitle(plan, result)}`,
    title: `MultiEdit: ${planTitle(plan, result)}`,
    message: renderConfirmationMarkdown(plan, result.diff, result),
    // A reviewed call is approved in the Refactor Preview; asking first too would be a second approval.
    confirm: !toolReviews(plan, deps.reviewSetting),
  };
}

/**
 * Whether a tool call is reviewed in the Refactor Preview instead of confirmed: when the call asks
 * (`review`), or the user set `multiedit.review` to `always`. `multiFile`, the default, does not
 * review tool calls: VS Code's confirmation, which shows the diff, is their one approval.
 */
export function toolReviews(plan: EditRequest, setting: ReviewPolicy | undefined): boolean {
  return reviewFor(plan, setting === 'always' ? 'always' : 'never');
}

/** What the model gets back for a plan refused before it ran (see `ToolPreparation.refusal`). */
export function refusedToolResult(refusal: Refusal, patch = false): { text: string; outcome: ChatOutcome } {
  return { text: renderToolResult({ refusal, patch }), outcome: { refusal } };
}

/** Runs the tool: applies the plan and returns the text for the model (engine message or refusal). */
export async function invokeTool(input: EditRequest, deps: AssistDeps): Promise<{ text: string; outcome: ChatOutcome }> {
  const patch = isPatchRequest(input);
  let plan: EditRequest;
  try {
    plan = prepare(input, deps);
  } catch (err) {
    const refusal: Refusal = { message: err instanceof PlanError ? err.message : String(err) };
    return { text: renderToolResult({ refusal, patch }), outcome: { refusal } };
  }
  try {
    // Decided here, so that the setting's `multiFile` does not add a review to the confirmed call.
    const result = await deps.apply({ ...plan, review: toolReviews(plan, deps.reviewSetting) });
    return { text: renderToolResult({ result }), outcome: { plan, result } };
  } catch (err) {
    const refusal = toRefusal(err);
    return { text: renderToolResult({ refusal, patch }), outcome: { plan, refusal } };
  }
}

// ---- the multiedit_patch tool -----------------------------------------------------------------

export const PATCH_TOOL_NAME = 'multiedit_patch';

/** The `multiedit_patch` tool's input (`server/schema/patch.schema.json`). */
export interface PatchToolInput {
  patch: string;
  format?: PatchRequest['format'];
  root?: string;
  match?: PatchRequest['match'];
  /** The file of SEARCH/REPLACE blocks that name none. */
  file_path?: string;
  /** true: change nothing, answer with the diff (multiedit.preview). */
  preview?: boolean;
  /** true: the editor's formatter runs on the touched lines (multiedit.formatEdits otherwise). */
  format_edits?: boolean;
}

/** The request the tool sends the server: {patch, format, root, match}, root defaulting to the workspace. */
export function patchToolRequest(input: PatchToolInput, deps: AssistDeps): PatchRequest {
  if (!input || typeof input.patch !== 'string') throw new PlanError('`patch` must be a string: the patch\'s text.');
  return preparePatch(
    { patch: input.patch, format: input.format, root: input.root, match: input.match, file_path: input.file_path, format_edits: input.format_edits },
    { baseDir: deps.baseDir?.(), defaults: deps.defaults },
  );
}

/** The patch tool's confirmation; nothing to confirm for a preview (it changes nothing) or a refusal. */
export async function preparePatchToolInvocation(input: PatchToolInput, deps: AssistDeps): Promise<ToolPreparation> {
  if (input?.preview === true) return { invocationMessage: 'MultiEdit: previewing the patch', title: 'MultiEdit', message: '', confirm: false };
  let req: PatchRequest;
  try {
    req = patchToolRequest(input, deps);
  } catch (err) {
    const refusal: Refusal = { message: err instanceof PlanError ? err.message : String(err) };
    return { invocationMessage: 'MultiEdit: checking the patch', title: 'MultiEdit', message: refusal.message, refusal, confirm: false };
  }
  return prepareToolInvocation(req, deps);
}

/**
 * Runs the patch tool: `preview: true` answers with the diff the patch would make (multiedit.preview),
 * else the patch is applied (multiedit.apply). Returns the text for the model.
 */
export async function invokePatchTool(input: PatchToolInput, deps: AssistDeps): Promise<{ text: string; outcome: ChatOutcome }> {
  let req: PatchRequest;
  try {
    req = patchToolRequest(input, deps);
  } catch (err) {
    const refusal: Refusal = { message: err instanceof PlanError ? err.message : String(err) };
    return { text: renderToolResult({ refusal, patch: true }), outcome: { refusal } };
  }
  if (input.preview !== true) return invokeTool(req, deps);
  try {
    const result = await deps.preview(req);
    const head = `Preview only, nothing changed: ${planTitle(req, result)}.`;
    const text = result.diff && result.diff.trim() ? `${head}\n${result.diff.replace(/\n$/, '')}` : `${head}\n${result.message.trim()}`;
    return { text, outcome: { plan: req, result } };
  } catch (err) {
    const refusal = toRefusal(err);
    return { text: renderToolResult({ refusal, patch: true }), outcome: { plan: req, refusal } };
  }
}

// ---- the multiedit_symbols tool ---------------------------------------------------------------

export const SYMBOLS_TOOL_NAME = 'multiedit_symbols';

/** The `multiedit_symbols` tool's input (`server/schema/symbols.schema.json`). */
export interface SymbolsToolInput {
  file_path: string;
}

/** The file the symbols tool is asked about: absolute, or relative to the workspace folder. */
export function symbolsToolPath(input: SymbolsToolInput, deps: AssistDeps): string {
  if (!input || typeof input.file_path !== 'string' || !input.file_path) throw new PlanError('`file_path` must be the path of the file whose outline to give.');
  const p = fileUriToPath(input.file_path);
  if (p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p)) return p;
  const base = deps.baseDir?.();
  if (!base) throw new PlanError(`\`file_path\` must be absolute (got "${input.file_path}").`);
  return `${base.replace(/[\\/]+$/, '')}/${p.replace(/^\.\//, '')}`;
}

/** Runs the symbols tool: the outline as the server words it, or the refusal. */
export async function invokeSymbolsTool(input: SymbolsToolInput, deps: AssistDeps): Promise<{ text: string; outcome: ChatOutcome }> {
  try {
    const path = symbolsToolPath(input, deps);
    if (!deps.symbols) throw new PlanError('The language servers cannot be asked here.');
    const outline = await deps.symbols(path);
    return { text: outline.text.trimEnd() + renderEarlier(outline.earlier_diagnostics), outcome: {} };
  } catch (err) {
    const refusal = err instanceof PlanError ? { message: err.message } : toRefusal(err);
    return { text: `Error: no outline; nothing was read.\n${renderRefusalText(refusal)}`, outcome: { refusal } };
  }
}

export { planTargets };
