// The language model tools (`multiedit`, `multiedit_patch`) and the `@multiedit` chat participant:
// VS Code's side of src/assist.ts.
import * as vscode from 'vscode';
import { applyPlan } from './apply';
import { AssistDeps, ChatOutcome, handleChatRequest, invokePatchTool, invokeSymbolsTool, invokeTool, PATCH_TOOL_NAME, PatchToolInput, preparePatchToolInvocation, prepareToolInvocation, refusedToolResult, SYMBOLS_TOOL_NAME, SymbolsToolInput, ToolPreparation } from './assist';
import { planDefaults, reviewPolicy } from './config';
import { Ctx } from './ctx';
import { EditRequest } from './plan';
import { Refusal } from './render';
import { activeFilePath, baseDir } from './util';

export const TOOL_NAME = 'multiedit';

/**
 * Who the undo entry, the status bar and the log name for an edit: VS Code tells a tool nothing of the
 * chat agent that calls it, and `@multiedit` applies what the user asked it.
 */
const TOOL_CALLER = 'Chat agent';
const PARTICIPANT = '@multiedit';

function assistDeps(ctx: Ctx, agent: string, model?: vscode.LanguageModelChat, token?: vscode.CancellationToken): AssistDeps {
  return {
    activeFilePath,
    activeFileText: () => vscode.window.activeTextEditor?.document.getText(),
    baseDir,
    defaults: planDefaults(),
    apply: (plan) => applyPlan(ctx, plan, { agent }),
    preview: (plan) => ctx.client.preview(plan),
    // The agent, so that its outline also carries what its earlier edits left to settle.
    symbols: (filePath) => ctx.client.symbols(filePath, agent),
    reviewSetting: reviewPolicy(),
    askModel: model
      ? async (prompt) => {
          const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(prompt)], {}, token);
          let text = '';
          for await (const chunk of response.text) text += chunk;
          return text;
        }
      : undefined,
  };
}

function referencedFiles(request: vscode.ChatRequest): string[] {
  const out: string[] = [];
  for (const ref of request.references ?? []) {
    const v = ref.value;
    if (v instanceof vscode.Uri && v.scheme === 'file') out.push(v.fsPath);
    else if (v instanceof vscode.Location && v.uri.scheme === 'file') out.push(v.uri.fsPath);
  }
  return out;
}

/** The `@multiedit` participant's handler. */
export function chatHandler(ctx: Ctx): vscode.ChatRequestHandler {
  return async (request, _context, stream, token) => {
    await handleChatRequest(
      { prompt: request.prompt, command: request.command, referencedFiles: referencedFiles(request) },
      assistDeps(ctx, PARTICIPANT, request.model, token),
      {
        progress: (t) => stream.progress(t),
        markdown: (t) => stream.markdown(t),
        button: (command, title, args) => stream.button({ command, title, arguments: args }),
      },
    );
    return {};
  };
}

/** Key of a tool input, to hand a refusal found in prepareInvocation to the invoke that follows. */
function toolInputKey(input: unknown): string {
  return JSON.stringify(input);
}

/**
 * Refusals a tool found while preparing a call, by input (the last 20): its invoke returns them
 * without running the plan or patch, so the model gets them at once and nothing is confirmed.
 */
class EarlyRefusals {
  private readonly refused = new Map<string, Refusal>();

  /** Keeps `refusal` for `input`, or forgets an older one when the call is fine now. */
  remember(input: unknown, refusal: Refusal | undefined): void {
    const key = toolInputKey(input);
    if (!refusal) {
      this.refused.delete(key);
      return;
    }
    this.refused.set(key, refusal);
    while (this.refused.size > 20) this.refused.delete(this.refused.keys().next().value as string);
  }

  /** The refusal kept for `input`, if any, removed. */
  take(input: unknown): Refusal | undefined {
    const key = toolInputKey(input);
    const early = this.refused.get(key);
    this.refused.delete(key);
    return early;
  }
}

