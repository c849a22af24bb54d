// Stages the npm package of one platform's binary, @multiedit/cli-<platform>-<arch>, in the layout
// the `multiedit` launcher package (packaging/npm/multiedit) looks for: bin/multiedit[.exe].
// The version is the crate's (server/Cargo.toml).
//
//   node packaging/npm/stage.mjs --binary target/release/multiedit --target linux-x64 --out DIR
//
// Writes DIR/cli-<target>/ (package.json, README.md, bin/) ready for `npm pack` / `npm publish`.
// --target defaults to this machine's `${process.platform}-${process.arch}`; a Linux target ending in
// `-musl` (linux-x64-musl: Alpine) is the statically linked musl build, and the package says
// `"libc": ["musl"]` (the glibc ones `["glibc"]`) so that npm installs each only where it runs.
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { crateVersion } from '../version.mjs';

const { values } = parseArgs({
  options: {
    binary: { type: 'string' },
    target: { type: 'string', default: `${process.platform}-${process.arch}` },
    out: { type: 'string' },
  },
});
if (!values.binary || !values.out) {
  console.error('usage: node packaging/npm/stage.mjs --binary PATH [--target linux-x64] --out DIR');
  process.exit(2);
}
const [os, cpu, libc, ...rest] = values.target.split('-');
const known = { os: ['linux', 'darwin', 'win32'], cpu: ['x64', 'arm64'] };
if (!known.os.includes(os) || !known.cpu.includes(cpu) || rest.length || (libc !== undefined && (libc !== 'musl' || os !== 'linux'))) {
  console.error(`unknown target ${values.target}: expected <${known.os.join('|')}>-<${known.cpu.join('|')}>, or linux-<cpu>-musl`);
  process.exit(2);
}
const exe = os === 'win32' ? 'multiedit.exe' : 'multiedit';
const name = `@multiedit/cli-${values.target}`;
const dir = resolve(values.out, `cli-${values.target}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'bin'), { recursive: true });
copyFileSync(resolve(values.binary), join(dir, 'bin', exe));
chmodSync(join(dir, 'bin', exe), 0o755);
const version = crateVersion();
const pkg = {
  name,
  version,
  description: `The multiedit binary for ${values.target}; installed by the \`multiedit\` package, which runs it.`,
  license: 'MIT',
  os: [os],
  cpu: [cpu],
  ...(os === 'linux' ? { libc: [libc === 'musl' ? 'musl' : 'glibc'] } : {}),
  files: [`bin/${exe}`, 'README.md'],
  preferUnplugged: true,
};
writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
writeFileSync(
  join(dir, 'README.md'),
  `# ${name}\n\nThe \`multiedit\` executable for ${values.target}. Install the \`multiedit\` package instead ` +
    '(`npx -y multiedit mcp`, `npm install -g multiedit`): it depends on this package on this platform and runs its binary.\n',
);
console.log(`staged ${name}@${version} in ${dir}`);
