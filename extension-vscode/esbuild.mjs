// Bundles the extension (src/extension.ts -> dist/extension.js) or, with --tests,
// the unit tests (test/unit/*.test.ts -> out/test/*.test.js) which never load `vscode`.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

if (tests) {
  const entryPoints = readdirSync('test/unit')
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/unit/${f}`);
  await esbuild.build({
    entryPoints,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    outdir: 'out/test',
    sourcemap: 'inline',
    // The TypeScript compiler (lsp_ext.test.ts reads lsp_ext.ts with it) is loaded from node_modules.
    external: ['vscode', 'typescript'],
    logLevel: 'warning',
  });
} else {
  await esbuild.build({
    entryPoints: ['src/extension.ts'],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    outfile: 'dist/extension.js',
    external: ['vscode'],
    minify: production,
    sourcemap: !production,
    sourcesContent: false,
    logLevel: 'warning',
  });
}
