// Rendering of server results and refusals for notifications, chat and language model tools.
// No `vscode` import: unit-tested with node's test runner.
import type { EarlierDiagnostics, FileResult, PlanResult, RefusalData } from './lsp_ext';
import { EditRequest, isPatchRequest, PlanEdit, planEditCount, planTargets } from './plan';

/** A refusal by the server (JSON-RPC error) or a failure before reaching it. */
export interface Refusal {
  message: string;
  /** A JSON-RPC error's `data`, read leniently: an error that is no refusal of the server's may lack any field. */
  data?: Partial<RefusalData>;
  code?: number;
}

export function isPlanResult(v: unknown): v is PlanResult {
  return typeof v === 'object' && v !== null && typeof (v as PlanResult).message === 'string';
}

/** Normalises anything thrown by a request (ResponseError, Error, string) to a Refusal. */
export function toRefusal(err: unknown): Refusal {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; data?: unknown; code?: unknown };
    const message = typeof e.message === 'string' ? e.message : String(err);
    const data = typeof e.data === 'object' && e.data !== null ? (e.data as RefusalData) : undefined;
    return { message, data, code: typeof e.code === 'number' ? e.code : undefined };
  }
  return { message: String(err) };
}

function basename(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

function oneLine(text: string, max = 300): string {
  const s = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/** Number of edits the server reports as applied. */
export function editsApplied(result: PlanResult): number {
  return (result.files ?? []).reduce((n, f) => n + (f.edits_applied ?? 0), 0);
}

const TIER_TEXT: Record<string, string> = {
  line_trimmed: 'ignoring trailing whitespace',
  indentation: 'ignoring indentation',
  quotes: 'ignoring quote and dash style',
};

/** "edit 2 matched ignoring indentation" lines for edits found by the tolerant matcher. */
export function tolerantMatches(result: PlanResult): string[] {
  const out: string[] = [];
  const many = (result.files?.length ?? 0) > 1;
  for (const f of result.files ?? []) {
    for (const t of f.tiers ?? []) {
      out.push(`edit ${t.edit_index + 1}${many ? ` in ${basename(f.file_path)}` : ''} matched ${TIER_TEXT[t.tier] ?? t.tier}`);
    }
  }
  return out;
}

/** Short text for a notification after a successful apply. */
export function renderApplyNotification(result: PlanResult, req?: EditRequest): string {
  const first = (result.message.split('\n')[0] ?? '').replace(/:\s*$/, '');
  const failed = result.edits_failed?.length ?? 0;
  const files = result.files ?? [];
  const n = editsApplied(result);
  const patch = !!req && isPatchRequest(req);
  const unit = patch ? 'hunk' : 'edit';
  const summary =
    patch && files.length
      ? `Applied the patch: ${n} ${unit}${n === 1 ? '' : 's'} to ${files.length} file${files.length === 1 ? '' : 's'} (${files.map(fileLabel).join(', ')})`
      : files.length > 1
        ? `Applied ${n} edit${n === 1 ? '' : 's'} to ${files.length} files (${files.map(fileLabel).join(', ')})`
        : first || `Applied ${n} edit${n === 1 ? '' : 's'}`;
  let tail = failed > 0 ? ` (${failed} edit${failed === 1 ? '' : 's'} failed; see the log)` : '';
  const tolerant = tolerantMatches(result);
  if (tolerant.length) tail += ` (${tolerant.join('; ')})`;
  return `MultiEdit: ${summary}${tail}. Undo with Ctrl+Z.`;
}

/** True when the result should be shown as a warning (partial success or ok=false). */
export function isPartial(result: PlanResult): boolean {
  return !result.ok || (result.edits_failed?.length ?? 0) > 0;
}

/** Full text of a refusal: the engine's message plus the hint, if any. */
export function renderRefusalText(refusal: Refusal): string {
  let text = refusal.message.trim();
  const hint = refusal.data?.hint?.trim();
  if (hint && !text.includes(hint)) text += `\nHint: ${hint}`;
  return text;
}

/**
 * The hunk a patch's refusal names ("hunk 1 of a.txt, at line 3"), when its message starts with one
 * (the server starts the sentence with "Hunk"; the location reads mid-sentence, in lower case).
 */
export function refusedHunk(refusal: Refusal): string | undefined {
  const m = /^(?:[A-Za-z]+Error: )?([Hh]unk \d+ of .+?) (?:does not apply|matches|adds or removes)\b/m.exec(refusal.message);
  return m ? 'h' + m[1].slice(1) : undefined;
}

/** Where the refusal happened, e.g. "edit 2 in foo.txt" or "hunk 1 of a.txt, at line 3", or '' when unknown. */
export function refusalLocation(refusal: Refusal): string {
  const hunk = refusedHunk(refusal);
  if (hunk) return hunk;
  const d = refusal.data;
  if (!d) return '';
  const parts: string[] = [];
  if (typeof d.edit_index === 'number') parts.push(`edit ${d.edit_index + 1}`);
  if (d.file_path) parts.push(`in ${basename(d.file_path)}`);
  return parts.join(' ');
}

/** "plan" or "patch": what the user gave, in messages. */
export function requestNoun(req: EditRequest | undefined): string {
  return req && isPatchRequest(req) ? 'patch' : 'plan';
}

/** One-line text for an error notification. */
export function renderRefusalNotification(refusal: Refusal, req?: EditRequest): string {
  const where = refusalLocation(refusal);
  const hint = refusal.data?.hint?.trim();
  const message = oneLine(refusal.message);
  const tail = hint && !refusal.message.includes(hint) ? ` — Hint: ${oneLine(hint)}` : '';
  return `MultiEdit refused the ${requestNoun(req)}${where ? ` (${where})` : ''}: ${message}${tail}`;
}

function fence(text: string, lang = ''): string {
  let ticks = '```';
  while (text.includes(ticks)) ticks += '`';
  return `${ticks}${lang}\n${text.replace(/\n$/, '')}\n${ticks}`;
}

/** Markdown for the chat participant after a successful apply. */
export function renderResultMarkdown(result: PlanResult): string {
  const lines = result.message.split('\n');
  const head = lines[0] ?? '';
  const rest = lines.slice(1).join('\n').trim();
  let md = `**${escapeMarkdown(head.replace(/:\s*$/, ''))}**\n\n`;
  if (rest) md += fence(rest) + '\n\n';
  const failed = result.edits_failed?.length ?? 0;
  const tolerant = tolerantMatches(result);
  if (tolerant.length) md += `Note: ${escapeMarkdown(tolerant.join('; '))}.\n\n`;
  if (failed > 0) md += `⚠️ ${failed} edit${failed === 1 ? '' : 's'} failed and ${failed === 1 ? 'was' : 'were'} skipped.\n\n`;
  if (result.diagnostics_text) md += diagnosticsMarkdown(result.diagnostics_text);
  return md;
}

/** A diagnostics text (a delta, or the sentence saying it comes later) as chat markdown, line by line. */
export function diagnosticsMarkdown(text: string): string {
  return text.split('\n').map((l) => escapeMarkdown(l)).join('  \n') + '\n\n';
}

/** Markdown for the chat participant after a refusal. */
export function renderRefusalMarkdown(refusal: Refusal, req?: EditRequest): string {
  const where = refusalLocation(refusal);
  let md = `**MultiEdit refused the ${requestNoun(req)}${where ? ` (${escapeMarkdown(where)})` : ''}; nothing was changed.**\n\n`;
  md += fence(refusal.message.trim()) + '\n\n';
  const hint = refusal.data?.hint?.trim();
  if (hint) md += `Hint: ${escapeMarkdown(hint)}\n\n`;
  return md;
}

export function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_{}[\]<>#|~])/g, '\\$1');
}

/**
 * The deltas of an agent's earlier edits, which had not settled when they were answered: after
 * whatever its next call returns (a plan's result, an outline).
 */
export function renderEarlier(earlier: EarlierDiagnostics[] | undefined): string {
  return (earlier ?? []).map((e) => `\n\nDiagnostics of your earlier edit (${e.label}):\n${e.text}`).join('');
}

/** Text given back to a language model after the tool ran. */
export function renderToolResult(outcome: { result?: PlanResult; refusal?: Refusal; patch?: boolean }): string {
  if (outcome.result) {
    const r = outcome.result;
    let text = r.message.trim();
    if (!r.ok && !/^error/i.test(text)) text = `Error: ${text}`;
    // Whether the agent's next step (tests, compiler, git) will see the edit on disk.
    if (r.on_disk_text) text += `\n\n${r.on_disk_text}`;
    if (r.diagnostics_text) text += `\n\n${r.diagnostics_text}`;
    // Last, as the agent's next old_string must match these lines.
    if (r.now_reads_text) text += `\n\n${r.now_reads_text}`;
    return text + renderEarlier(r.earlier_diagnostics);
  }
  const refusal = outcome.refusal ?? { message: 'Unknown error.' };
  const where = refusalLocation(refusal);
  // "at edit 2 in a.ts", or only "in a.ts" for a refusal of no one edit (a rename's).
  const at = where ? (where.startsWith('in ') ? ` ${where}` : ` at ${where}`) : '';
  if (outcome.patch) return `Error: the patch was refused${at}; no file was changed.\n${renderRefusalText(refusal)}`;
  return `Error: the edit plan was refused${at}; no file was changed.\n${renderRefusalText(refusal)}`;
}

function shorten(s: string, max = 60): string {
  const oneline = s.replace(/\n/g, '⏎');
  return oneline.length > max ? oneline.slice(0, max - 1) + '…' : oneline;
}

/** One line per edit: `1. "old" → "new"` (with replace_all / expected_replacements notes). */
export function describeEdits(edits: PlanEdit[]): string[] {
  return edits.map((e, i) => {
    const place = e.symbol !== undefined ? `${e.insert ? `insert ${e.insert}` : `replace ${e.replace ?? 'whole'} of`} ${e.symbol}:` : JSON.stringify(shorten(e.old_string ?? ''));
    let line = `${i + 1}. ${place} → ${JSON.stringify(shorten(e.new_string))}`;
    if (e.replace_all) line += ' (all occurrences)';
    if (e.expected_replacements !== undefined) line += ` (${e.expected_replacements} occurrences)`;
    return line;
  });
}

/** A result's file as a patch title names it: `a.txt`, `old.txt → new.txt`, `gone.txt (deleted)`. */
export function fileLabel(f: FileResult): string {
  if (f.moved_to) return `${basename(f.file_path)} → ${basename(f.moved_to)}`;
  if (f.deleted) return `${basename(f.file_path)} (deleted)`;
  return basename(f.file_path);
}

function patchTitle(names: string[]): string {
  const n = names.length;
  if (n === 0) return 'patch';
  const files = `${n} file${n === 1 ? '' : 's'}`;
  return n <= 3 ? `patch (${files}: ${names.join(', ')})` : `patch (${files})`;
}

/**
 * Title for a plan: "3 edits to foo.txt" or "5 edits to 2 files"; for a patch "patch (2 files: a.txt,
 * old.txt → new.txt)", from the server's result when there is one, else from the patch's headers.
 */
export function planTitle(plan: EditRequest, result?: PlanResult): string {
  if (isPatchRequest(plan)) {
    if (result?.files?.length) return patchTitle(result.files.map(fileLabel));
    return patchTitle(
      planTargets(plan).map((t) =>
        t
          .split(' → ')
          .map((p) => basename(p))
          .join(' → '),
      ),
    );
  }
  const n = planEditCount(plan);
  const targets = planTargets(plan);
  const edits = `${n} edit${n === 1 ? '' : 's'}`;
  return targets.length === 1 ? `${edits} to ${basename(targets[0])}` : `${edits} to ${targets.length} files`;
}

const MAX_DIFF = 24000;

function cutDiff(diff: string): string {
  return diff.length > MAX_DIFF ? diff.slice(0, MAX_DIFF) + '\n… (diff cut)' : diff;
}

/**
 * Markdown shown in the tool's confirmation: per file its path and its edits as a list, then the diff
 * in one ```diff block, so the user reads exactly what will change before allowing it. The diff comes
 * last because VS Code's modal confirmation (a tool called outside a chat view) shows this as plain
 * text, where a code block runs into whatever follows it on the same line.
 */
export function renderConfirmationMarkdown(plan: EditRequest, diff?: string | null, result?: PlanResult): string {
  const hasDiff = !!diff && !!diff.trim();
  if (isPatchRequest(plan)) {
    let md = `Apply **${escapeMarkdown(planTitle(plan, result))}**? All hunks apply together, or none; one undo takes them back.\n\n`;
    if (hasDiff) md += fence(cutDiff(diff!), 'diff') + '\n';
    return md;
  }
  const files = plan.files ?? (plan.edits !== undefined ? [{ file_path: plan.file_path, edits: plan.edits }] : []);
  let md = `Apply **${escapeMarkdown(planTitle(plan))}**? All edits apply together, or none; one undo takes them back.\n\n`;
  if (plan.rename) md += `Rename ${codeSpan(plan.rename.symbol ?? `line ${plan.rename.line}, column ${plan.rename.column}`)} of ${codeSpan(basename(plan.rename.file_path ?? ''))} to ${codeSpan(plan.rename.new_name)}, everywhere the language server finds it, first.\n\n`;
  for (const f of files) {
    const filePath = f.file_path ?? '';
    const n = f.edits?.length ?? 0;
    // Code spans, not escapes: the plain-text confirmation shows a Markdown escape's backslash.
    md += `**${codeSpan(basename(filePath))}** (${codeSpan(filePath)}), ${n} edit${n === 1 ? '' : 's'}:\n\n`;
    md += describeEdits(f.edits ?? []).map((line) => `- ${codeSpan(line)}`).join('\n') + '\n\n';
  }
  if (hasDiff) md += fence(cutDiff(diff!), 'diff') + '\n';
  return md;
}

/** `text` as inline code, whatever backticks it holds. */
function codeSpan(text: string): string {
  let ticks = '`';
  while (text.includes(ticks)) ticks += '`';
  return ticks.length > 1 ? `${ticks} ${text} ${ticks}` : `${ticks}${text}${ticks}`;
}
