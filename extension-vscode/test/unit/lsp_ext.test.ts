// lsp_ext.ts mirrors the server's wire types: every type in lsp_ext.shape.json (which the server's test
// writes from the Rust types) has an interface or type here under the same name, with the same fields,
// none taken as always there when the server may leave it out, and an enum's values the same.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const SRC = path.resolve(__dirname, '../../src');

type Shape = Record<string, { fields?: Record<string, boolean>; values?: string[] }>;

/** Per declared type of lsp_ext.ts: its fields (`true`: optional) or its string values. */
function declared(): Map<string, { fields?: Map<string, boolean>; values?: string[] }> {
  const file = ts.createSourceFile('lsp_ext.ts', fs.readFileSync(path.join(SRC, 'lsp_ext.ts'), 'utf8'), ts.ScriptTarget.ES2022, true);
  const out = new Map<string, { fields?: Map<string, boolean>; values?: string[] }>();
  const membersOf = (members: ts.NodeArray<ts.TypeElement>) => {
    const fields = new Map<string, boolean>();
    for (const m of members) if (ts.isPropertySignature(m) && m.name) fields.set(m.name.getText(file), !!m.questionToken);
    return fields;
  };
  for (const stmt of file.statements) {
    if (ts.isInterfaceDeclaration(stmt)) out.set(stmt.name.text, { fields: membersOf(stmt.members) });
    if (!ts.isTypeAliasDeclaration(stmt)) continue;
    const t = stmt.type;
    const members = ts.isUnionTypeNode(t) ? t.types : [t];
    if (members.every((m) => ts.isLiteralTypeNode(m) && ts.isStringLiteral(m.literal))) {
      out.set(stmt.name.text, { values: members.map((m) => ((m as ts.LiteralTypeNode).literal as ts.StringLiteral).text) });
    } else if (members.every(ts.isTypeLiteralNode)) {
      // A tagged union: its variants' fields together, optional where some variant lacks one.
      const variants = members.map((m) => membersOf((m as ts.TypeLiteralNode).members));
      const fields = new Map<string, boolean>();
      for (const v of variants) for (const [name, optional] of v) fields.set(name, (fields.get(name) ?? false) || optional || !variants.every((w) => w.has(name)));
      out.set(stmt.name.text, { fields });
    }
  }
  return out;
}

describe('lsp_ext.ts mirrors the server', () => {
  const shape = JSON.parse(fs.readFileSync(path.join(SRC, 'lsp_ext.shape.json'), 'utf8')) as Shape;
  const here = declared();

  for (const [name, want] of Object.entries(shape)) {
    it(name, () => {
      const got = here.get(name);
      assert.ok(got, `lsp_ext.ts declares no ${name}: mirror server/src/lsp/ext.rs or server/src/result.rs`);
      if (want.values) {
        assert.deepEqual([...(got.values ?? [])].sort(), [...want.values].sort(), `the values of ${name}`);
        return;
      }
      const fields = got.fields ?? new Map<string, boolean>();
      const rust = Object.keys(want.fields ?? {}).sort();
      assert.deepEqual([...fields.keys()].sort(), rust, `the fields of ${name} (left: lsp_ext.ts, right: the server)`);
      const assumed = rust.filter((f) => want.fields![f] && !fields.get(f));
      assert.deepEqual(assumed, [], `fields of ${name} the server may leave out, taken here as always there`);
    });
  }

  it('the check itself sees a field added on one side only', () => {
    const fake: Shape = { ...shape, PlanResult: { fields: { ...shape.PlanResult.fields, only_in_rust: true } } };
    const names = [...(here.get('PlanResult')?.fields?.keys() ?? [])].sort();
    assert.notDeepEqual(names, Object.keys(fake.PlanResult.fields!).sort());
  });
});
