// Offers `multiedit mcp` to VS Code's own agents, so that agent mode can call the MultiEdit tools
// without the user writing an mcp.json. The API (vscode.lm.registerMcpServerDefinitionProvider,
// vscode.McpStdioServerDefinition) came after the oldest VS Code this extension supports (1.95), whose
// type definitions it builds against: it is looked up at run time, and an older VS Code simply goes
// without.
import * as vscode from 'vscode';

interface McpStdioServerDefinitionCtor {
  new (label: string, command: string, args?: string[], env?: Record<string, string>, version?: string): unknown;
}

interface McpServerDefinitionProvider {
  onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[];
}

interface LmWithMcp {
  registerMcpServerDefinitionProvider?(id: string, provider: McpServerDefinitionProvider): vscode.Disposable;
}

/** The id declared under `contributes.mcpServerDefinitionProviders` in package.json. */
export const MCP_PROVIDER_ID = 'multiedit.mcp';

/**
 * `multiedit mcp` edits only inside the folder it was started in unless given `--root` folders: here,
 * the workspace folders on disk (the project the agent works on), whatever folder VS Code starts it in.
 */
export function mcpArgs(): string[] {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  return ['mcp', ...folders.flatMap((f) => ['--root', f.uri.fsPath])];
}

/**
 * Registers the provider when this VS Code has the API; returns whether it did. `command` gives the
 * executable the language server uses (setting, bundled binary, or PATH), asked again whenever VS Code
 * asks for the definitions, so a changed setting is picked up.
 */
export function registerMcpServer(context: vscode.ExtensionContext, command: () => string): boolean {
  const lm = vscode.lm as unknown as LmWithMcp | undefined;
  const Stdio = (vscode as unknown as { McpStdioServerDefinition?: McpStdioServerDefinitionCtor }).McpStdioServerDefinition;
  if (!lm?.registerMcpServerDefinitionProvider || !Stdio) return false;
  const changed = new vscode.EventEmitter<void>();
  const version = String(context.extension.packageJSON.version ?? '');
  context.subscriptions.push(
    changed,
    lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => [new Stdio('MultiEdit', command(), mcpArgs(), {}, version)],
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('multiedit.server')) changed.fire();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
  );
  return true;
}
