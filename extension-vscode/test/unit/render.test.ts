import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeEdits, isPartial, planTitle, Refusal, renderApplyNotification, renderConfirmationMarkdown, renderRefusalMarkdown, renderRefusalNotification, renderRefusalText, renderResultMarkdown, renderToolResult, toRefusal } from '../../src/render';
import { applyTextEdits, rangesAfterEdits, workspaceEditFiles } from '../../src/workspaceEdit';
import { planResult, refusalData } from './fixtures';

const result = planResult({
  ok: true,
  message: 'Applied 2 edits to /ws/a.txt:\n1. Replaced "a" with "b"\n2. Replaced "c" with "d"',
  files: [{ file_path: '/ws/a.txt', edits_applied: 2, replacements: 2, created: false }],
  edits_failed: [],
});

const refusal: Refusal = {
  message: 'String to replace not found in file.\nString: foo',
  data: { kind: 'not_found', edit_index: 1, file_path: '/ws/a.txt', message: 'String to replace not found in file.\nString: foo', hint: 'Read the file again.' },
};

describe('results', () => {
  it('renders a notification from the first line', () => {
    assert.equal(renderApplyNotification(result), 'MultiEdit: Applied 2 edits to /ws/a.txt. Undo with Ctrl+Z.');
    assert.equal(isPartial(result), false);
  });
  it('summarises a multi-file result', () => {
    const multi = planResult({
      ok: true,
      message: 'Applied 1 edit to /ws/a.txt:\n1. x\n\nApplied 2 edits to /ws/b.txt:\n1. y\n2. z',
      files: [
        { file_path: '/ws/a.txt', edits_applied: 1 },
        { file_path: '/ws/b.txt', edits_applied: 2 },
      ],
    });
    assert.equal(renderApplyNotification(multi), 'MultiEdit: Applied 3 edits to 2 files (a.txt, b.txt). Undo with Ctrl+Z.');
  });
  it('mentions edits found by the tolerant matcher', () => {
    const tolerant = { ...result, files: [{ ...result.files[0], tiers: [{ edit_index: 1, tier: 'indentation' as const }] }] };
    assert.equal(renderApplyNotification(tolerant), 'MultiEdit: Applied 2 edits to /ws/a.txt (edit 2 matched ignoring indentation). Undo with Ctrl+Z.');
    assert.match(renderResultMarkdown(tolerant), /Note: edit 2 matched ignoring indentation\./);
  });
  it('mentions failed edits in partial mode', () => {
    const partial = { ...result, edits_failed: [refusalData({ edit_index: 2 })] };
    assert.match(renderApplyNotification(partial), /1 edit failed/);
    assert.equal(isPartial(partial), true);
  });
  it('renders markdown for chat with each edit', () => {
    const md = renderResultMarkdown(result);
    assert.match(md, /^\*\*Applied 2 edits to \/ws\/a.txt\*\*/);
    assert.match(md, /```\n1\. Replaced "a" with "b"\n2\. Replaced "c" with "d"\n```/);
  });
  it("ends a model's text with the settled delta of its earlier edit", () => {
    const earlier = planResult({
      ok: true,
      message: 'Applied 1 edit to /ws/b.ts',
      earlier_diagnostics: [{ label: 'Chat agent: 1 edit to 1 file', text: 'New errors: a.ts:4:8 bad (ts 2345)', diagnostics: { available: true } }],
    });
    assert.equal(
      renderToolResult({ result: earlier }),
      'Applied 1 edit to /ws/b.ts\n\nDiagnostics of your earlier edit (Chat agent: 1 edit to 1 file):\nNew errors: a.ts:4:8 bad (ts 2345)',
    );
  });
  it('gives the engine message to a model', () => {
    assert.equal(renderToolResult({ result }), result.message);
    assert.equal(renderToolResult({ result: planResult({ ok: false, message: 'nope' }) }), 'Error: nope');
  });
  it('ends a model\'s text with the lines the editor changed, in the server\'s words', () => {
    const now_reads_text = 'The editor changed the edited lines after the edit (its formatter, or a review). They now read (match these in your next old_string):\n/ws/a.py, line 2:\nx = 2';
    assert.equal(
      renderToolResult({ result: { ...result, diagnostics_text: 'No new errors.', now_reads_text } }),
      `${result.message}\n\nNo new errors.\n\n${now_reads_text}`,
    );
  });
});

describe('refusals', () => {
  it('normalises thrown values', () => {
    const e = Object.assign(new Error(refusal.message), { code: -32603, data: refusal.data });
    assert.deepEqual(toRefusal(e), { message: refusal.message, data: refusal.data, code: -32603 });
    assert.deepEqual(toRefusal('boom'), { message: 'boom' });
  });
  it('adds the hint once', () => {
    assert.equal(renderRefusalText(refusal), 'String to replace not found in file.\nString: foo\nHint: Read the file again.');
    assert.equal(renderRefusalText({ message: 'x\nHint: y', data: { hint: 'y' } }), 'x\nHint: y');
  });
  it('renders a one-line notification with the location', () => {
    assert.equal(
      renderRefusalNotification(refusal),
      'MultiEdit refused the plan (edit 2 in a.txt): String to replace not found in file. String: foo — Hint: Read the file again.',
    );
    assert.equal(renderRefusalNotification({ message: 'bad' }), 'MultiEdit refused the plan: bad');
  });
  it('renders markdown and tool text', () => {
    assert.match(renderRefusalMarkdown(refusal), /nothing was changed[\s\S]*String: foo[\s\S]*Hint: Read the file again\./);
    assert.equal(
      renderToolResult({ refusal }),
      'Error: the edit plan was refused at edit 2 in a.txt; no file was changed.\nString to replace not found in file.\nString: foo\nHint: Read the file again.',
    );
  });
});

