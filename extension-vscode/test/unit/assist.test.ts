import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssistDeps, buildPlanPrompt, handleChatRequest, invokeSymbolsTool, settledDelta, invokeTool, prepareToolInvocation, refusedToolResult, toolReviews } from '../../src/assist';
import { PlanResult } from '../../src/lsp_ext';
import { Plan } from '../../src/plan';
import { recorder } from './support';
import { planResult } from './fixtures';


function deps(overrides: Partial<AssistDeps> = {}) {
  const applied: Plan[] = [];
  const d: AssistDeps = {
    activeFilePath: () => '/ws/active.txt',
    activeFileText: () => 'hello world\n',
    baseDir: () => '/ws',
    apply: async (req): Promise<PlanResult> => {
      const plan = req as Plan;
      applied.push(plan);
      return planResult({ ok: true, message: `Applied ${(plan.edits ?? []).length} edit to ${plan.file_path}:\n1. Replaced "hello" with "bye"`, files: [{ file_path: plan.file_path!, edits_applied: 1 }] });
    },
    preview: async (req): Promise<PlanResult> => {
      const plan = req as Plan;
      return planResult({ ok: true, message: 'Would apply', diff: `--- ${plan.file_path}\n+++ ${plan.file_path}\n-hello\n+bye\n` });
    },
    ...overrides,
  };
  return { d, applied };
}

const refusalError = Object.assign(new Error('String to replace not found in file.\nString: nope'), {
  data: { kind: 'not_found', edit_index: 0, hint: 'Check whitespace.' },
});

