// Text arithmetic of formatting an edit's touched regions (formatHost.ts runs the editor's formatter).
// No `vscode` import: unit-tested with node's test runner.
import { offsetToPosition } from './locate';
import { applyTextEdits, LspTextEdit, rangesAfterEdits } from './workspaceEdit';

export interface LineSpan {
  /** 0-based, inclusive. */
  first: number;
  last: number;
}

/** The whole lines the edits' new text occupies once they are applied, overlapping or adjacent spans merged. */
export function touchedLines(edits: LspTextEdit[]): LineSpan[] {
  const spans = rangesAfterEdits(edits)
    .map((r) => ({ first: r.start.line, last: r.end.line }))
    .sort((a, b) => a.first - b.first);
  const out: LineSpan[] = [];
  for (const s of spans) {
    const prev = out[out.length - 1];
    if (prev && s.first <= prev.last + 1) prev.last = Math.max(prev.last, s.last);
    else out.push({ ...s });
  }
  return out;
}

/** The edits a formatter proposed for several ranges, without repeats or overlaps (of two that overlap, the one that starts first). */
export function disjointEdits(edits: LspTextEdit[], text: string): LspTextEdit[] {
  const offsets = (e: LspTextEdit) => [offsetOf(text, e.range.start), offsetOf(text, e.range.end)];
  const sorted = edits.map((e) => ({ e, o: offsets(e) })).sort((a, b) => a.o[0] - b.o[0] || a.o[1] - b.o[1]);
  const out: LspTextEdit[] = [];
  let end = -1;
  let lastKey = '';
  for (const { e, o } of sorted) {
    const key = `${o[0]}:${o[1]}:${e.newText}`;
    if (key === lastKey) continue;
    if (o[0] < end) continue;
    out.push(e);
    end = o[1];
    lastKey = key;
  }
  return out;
}

function offsetOf(text: string, pos: { line: number; character: number }): number {
  let line = 0;
  let i = 0;
  while (line < pos.line && i < text.length) {
    if (text[i] === '\n') line++;
    i++;
  }
  if (line < pos.line) return text.length;
  const lineEnd = text.indexOf('\n', i);
  return Math.min(i + pos.character, lineEnd < 0 ? text.length : lineEnd);
}

/**
 * One edit that takes `before` to `after`: the span between their common start and common end, in
 * `before`'s coordinates. Undefined when they are equal.
 */
export function spanEdit(before: string, after: string): LspTextEdit | undefined {
  if (before === after) return undefined;
  let start = 0;
  const max = Math.min(before.length, after.length);
  while (start < max && before[start] === after[start]) start++;
  let end = 0;
  while (end < max - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return {
    range: { start: offsetToPosition(before, start), end: offsetToPosition(before, before.length - end) },
    newText: after.slice(start, after.length - end),
  };
}

/** `text` with the formatter's `edits` applied (overlaps dropped). */
export function applyFormatting(text: string, edits: LspTextEdit[]): string {
  return applyTextEdits(text, disjointEdits(edits, text));
}