/** A tool's answer to the model, remembered for the test commands. */
function toolResult(ctx: Ctx, { text, outcome }: { text: string; outcome: { refusal?: Refusal } }): vscode.LanguageModelToolResult {
  ctx.shown(outcome.refusal ? { refusal: outcome.refusal, toolResult: text } : { toolResult: text });
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}

/** The progress message, and the confirmation when the call asks the user. */
function preparedInvocation(p: ToolPreparation): vscode.PreparedToolInvocation {
  if (!p.confirm) return { invocationMessage: p.invocationMessage };
  return { invocationMessage: p.invocationMessage, confirmationMessages: { title: p.title, message: new vscode.MarkdownString(p.message) } };
}

/** What tells the two tools apart: how a call is checked (and confirmed) and how it runs. */
interface ToolKind<T> {
  prepare(input: T, deps: AssistDeps): Promise<ToolPreparation>;
  invoke(input: T, deps: AssistDeps): Promise<{ text: string; outcome: ChatOutcome }>;
  patch: boolean;
}

/**
 * `multiedit` (a plan) and `multiedit_patch` (a unified diff, apply_patch envelope or SEARCH/REPLACE
 * blocks, sent as {patch, format, root, match}; `preview: true` answers with the diff, changes nothing).
 */
class MultiEditTool<T> implements vscode.LanguageModelTool<T> {
  private readonly early = new EarlyRefusals();

  constructor(
    private readonly ctx: Ctx,
    private readonly kind: ToolKind<T>,
  ) {}

  async prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<T>) {
    const p = await this.kind.prepare(options.input, assistDeps(this.ctx, TOOL_CALLER));
    this.early.remember(options.input, p.refusal);
    // A refusal needs no confirmation (the model gets it at once, nothing is applied), nor does a
    // reviewed call (the Refactor Preview is its approval).
    return preparedInvocation(p);
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<T>) {
    const early = this.early.take(options.input);
    return toolResult(this.ctx, early ? refusedToolResult(early, this.kind.patch) : await this.kind.invoke(options.input, assistDeps(this.ctx, TOOL_CALLER)));
  }
}

/** `multiedit_symbols`: a file's outline from the language servers; reads only, so nothing to confirm. */
class SymbolsTool implements vscode.LanguageModelTool<SymbolsToolInput> {
  constructor(private readonly ctx: Ctx) {}

  prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<SymbolsToolInput>): vscode.PreparedToolInvocation {
    return { invocationMessage: `MultiEdit: the outline of ${String(options.input?.file_path ?? '').split(/[\\/]/).pop()}` };
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<SymbolsToolInput>) {
    return toolResult(this.ctx, await invokeSymbolsTool(options.input, assistDeps(this.ctx, TOOL_CALLER)));
  }
}

/** Registers the chat participant and the tools, where this VS Code has their APIs. */
export function registerTools(ctx: Ctx): vscode.Disposable[] {
  const out: vscode.Disposable[] = [];
  if (vscode.chat?.createChatParticipant) {
    const participant = vscode.chat.createChatParticipant('multiedit.chat', chatHandler(ctx));
    participant.iconPath = new vscode.ThemeIcon('replace-all');
    out.push(participant);
  }
  if (vscode.lm?.registerTool) {
    out.push(
      vscode.lm.registerTool<EditRequest>(TOOL_NAME, new MultiEditTool(ctx, { prepare: prepareToolInvocation, invoke: invokeTool, patch: false })),
      vscode.lm.registerTool<PatchToolInput>(PATCH_TOOL_NAME, new MultiEditTool(ctx, { prepare: preparePatchToolInvocation, invoke: invokePatchTool, patch: true })),
      vscode.lm.registerTool<SymbolsToolInput>(SYMBOLS_TOOL_NAME, new SymbolsTool(ctx)),
    );
  }
  return out;
}
