// The release version lives in one place: server/Cargo.toml's [package] version. The wheel reads it
// through maturin; the npm packages and the VS Code extension carry copies, checked or stamped here.
//
//   node packaging/version.mjs           check: exit 1 and name every file whose version differs
//   node packaging/version.mjs --stamp   write the crate's version into those files
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function crateVersion() {
  const toml = readFileSync(join(root, 'server', 'Cargo.toml'), 'utf8');
  const pkg = toml.split(/^\[/m).find((s) => s.startsWith('package]'));
  const m = pkg && /^version\s*=\s*"([^"]+)"/m.exec(pkg);
  if (!m) throw new Error('no [package] version in server/Cargo.toml');
  return m[1];
}

// Every place that carries the version: [file, list of [description, get, set]].
const places = [
  ['extension-vscode/package.json', [['version', (j) => j.version, (j, v) => { j.version = v; }]]],
  [
    'extension-vscode/package-lock.json',
    [
      ['version', (j) => j.version, (j, v) => { j.version = v; }],
      ['packages[""].version', (j) => j.packages[''].version, (j, v) => { j.packages[''].version = v; }],
    ],
  ],
  [
    'packaging/npm/multiedit/package.json',
    [
      ['version', (j) => j.version, (j, v) => { j.version = v; }],
      ...Object.keys(JSON.parse(readFileSync(join(root, 'packaging/npm/multiedit/package.json'), 'utf8')).optionalDependencies).map(
        (dep) => [`optionalDependencies["${dep}"]`, (j) => j.optionalDependencies[dep], (j, v) => { j.optionalDependencies[dep] = v; }],
      ),
    ],
  ],
];

function main() {
  const stamp = process.argv.includes('--stamp');
  const version = crateVersion();
  const drift = [];
  for (const [file, fields] of places) {
    const path = join(root, file);
    const json = JSON.parse(readFileSync(path, 'utf8'));
    let changed = false;
    for (const [what, get, set] of fields) {
      const found = get(json);
      if (found === version) continue;
      drift.push(`${file}: ${what} is ${found}`);
      if (stamp) { set(json, version); changed = true; }
    }
    if (changed) writeFileSync(path, JSON.stringify(json, null, 2) + '\n');
  }
  if (drift.length === 0) {
    console.log(`version ${version} (server/Cargo.toml) everywhere`);
  } else if (stamp) {
    console.log(`stamped version ${version} from server/Cargo.toml:\n  ${drift.join('\n  ')}`);
  } else {
    console.error(`server/Cargo.toml says ${version}, but:\n  ${drift.join('\n  ')}\nrun: node ${relative(process.cwd(), fileURLToPath(import.meta.url))} --stamp`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
