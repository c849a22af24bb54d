// Activation: builds the context and wires the modules to VS Code. The context is disposed with the
// extension, which stops the server.
//
//   ctx.ts       the client, the status bar item and what the last operations did (the only state)
//   config.ts    every `multiedit.*` setting
//   commands.ts  the palette commands and where their plan comes from
//   apply.ts     running a plan through the server and reporting its outcome; changes.ts shows it
//   preview.ts   the palette's diff preview
//   tools.ts     the language model tools and the @multiedit chat participant (logic in assist.ts)
//   testCommands.ts  the end-to-end tests' commands, registered only in test mode
import * as vscode from 'vscode';
import { connectAgents } from './agents';
import { ServerError } from './client';
import { registerCommands } from './commands';
import { testSettings } from './config';
import { Ctx } from './ctx';
import { registerMcpServer } from './mcp';
import { PREVIEW_SCHEME } from './preview';
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
