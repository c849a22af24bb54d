// Plan parsing and preparation. No `vscode` import: unit-tested with node's test runner.
import type { CallOptions, ReviewPolicy } from './lsp_ext';


export interface PlanEdit {
  /** The exact text to replace; or, instead, `symbol` with `replace` or `insert`. */
  old_string?: string;
  new_string: string;
  replace_all?: boolean;
  expected_replacements?: number;
  /** A symbol's name path (`Calculator/add`), resolved by the editor's language servers. */
  symbol?: string;
  replace?: 'whole' | 'body';
  insert?: 'before' | 'after';
}

/** A rename through the editor's rename provider (the plan's `rename`). */
export interface PlanRename {
  file_path?: string;
  symbol?: string;
  line?: number;
  column?: number;
  new_name: string;
}

export interface FilePlan {
  file_path?: string;
  edits: PlanEdit[];
}

export interface Plan {
  file_path?: string;
  edits?: PlanEdit[];
  files?: FilePlan[];
  rename?: PlanRename;
  mode?: string;
  dialect?: string;
  match?: string;
  [key: string]: unknown;
}

export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

const FENCE = /(^|\n)[ \t]*(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n([\s\S]*?)\n[ \t]*\2[ \t]*(?=\n|$)/g;

/** Code blocks of a markdown text, in order; blocks tagged json/jsonc/multiedit first. */
export function fencedBlocks(text: string): string[] {
  const tagged: string[] = [];
  const other: string[] = [];
  for (const m of text.matchAll(FENCE)) {
    const lang = m[3].toLowerCase();
    const body = m[4];
    if (lang === 'json' || lang === 'jsonc' || lang === 'json5' || lang === 'multiedit') tagged.push(body);
    else if (lang === '' ) other.push(body);
  }
  return [...tagged, ...other];
}

/** The first balanced `{...}` or `[...]` span in text, if any (string literals respected). */
export function balancedJsonSpans(text: string): string[] {
  const spans: string[] = [];
  for (let start = 0; start < text.length; start++) {
    const open = text[start];
    if (open !== '{' && open !== '[') continue;
    const end = matchingClose(text, start);
    if (end > start) {
      spans.push(text.slice(start, end + 1));
      start = end;
    }
  }
  return spans;
}

function matchingClose(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function looksLikeEdit(v: unknown): boolean {
  return isRecord(v) && (typeof v.old_string === 'string' || typeof v.symbol === 'string') && 'new_string' in v;
}

/**
 * Turns a parsed JSON value into a plan. Accepts a plan object, a bare list of edits, a single
 * edit (with or without file_path), and tool-call wrappers such as
 * `{"name": "MultiEdit", "input": {...}}` (`input`, `arguments`, `parameters`, `args`).
 * Returns undefined when the value is not plan-like.
 */
export function coercePlan(value: unknown): Plan | undefined {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(looksLikeEdit)) return { edits: value as PlanEdit[] };
    if (value.length > 0 && value.every((f) => isRecord(f) && Array.isArray(f.edits))) return { files: value as FilePlan[] };
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  if (Array.isArray(value.edits) || Array.isArray(value.files) || isRecord(value.rename)) return { ...value } as Plan;
  if (looksLikeEdit(value)) {
    const { file_path, mode, dialect, match, ...edit } = value;
    const plan: Plan = { edits: [edit as unknown as PlanEdit] };
    if (typeof file_path === 'string') plan.file_path = file_path;
    if (typeof mode === 'string') plan.mode = mode;
    if (typeof dialect === 'string') plan.dialect = dialect;
    if (typeof match === 'string') plan.match = match;
    return plan;
  }
  for (const key of ['input', 'arguments', 'parameters', 'args', 'plan']) {
    let inner = value[key];
    if (typeof inner === 'string') {
      try {
        inner = JSON.parse(inner);
      } catch {
        continue;
      }
    }
    const plan = coercePlan(inner);
    if (plan) return plan;
  }
  return undefined;
}

/** Removes // and /* *\/ comments and trailing commas outside strings (JSONC → JSON). */
export function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\' && i + 1 < text.length) out += text[++i];
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else {
      out += c;
    }
  }
  return out.replace(/,(\s*[}\]])/g, (m, rest, offset) => (insideString(out, offset) ? m : rest));
}

