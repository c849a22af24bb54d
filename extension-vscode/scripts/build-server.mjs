// Builds the release server as the release ships it (packaging/release-build.mjs) and copies the
// binary into bin/ so that `vsce package` puts it inside the VSIX.
// MULTIEDIT_SERVER_BINARY=<path> skips the build and bundles that binary instead.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRelease } from '../../packaging/release-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const extRoot = resolve(here, '..');
const exe = process.platform === 'win32' ? 'multiedit.exe' : 'multiedit';

let source = process.env.MULTIEDIT_SERVER_BINARY;
if (!source) source = buildRelease();
if (!existsSync(source)) {
  console.error(`server binary not found: ${source}`);
  process.exit(1);
}
mkdirSync(join(extRoot, 'bin'), { recursive: true });
const dest = join(extRoot, 'bin', exe);
copyFileSync(source, dest);
chmodSync(dest, 0o755);
// Debug information is not needed in the package; strip it when `strip` is available.
if (process.platform !== 'win32' && process.env.MULTIEDIT_NO_STRIP !== '1') {
  try {
    execFileSync('strip', [dest], { stdio: 'ignore' });
  } catch {
    console.log('strip not available; bundling the binary as built');
  }
}
console.log(`bundled ${source} -> ${dest}`);
