import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { fileIndexOf, hintLines, locateEdit, offsetToPosition } from '../../src/locate';

describe('hint lines', () => {
  it('reads the closest text and already-applied hints', () => {
    assert.deepEqual(hintLines('The closest text is at lines 12-15 and differs in indentation.'), { first: 12, last: 15 });
    assert.deepEqual(hintLines('The closest text is at line 14 and differs in one word.'), { first: 14, last: 14 });
    assert.deepEqual(hintLines('The closest texts are at lines 3-4 and lines 9-10. At lines 3-4 the text differs in'), { first: 3, last: 4 });
    assert.deepEqual(hintLines('new_string is already present at line 9: this edit looks already applied.'), { first: 9, last: 9 });
    assert.equal(hintLines('Matches are at lines 3, 17 and 40.'), undefined);
    assert.equal(hintLines(undefined), undefined);
  });
});

describe('locating an edit in a plan text', () => {
  const single = '{\n  "file_path": "/a",\n  "edits": [\n    {"old_string": "one", "new_string": "1"},\n    {"new_string": "2", "old_string": "t\\"wo"}\n  ]\n}\n';
  it('finds edits[i].old_string', () => {
    const s = locateEdit(single, 1)!;
    assert.equal(single.slice(s.start, s.end), '"t\\"wo"');
    assert.deepEqual(offsetToPosition(single, s.start), { line: 4, character: 38 });
    assert.equal(single.slice(locateEdit(single, 0)!.start, locateEdit(single, 0)!.end), '"one"');
    assert.equal(locateEdit(single, 2), undefined);
  });
  it('in files[j], with comments and prose around', () => {
    const text = 'Plan:\n```json\n{"files": [\n  {"file_path": "/a", "edits": [{"old_string": "a0", "new_string": "x"}]}, // first\n  /* second */ {"file_path": "/b", "edits": [{"old_string": "b0", "new_string": "x"}, {"old_string": "b1", "new_string": "y"}]}\n]}\n```\n';
    const s = locateEdit(text, 1, 1)!;
    assert.equal(text.slice(s.start, s.end), '"b1"');
    assert.equal(text.slice(locateEdit(text, 0, 0)!.start, locateEdit(text, 0, 0)!.end), '"a0"');
    assert.equal(locateEdit(text, 1, 0), undefined);
  });
  it('maps a refusal file to its index', () => {
    assert.equal(fileIndexOf([{ file_path: '/a' }, { file_path: '/b' }], '/b'), 1);
    assert.equal(fileIndexOf(undefined, '/b'), undefined);
  });
});