function insideString(text: string, offset: number): boolean {
  let inString = false;
  for (let i = 0; i < offset; i++) {
    if (text[i] === '\\' && inString) i++;
    else if (text[i] === '"') inString = !inString;
  }
  return inString;
}

function tryParse(candidate: string): { plan?: Plan; error?: string } {
  let value: unknown;
  try {
    value = JSON.parse(candidate);
  } catch (e) {
    try {
      value = JSON.parse(stripJsonComments(candidate));
    } catch {
      return { error: (e as Error).message };
    }
  }
  const plan = coercePlan(value);
  return plan ? { plan } : { error: 'the JSON is not a MultiEdit plan (it needs "edits" or "files")' };
}

/**
 * Finds a plan in text: the whole text as JSON, else fenced code blocks (json first), else the
 * first balanced JSON object or array in the text. Throws PlanError when none is found.
 */
export function parsePlanText(text: string): Plan {
  const trimmed = text.trim();
  if (!trimmed) throw new PlanError('No plan: the text is empty.');
  const whole = tryParse(trimmed);
  if (whole.plan) return whole.plan;
  let firstError = /^[[{]/.test(trimmed) ? whole.error : undefined;
  for (const candidate of [...fencedBlocks(text), ...balancedJsonSpans(text)]) {
    const r = tryParse(candidate.trim());
    if (r.plan) return r.plan;
    firstError ??= r.error;
  }
  throw new PlanError(
    firstError
      ? `No MultiEdit plan found: ${firstError}.`
      : 'No MultiEdit plan found: expected JSON like {"file_path": "...", "edits": [{"old_string": "...", "new_string": "..."}]}, optionally in a ```json block.',
  );
}

/** Like parsePlanText but returns undefined instead of throwing. */
export function findPlan(text: string): Plan | undefined {
  try {
    return parsePlanText(text);
  } catch {
    return undefined;
  }
}

/** Structural checks the extension can do before asking the server (which checks everything). */
export function validatePlanShape(plan: Plan): void {
  const checkEdits = (edits: unknown, where: string) => {
    if (!Array.isArray(edits) || edits.length === 0) throw new PlanError(`${where}: "edits" must be a non-empty array.`);
    edits.forEach((e, i) => {
      if (!isRecord(e)) throw new PlanError(`${where}: edit ${i + 1} must be an object.`);
      if (e.symbol !== undefined && typeof e.symbol !== 'string') throw new PlanError(`${where}: edit ${i + 1}: "symbol" must be a string (a name path such as "Calculator/add").`);
      if (e.symbol === undefined && typeof e.old_string !== 'string') throw new PlanError(`${where}: edit ${i + 1} needs "old_string" (a string), or "symbol".`);
      if (typeof e.new_string !== 'string') throw new PlanError(`${where}: edit ${i + 1} needs "new_string" (a string).`);
      if (e.replace_all !== undefined && typeof e.replace_all !== 'boolean')
        throw new PlanError(`${where}: edit ${i + 1}: "replace_all" must be true or false.`);
      if (
        e.expected_replacements !== undefined &&
        !(typeof e.expected_replacements === 'number' && Number.isInteger(e.expected_replacements) && e.expected_replacements >= 1)
      )
        throw new PlanError(`${where}: edit ${i + 1}: "expected_replacements" must be an integer >= 1.`);
    });
  };
  if (plan.files !== undefined) {
    if (!Array.isArray(plan.files) || plan.files.length === 0) throw new PlanError('"files" must be a non-empty array.');
    if (plan.edits !== undefined) throw new PlanError('A plan has either "edits" (one file) or "files", not both.');
    plan.files.forEach((f, i) => {
      if (!isRecord(f)) throw new PlanError(`files[${i}] must be an object.`);
      checkEdits(f.edits, `files[${i}]`);
    });
  } else if (plan.edits !== undefined || plan.rename === undefined) {
    checkEdits(plan.edits, 'plan');
  }
  if (plan.rename !== undefined && (!isRecord(plan.rename) || typeof plan.rename.new_name !== 'string'))
    throw new PlanError('"rename" must be an object with "file_path", "symbol" (or "line" and "column") and "new_name".');
}

/** True when the plan (or one of its files) has no file_path. */
export function needsTarget(plan: EditRequest): boolean {
  if (isPatchRequest(plan)) return false;
  if (plan.files) return plan.files.some((f) => !f.file_path) || (!!plan.rename && !plan.rename.file_path);
  if (plan.edits === undefined && plan.rename) return !plan.rename.file_path;
  return !plan.file_path || (!!plan.rename && !plan.rename.file_path);
}

export interface PrepareOptions {
  /** Absolute path used where the plan gives no file_path. */
  targetPath?: string;
  /** Folder against which relative file paths are resolved. */
  baseDir?: string;
  /** Values for mode/dialect/match used where the plan names none (only non-default ones are added). */
  defaults?: { mode?: string; dialect?: string; match?: string };
}

const DEFAULTS: Record<string, string> = { mode: 'atomic', dialect: 'sequential', match: 'exact' };

function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\') || /^file:\/\//i.test(p);
}

function joinPath(base: string, rel: string): string {
  const sep = base.includes('\\') && !base.includes('/') ? '\\' : '/';
  const parts = (base.replace(/[\\/]+$/, '') + sep + rel.replace(/^\.[\\/]/, '')).split(/[\\/]/);
  const out: string[] = [];
  for (const part of parts) {
    if (part === '..' && out.length > 1) out.pop();
    else if (part !== '.') out.push(part);
  }
  return out.join(sep);
}

/** `file://` URIs become paths; other strings are returned unchanged. */
export function fileUriToPath(p: string): string {
  if (!/^file:\/\//i.test(p)) return p;
  let rest = decodeURIComponent(p.replace(/^file:\/\/[^/]*/i, ''));
  if (/^\/[A-Za-z]:/.test(rest)) rest = rest.slice(1);
  return rest;
}

/**
 * Returns a copy of the plan ready for the server: missing file_path filled with targetPath,
 * relative paths resolved against baseDir, file:// URIs turned into paths, defaults added.
 * Throws PlanError when a file_path is missing and no target is known.
 */
export function preparePlan(plan: Plan, opts: PrepareOptions = {}): Plan {
  validatePlanShape(plan);
  const fix = (p: string | undefined, where: string): string => {
    if (p === undefined || p === '') {
      if (!opts.targetPath)
        throw new PlanError(`${where} has no "file_path" and there is no active file to apply it to. Open the file or add "file_path".`);
      return opts.targetPath;
    }
    if (typeof p !== 'string') throw new PlanError(`${where}: "file_path" must be a string.`);
    const path = fileUriToPath(p);
    if (isAbsolutePath(path)) return path;
    if (!opts.baseDir) throw new PlanError(`${where}: "file_path" must be absolute (got "${p}").`);
    return joinPath(opts.baseDir, path);
  };
  const out: Plan = { ...plan };
  delete out.$schema; // allowed in plan files for editors, unknown to the server
  if (plan.files) out.files = plan.files.map((f, i) => ({ ...f, file_path: fix(f.file_path, `files[${i}]`) }));
  else if (plan.edits !== undefined || !plan.rename) out.file_path = fix(plan.file_path, 'The plan');
  if (plan.rename) out.rename = { ...plan.rename, file_path: fix(plan.rename.file_path, 'The rename') };
  for (const key of ['mode', 'dialect', 'match'] as const) {
    const v = opts.defaults?.[key];
    if (out[key] === undefined && v && v !== DEFAULTS[key]) out[key] = v;
  }
  return out;
}

/**
 * Whether a plan is reviewed in the editor before it applies: the plan's own `review` (a policy or a
 * boolean) or else the setting; `multiFile` means plans that edit two files or more.
 */
export function reviewFor(plan: EditRequest, setting: ReviewPolicy | undefined): boolean {
  const policy = reviewPolicyFor(plan, setting);
  if (policy === 'always') return true;
  if (policy === 'multiFile') return isPatchRequest(plan) ? patchHeaderFiles(plan.patch).length !== 1 : ((plan as Plan).files?.length ?? 1) > 1;
  return false;
}

/** The review policy of a request: its own `review` (a policy or a boolean), else the setting. */
export function reviewPolicyFor(plan: EditRequest, setting: ReviewPolicy | undefined): ReviewPolicy {
  const own = plan.review;
  return own === true ? 'always' : own === false ? 'never' : typeof own === 'string' ? (own as ReviewPolicy) : (setting ?? 'multiFile');
}

/**
 * The command arguments for the server: the request without the extension-side `review` and
 * `diagnostics` fields, then the call's options (a `diagnostics` that is not errors, warnings or off
 * is left to the setting).
 */
export function serverArguments(plan: EditRequest, review: boolean | ReviewPolicy, agent?: string): [EditRequest, CallOptions] {
  // `format_edits` is the extension's: it formats the edit before VS Code applies it.
  const { review: _ignored, format_edits: _format, diagnostics, ...rest } = plan as EditRequest & { diagnostics?: unknown; format_edits?: unknown };
  const options: CallOptions = { review };
  if (agent) options.agent = agent;
  if (diagnostics === 'errors' || diagnostics === 'warnings' || diagnostics === 'off') options.diagnostics = diagnostics;
  return [rest as EditRequest, options];
}

/**
 * The review option sent with a request: a plan's is decided here (true/false); a patch's `multiFile`
 * goes to the server as is, since only the server knows how many files the patch changes.
 */
export function reviewArgument(plan: EditRequest, setting: ReviewPolicy | undefined): boolean | ReviewPolicy {
  const policy = reviewPolicyFor(plan, setting);
  if (isPatchRequest(plan) && policy === 'multiFile') return policy;
  return reviewFor(plan, setting);
}

/** Paths the plan edits, in order (a patch: the files its headers name). */
export function planTargets(plan: EditRequest): string[] {
  if (isPatchRequest(plan)) return patchHeaderFiles(plan.patch);
  const own = plan.files ? plan.files.map((f) => f.file_path ?? '') : plan.edits !== undefined || !plan.rename ? [plan.file_path ?? ''] : [];
  const renamed = plan.rename?.file_path;
  return renamed !== undefined && !own.includes(renamed) ? [...own, renamed] : own;
}

export function planEditCount(plan: EditRequest): number {
  if (isPatchRequest(plan)) return 0;
  const rename = plan.rename ? 1 : 0;
  if (plan.files) return rename + plan.files.reduce((n, f) => n + (Array.isArray(f.edits) ? f.edits.length : 0), 0);
  return rename + (Array.isArray(plan.edits) ? plan.edits.length : 0);
}

/** Builds a single-file plan from old/new pairs (the "Replace in This File..." flow). */
export function planFromPairs(filePath: string, pairs: { old: string; new: string; all?: boolean }[]): Plan {
  if (pairs.length === 0) throw new PlanError('No replacements given.');
  return {
    file_path: filePath,
    edits: pairs.map((p) => ({ old_string: p.old, new_string: p.new, ...(p.all ? { replace_all: true } : {}) })),
  };
}

// ---- patches ----------------------------------------------------------------------------------

/**
 * A patch for the server to parse (`server/schema/patch.schema.json`): a unified diff, an apply_patch
 * envelope or SEARCH/REPLACE blocks. The extension never parses hunks; it only recognises the text.
 */
export type PatchRequest = {
  patch: string;
  format?: 'auto' | 'plan' | 'diff' | 'apply-patch' | 'search-replace';
  /** The folder the patch's relative paths start from. */
  root?: string;
  match?: 'exact' | 'tolerant';
  /** The file of SEARCH/REPLACE blocks that name none (Roo Code's). */
  file_path?: string;
  /** Extension-side only, like a plan's: whether the user reviews it in the Refactor Preview. */
  review?: unknown;
  /** Extension-side only: which diagnostics the result reports ("errors", "warnings", "off"). */
  diagnostics?: unknown;
  /** Extension-side only: whether the editor's formatter runs on the touched lines. */
  format_edits?: unknown;
};

/** What the palette, the chat and the tools send the server: a plan or a patch. */
export type EditRequest = Plan | PatchRequest;

export function isPatchRequest(v: unknown): v is PatchRequest {
  return isRecord(v) && typeof v.patch === 'string';
}

const PATCH_TAGS = new Set(['diff', 'patch', 'udiff', 'git-diff']);

/** Blocks of a markdown text tagged `diff` or `patch`, in order. */
export function patchBlocks(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(FENCE)) if (PATCH_TAGS.has(m[3].toLowerCase())) out.push(m[4]);
  return out;
}

/**
 * Whether a patch marker starts a line: `*** Begin Patch`, `diff --git `, a `--- ` line followed by a
 * `+++ ` line, `@@ -`, `<<<<<<< SEARCH` or `------- SEARCH`.
 */
export function looksLikePatch(text: string): boolean {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.trim() === '*** Begin Patch') return true;
    if (l.startsWith('diff --git ') || l.startsWith('@@ -')) return true;
    if (l.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) return true;
    if (/^(<{5,9}|-{5,9})[ \t]*SEARCH[ \t]*$/.test(l)) return true;
  }
  return false;
}

