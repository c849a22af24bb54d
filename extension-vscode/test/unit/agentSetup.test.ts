import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENTS, ROUTING, setupArgs } from '../../src/agentSetup';

describe('Connect AI Agents… runs multiedit setup', () => {
  it('for the picked agents in the project, a dry run first', () => {
    assert.deepEqual(setupArgs(['claude-code', 'opencode'], true), ['setup', 'claude-code', 'opencode', '--project', '--dry-run']);
    assert.deepEqual(setupArgs(['claude-code'], false), ['setup', 'claude-code', '--project']);
  });
  it('with --route-edits when the user chose to route their edits through MultiEdit', () => {
    const route = ROUTING.find((r) => r.route);
    assert.ok(route && route.detail.includes('--undo-route-edits'), 'the choice says how to undo it');
    assert.deepEqual(setupArgs(['gemini'], false, route.route), ['setup', 'gemini', '--project', '--route-edits']);
    assert.deepEqual(setupArgs(['gemini'], true, true), ['setup', 'gemini', '--project', '--route-edits', '--dry-run']);
  });
  it('offers every agent multiedit setup knows', () => {
    assert.deepEqual(AGENTS.map((a) => a.id).sort(), ['claude-code', 'codex', 'cursor', 'gemini', 'opencode', 'vscode']);
  });
});
