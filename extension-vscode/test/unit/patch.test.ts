// Patches: how the extension recognises them (it never parses hunks: the server does), prepares the
// request {patch, root, ...} and names them in titles, notifications and tool results.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssistDeps, handleChatRequest, invokePatchTool, patchToolRequest, preparePatchToolInvocation } from '../../src/assist';
import { PlanResult } from '../../src/lsp_ext';
import { EditRequest, findPatchText, findRequest, isPatchRequest, looksLikePatch, needsTarget, parseRequestText, patchHeaderFiles, PlanError, preparePatch, prepareRequest, reviewArgument, reviewFor, serverArguments } from '../../src/plan';
import { planTitle, Refusal, refusalLocation, renderApplyNotification, renderRefusalNotification, renderToolResult } from '../../src/render';
import { planResult } from './fixtures';
import { recorder } from './support';
import { workspaceEditFiles } from '../../src/workspaceEdit';

const gitDiff = [
  'diff --git a/a.txt b/a.txt',
  'index 3b18e51..a0c5d2e 100644',
  '--- a/a.txt',
  '+++ b/a.txt',
  '@@ -1,2 +1,2 @@',
  ' one',
  '-typed',
  '+TYPED',
  'diff --git a/old.txt b/new.txt',
  'similarity index 80%',
  'rename from old.txt',
  'rename to new.txt',
  '--- a/old.txt',
  '+++ b/new.txt',
  '@@ -1 +1 @@',
  '-old',
  '+new',
  'diff --git a/gone.txt b/gone.txt',
  'deleted file mode 100644',
  '--- a/gone.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
  '',
].join('\n');

const envelope = '*** Begin Patch\n*** Update File: src/x.py\n@@\n-a\n+b\n*** Add File: y.txt\n+hi\n*** End Patch\n';
const searchReplace = 'src/app.py\n```python\n<<<<<<< SEARCH\nreturn 1\n=======\nreturn 2\n>>>>>>> REPLACE\n```\n';
const clineBlocks = 'src/app.py\n------- SEARCH\nreturn 1\n=======\nreturn 2\n+++++++ REPLACE\n';
const plainDiff = '--- a.txt\t2024-01-01\n+++ a.txt\t2024-01-02\n@@ -1 +1 @@\n-x\n+y\n';
const plan = { file_path: '/ws/a.txt', edits: [{ old_string: 'a', new_string: 'b' }] };

describe('recognising a patch', () => {
  it('sees each marker at a line start', () => {
    for (const text of [gitDiff, envelope, searchReplace, clineBlocks, plainDiff, '@@ -3,2 +3,2 @@\n-a\n+b\n', 'text first\n--- x\n+++ y\n'])
      assert.equal(looksLikePatch(text), true, JSON.stringify(text));
  });

  it('does not see a marker that does not start a line, or --- without +++ after it', () => {
    for (const text of ['  diff --git a/x b/x\n', '--- x\nprose\n+++ y\n', 'use @@ -1 in prose', 'a <<<<<<< SEARCH', 'just words\n---\n'])
      assert.equal(looksLikePatch(text), false, JSON.stringify(text));
  });

  it('a raw patch becomes a patch request holding the whole text, sent as is', () => {
    for (const text of [gitDiff, envelope, searchReplace, clineBlocks, plainDiff]) assert.deepEqual(parseRequestText(text), { patch: text });
    const withProse = 'Here is the change:\n\n' + gitDiff + '\nThat is all.';
    assert.deepEqual(parseRequestText(withProse), { patch: withProse });
  });

  it('a markdown text uses its block tagged diff or patch', () => {
    const md = 'Apply this:\n\n```diff\n' + plainDiff + '```\n\nand done.';
    assert.deepEqual(parseRequestText(md), { patch: plainDiff });
    const two = '```patch\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-1\n+2\n```\ntext\n```diff\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-3\n+4\n```';
    assert.equal(findPatchText(two), '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-1\n+2\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-3\n+4\n');
  });

  it('a JSON plan is still a plan, whole, fenced or with a diff-looking string inside', () => {
    assert.deepEqual(parseRequestText(JSON.stringify(plan)), plan);
    assert.deepEqual(parseRequestText('```json\n' + JSON.stringify(plan, null, 2) + '\n```'), plan);
    const diffInside = { file_path: '/ws/d.patch', edits: [{ old_string: '--- a/x\n+++ b/x\n', new_string: '@@ -1 +1 @@\n' }] };
    assert.deepEqual(parseRequestText(JSON.stringify(diffInside, null, 2)), diffInside);
    assert.equal(isPatchRequest(parseRequestText(JSON.stringify(plan))), false);
  });

  it('a text with neither is refused, naming both', () => {
    assert.throws(() => parseRequestText('please rename foo to bar'), (e: Error) => e instanceof PlanError && /No MultiEdit plan or patch found/.test(e.message));
    assert.equal(findRequest('nothing here'), undefined);
    assert.throws(() => parseRequestText('  '), PlanError);
  });
});

