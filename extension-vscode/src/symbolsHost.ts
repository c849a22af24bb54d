// Answers the server's `multiedit/symbols` and `multiedit/rename` from the language servers VS Code runs:
// a document's symbols (`vscode.executeDocumentSymbolProvider`) with the version they were computed on,
// and a rename's WorkspaceEdit (`vscode.prepareRename`, then `vscode.executeDocumentRenameProvider`),
// unapplied: the server applies it with the plan's other edits, as one change. A document the server
// names that VS Code does not hold is opened (not shown), so that its language server can answer.
import * as vscode from 'vscode';
import { LspPosition, LspRange, RenameAnswer, RenameParams, ReportedSymbol, SymbolsAnswer, SymbolsParams } from './lsp_ext';

/** How long a language server still starting (TypeScript's loads its project) is waited for. */
const STARTING_MS = 5000;
/** Languages no language server serves here: not waited for. */
const NO_SERVER = new Set(['plaintext', 'log', 'ignore']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A text's lines, for converting columns. */
type Lines = (line: number) => string;

function docLines(doc: vscode.TextDocument): Lines {
  return (n) => doc.lineAt(Math.min(n, doc.lineCount - 1)).text;
}

/** Positions as the server counts them: UTF-16 code units (VS Code's own), or UTF-8 bytes. */
export class Positions {
  constructor(private readonly encoding: string) {}

  get native(): boolean {
    return this.encoding !== 'utf-8';
  }

  toServer(lines: Lines, p: vscode.Position): LspPosition {
    if (this.native) return { line: p.line, character: p.character };
    return { line: p.line, character: Buffer.byteLength(lines(p.line).slice(0, p.character)) };
  }

  fromServer(lines: Lines, p: LspPosition): vscode.Position {
    if (this.native) return new vscode.Position(p.line, p.character);
    return new vscode.Position(p.line, Buffer.from(lines(p.line)).subarray(0, p.character).toString().length);
  }

  range(lines: Lines, r: vscode.Range): LspRange {
    return { start: this.toServer(lines, r.start), end: this.toServer(lines, r.end) };
  }
}

function diskLines(text: string): Lines {
  const lines = text.split(/\r?\n/);
  return (n) => lines[Math.min(n, lines.length - 1)] ?? '';
}

function message(e: unknown): string {
  return String((e as Error)?.message ?? e);
}

export class SymbolsHost {
  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly positions: () => Positions,
  ) {}

  async symbols(params: SymbolsParams): Promise<SymbolsAnswer> {
    const started = performance.now();
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(params.uri));
    const positions = this.positions();
    for (;;) {
      const version = doc.version;
      const found = await this.documentSymbols(doc);
      // Computed on the text at `version` only if the user did not type meanwhile.
      if (doc.version !== version) continue;
      const symbols = found?.map((s) => this.reported(doc, s, positions)) ?? null;
      this.log.info(`multiedit/symbols: ${symbols ? symbols.length : 'no'} top-level symbols of ${doc.uri.fsPath} in ${(performance.now() - started).toFixed(1)} ms`);
      return { version, symbols };
    }
  }

  /** The document's symbols; `undefined` when no language server gives any (one still starting is waited for). */
  private async documentSymbols(doc: vscode.TextDocument): Promise<vscode.DocumentSymbol[] | undefined> {
    const until = performance.now() + (NO_SERVER.has(doc.languageId) ? 0 : STARTING_MS);
    for (;;) {
      const found = await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>('vscode.executeDocumentSymbolProvider', doc.uri);
      if ((found && found.length > 0) || performance.now() >= until) return found && found.length > 0 ? found : undefined;
      await sleep(250);
    }
  }

  private reported(doc: vscode.TextDocument, s: vscode.DocumentSymbol, positions: Positions): ReportedSymbol {
    const out: ReportedSymbol = {
      name: s.name,
      // LSP counts SymbolKind from 1, vscode.SymbolKind from 0.
      kind: s.kind + 1,
      range: positions.range(docLines(doc), s.range),
      selectionRange: positions.range(docLines(doc), s.selectionRange ?? s.range),
    };
    if (s.detail) out.detail = s.detail;
    const children = (s.children ?? []).map((c) => this.reported(doc, c, positions));
    if (children.length > 0) out.children = children;
    return out;
  }

  async rename(params: RenameParams): Promise<RenameAnswer> {
    const started = performance.now();
    const uri = vscode.Uri.parse(params.uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    const positions = this.positions();
    const position = positions.fromServer(docLines(doc), params.position);
    let placeholder: string | undefined;
    try {
      const prepared = await vscode.commands.executeCommand<{ range: vscode.Range; placeholder?: string } | undefined>('vscode.prepareRename', uri, position);
      placeholder = prepared?.placeholder ?? (prepared ? doc.getText(prepared.range) : undefined);
    } catch (e) {
      return { refused: message(e) };
    }
    for (;;) {
      const versions = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d.version]));
      let edit: vscode.WorkspaceEdit | undefined;
      try {
        edit = await vscode.commands.executeCommand<vscode.WorkspaceEdit | undefined>('vscode.executeDocumentRenameProvider', uri, position, params.newName);
      } catch (e) {
        return { refused: message(e) };
      }
      // Computed on these versions only if no document moved on meanwhile.
      if (vscode.workspace.textDocuments.some((d) => versions.has(d.uri.toString()) && versions.get(d.uri.toString()) !== d.version)) continue;
      const entries = edit?.entries() ?? [];
      if (entries.length === 0 && !(await this.documentSymbols(doc))) return { noProvider: true };
      const changes: Record<string, { range: LspRange; newText: string }[]> = {};
      const held: Record<string, number> = {};
      for (const [target, edits] of entries) {
        const key = target.toString();
        const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
        if (open) held[key] = open.version;
        // A document VS Code does not hold is the disk's text, read (not opened: it stays not held).
        const lines = open ? docLines(open) : positions.native ? () => '' : diskLines(new TextDecoder().decode(await vscode.workspace.fs.readFile(target)));
        changes[key] = [...(changes[key] ?? []), ...edits.map((e) => ({ range: positions.range(lines, e.range), newText: e.newText }))];
      }
      const count = Object.values(changes).reduce((n, list) => n + list.length, 0);
      this.log.info(`multiedit/rename: ${count} edits in ${entries.length} files in ${(performance.now() - started).toFixed(1)} ms`);
      return { edit: { changes }, versions: held, ...(placeholder !== undefined ? { placeholder } : {}) };
    }
  }
}