/**
 * The patch in a text, or undefined: the blocks tagged diff/patch of a markdown text (joined), else
 * the whole text when a patch marker starts one of its lines (the server skips the prose around it,
 * and SEARCH/REPLACE blocks need the path written before their fence).
 */
export function findPatchText(text: string): string | undefined {
  const blocks = patchBlocks(text).filter((b) => b.trim());
  if (blocks.length) return blocks.map((b) => b.replace(/\n?$/, '\n')).join('');
  return looksLikePatch(text) ? text : undefined;
}

/**
 * A plan or a patch in text: a whole JSON plan first; then a block tagged diff/patch; then a plan in a
 * json-tagged block; then a patch marker at a line start (the whole text); then any other JSON the
 * text holds. Throws PlanError when there is neither.
 */
export function parseRequestText(text: string): EditRequest {
  const trimmed = text.trim();
  if (!trimmed) throw new PlanError('No plan or patch: the text is empty.');
  const whole = tryParse(trimmed);
  if (whole.plan) return whole.plan;
  const blocks = patchBlocks(text).filter((b) => b.trim());
  if (blocks.length) return { patch: findPatchText(text)! };
  for (const m of text.matchAll(FENCE)) {
    const lang = m[3].toLowerCase();
    if (lang !== 'json' && lang !== 'jsonc' && lang !== 'json5' && lang !== 'multiedit') continue;
    const r = tryParse(m[4].trim());
    if (r.plan) return r.plan;
  }
  if (looksLikePatch(text)) return { patch: text };
  try {
    return parsePlanText(text);
  } catch (err) {
    if (err instanceof PlanError && /^No MultiEdit plan found: expected JSON/.test(err.message))
      throw new PlanError(
        'No MultiEdit plan or patch found: expected a JSON plan like {"file_path": "...", "edits": [{"old_string": "...", "new_string": "..."}]}, ' +
          'a unified diff (git diff), an apply_patch envelope (*** Begin Patch) or SEARCH/REPLACE blocks.',
      );
    throw err;
  }
}