describe('plan descriptions', () => {
  const plan = { file_path: '/ws/a.txt', edits: [{ old_string: 'x\ny', new_string: 'z', replace_all: true }, { old_string: 'q', new_string: 'r', expected_replacements: 3 }] };
  it('describes edits', () => {
    assert.deepEqual(describeEdits(plan.edits), ['1. "x⏎y" → "z" (all occurrences)', '2. "q" → "r" (3 occurrences)']);
    assert.equal(planTitle(plan), '2 edits to a.txt');
    assert.equal(planTitle({ files: [{ file_path: '/a', edits: plan.edits }, { file_path: '/b', edits: [plan.edits[0]] }] }), '3 edits to 2 files');
  });
  it('renders a confirmation: each file with its edits as a list, then the whole diff, last, in one diff block', () => {
    const two = { files: [{ file_path: '/ws/a.txt', edits: [plan.edits[0]] }, { file_path: '/ws/b.txt', edits: [plan.edits[1]] }] };
    const diff = '--- a/ws/a.txt\n+++ b/ws/a.txt\n@@ -1 +1 @@\n-x\n+z\n--- a/ws/b.txt\n+++ b/ws/b.txt\n@@ -1 +1 @@\n-q\n+r\n';
    const md = renderConfirmationMarkdown(two, diff);
    assert.equal(
      md,
      'Apply **2 edits to 2 files**? All edits apply together, or none; one undo takes them back.\n\n' +
        '**`a.txt`** (`/ws/a.txt`), 1 edit:\n\n- `1. "x⏎y" → "z" (all occurrences)`\n\n' +
        '**`b.txt`** (`/ws/b.txt`), 1 edit:\n\n- `1. "q" → "r" (3 occurrences)`\n\n' +
        '```diff\n' + diff + '```\n',
    );
  });
  it('has no code block but the diff, which ends the text (the modal confirmation runs a block into what follows)', () => {
    const md = renderConfirmationMarkdown(plan, '--- a\n+++ b\n');
    assert.equal(md.split('```').length, 3);
    assert.match(md, /```diff\n--- a\n\+\+\+ b\n```\n$/);
  });
  it('fences and quotes text containing backticks safely', () => {
    const md = renderConfirmationMarkdown({ file_path: '/a`b', edits: [{ old_string: '```', new_string: 'x' }] }, '--- a\n+++ b\n-```\n');
    assert.match(md, /\(`` \/a`b ``\)/);
    assert.match(md, /- ```` 1\. "```" → "x" ````/);
    assert.match(md, /````diff\n--- a\n\+\+\+ b\n-```\n````\n$/);
  });
});

describe('applyTextEdits / workspaceEditFiles', () => {
  const text = 'one\ntwo\nthree\n';
  it('applies edits given in original coordinates, in any order', () => {
    const edits = [
      { range: { start: { line: 2, character: 0 }, end: { line: 2, character: 5 } }, newText: 'THREE' },
      { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 3 } }, newText: '1' },
      { range: { start: { line: 1, character: 3 }, end: { line: 1, character: 3 } }, newText: '!' },
    ];
    assert.equal(applyTextEdits(text, edits), '1\ntwo!\nTHREE\n');
  });
  it('handles a full-range replacement past the end and UTF-16 positions', () => {
    assert.equal(applyTextEdits(text, [{ range: { start: { line: 0, character: 0 }, end: { line: 99, character: 0 } }, newText: 'x' }]), 'x');
    assert.equal(applyTextEdits('a😀b', [{ range: { start: { line: 0, character: 3 }, end: { line: 0, character: 4 } }, newText: 'c' }]), 'a😀c');
  });
  it('rejects overlapping edits', () => {
    const r = (a: number, b: number) => ({ start: { line: 0, character: a }, end: { line: 0, character: b } });
    assert.throws(() => applyTextEdits('abcdef', [{ range: r(0, 3), newText: '' }, { range: r(2, 4), newText: '' }]), /overlapping/);
  });
  it('flattens documentChanges and changes', () => {
    const files = workspaceEditFiles({
      documentChanges: [
        { kind: 'create', uri: 'file:///new.txt' },
        { textDocument: { uri: 'file:///new.txt', version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'hi' }] },
        { textDocument: { uri: 'file:///a.txt', version: 3 }, edits: [] },
      ],
    });
    assert.deepEqual(files.map((f) => [f.uri, f.kind, f.edits.length]), [
      ['file:///new.txt', 'create', 1],
      ['file:///a.txt', 'edit', 0],
    ]);
    assert.deepEqual(workspaceEditFiles({ changes: { 'file:///b': [] } }).map((f) => f.uri), ['file:///b']);
    assert.deepEqual(workspaceEditFiles(undefined), []);
  });
});

describe('ranges after edits', () => {
  const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
  it('follows earlier edits on the same line and across lines', () => {
    const text = 'alpha beta gamma\nline two\nend\n';
    const edits = [
      { range: r(0, 6, 0, 10), newText: 'BETA\nB2' }, // beta -> two lines
      { range: r(0, 0, 0, 5), newText: 'A' }, // alpha -> A (given out of order)
      { range: r(0, 11, 0, 16), newText: 'G' }, // gamma -> G, after the multi-line one on the same line
      { range: r(1, 0, 2, 0), newText: '' }, // delete "line two\n"
    ];
    const after = applyTextEdits(text, edits);
    assert.equal(after, 'A BETA\nB2 G\nend\n');
    assert.deepEqual(rangesAfterEdits(edits), [r(0, 0, 0, 1), r(0, 2, 1, 2), r(1, 3, 1, 4), r(2, 0, 2, 0)]);
  });
});