describe('preparing a patch request', () => {
  it('root is the workspace folder; only patch, format, root and match are sent', () => {
    const prepared = prepareRequest({ patch: gitDiff }, { baseDir: '/ws', targetPath: '/ws/active.txt', defaults: { mode: 'partial', dialect: 'claude-code' } });
    assert.deepEqual(prepared, { patch: gitDiff, root: '/ws' });
    assert.equal(needsTarget(prepared), false);
  });

  it('keeps the request root, format and match; tolerant default only when set', () => {
    assert.deepEqual(preparePatch({ patch: 'x', root: 'file:///repo', format: 'diff', match: 'tolerant' }, { baseDir: '/ws' }), {
      patch: 'x',
      format: 'diff',
      root: '/repo',
      match: 'tolerant',
    });
    assert.deepEqual(preparePatch({ patch: 'x', format: 'auto' }, { baseDir: '/ws', defaults: { match: 'tolerant' } }), { patch: 'x', root: '/ws', match: 'tolerant' });
    assert.deepEqual(preparePatch({ patch: 'x' }, { defaults: { match: 'exact' } }), { patch: 'x' });
    assert.throws(() => preparePatch({ patch: '  ' }), PlanError);
  });

  it('review: a patch sends its multiFile policy for the server to count files; never a review key in the request', () => {
    const req: EditRequest = { patch: gitDiff, root: '/ws', review: true };
    const [sent, options] = serverArguments(req, reviewArgument(req, 'never'));
    assert.deepEqual(sent, { patch: gitDiff, root: '/ws' });
    assert.deepEqual(options, { review: true });
    assert.deepEqual(serverArguments({ patch: 'p' }, reviewArgument({ patch: 'p' }, 'multiFile'))[1], { review: 'multiFile' });
    assert.deepEqual(serverArguments({ patch: 'p' }, reviewArgument({ patch: 'p' }, 'never'))[1], { review: false });
    assert.deepEqual(serverArguments(plan, reviewArgument(plan, 'multiFile'))[1], { review: false });
    assert.equal(reviewFor({ patch: gitDiff }, 'multiFile'), true);
    assert.equal(reviewFor({ patch: plainDiff }, 'multiFile'), false);
  });
});

