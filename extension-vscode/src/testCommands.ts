// Test-only commands, for the end-to-end tests in real VS Code (tests/vscode/e2e.mjs): registered
// only when `multiedit.testing.enableTestCommands` is on (or MULTIEDIT_TEST_MODE=1). They write the
// editor's state to `multiedit.testing.stateFile` and drive the tools and the chat participant.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { PATCH_TOOL_NAME } from './assist';
import { testSettings } from './config';
import type { Ctx, Shown } from './ctx';
import { EditRequest, isPatchRequest } from './plan';
import { chatHandler, TOOL_NAME } from './tools';

/** What the extension showed since the test commands were registered: each kind's latest. */
type Seen = { [K in keyof Shown]: Shown[K] | null };

function writeState(ctx: Ctx, seen: Seen, extra: Record<string, unknown>): void {
  const file = testSettings().stateFile;
  if (!file) throw new Error('multiedit.testing.stateFile is not set');
  const editor = vscode.window.activeTextEditor;
  const docs = vscode.workspace.textDocuments
    .filter((d) => d.uri.scheme === 'file' || d.uri.scheme === 'untitled')
    .map((d) => ({
      path: d.uri.scheme === 'file' ? d.uri.fsPath : d.uri.toString(),
      text: d.getText(),
      dirty: d.isDirty,
      version: d.version,
      languageId: d.languageId,
      diagnostics: vscode.languages.getDiagnostics(d.uri).map((x) => x.message),
    }));
  const data = {
    time: new Date().toISOString(),
    activeEditor: editor
      ? {
          path: editor.document.uri.fsPath,
          text: editor.document.getText(),
          dirty: editor.document.isDirty,
          version: editor.document.version,
          selection: { start: editor.selection.start, end: editor.selection.end },
        }
      : null,
    documents: docs,
    serverRunning: ctx.client.isRunning(),
    tools: vscode.lm?.tools?.map((t) => t.name) ?? [],
    lastApplied: ctx.lastApplied ?? null,
    lastRefusal: seen.refusal ?? null,
    lastNotification: seen.notification ?? null,
    lastToolResult: seen.toolResult ?? null,
    lastPreview: seen.preview ?? null,
    status: seen.status ?? null,
    openedFiles: seen.openedFiles ?? null,
    highlighted: seen.highlighted ?? null,
    tabs: vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => (t.input instanceof vscode.TabInputText ? t.input.uri.fsPath : t.label)),
    ...extra,
  };
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(data, null, 2));
  fs.renameSync(tmp, file);
}

export function registerTestCommands(ctx: Ctx): vscode.Disposable[] {
  void vscode.commands.executeCommand('setContext', 'multiedit.testMode', true);
  const seen: Seen = {};
  // A key given as undefined clears what was seen (an applied plan clears the last refusal).
  const record = ctx.onDidShow((what) => Object.assign(seen, what));
  const write = (extra: Record<string, unknown>) => writeState(ctx, seen, extra);
  return [
    record,
    vscode.commands.registerCommand('multiedit.test.dumpState', () => write({ command: 'dumpState' })),
    // An input with `patch` goes to the multiedit_patch tool, `{"tool": name, "input": ...}` to the tool
    // named, any other to the multiedit tool.
    vscode.commands.registerCommand('multiedit.test.invokeTool', async (input?: EditRequest) => {
      let toolInput = input;
      if (!toolInput) {
        const inputFile = `${testSettings().stateFile}.tool-input.json`;
        toolInput = JSON.parse(fs.readFileSync(inputFile, 'utf8')) as EditRequest;
      }
      const named = toolInput as { tool?: unknown; input?: unknown };
      const [tool, given] = typeof named.tool === 'string' ? [named.tool, named.input] : [isPatchRequest(toolInput) ? PATCH_TOOL_NAME : TOOL_NAME, toolInput];
      let text: string;
      try {
        const result = await vscode.lm.invokeTool(tool, { input: given as object, toolInvocationToken: undefined });
        text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
      } catch (err) {
        text = `invokeTool threw: ${(err as Error).message}`;
      }
      seen.toolResult = text;
      write({ command: 'invokeTool', toolResult: text });
    }),
    // The user types `text` at the start of `file` between the next plan's edit and its save: the save
    // must see the document moved on and leave it unsaved.
    vscode.commands.registerCommand('multiedit.test.typeBeforeSave', async (input?: { file: string; text: string }) => {
      const req = input ?? (JSON.parse(fs.readFileSync(`${testSettings().stateFile}.type-input.json`, 'utf8')) as { file: string; text: string });
      const target = vscode.Uri.file(req.file).toString();
      ctx.client.saves.beforeSaving = async (uris) => {
        if (!uris.some((u) => vscode.Uri.parse(u).toString() === target)) return;
        ctx.client.saves.beforeSaving = undefined;
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(req.file));
        const edit = new vscode.WorkspaceEdit();
        edit.insert(doc.uri, new vscode.Position(0, 0), req.text);
        await vscode.workspace.applyEdit(edit);
      };
      write({ command: 'typeBeforeSave', armed: req });
    }),
    // Changes a setting through the configuration service (as the Settings editor does).
    vscode.commands.registerCommand('multiedit.test.updateSetting', async (input?: { key: string; value: unknown }) => {
      const req = input ?? (JSON.parse(fs.readFileSync(`${testSettings().stateFile}.setting-input.json`, 'utf8')) as { key: string; value: unknown });
      await vscode.workspace.getConfiguration().update(req.key, req.value, vscode.ConfigurationTarget.Global);
      write({ command: 'updateSetting', setting: req });
    }),
    // Runs the chat participant's handler with a recorded response stream (the chat view itself
    // needs a signed-in chat provider).
    // `modelAnswer` stands in for the chat's language model (none is signed in here).
    vscode.commands.registerCommand('multiedit.test.chat', async (input?: { prompt: string; command?: string; modelAnswer?: string }) => {
      const req =
        input ?? (JSON.parse(fs.readFileSync(`${testSettings().stateFile}.chat-input.json`, 'utf8')) as { prompt: string; command?: string; modelAnswer?: string });
      const prompts: string[] = [];
      const model =
        req.modelAnswer === undefined
          ? undefined
          : {
              id: 'test-model',
              sendRequest: async (messages: vscode.LanguageModelChatMessage[]) => {
                for (const m of messages) for (const part of m.content) if (part instanceof vscode.LanguageModelTextPart) prompts.push(part.value);
                return {
                  text: (async function* () {
                    yield req.modelAnswer!;
                  })(),
                };
              },
            };
      const parts: string[] = [];
      const stream = {
        markdown: (v: string | vscode.MarkdownString) => parts.push(typeof v === 'string' ? v : v.value),
        progress: (v: string) => parts.push(`[progress] ${v}`),
        button: (b: vscode.Command) => parts.push(`[button] ${b.title} -> ${b.command}`),
        reference: () => undefined,
        anchor: () => undefined,
        filetree: () => undefined,
        push: () => undefined,
      } as unknown as vscode.ChatResponseStream;
      const request = { prompt: req.prompt, command: req.command, references: [], toolReferences: [], toolInvocationToken: undefined, model } as unknown as vscode.ChatRequest;
      const cts = new vscode.CancellationTokenSource();
      try {
        await chatHandler(ctx)(request, { history: [] } as unknown as vscode.ChatContext, stream, cts.token);
      } catch (err) {
        parts.push(`[threw] ${(err as Error).message}`);
      }
      write({ command: 'chat', chatResponse: parts.join('\n'), modelPrompts: prompts });
    }),
  ];
}
