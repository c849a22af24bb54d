// Where things are, for refusals you can act on: the lines a hint points at, and the place of a plan's
// edit in the plan's text. No `vscode` import: unit-tested with node's test runner.

/** 1-based inclusive line range. */
export interface LineRange {
  first: number;
  last: number;
}

/**
 * The lines the engine's hint points at: "The closest text is at lines 12-15 and differs in ...",
 * "The closest texts are at line 14 and ...", "new_string is already present at line 9 ...".
 */
export function hintLines(hint: string | null | undefined): LineRange | undefined {
  if (!hint) return undefined;
  const m = /closest texts? (?:is|are) at lines? (\d+)(?:-(\d+))?/.exec(hint) ?? /already present at lines? (\d+)(?:-(\d+))?/.exec(hint);
  if (!m) return undefined;
  const first = Number(m[1]);
  const last = m[2] ? Number(m[2]) : first;
  return first >= 1 && last >= first ? { first, last } : undefined;
}

/** Offsets [start, end) of a string literal (quotes included) in a text. */
export interface Span {
  start: number;
  end: number;
}

type Frame = { kind: 'obj'; key?: string; expectKey: boolean } | { kind: 'arr'; index: number };

/**
 * Finds `edits[editIndex].old_string` of a plan in its text (JSON with comments, possibly inside
 * Markdown or a tool call): the first string value whose path ends with `edits, editIndex,
 * old_string`, inside `files[fileIndex]` when `fileIndex` is given. A small lenient scanner: it only
 * follows JSON structure, so prose around the plan is skipped.
 */
export function locateEdit(text: string, editIndex: number, fileIndex?: number): Span | undefined {
  const stack: Frame[] = [];
  const path = (): (string | number)[] =>
    stack.map((f) => (f.kind === 'obj' ? (f.key ?? '') : f.index));
  const matches = (p: (string | number)[]): boolean => {
    const n = p.length;
    if (n < 3 || p[n - 1] !== 'old_string' || p[n - 2] !== editIndex || p[n - 3] !== 'edits') return false;
    if (fileIndex === undefined) return true;
    return n >= 5 && p[n - 4] === fileIndex && p[n - 5] === 'files';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/' && stack.length) {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*' && stack.length) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      continue;
    }
    if (c === '"' && stack.length) {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const end = Math.min(j + 1, text.length);
      const top = stack[stack.length - 1];
      if (top.kind === 'obj' && top.expectKey) {
        try {
          top.key = JSON.parse(text.slice(i, end)) as string;
        } catch {
          top.key = text.slice(i + 1, end - 1);
        }
        top.expectKey = false;
      } else if (matches(path())) {
        return { start: i, end };
      }
      i = end;
      continue;
    }
    if (c === '{') stack.push({ kind: 'obj', expectKey: true });
    else if (c === '[' && stack.length) stack.push({ kind: 'arr', index: 0 });
    else if (c === '}' || c === ']') {
      if (stack.length) stack.pop();
    } else if (c === ',' && stack.length) {
      const top = stack[stack.length - 1];
      if (top.kind === 'arr') top.index++;
      else {
        top.expectKey = true;
        top.key = undefined;
      }
    }
    i++;
  }
  return undefined;
}

/** Line (0-based) and character of an offset. */
export function offsetToPosition(text: string, offset: number): { line: number; character: number } {
  let line = 0;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, character: Math.min(offset, text.length) - lineStart };
}

/** Index in the plan's `files` of the file a refusal names (`undefined` for a single-file plan). */
export function fileIndexOf(files: { file_path?: string }[] | undefined, filePath: string | null | undefined): number | undefined {
  if (!files || !filePath) return undefined;
  const i = files.findIndex((f) => f.file_path === filePath);
  return i >= 0 ? i : undefined;
}
