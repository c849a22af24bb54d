// Activation: builds the context and wires the modules to VS Code. The context is disposed with the
// extension, which stops the server.
//
// The layers below it, and what each module holds, are in ARCHITECTURE.md.
import * as vscode from 'vscode';
import { connectAgents } from './agents';
import { ServerError } from './client';
import { registerCommands } from './commands';
import { testSettings } from './config';
import { Ctx } from './ctx';
import { registerMcpServer } from './mcp';
import { PREVIEW_SCHEME } from './previewContent';
import { registerTestCommands } from './testCommands';
import { registerTools } from './tools';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('MultiEdit', { log: true });
  const ctx = new Ctx(context, log);
  context.subscriptions.push(
    log,
    ctx,
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, ctx.previews),
    ...registerCommands(ctx),
    vscode.commands.registerCommand('multiedit.connectAgents', () => connectAgents(ctx.client.serverCommand().command, log)),
    ...registerTools(ctx),
  );
  const offersMcp = registerMcpServer(context, () => ctx.client.serverCommand().command);
  log.info(offersMcp ? 'offering `multiedit mcp` to VS Code agents' : 'this VS Code has no MCP server provider API; `multiedit mcp` is not offered');

  if (testSettings().enabled) context.subscriptions.push(...registerTestCommands(ctx));

  ctx.client.ensureStarted().catch((err) => {
    if (!(err instanceof ServerError)) log.error(`server start failed: ${err}`);
  });
}