describe('naming a patch', () => {
  it('reads the file names from the headers, renames as old → new', () => {
    assert.deepEqual(patchHeaderFiles(gitDiff), ['a.txt', 'old.txt → new.txt', 'gone.txt']);
    assert.deepEqual(patchHeaderFiles(plainDiff), ['a.txt']);
    assert.deepEqual(patchHeaderFiles('*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** Delete File: c.py\n*** End Patch'), ['a.py → b.py', 'c.py']);
    assert.deepEqual(patchHeaderFiles(searchReplace), []);
  });

  it('titles: from the server result when there is one, else the headers', () => {
    assert.equal(planTitle({ patch: gitDiff }), 'patch (3 files: a.txt, old.txt → new.txt, gone.txt)');
    assert.equal(planTitle({ patch: searchReplace }), 'patch');
    const five = Array.from({ length: 5 }, (_, i) => `--- a/f${i}\n+++ b/f${i}\n@@ -1 +1 @@\n-a\n+b\n`).join('');
    assert.equal(planTitle({ patch: five }), 'patch (5 files)');
    const result: PlanResult = planResult({
      ok: true,
      message: 'Applied 3 edits to 3 files',
      files: [
        { file_path: '/ws/a.txt', edits_applied: 1 },
        { file_path: '/ws/old.txt', edits_applied: 1, moved_to: '/ws/new.txt' },
        { file_path: '/ws/gone.txt', edits_applied: 1, deleted: true },
      ],
    });
    assert.equal(planTitle({ patch: searchReplace }, result), 'patch (3 files: a.txt, old.txt → new.txt, gone.txt (deleted))');
    assert.equal(
      renderApplyNotification(result, { patch: gitDiff }),
      'MultiEdit: Applied the patch: 3 hunks to 3 files (a.txt, old.txt → new.txt, gone.txt (deleted)). Undo with Ctrl+Z.',
    );
  });

  it('a refused hunk is named in the notification and the tool result', () => {
    const refusal: Refusal = {
      message: 'Hunk 1 of a.txt, at line 1 does not apply: its lines are not in the file.\nLines:\n one\n-gone',
      data: { kind: 'not_found', edit_index: 0, file_path: '/ws/a.txt' },
    };
    assert.equal(refusalLocation(refusal), 'hunk 1 of a.txt, at line 1');
    assert.match(renderRefusalNotification(refusal, { patch: 'p' }), /^MultiEdit refused the patch \(hunk 1 of a\.txt, at line 1\): Hunk 1 of a\.txt/);
    assert.match(renderRefusalNotification(refusal), /^MultiEdit refused the plan/);
    assert.match(renderToolResult({ refusal, patch: true }), /^Error: the patch was refused at hunk 1 of a\.txt, at line 1; no file was changed\./);
  });
});

describe('a WorkspaceEdit with file operations', () => {
  it('keeps a rename (with its new place) and a delete, with their text edits', () => {
    const edit = { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 3 } }, newText: 'new' };
    const files = workspaceEditFiles({
      documentChanges: [
        { textDocument: { uri: 'file:///ws/a.txt', version: 4 }, edits: [edit] },
        { textDocument: { uri: 'file:///ws/old.txt', version: null }, edits: [edit] },
        { kind: 'rename', oldUri: 'file:///ws/old.txt', newUri: 'file:///ws/new.txt', options: { overwrite: false } },
        { kind: 'delete', uri: 'file:///ws/gone.txt', options: { recursive: false } },
        { kind: 'create', uri: 'file:///ws/made.txt' },
        { kind: 'rename', oldUri: 'file:///ws/made.txt', newUri: 'file:///ws/moved.txt' },
        { kind: 'rename' },
      ],
    });
    assert.deepEqual(
      files.map((f) => [f.uri, f.kind, f.edits.length, f.newUri]),
      [
        ['file:///ws/a.txt', 'edit', 1, undefined],
        ['file:///ws/old.txt', 'rename', 1, 'file:///ws/new.txt'],
        ['file:///ws/gone.txt', 'delete', 0, undefined],
        ['file:///ws/made.txt', 'create', 0, 'file:///ws/moved.txt'],
      ],
    );
  });
});


const patchResult: PlanResult = planResult({
  ok: true,
  message: 'Applied 2 edits to 2 files:\n/ws/a.txt: 1. Applied hunk 1 of a.txt, at line 1',
  files: [
    { file_path: '/ws/a.txt', edits_applied: 1 },
    { file_path: '/ws/old.txt', edits_applied: 1, moved_to: '/ws/new.txt' },
  ],
  diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-typed\n+TYPED\n',
});

function patchDeps() {
  const calls: { command: string; req: EditRequest }[] = [];
  const d: AssistDeps = {
    activeFilePath: () => '/ws/active.txt',
    baseDir: () => '/ws',
    apply: async (req) => {
      calls.push({ command: 'apply', req });
      return patchResult;
    },
    preview: async (req) => {
      calls.push({ command: 'preview', req });
      return patchResult;
    },
  };
  return { d, calls };
}

