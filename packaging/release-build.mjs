// The `multiedit` binary as the release ships it. One home for how it is built: the release
// workflow, the VSIX (extension-vscode/scripts/build-server.mjs), tests/packaging.sh and the
// benchmarks all build it through here.
//
//   node packaging/release-build.mjs [--target TRIPLE]     build it; print its path (last line)
//   node packaging/release-build.mjs --print-target [--target TRIPLE]
//   node packaging/release-build.mjs --print-rustflags [--target TRIPLE]
//
// On x86-64 Linux with glibc the binary is a static PIE (`-C target-feature=+crt-static`): no dynamic
// loader and no shared library to find, map and relocate, which was a fifth of what a short run
// such as checking one commit cost (0.41 ms of 2.16 ms; README "Performance");
// still position-independent, so the kernel still randomises where it is loaded. It also runs on
// any Linux whatever its glibc. The flag needs an explicit `--target`: given without one, cargo
// would pass it to proc-macro crates too, which cannot be built static. musl targets are static
// already; macOS and Windows are built as cargo builds them.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** This machine's target triple, as rustc names it. */
export function hostTarget() {
  const out = execFileSync('rustc', ['-vV'], { encoding: 'utf8' });
  const m = /^host: (\S+)$/m.exec(out);
  if (!m) throw new Error(`rustc -vV named no host:\n${out}`);
  return m[1];
}

/**
 * Targets built as static PIEs: those rustc links static-pie with crt-static (x86_64's target spec
 * says so; aarch64-unknown-linux-gnu has not been seen to, and a static non-PIE binary would give up
 * address randomisation, so it stays dynamic until it has been checked).
 */
const STATIC_PIE = new Set(['x86_64-unknown-linux-gnu']);

/**
 * The target to pass cargo (`undefined`: its default), the extra RUSTFLAGS it takes, and the triple
 * the binary is for.
 */
export function releaseTarget(target) {
  const triple = target ?? hostTarget();
  if (STATIC_PIE.has(triple)) return { target: triple, rustflags: '-C target-feature=+crt-static', triple };
  return { target, rustflags: '', triple };
}

/**
 * Why the ELF file `path` is not a static PIE (`undefined` when it is): position-independent (type
 * ET_DYN) with no program interpreter (PT_INTERP). 64-bit little-endian only.
 */
export function notStaticPie(path) {
  const b = readFileSync(path);
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return 'not a 64-bit little-endian ELF file';
  if (b.readUInt16LE(16) !== 3) return 'not position-independent (ELF type is not ET_DYN)';
  const [phoff, phentsize, phnum] = [Number(b.readBigUInt64LE(32)), b.readUInt16LE(54), b.readUInt16LE(56)];
  for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) return 'dynamically linked (it names a program interpreter)';
  return undefined;
}

/** The environment cargo runs in: RUSTFLAGS with the release's `rustflags` added. */
function releaseEnv(rustflags) {
  if (!rustflags) return { ...process.env };
  return { ...process.env, RUSTFLAGS: [process.env.RUSTFLAGS, rustflags].filter(Boolean).join(' ') };
}

function targetDir() {
  const meta = JSON.parse(execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps', '--locked'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 }));
  return meta.target_directory;
}

/** Builds the release binary for `target` (default: this machine) and returns its path. */
export function buildRelease(target, { stdio = 'inherit' } = {}) {
  const t = releaseTarget(target);
  const args = ['build', '--release', '--locked', '--bin', 'multiedit', ...(t.target ? ['--target', t.target] : [])];
  console.error(`building the server: ${t.rustflags ? `RUSTFLAGS="${t.rustflags}" ` : ''}cargo ${args.join(' ')}`);
  execFileSync('cargo', args, { cwd: root, stdio, env: releaseEnv(t.rustflags) });
  const exe = t.triple.includes('windows') ? 'multiedit.exe' : 'multiedit';
  const path = join(targetDir(), ...(t.target ? [t.target] : []), 'release', exe);
  if (!existsSync(path)) throw new Error(`cargo built no ${path}`);
  const why = t.rustflags && notStaticPie(path);
  if (why) throw new Error(`${path} was built with ${t.rustflags} but is ${why}`);
  return path;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--target');
  const target = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0 && !target) {
    console.error('--target needs a target triple, e.g. --target x86_64-unknown-linux-gnu');
    process.exit(2);
  }
  const known = new Set(['--target', '--print-target', '--print-rustflags', target]);
  const unknown = argv.filter((a) => !known.has(a));
  if (unknown.length) {
    console.error(`unknown argument ${unknown[0]}: usage: node packaging/release-build.mjs [--print-target | --print-rustflags] [--target TRIPLE]`);
    process.exit(2);
  }
  if (argv.includes('--print-target')) console.log(releaseTarget(target).target ?? '');
  else if (argv.includes('--print-rustflags')) console.log(releaseTarget(target).rustflags);
  else console.log(buildRelease(target, { stdio: ['ignore', 2, 2] }));
}
