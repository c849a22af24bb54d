import assert from 'node:assert/strict';
import * as os from 'node:os';
import { describe, it } from 'node:test';
import { chooseServerPath, expandHome, findExecutable, INSTALL_COMMANDS, noServerMessage } from '../../src/serverPath';

describe('chooseServerPath', () => {
  const base = { bundled: '/ext/bin/multiedit', trusted: true };
  it('uses the setting first', () => {
    assert.deepEqual(chooseServerPath({ ...base, configured: '/opt/multiedit', exists: () => true }), { command: '/opt/multiedit', source: 'setting' });
  });
  it('ignores the setting in an untrusted workspace', () => {
    assert.deepEqual(chooseServerPath({ ...base, trusted: false, configured: '/opt/multiedit', exists: () => true }), {
      command: '/ext/bin/multiedit',
      source: 'bundled',
    });
  });
  it('falls back to the bundled binary, then PATH', () => {
    assert.equal(chooseServerPath({ ...base, configured: '  ', exists: () => true }).source, 'bundled');
    assert.deepEqual(chooseServerPath({ ...base, configured: null, exists: () => false }), { command: 'multiedit', source: 'PATH' });
  });
  it('expands ~', () => {
    assert.equal(expandHome('~/bin/multiedit'), `${os.homedir()}/bin/multiedit`);
    assert.equal(expandHome('/x'), '/x');
  });
});

describe('findExecutable', () => {
  const files = new Set(['/usr/local/bin/multiedit', '/opt/m']);
  const isFile = (p: string) => files.has(p);
  it('searches PATH for a bare name', () => {
    assert.equal(findExecutable('multiedit', { PATH: '/usr/bin:/usr/local/bin' }, isFile), '/usr/local/bin/multiedit');
    assert.equal(findExecutable('multiedit', { PATH: '/usr/bin' }, isFile), undefined);
  });
  it('checks a path directly', () => {
    assert.equal(findExecutable('/opt/m', { PATH: '' }, isFile), '/opt/m');
    assert.equal(findExecutable('/opt/missing', { PATH: '/opt' }, isFile), undefined);
  });
});

describe('noServerMessage', () => {
  it('names the install commands and the setting when nothing fits this platform', () => {
    const m = noServerMessage({ command: 'multiedit', source: 'PATH' }, 'linux-riscv64');
    assert.match(m, /bundles none for linux-riscv64/);
    for (const c of INSTALL_COMMANDS) assert.ok(m.includes(`\`${c}\``), `${c} in: ${m}`);
    assert.match(m, /`cargo install multiedit`/);
    assert.match(m, /"multiedit\.server\.path"/);
    assert.doesNotMatch(m, /\n\s+at /, 'no stack trace');
  });
  it('points at the setting when the configured path does not exist', () => {
    const m = noServerMessage({ command: '/opt/nope', source: 'setting' });
    assert.equal(m, 'MultiEdit: could not start the server: /opt/nope does not exist. Check the "multiedit.server.path" setting.');
  });
  it('names the missing bundled binary', () => {
    assert.match(noServerMessage({ command: '/ext/bin/multiedit', source: 'bundled' }), /\/ext\/bin\/multiedit does not exist\.$/);
  });
});