describe('chat participant', () => {
  it('applies a fenced plan to the active file and offers Undo', async () => {
    const { d, applied } = deps();
    const r = recorder();
    const outcome = await handleChatRequest({ prompt: 'do it\n```json\n{"edits":[{"old_string":"hello","new_string":"bye"}]}\n```' }, d, r.out);
    assert.equal(applied.length, 1);
    assert.equal(applied[0].file_path, '/ws/active.txt');
    assert.equal(outcome.result?.ok, true);
    assert.match(r.text(), /\*\*Applied 1 edit to \/ws\/active.txt\*\*/);
    assert.match(r.text(), /1\. Replaced "hello" with "bye"/);
    assert.match(r.text(), /button: Undo -> multiedit.undoLastBatch/);
  });

  it('a delta still settling when the edit was answered follows in the same answer, not left for a next call', async () => {
    const deferred = "Diagnostics: the editor's language servers are still checking this change; the errors it introduced and resolved come with your next multiedit call, whichever tool it is.";
    const asked: string[] = [];
    const { d } = deps({
      apply: async (req): Promise<PlanResult> =>
        planResult({ ok: true, message: `Applied 1 edit to ${(req as Plan).file_path}:\n1. Replaced "hello" with "bye"`, files: [{ file_path: (req as Plan).file_path!, edits_applied: 1 }], diagnostics: { available: false, deferred: true }, diagnostics_text: deferred }),
      // The first outline comes before the language server settled; the second carries the delta.
      symbols: async (filePath) => {
        asked.push(filePath);
        const earlier = asked.length < 2 ? undefined : [{ diagnostics: { available: true }, label: '@multiedit: 1 edit to 1 file', text: "New errors: active.txt:1:1 Cannot find name 'bye'. (ts 2304)" }];
        return { file_path: filePath, symbols: [], text: '', earlier_diagnostics: earlier };
      },
    });
    const r = recorder();
    await handleChatRequest({ prompt: '{"edits":[{"old_string":"hello","new_string":"bye"}]}' }, d, r.out);
    assert.deepEqual(asked, ['/ws/active.txt', '/ws/active.txt']);
    assert.match(r.text(), /\*\*Applied 1 edit to \/ws\/active.txt\*\*[\s\S]*New errors: active\.txt:1:1 Cannot find name 'bye'\. \(ts 2304\)[\s\S]*button: Undo/);
    assert.doesNotMatch(r.text(), /still checking/);
  });

  it('a delta that never comes is said to come later, as the server words it', async () => {
    const r = recorder();
    const result = planResult({ ok: true, message: 'Applied', files: [{ file_path: '/ws/a.txt', edits_applied: 1 }, { file_path: '/ws/b.txt', edits_applied: 1 }], diagnostics: { available: false, deferred: true } });
    const asked: string[] = [];
    const { d } = deps({
      // a.txt has no outline; b.txt's never carries the delta.
      symbols: async (filePath) => {
        asked.push(filePath);
        if (filePath === '/ws/a.txt') throw new Error('No language server gives the symbols of /ws/a.txt');
        return { file_path: filePath, symbols: [], text: '' };
      },
    });
    assert.equal(await settledDelta(result, d, r.out, 1), false);
    assert.deepEqual([asked[0], asked[1], asked.length], ['/ws/a.txt', '/ws/b.txt', 40]);
    assert.equal(r.text(), '');
  });

  it('targets the single referenced file', async () => {
    const { d, applied } = deps();
    await handleChatRequest({ prompt: '{"edits":[{"old_string":"a","new_string":"b"}]}', referencedFiles: ['/ws/ref.txt'] }, d, recorder().out);
    assert.equal(applied[0].file_path, '/ws/ref.txt');
  });

  it('keeps the plan file_path and resolves relative ones', async () => {
    const { d, applied } = deps();
    await handleChatRequest({ prompt: '{"file_path":"src/x.rs","edits":[{"old_string":"a","new_string":"b"}]}' }, d, recorder().out);
    assert.equal(applied[0].file_path, '/ws/src/x.rs');
  });

  it('reports a refusal and changes nothing', async () => {
    const { d } = deps({ apply: async () => Promise.reject(refusalError) });
    const r = recorder();
    const outcome = await handleChatRequest({ prompt: '{"edits":[{"old_string":"nope","new_string":"b"}]}' }, d, r.out);
    assert.equal(outcome.refusal?.data?.kind, 'not_found');
    assert.match(r.text(), /refused the plan \(edit 1\); nothing was changed/);
    assert.match(r.text(), /Hint: Check whitespace\./);
    assert.doesNotMatch(r.text(), /Undo/);
  });

  it('previews with /preview and offers Apply', async () => {
    const { d, applied } = deps();
    const r = recorder();
    await handleChatRequest({ prompt: '{"edits":[{"old_string":"hello","new_string":"bye"}]}', command: 'preview' }, d, r.out);
    assert.equal(applied.length, 0);
    assert.match(r.text(), /```diff\n--- \/ws\/active.txt/);
    assert.match(r.text(), /button: Apply -> multiedit.applyPlan \[\{"edits"/);
  });

  it('explains what it needs when there is no plan', async () => {
    const r = recorder();
    await handleChatRequest({ prompt: 'rename it', command: 'apply' }, deps().d, r.out);
    assert.match(r.text(), /No MultiEdit plan or patch found/);
    const r2 = recorder();
    await handleChatRequest({ prompt: 'rename hello to bye' }, deps().d, r2.out);
    assert.match(r2.text(), /No language model is available/);
  });

  it('asks the model for a plan for a plain instruction, shows it and applies it', async () => {
    let asked = '';
    const { d, applied } = deps({
      askModel: async (prompt) => {
        asked = prompt;
        return 'Sure:\n```json\n{"edits": [{"old_string": "hello", "new_string": "bye"}]}\n```';
      },
    });
    const r = recorder();
    await handleChatRequest({ prompt: 'say bye instead of hello' }, d, r.out);
    assert.match(asked, /File: \/ws\/active.txt\n```\nhello world\n\n```\n\nInstruction: say bye instead of hello/);
    assert.equal(applied[0].file_path, '/ws/active.txt');
    assert.match(r.text(), /Plan:\n\n```json\n\{\n  "edits"/);
  });

  it('shows the model answer when it has no plan', async () => {
    const { d, applied } = deps({ askModel: async () => 'I cannot do that.' });
    const r = recorder();
    await handleChatRequest({ prompt: 'do something' }, d, r.out);
    assert.equal(applied.length, 0);
    assert.match(r.text(), /did not produce a plan[\s\S]*I cannot do that\./);
  });

  it('builds a prompt with the file and instruction', () => {
    assert.match(buildPlanPrompt('/f', 'text', 'do'), /ONE JSON object[\s\S]*File: \/f\n```\ntext\n```\n\nInstruction: do$/);
  });
});

describe('language model tool', () => {
  const input = { file_path: '/ws/a.txt', edits: [{ old_string: 'hello', new_string: 'bye' }] };

  it('confirmation lists the edits and the diff', async () => {
    const p = await prepareToolInvocation(input, deps().d);
    assert.equal(p.title, 'MultiEdit: 1 edit to a.txt');
    assert.match(p.message, /- `1\. "hello" → "bye"`/);
    assert.match(p.message, /```diff\n--- \/ws\/a.txt/);
  });

  describe('one approval per call', () => {
    const two = { files: [{ file_path: '/ws/a.txt', edits: input.edits }, { file_path: '/ws/b.txt', edits: input.edits }] };
    it('by default a two-file call is confirmed once and applied without a review', async () => {
      const { d, applied } = deps({ reviewSetting: 'multiFile' });
      assert.equal((await prepareToolInvocation(two, d)).confirm, true);
      await invokeTool(two, d);
      assert.equal(applied.length, 1);
      assert.equal(applied[0].review, false);
    });
    it('a call that asks for a review is not confirmed: the Refactor Preview is its approval', async () => {
      const { d, applied } = deps({ reviewSetting: 'never' });
      const reviewed = { ...two, review: true };
      assert.equal((await prepareToolInvocation(reviewed, d)).confirm, false);
      await invokeTool(reviewed, d);
      assert.equal(applied[0].review, true);
    });
    it('the setting "always" reviews every call instead of confirming it; a call may still decline the review', async () => {
      const { d, applied } = deps({ reviewSetting: 'always' });
      assert.equal((await prepareToolInvocation(input, d)).confirm, false);
      assert.equal(toolReviews(input, 'always'), true);
      assert.equal(toolReviews({ ...input, review: false }, 'always'), false);
      await invokeTool(input, d);
      assert.equal(applied[0].review, true);
    });
  });

  it('a plan the preview refuses is returned as the refusal, with nothing to confirm', async () => {
    const { d, applied } = deps({ preview: async () => Promise.reject(refusalError) });
    const p = await prepareToolInvocation(input, d);
    assert.equal(p.refusal?.data?.kind, 'not_found');
    assert.match(p.message, /refused the plan/);
    const { text } = refusedToolResult(p.refusal!);
    assert.equal(applied.length, 0);
    assert.match(text, /^Error: the edit plan was refused at edit 1; no file was changed\.\nString to replace not found/);
  });

  it('a malformed plan is refused while preparing', async () => {
    const p = await prepareToolInvocation({ edits: [{ old_string: 'a', new_string: 'b' }] }, deps({ activeFilePath: () => undefined }).d);
    assert.match(p.refusal?.message ?? '', /no "file_path"/);
  });

  it('returns the engine message', async () => {
    const { d, applied } = deps();
    const { text } = await invokeTool(input, d);
    assert.equal(applied.length, 1);
    assert.equal(text, 'Applied 1 edit to /ws/a.txt:\n1. Replaced "hello" with "bye"');
  });

  it('returns the refusal with the hint', async () => {
    const { text, outcome } = await invokeTool(input, deps({ apply: async () => Promise.reject(refusalError) }).d);
    assert.equal(text, 'Error: the edit plan was refused at edit 1; no file was changed.\nString to replace not found in file.\nString: nope\nHint: Check whitespace.');
    assert.equal(outcome.refusal?.data?.kind, 'not_found');
  });

  it('reports a malformed plan without calling the server', async () => {
    const { d, applied } = deps({ activeFilePath: () => undefined });
    const { text } = await invokeTool({ edits: [{ old_string: 'a', new_string: 'b' }] }, d);
    assert.equal(applied.length, 0);
    assert.match(text, /^Error: the edit plan was refused; no file was changed\.\nThe plan has no "file_path"/);
  });
});

describe('the multiedit_symbols tool', () => {
  it('gives the outline as the server words it, for a path relative to the workspace', async () => {
    const asked: string[] = [];
    const { d } = deps({
      symbols: async (filePath) => {
        asked.push(filePath);
        return { file_path: filePath, symbols: [], text: `${filePath}: 1 symbol, ...\nfunction main  (lines 1-3)\n` };
      },
    });
    const r = await invokeSymbolsTool({ file_path: 'src/main.ts' }, d);
    assert.deepEqual(asked, ['/ws/src/main.ts']);
    assert.equal(r.text, '/ws/src/main.ts: 1 symbol, ...\nfunction main  (lines 1-3)');
  });

  it('the outline ends with what the agent\'s earlier edits left to settle', async () => {
    const { d } = deps({
      symbols: async (filePath) => ({
        file_path: filePath,
        symbols: [],
        text: `${filePath}: 1 symbol, ...\nfunction main  (lines 1-3)\n`,
        earlier_diagnostics: [{ diagnostics: { available: true }, label: 'Chat agent: 1 edit to 1 file', text: "New errors: main.ts:2:3 Cannot find name 'x'. (ts 2304)" }],
      }),
    });
    const r = await invokeSymbolsTool({ file_path: 'src/main.ts' }, d);
    assert.equal(r.text, "/ws/src/main.ts: 1 symbol, ...\nfunction main  (lines 1-3)\n\nDiagnostics of your earlier edit (Chat agent: 1 edit to 1 file):\nNew errors: main.ts:2:3 Cannot find name 'x'. (ts 2304)");
  });

  it('a refusal is the server\'s words', async () => {
    const refused = Object.assign(new Error('No language server in Visual Studio Code gives the symbols of /ws/notes.txt: ...'), { data: { kind: 'no_language_server' } });
    const { d } = deps({ symbols: async () => Promise.reject(refused) });
    const r = await invokeSymbolsTool({ file_path: '/ws/notes.txt' }, d);
    assert.equal(r.outcome.refusal?.data?.kind, 'no_language_server');
    assert.match(r.text, /^Error: no outline; nothing was read\.\nNo language server in Visual Studio Code gives the symbols of \/ws\/notes\.txt/);
  });
});
