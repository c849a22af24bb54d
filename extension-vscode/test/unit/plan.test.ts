import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { balancedJsonSpans, coercePlan, fencedBlocks, fileUriToPath, needsTarget, parsePlanText, Plan, planEditCount, PlanError, planFromPairs, planTargets, preparePlan, reviewFor, serverArguments, stripJsonComments, validatePlanShape } from '../../src/plan';

const single = { file_path: '/tmp/a.txt', edits: [{ old_string: 'a', new_string: 'b' }] };

describe('parsePlanText', () => {
  it('parses a whole JSON plan', () => {
    assert.deepEqual(parsePlanText(JSON.stringify(single)), single);
  });

  it('parses a multi-file plan', () => {
    const plan = { files: [single, { file_path: '/tmp/b.txt', edits: [{ old_string: 'x', new_string: 'y' }] }], mode: 'partial' };
    assert.deepEqual(parsePlanText(JSON.stringify(plan, null, 2)), plan);
  });

  it('finds a plan in a fenced json block inside chat text', () => {
    const text = 'Please apply this:\n\n```json\n' + JSON.stringify(single, null, 2) + '\n```\nthanks';
    assert.deepEqual(parsePlanText(text), single);
  });

  it('prefers a json-tagged block over an untagged one', () => {
    const text = '```\nnot json\n```\n\n~~~jsonc\n{"edits": [{"old_string": "q", "new_string": "r"}]}\n~~~\n';
    assert.deepEqual(parsePlanText(text), { edits: [{ old_string: 'q', new_string: 'r' }] });
  });

  it('finds a bare JSON object in prose', () => {
    const text = '@multiedit apply {"edits": [{"old_string": "}", "new_string": "{"}]} now';
    assert.deepEqual(parsePlanText(text), { edits: [{ old_string: '}', new_string: '{' }] });
  });

  it('accepts a list of edits and a single edit', () => {
    assert.deepEqual(parsePlanText('[{"old_string": "a", "new_string": "b"}]'), { edits: [{ old_string: 'a', new_string: 'b' }] });
    assert.deepEqual(parsePlanText('{"file_path": "/f", "old_string": "a", "new_string": "b", "replace_all": true}'), {
      file_path: '/f',
      edits: [{ old_string: 'a', new_string: 'b', replace_all: true }],
    });
  });

  it('unwraps tool-call wrappers', () => {
    assert.deepEqual(parsePlanText(JSON.stringify({ type: 'tool_use', name: 'MultiEdit', input: single })), single);
    assert.deepEqual(parsePlanText(JSON.stringify({ name: 'multiedit', arguments: JSON.stringify(single) })), single);
  });

  it('accepts comments and trailing commas', () => {
    const text = '{\n  // the file\n  "file_path": "/tmp/a.txt", /* inline */\n  "edits": [{"old_string": "a // not a comment", "new_string": "b",},],\n}';
    assert.deepEqual(parsePlanText(text), { file_path: '/tmp/a.txt', edits: [{ old_string: 'a // not a comment', new_string: 'b' }] });
  });

  it('keeps strings that contain commas before brackets', () => {
    assert.equal(stripJsonComments('{"a": "x,]"}'), '{"a": "x,]"}');
  });

  it('reports invalid JSON', () => {
    assert.throws(() => parsePlanText('{"edits": [}'), (e: Error) => e instanceof PlanError && /No MultiEdit plan found/.test(e.message));
  });

  it('reports text without a plan', () => {
    assert.throws(() => parsePlanText('rename foo to bar please'), /expected JSON like/);
    assert.throws(() => parsePlanText('   '), /empty/);
    assert.throws(() => parsePlanText('{"hello": 1}'), /not a MultiEdit plan/);
  });
});

describe('fencedBlocks / balancedJsonSpans', () => {
  it('lists blocks, tagged ones first', () => {
    assert.deepEqual(fencedBlocks('```\nA\n```\n```json\nB\n```\n```python\nC\n```'), ['B', 'A']);
  });
  it('finds balanced spans and ignores brackets in strings', () => {
    assert.deepEqual(balancedJsonSpans('x {"a": "}"} y [1, [2]] z {'), ['{"a": "}"}', '[1, [2]]']);
  });
});

describe('coercePlan', () => {
  it('returns undefined for non-plans', () => {
    assert.equal(coercePlan(3), undefined);
    assert.equal(coercePlan([]), undefined);
    assert.equal(coercePlan({ a: 1 }), undefined);
  });
});

describe('validatePlanShape', () => {
  it('accepts good plans', () => {
    validatePlanShape(single);
    validatePlanShape({ files: [single] });
    validatePlanShape({ edits: [{ old_string: 'a', new_string: 'b', expected_replacements: 2 }] });
  });
  it('names the bad edit', () => {
    assert.throws(() => validatePlanShape({ edits: [] }), /non-empty array/);
    assert.throws(() => validatePlanShape({ edits: [{ old_string: 'a' } as never] }), /edit 1 needs "new_string"/);
    assert.throws(() => validatePlanShape({ edits: [single.edits[0], { old_string: 'a', new_string: 'b', replace_all: 'yes' } as never] }), /edit 2: "replace_all"/);
    assert.throws(() => validatePlanShape({ edits: [{ old_string: 'a', new_string: 'b', expected_replacements: 0 }] }), /expected_replacements/);
    assert.throws(() => validatePlanShape({ files: [{ edits: 'x' } as never] }), /files\[0\]/);
    assert.throws(() => validatePlanShape({ files: [single], edits: single.edits }), /not both/);
  });
});

