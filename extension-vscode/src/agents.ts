// "MultiEdit: Connect AI Agents…": the extension's face of `multiedit setup`. It runs the server binary
// the extension uses (so the agents run the very same program) in the first workspace folder, shows
// what would change (a dry run) and writes only when the user says so. The merging, and the refusal to
// touch a file it cannot keep whole, are the binary's; the extension only asks and reports.
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { AGENTS, ROUTING, setupArgs } from './agentSetup';

function run(command: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 2) : 0;
      resolve({ code, out: `${stdout}${stderr}`.trim() || String(err ?? '') });
    });
  });
}

export async function connectAgents(command: string, log: vscode.LogOutputChannel): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    void vscode.window.showErrorMessage('MultiEdit: open a folder first: the agents read their MCP configuration from the project folder.');
    return;
  }
  const picked = await vscode.window.showQuickPick(
    AGENTS.map((a) => ({ ...a, picked: a.id === 'claude-code' || a.id === 'vscode' })),
    { canPickMany: true, title: 'MultiEdit: connect AI agents to `multiedit mcp`', placeHolder: 'The agents to set up in this folder' },
  );
  if (!picked || picked.length === 0) return;
  const routing = await vscode.window.showQuickPick(ROUTING, {
    title: 'MultiEdit: how should their edits go?',
    placeHolder: "Through MultiEdit (their own edit tools off), or only connected",
  });
  if (!routing) return;
  const agents = picked.map((p) => p.id);
  const route = routing.route;
  const cwd = folder.uri.fsPath;
  const dry = await run(command, setupArgs(agents, true, route), cwd);
  log.info(`multiedit ${setupArgs(agents, true, route).join(' ')} (exit ${dry.code}):\n${dry.out}`);
  const names = picked.map((p) => p.label).join(', ');
  const choice = await vscode.window.showInformationMessage(
    route ? `MultiEdit: connect ${names} to multiedit mcp and route their edits through it?` : `MultiEdit: connect ${names} to multiedit mcp?`,
    { modal: true, detail: dry.out },
    'Connect',
  );
  if (choice !== 'Connect') return;
  const done = await run(command, setupArgs(agents, false, route), cwd);
  log.info(`multiedit ${setupArgs(agents, false, route).join(' ')} (exit ${done.code}):\n${done.out}`);
  if (done.code === 0) {
    const how = route ? ', their edits routed through MultiEdit where they allow it (the log says which)' : '';
    void vscode.window.showInformationMessage(`MultiEdit: ${names} now run multiedit mcp in this folder${how}.`, 'Show Logs').then((p) => {
      if (p === 'Show Logs') log.show(true);
    });
  } else {
    void vscode.window.showErrorMessage(`MultiEdit: not every agent could be set up: ${done.out.split('\n').slice(-1)[0]}`, 'Show Logs').then((p) => {
      if (p === 'Show Logs') log.show(true);
    });
  }
}
