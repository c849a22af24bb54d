import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { ChangeRecorder, Clock, DEFAULT_IDLE_MS, hasProvider, idleTime, Settled, toLsp } from '../../src/diagnostics';
import { serverArguments } from '../../src/plan';
import { renderResultMarkdown, renderToolResult } from '../../src/render';
import { planResult } from './fixtures';

/** A clock the test moves by hand: timers fire when `advance` passes them. */
function fakeClock() {
  let now = 0;
  let timers: { at: number; f: () => void; id: number }[] = [];
  let next = 0;
  const clock: Clock = {
    now: () => now,
    setTimeout: (f, ms) => {
      const id = next++;
      timers.push({ at: now + ms, f, id });
      return id;
    },
    clearTimeout: (id) => {
      timers = timers.filter((t) => t.id !== id);
    },
  };
  const advance = async (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      timers = timers.filter((t) => t !== due);
      now = due.at;
      due.f();
      await Promise.resolve();
    }
    now = end;
    await Promise.resolve();
  };
  return { clock, advance };
}

describe('settling after an edit', () => {
  it('waits for each document to be checked again, then a short quiet, not for the bound', async () => {
    const { clock, advance } = fakeClock();
    const r = new ChangeRecorder(new Set(['a', 'b']), clock);
    let result: Settled | undefined;
    void r.settle(['a', 'b'], 2000, () => 5000, 60).then((x) => (result = x));
    await advance(400);
    r.record(['a', 'unrelated']);
    await advance(300);
    assert.equal(result, undefined, 'b has not been checked yet');
    r.record(['b']);
    await advance(30);
    r.record(['b']);
    await advance(59);
    assert.equal(result, undefined, 'a second update of b within the quiet period is waited for');
    await advance(1);
    assert.deepEqual(result, { pending: [], quiet: [], waitedMs: 790, publishedMs: 730 });
  });

  it('counts the wait from when the edit was applied, after a review that took its time', async () => {
    const { clock, advance } = fakeClock();
    const r = new ChangeRecorder(new Set(['a']), clock);
    await advance(10_000);
    r.record(['a']);
    r.applied();
    let result: Settled | undefined;
    void r.settle(['a'], 2000, () => 5000, 60).then((x) => (result = x));
    await advance(1000);
    assert.equal(result, undefined, 'a change during the review does not count');
    r.record(['a']);
    await advance(60);
    assert.deepEqual(result, { pending: [], quiet: [], waitedMs: 1060, publishedMs: 1000 });
  });

  it("takes a document as unchanged when its server sends no update within twice its usual time", async () => {
    const { clock, advance } = fakeClock();
    const r = new ChangeRecorder(new Set(['clean.ts', 'other.ts']), clock);
    let result: Settled | undefined;
    const idle = (k: string) => (k === 'clean.ts' ? idleTime([450, 400]) : idleTime([]));
    assert.equal(idleTime([450, 400]), 1000);
    assert.equal(idleTime([50]), 300, 'never below 300 ms');
    assert.equal(idleTime([]), DEFAULT_IDLE_MS);
    void r.settle(['clean.ts', 'other.ts'], 2000, idle).then((x) => (result = x));
    await advance(500);
    r.record(['other.ts']);
    await advance(499);
    assert.equal(result, undefined, 'clean.ts may still be checked');
    await advance(1);
    assert.deepEqual(result, { pending: [], quiet: ['clean.ts'], waitedMs: 1000, publishedMs: 500 });
  });

  it('names the documents not checked by the bound', async () => {
    const { clock, advance } = fakeClock();
    const r = new ChangeRecorder(new Set(['a', 'b']), clock);
    let result: Settled | undefined;
    void r.settle(['a', 'b'], 500, () => 5000).then((x) => (result = x));
    r.record(['a']);
    await advance(499);
    assert.equal(result, undefined);
    await advance(1);
    assert.deepEqual(result, { pending: ['b'], quiet: [], waitedMs: 500, publishedMs: 0 });
  });

  it('does not wait at all for documents no language server checks', async () => {
    const { clock } = fakeClock();
    const r = new ChangeRecorder(new Set(['notes.txt']), clock);
    assert.deepEqual(await r.settle([], 2000, () => 1000), { pending: [], quiet: [], waitedMs: 0, publishedMs: undefined });
    assert.equal(hasProvider('plaintext', new Set(['typescript']), ['onLanguage:markdown', 'onLanguage']), false);
    assert.equal(hasProvider('typescript', new Set(), ['onLanguage:typescript']), true);
    assert.equal(hasProvider('c', new Set(['c']), []), true, 'a language seen with diagnostics');
  });
});

describe('diagnostics on the wire and in results', () => {
  it('converts VS Code diagnostics to LSP (severity counted from 1, code values unwrapped)', () => {
    const range = { start: { line: 4, character: 35 }, end: { line: 4, character: 40 } };
    assert.deepEqual(toLsp({ range, severity: 0, source: 'ts', code: 2345, message: 'bad' }), { range, severity: 1, source: 'ts', code: 2345, message: 'bad' });
    assert.deepEqual(toLsp({ range, severity: 1, code: { value: 'no-unused' }, message: 'w' }), { range, severity: 2, code: 'no-unused', message: 'w' });
  });

  it('puts the delta after the message for the model and in the chat', () => {
    const result = planResult({ ok: true, message: 'Applied 1 edit to /w/calc.ts:\n1. Replaced "a" with "b"', diagnostics_text: 'New errors: calc.ts:5:36 Argument of type \'string\' is not assignable. (ts 2345)' });
    assert.equal(renderToolResult({ result }), `${result.message}\n\nNew errors: calc.ts:5:36 Argument of type 'string' is not assignable. (ts 2345)`);
    assert.match(renderResultMarkdown({ ...result, diagnostics_text: 'No new errors.\nResolved: a.ts:1:1 x (ts 1)' }), /No new errors\.  \nResolved: a\.ts:1:1 x \(ts 1\)\n\n$/);
    assert.equal(renderToolResult({ result: planResult({ ok: true, message: 'Applied 1 edit.' }) }), 'Applied 1 edit.', 'nothing added without diagnostics');
  });

  it("sends a request's own diagnostics level as the call's option", () => {
    const plan = { file_path: '/w/a.ts', edits: [{ old_string: 'a', new_string: 'b' }] };
    assert.deepEqual(serverArguments({ ...plan, diagnostics: 'warnings' }, false), [plan, { review: false, diagnostics: 'warnings' }]);
    assert.deepEqual(serverArguments({ ...plan, diagnostics: 'all' }, false), [plan, { review: false }], 'an unknown level is left to the setting');
  });
});
