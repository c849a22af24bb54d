// The arithmetic of LSP WorkspaceEdits: applying text edits to a text, listing a WorkspaceEdit's files,
// where its new texts land. No `vscode` import: unit-tested with node's test runner.

export interface LspPosition {
  line: number;
  character: number;
}
export interface LspTextEdit {
  range: { start: LspPosition; end: LspPosition };
  newText: string;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\n') starts.push(i + 1);
  }
  return starts;
}

function offsetAt(text: string, starts: number[], pos: LspPosition): number {
  if (pos.line >= starts.length) return text.length;
  const lineStart = starts[pos.line];
  const lineEnd = pos.line + 1 < starts.length ? starts[pos.line + 1] - 1 : text.length;
  return Math.min(lineStart + pos.character, lineEnd);
}

/**
 * Applies LSP text edits (all relative to the original text, non-overlapping) and returns the
 * new text. Positions are in UTF-16 code units, like JavaScript strings.
 */
export function applyTextEdits(text: string, edits: LspTextEdit[]): string {
  const starts = lineStarts(text);
  const spans = edits
    .map((e, i) => ({ start: offsetAt(text, starts, e.range.start), end: offsetAt(text, starts, e.range.end), text: e.newText, i }))
    .sort((a, b) => a.start - b.start || a.end - b.end || a.i - b.i);
  let out = '';
  let cursor = 0;
  for (const s of spans) {
    if (s.start < cursor) throw new Error('overlapping text edits');
    out += text.slice(cursor, s.start) + s.text;
    cursor = s.end;
  }
  return out + text.slice(cursor);
}

export interface LspWorkspaceEdit {
  changes?: Record<string, LspTextEdit[]>;
  documentChanges?: unknown[];
}

/** Whether the edit asks VS Code for a review (the Refactor Preview): an annotation needs confirmation. */
export function hasConfirmation(edit: LspWorkspaceEdit): boolean {
  const annotations = (edit as { changeAnnotations?: Record<string, { needsConfirmation?: boolean }> }).changeAnnotations;
  return !!annotations && Object.values(annotations).some((a) => a.needsConfirmation);
}

export interface FileChange {
  uri: string;
  edits: LspTextEdit[];
  kind: 'edit' | 'create' | 'rename' | 'delete';
  /** For a rename: where the file goes (after its edits). */
  newUri?: string;
}

/**
 * Flattens an LSP WorkspaceEdit into per-file text edits: creates kept as empty files, a rename as
 * the old file (its edits, `newUri`), a delete as the file (its edits, if any, before it goes).
 */
export function workspaceEditFiles(edit: LspWorkspaceEdit | undefined): FileChange[] {
  const out = new Map<string, FileChange>();
  const get = (uri: string, kind: FileChange['kind'] = 'edit') => {
    let f = out.get(uri);
    if (!f) {
      f = { uri, edits: [], kind };
      out.set(uri, f);
    }
    return f;
  };
  if (!edit) return [];
  if (Array.isArray(edit.documentChanges)) {
    for (const c of edit.documentChanges as Record<string, unknown>[]) {
      if (c && typeof c === 'object' && 'textDocument' in c) {
        const td = c.textDocument as { uri: string };
        get(td.uri).edits.push(...((c.edits as LspTextEdit[]) ?? []));
      } else if (c && c.kind === 'create' && typeof c.uri === 'string') {
        get(c.uri, 'create').kind = 'create';
      } else if (c && c.kind === 'rename' && typeof c.oldUri === 'string' && typeof c.newUri === 'string') {
        const f = get(c.oldUri, 'rename');
        // a file created and then moved stays a creation (at its new place)
        if (f.kind !== 'create') f.kind = 'rename';
        f.newUri = c.newUri;
      } else if (c && c.kind === 'delete' && typeof c.uri === 'string') {
        get(c.uri, 'delete').kind = 'delete';
      }
    }
  } else if (edit.changes) {
    for (const [uri, edits] of Object.entries(edit.changes)) get(uri).edits.push(...edits);
  }
  return [...out.values()];
}

/**
 * Where each edit's new text lies once the edits (original coordinates, non-overlapping) are
 * applied: the ranges to highlight after an apply. UTF-16 columns; `\r\n`, `\r`, `\n` each end a line.
 */
export function rangesAfterEdits(edits: LspTextEdit[]): { start: LspPosition; end: LspPosition }[] {
  const sorted = [...edits].sort(
    (a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character,
  );
  const out: { start: LspPosition; end: LspPosition }[] = [];
  let lineDelta = 0;
  let prevEndLine = -1; // original line where the previous edit ended
  let charDelta = 0; // shift of the characters after the previous edit on that line
  for (const e of sorted) {
    const { start, end } = e.range;
    const startChar = start.line === prevEndLine ? start.character + charDelta : start.character;
    const newStart = { line: start.line + lineDelta, character: startChar };
    const parts = e.newText.split(/\r\n|\r|\n/);
    const newEnd =
      parts.length === 1
        ? { line: newStart.line, character: newStart.character + parts[0].length }
        : { line: newStart.line + parts.length - 1, character: parts[parts.length - 1].length };
    out.push({ start: newStart, end: newEnd });
    lineDelta += parts.length - 1 - (end.line - start.line);
    charDelta = newEnd.character - end.character;
    prevEndLine = end.line;
  }
  return out;
}
