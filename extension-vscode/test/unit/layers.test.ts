// The extension's modules in layers (ARCHITECTURE.md): a module imports only from its own layer or
// the ones below, the bottom layer never imports `vscode`, and no import circle exists.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const SRC = path.resolve(__dirname, '../../src');

/** Top to bottom. */
const LAYERS: [string, string[]][] = [
  ['wiring', ['extension']],
  ['commands and tools', ['commands', 'tools', 'preview', 'testCommands', 'agents', 'mcp']],
  ['flows', ['apply', 'changes']],
  ['context', ['ctx']],
  ['client', ['client', 'diagnosticsHost', 'formatHost', 'saveHost', 'approveHost', 'symbolsHost']],
  ['editor helpers', ['config', 'util', 'highlight', 'previewContent', 'tabs']],
  ['protocol and pure logic', ['lsp_ext', 'lsp_ext.generated', 'plan', 'render', 'workspaceEdit', 'locate', 'formatting', 'diagnostics', 'status', 'serverPath', 'assist', 'agentSetup']],
];

function layerOf(module: string): number {
  const i = LAYERS.findIndex(([, mods]) => mods.includes(module));
  assert.notEqual(i, -1, `src/${module}.ts is in no layer of test/unit/layers.test.ts: add it where it belongs`);
  return i;
}

function importsOf(module: string): { local: string[]; vscode: boolean } {
  const text = fs.readFileSync(path.join(SRC, `${module}.ts`), 'utf8');
  const specs = [...text.matchAll(/^import\s[^;]*?from\s+'([^']+)';/gms)].map((m) => m[1]);
  return { local: specs.filter((s) => s.startsWith('./')).map((s) => s.slice(2)), vscode: specs.includes('vscode') };
}

const modules = fs
  .readdirSync(SRC)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3));

describe('the extension layers', () => {
  it('every module is in a layer and imports only downwards', () => {
    const upward: string[] = [];
    for (const m of modules) {
      for (const dep of importsOf(m).local) if (layerOf(dep) < layerOf(m)) upward.push(`${m} (${LAYERS[layerOf(m)][0]}) imports ${dep} (${LAYERS[layerOf(dep)][0]})`);
    }
    assert.deepEqual(upward, []);
  });

  it('the bottom layer runs without VS Code', () => {
    const bottom = LAYERS.length - 1;
    assert.deepEqual(
      modules.filter((m) => layerOf(m) === bottom && importsOf(m).vscode),
      [],
    );
  });

  it('has no import circle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (m: string, trail: string[]) => {
      if (state.get(m) === 'done') return;
      if (state.get(m) === 'open') {
        circles.push([...trail.slice(trail.indexOf(m)), m].join(' → '));
        return;
      }
      state.set(m, 'open');
      for (const dep of importsOf(m).local) visit(dep, [...trail, m]);
      state.set(m, 'done');
    };
    for (const m of modules) visit(m, []);
    assert.deepEqual(circles, []);
  });
});