describe('@multiedit with a patch', () => {
  it('applies a fenced diff block as a patch rooted at the workspace folder', async () => {
    const { d, calls } = patchDeps();
    const r = recorder();
    const outcome = await handleChatRequest({ prompt: 'apply:\n```diff\n' + plainDiff + '```' }, d, r.out);
    assert.deepEqual(calls, [{ command: 'apply', req: { patch: plainDiff, root: '/ws' } }]);
    assert.equal(outcome.result, patchResult);
    assert.match(r.text(), /progress: Applying patch \(1 file: a\.txt\)…/);
    assert.match(r.text(), /button: Undo -> multiedit\.undoLastBatch/);
  });

  it('previews a raw diff with /preview and shows the server diff', async () => {
    const { d, calls } = patchDeps();
    const r = recorder();
    await handleChatRequest({ prompt: gitDiff, command: 'preview' }, d, r.out);
    assert.deepEqual(calls, [{ command: 'preview', req: { patch: gitDiff, root: '/ws' } }]);
    assert.match(r.text(), /\*\*Preview: patch \(2 files: a\.txt, old\.txt → new\.txt\)\*\*/);
    assert.match(r.text(), /```diff\n--- a\/a\.txt/);
  });

  it('a refused patch is reported as the patch, naming the hunk', async () => {
    const { d } = patchDeps();
    d.apply = async () => {
      throw Object.assign(new Error('hunk 2 of a.txt, at line 9 does not apply: no such lines.'), { data: { kind: 'not_found', edit_index: 1 } });
    };
    const r = recorder();
    const outcome = await handleChatRequest({ prompt: plainDiff }, d, r.out);
    assert.ok(outcome.refusal);
    assert.match(r.text(), /\*\*MultiEdit refused the patch \(hunk 2 of a\.txt, at line 9\); nothing was changed\.\*\*/);
  });
});

describe('the multiedit_patch tool', () => {
  it('sends {patch, format, root, match}: root defaults to the workspace folder', () => {
    const { d } = patchDeps();
    assert.deepEqual(patchToolRequest({ patch: 'p', format: 'diff', match: 'tolerant', preview: false }, d), { patch: 'p', format: 'diff', root: '/ws', match: 'tolerant' });
    assert.deepEqual(patchToolRequest({ patch: 'p', root: '/repo' }, d), { patch: 'p', root: '/repo' });
  });

  it('applies through multiedit.apply', async () => {
    const { d, calls } = patchDeps();
    const { text } = await invokePatchTool({ patch: plainDiff }, d);
    // The confirmation was the call's approval: no review after it.
    assert.deepEqual(calls, [{ command: 'apply', req: { patch: plainDiff, root: '/ws', review: false } }]);
    assert.match(text, /^Applied 2 edits to 2 files/);
  });

  it('preview: true goes to multiedit.preview and answers with the diff, without confirmation', async () => {
    const { d, calls } = patchDeps();
    const prep = await preparePatchToolInvocation({ patch: plainDiff, preview: true }, d);
    assert.equal(prep.confirm, false);
    const { text } = await invokePatchTool({ patch: plainDiff, preview: true }, d);
    assert.deepEqual(calls, [{ command: 'preview', req: { patch: plainDiff, root: '/ws' } }]);
    assert.match(text, /^Preview only, nothing changed: patch \(2 files: a\.txt, old\.txt → new\.txt\)\.\n--- a\/a\.txt/);
  });

  it('asks for confirmation with the diff before applying, and refuses a missing patch at once', async () => {
    const { d } = patchDeps();
    const prep = await preparePatchToolInvocation({ patch: plainDiff }, d);
    assert.equal(prep.confirm, true);
    assert.match(prep.message, /Apply \*\*patch \(2 files: a\.txt, old\.txt → new\.txt\)\*\*\?/);
    assert.match(prep.message, /```diff\n--- a\/a\.txt/);
    const bad = await preparePatchToolInvocation({} as never, d);
    assert.ok(bad.refusal);
    const { text } = await invokePatchTool({} as never, d);
    assert.match(text, /^Error: the patch was refused; no file was changed\.\n`patch` must be a string/);
  });
});