/** Like parseRequestText but returns undefined instead of throwing. */
export function findRequest(text: string): EditRequest | undefined {
  try {
    return parseRequestText(text);
  } catch {
    return undefined;
  }
}

/**
 * A patch request ready for the server: `root` (when the request names none) is the workspace folder,
 * `match` the default when it is not exact; nothing else is added (the server takes patch, format,
 * root and match only).
 */
export function preparePatch(req: PatchRequest, opts: Pick<PrepareOptions, 'baseDir' | 'defaults'> = {}): PatchRequest {
  if (typeof req.patch !== 'string' || !req.patch.trim()) throw new PlanError('The patch is empty.');
  const out: PatchRequest = { patch: req.patch };
  if (req.format !== undefined && req.format !== 'auto') out.format = req.format;
  const root = req.root !== undefined && req.root !== '' ? fileUriToPath(req.root) : opts.baseDir;
  if (root) out.root = root;
  const match = req.match ?? (opts.defaults?.match === 'tolerant' ? 'tolerant' : undefined);
  if (match !== undefined && match !== 'exact') out.match = match;
  if (req.file_path !== undefined && req.file_path !== '') out.file_path = fileUriToPath(req.file_path);
  if (req.review !== undefined) out.review = req.review;
  if (req.diagnostics !== undefined) out.diagnostics = req.diagnostics;
  if (req.format_edits !== undefined) out.format_edits = req.format_edits;
  return out;
}

