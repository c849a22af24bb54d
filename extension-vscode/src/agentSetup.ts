// What "Connect AI Agents…" asks `multiedit setup` for: the agents, where each reads its
// configuration, and whether their own edit tools are turned off so that their edits go through
// multiedit. Pure: the command that asks and runs it is agents.ts.

export const AGENTS: { id: string; label: string; detail: string }[] = [
  { id: 'claude-code', label: 'Claude Code', detail: '.mcp.json in this folder' },
  { id: 'vscode', label: 'VS Code agent mode', detail: '.vscode/mcp.json in this folder' },
  { id: 'cursor', label: 'Cursor', detail: '.cursor/mcp.json in this folder' },
  { id: 'gemini', label: 'Gemini CLI', detail: '.gemini/settings.json in this folder' },
  { id: 'opencode', label: 'OpenCode', detail: 'opencode.json in this folder' },
  { id: 'codex', label: 'Codex CLI', detail: '~/.codex/config.toml (Codex reads only its user file)' },
];

/** The two ways an agent's edits can go, as the second question offers them. */
export const ROUTING: { route: boolean; label: string; detail: string }[] = [
  {
    route: true,
    label: 'Route their edits through MultiEdit',
    detail:
      "Turns off each agent's own edit tools where it has a switch (Claude Code's Edit and Write in .claude/settings.local.json, OpenCode's edit permission); their edits then land in your editor: review, one undo, diagnostics. Undo: multiedit setup --undo-route-edits",
  },
  { route: false, label: 'Only connect them', detail: 'The agents keep their own edit tools, which write the disk behind your unsaved changes' },
];

/** The arguments of `multiedit setup` for the picked agents. */
export function setupArgs(agents: string[], dryRun: boolean, routeEdits = false): string[] {
  return ['setup', ...agents, '--project', ...(routeEdits ? ['--route-edits'] : []), ...(dryRun ? ['--dry-run'] : [])];
}