describe('preparePlan', () => {
  it('fills a missing file_path with the target', () => {
    const plan = preparePlan({ edits: single.edits }, { targetPath: '/work/x.txt' });
    assert.equal(plan.file_path, '/work/x.txt');
    assert.equal(needsTarget({ edits: single.edits }), true);
    assert.equal(needsTarget(plan), false);
  });
  it('fills missing paths in multi-file plans', () => {
    const plan = preparePlan({ files: [{ edits: single.edits }, single] }, { targetPath: '/t' });
    assert.deepEqual(planTargets(plan), ['/t', '/tmp/a.txt']);
    assert.equal(planEditCount(plan), 2);
  });
  it('fails without a target', () => {
    assert.throws(() => preparePlan({ edits: single.edits }), /no "file_path" and there is no active file/);
  });
  it('resolves relative paths and file URIs', () => {
    assert.equal(preparePlan({ file_path: 'src/../a.txt', edits: single.edits }, { baseDir: '/ws' }).file_path, '/ws/a.txt');
    assert.equal(preparePlan({ file_path: './b.txt', edits: single.edits }, { baseDir: '/ws/' }).file_path, '/ws/b.txt');
    assert.equal(preparePlan({ file_path: 'file:///ws/my%20file.txt', edits: single.edits }).file_path, '/ws/my file.txt');
    assert.throws(() => preparePlan({ file_path: 'rel.txt', edits: single.edits }), /must be absolute/);
  });
  it('adds only non-default defaults and keeps explicit values', () => {
    const d = { mode: 'partial', dialect: 'sequential', match: 'tolerant' };
    const plan = preparePlan({ ...single }, { defaults: d });
    assert.equal(plan.mode, 'partial');
    assert.equal(plan.dialect, undefined);
    assert.equal(plan.match, 'tolerant');
    assert.equal(preparePlan({ ...single, mode: 'atomic' }, { defaults: d }).mode, 'atomic');
  });
  it('drops $schema', () => {
    assert.deepEqual(Object.keys(preparePlan({ $schema: './s.json', ...single })), ['file_path', 'edits']);
  });
  it('does not modify its input', () => {
    const input = { edits: [...single.edits] };
    preparePlan(input, { targetPath: '/t' });
    assert.equal((input as { file_path?: string }).file_path, undefined);
  });
});

describe('fileUriToPath / planFromPairs', () => {
  it('converts file URIs', () => {
    assert.equal(fileUriToPath('file:///c%3A/x/y.txt'), 'c:/x/y.txt');
    assert.equal(fileUriToPath('/plain'), '/plain');
  });
  it('builds plans from pairs', () => {
    assert.deepEqual(planFromPairs('/f', [{ old: 'a', new: 'b' }, { old: 'c', new: 'd', all: true }]), {
      file_path: '/f',
      edits: [
        { old_string: 'a', new_string: 'b' },
        { old_string: 'c', new_string: 'd', replace_all: true },
      ],
    });
    assert.throws(() => planFromPairs('/f', []), /No replacements/);
  });
});

describe('review', () => {
  const one = { file_path: '/a', edits: [{ old_string: 'a', new_string: 'b' }] };
  const two = { files: [one, { file_path: '/b', edits: [{ old_string: 'c', new_string: 'd' }] }] };
  it('follows the plan, else the setting', () => {
    assert.equal(reviewFor(one, 'multiFile'), false);
    assert.equal(reviewFor(two, 'multiFile'), true);
    assert.equal(reviewFor(two, undefined), true);
    assert.equal(reviewFor(two, 'never'), false);
    assert.equal(reviewFor(one, 'always'), true);
    assert.equal(reviewFor({ ...one, review: true }, 'never'), true);
    assert.equal(reviewFor({ ...two, review: false }, 'always'), false);
    assert.equal(reviewFor({ ...one, review: 'always' }, 'never'), true);
  });
  it('goes to the server as the call options, not in the plan', () => {
    assert.deepEqual(serverArguments({ ...one, review: true }, true), [one, { review: true }]);
  });
});

describe('symbol edits and renames', () => {
  it('a symbol edit is an edit, and a rename alone is a plan', () => {
    const plan = parsePlanText('{"edits": [{"symbol": "Calculator/add", "replace": "body", "new_string": "return 0;"}]}');
    assert.doesNotThrow(() => validatePlanShape(plan));
    const prepared = preparePlan(plan, { targetPath: '/ws/calc.ts' });
    assert.equal(prepared.file_path, '/ws/calc.ts');
    const rename = parsePlanText('{"rename": {"file_path": "src/a.ts", "symbol": "total", "new_name": "sum"}}');
    const renamed = preparePlan(rename, { baseDir: '/ws' });
    assert.deepEqual(renamed, { rename: { file_path: '/ws/src/a.ts', symbol: 'total', new_name: 'sum' } });
    assert.deepEqual(planTargets(renamed), ['/ws/src/a.ts']);
    assert.equal(planEditCount(renamed), 1);
    assert.throws(() => validatePlanShape({ edits: [{ new_string: 'x' }] } as Plan), /edit 1 needs "old_string" \(a string\), or "symbol"/);
    assert.throws(() => validatePlanShape({ rename: { file_path: '/a' } } as unknown as Plan), /"rename" must be an object with "file_path", "symbol" \(or "line" and "column"\) and "new_name"/);
  });
});