/** A plan through preparePlan, a patch through preparePatch. */
export function prepareRequest(req: EditRequest, opts: PrepareOptions = {}): EditRequest {
  return isPatchRequest(req) ? preparePatch(req, opts) : preparePlan(req as Plan, opts);
}

/**
 * The files a patch's headers name (for titles only, before the server answers): `diff --git`
 * and `+++`/`---` headers, apply_patch's `*** Update/Add/Delete File:`. Renames read `old → new`.
 * SEARCH/REPLACE blocks are not looked into (their paths need the server's reading).
 */
export function patchHeaderFiles(text: string): string[] {
  const names: string[] = [];
  const add = (n: string) => {
    if (n && !names.includes(n)) names.push(n);
  };
  const strip = (p: string) => p.trim().replace(/\t.*$/, '').replace(/^"(.*)"$/, '$1').replace(/^[ab]\//, '');
  const lines = text.split(/\r?\n/);
  let gitFile: string | undefined;
  let renameFrom: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    let m: RegExpExecArray | null;
    if ((m = /^diff --git (?:"?a\/)?(.+?)"? (?:"?b\/)?(.+?)"?$/.exec(l))) {
      gitFile = m[2];
      renameFrom = undefined;
      add(gitFile);
    } else if ((m = /^rename from (.+)$/.exec(l))) renameFrom = m[1];
    else if ((m = /^rename to (.+)$/.exec(l)) && renameFrom) {
      const at = names.indexOf(gitFile ?? m[1]);
      const label = `${renameFrom} → ${m[1]}`;
      if (at >= 0) names[at] = label;
      else add(label);
    } else if (l.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      const from = strip(l.slice(4));
      const to = strip(lines[i + 1].slice(4));
      i++;
      if (gitFile !== undefined) continue; // the diff --git line named it
      add(to === '/dev/null' ? from : to);
    } else if ((m = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/.exec(l))) add(m[1].trim());
    else if ((m = /^\*\*\* Move to: (.+)$/.exec(l)) && names.length) names[names.length - 1] += ` → ${m[1].trim()}`;
  }
  return names;
}
