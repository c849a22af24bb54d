#!/usr/bin/env node
// Launcher of the `multiedit` npm package: finds the binary of this platform, shipped in the
// optional dependency @multiedit/cli-<platform>-<arch> that npm installed, and runs it with the
// same arguments, stdio and exit status. MULTIEDIT_BINARY=<path> runs that binary instead.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

/** Linux with musl (Alpine): Node's report names the glibc it runs on, and names none under musl. */
function isMusl() {
  if (process.platform !== 'linux') return false;
  try {
    const header = process.report.getReport().header;
    return !header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

const platformPackage = `@multiedit/cli-${process.platform}-${process.arch}${isMusl() ? '-musl' : ''}`;
const exe = process.platform === 'win32' ? 'multiedit.exe' : 'multiedit';

function findBinary() {
  if (process.env.MULTIEDIT_BINARY) return process.env.MULTIEDIT_BINARY;
  try {
    return require.resolve(`${platformPackage}/bin/${exe}`);
  } catch {
    return undefined;
  }
}

const binary = findBinary();
if (!binary) {
  process.stderr.write(
    `multiedit: no binary for ${process.platform}-${process.arch} is installed (npm package ${platformPackage}).\n` +
      'Either this platform has no prebuilt binary, or npm skipped optional dependencies ' +
      '(reinstall without --omit=optional / --no-optional).\n' +
      'Other ways to install it: `cargo install multiedit` (any platform with Rust), `pipx install multiedit`.\n',
  );
  process.exit(1);
}

const result = spawnSync(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
if (result.error) {
  process.stderr.write(`multiedit: could not run ${binary}: ${result.error.message}\n`);
  process.exit(1);
}
if (result.signal) {
  // Die of the same signal, so that callers see what the binary saw.
  process.kill(process.pid, result.signal);
}
process.exit(result.status ?? 1);
