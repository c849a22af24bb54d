// Builds the platform-specific VSIX: the release server for one VS Code target inside
// (scripts/build-server.mjs), packaged with `vsce package --target <target>` so that the Marketplace
// and Open VSX offer each platform the VSIX whose binary runs there.
//
//   npm run package                          -> multiedit-<this platform>.vsix, e.g. multiedit-linux-x64.vsix
//   node scripts/package.mjs --print-target  prints the target only
//   MULTIEDIT_VSCE_TARGET=darwin-arm64 MULTIEDIT_SERVER_BINARY=path npm run package   (cross packaging)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const extRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** VS Code's name for this machine's platform (`vsce package --target` values). */
export function vscodeTarget(platform = process.platform, arch = process.arch, alpine = existsSync('/etc/alpine-release')) {
  const a = arch === 'arm' ? 'armhf' : arch;
  if (platform === 'linux' && alpine) return `alpine-${a}`;
  return `${platform}-${a}`;
}

const target = process.env.MULTIEDIT_VSCE_TARGET || vscodeTarget();
if (process.argv.includes('--print-target')) {
  console.log(target);
  process.exit(0);
}
const out = `multiedit-${target}.vsix`;
execFileSync(process.execPath, [join(extRoot, 'scripts', 'build-server.mjs')], { cwd: extRoot, stdio: 'inherit' });
const vsce = join(extRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
execFileSync(
  process.execPath,
  [vsce, 'package', '--target', target, '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--out', out],
  { cwd: extRoot, stdio: 'inherit' },
);
console.log(`packaged ${join(extRoot, out)} for ${target}`);
