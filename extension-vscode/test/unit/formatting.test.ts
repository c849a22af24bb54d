import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyFormatting, disjointEdits, spanEdit, touchedLines } from '../../src/formatting';
import { applyTextEdits } from '../../src/workspaceEdit';

const at = (line: number, character: number) => ({ line, character });

describe('formatting the touched lines', () => {
  it('finds the lines the new text occupies after the edits, merging neighbours', () => {
    const edits = [
      // line 1 becomes two lines, line 2 stays next to them, line 6 is apart
      { range: { start: at(1, 4), end: at(1, 9) }, newText: 'a\nb' },
      { range: { start: at(2, 0), end: at(2, 1) }, newText: 'c' },
      { range: { start: at(6, 0), end: at(6, 0) }, newText: 'd' },
    ];
    assert.deepEqual(touchedLines(edits), [
      { first: 1, last: 3 },
      { first: 7, last: 7 },
    ]);
  });

  it('turns the formatted text into one edit of the text before, between the common start and end', () => {
    const before = 'export function add() {\n    return a + b;\n}\n';
    const after = 'export function add() {\n    const sum = a + b;\n    return sum;\n}\n';
    const edit = spanEdit(before, after)!;
    assert.deepEqual(edit.range, { start: at(1, 4), end: at(1, 16) });
    assert.equal(applyTextEdits(before, [edit]), after);
    assert.equal(spanEdit(before, before), undefined);
  });

  it('applies a formatter answer for two ranges once, dropping repeats and overlaps', () => {
    const text = 'a=1\nb=2\n';
    const space = { range: { start: at(0, 1), end: at(0, 2) }, newText: ' = ' };
    const overlapping = { range: { start: at(0, 0), end: at(0, 3) }, newText: 'X' };
    const second = { range: { start: at(1, 1), end: at(1, 2) }, newText: ' = ' };
    assert.deepEqual(disjointEdits([space, second, space], text), [space, second]);
    assert.equal(applyFormatting(text, [space, overlapping, second, space]), 'X\nb = 2\n');
  });
});
