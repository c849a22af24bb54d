// The user's formatter on an edit's touched lines, in the same undo step as the edit: the edit's new
// text is formatted in a scratch copy (an untitled document of the file's language) before VS Code
// applies anything, and the WorkspaceEdit the server sent is given the formatted text instead. One
// WorkspaceEdit, one undo entry, its label unchanged; nothing is applied twice. The server compares
// the applied text with the plan's and gives the agent the touched lines as they now read
// (`now_reads`), for this extension's tools and for MCP agents alike.
import * as vscode from 'vscode';
import { applyFormatting, LineSpan, spanEdit, touchedLines } from './formatting';
import { applyTextEdits, hasConfirmation, LspTextEdit, LspWorkspaceEdit } from './workspaceEdit';

interface TextDocumentEditLike {
  textDocument: { uri: string; version?: number | null };
  edits: LspTextEdit[];
}

function isTextDocumentEdit(c: unknown): c is TextDocumentEditLike {
  return !!c && typeof c === 'object' && 'textDocument' in c && Array.isArray((c as TextDocumentEditLike).edits);
}

/** The formatter's edits for `lines` of `doc`: its range formatter, else its document formatter's edits on those lines. */
async function formatterEdits(doc: vscode.TextDocument, lines: LineSpan[], options: vscode.FormattingOptions): Promise<LspTextEdit[]> {
  const toLsp = (e: vscode.TextEdit): LspTextEdit => ({
    range: { start: { line: e.range.start.line, character: e.range.start.character }, end: { line: e.range.end.line, character: e.range.end.character } },
    newText: e.newText,
  });
  const out: LspTextEdit[] = [];
  let ranged = false;
  for (const span of lines) {
    const last = Math.min(span.last, doc.lineCount - 1);
    const range = new vscode.Range(span.first, 0, last, doc.lineAt(last).text.length);
    const edits = await vscode.commands.executeCommand<vscode.TextEdit[] | undefined>('vscode.executeFormatRangeProvider', doc.uri, range, options);
    if (edits) {
      ranged = true;
      out.push(...edits.map(toLsp));
    }
  }
  if (ranged) return out;
  const whole = (await vscode.commands.executeCommand<vscode.TextEdit[] | undefined>('vscode.executeFormatDocumentProvider', doc.uri, options)) ?? [];
  // Only what falls on the touched lines: the rest of the file is not the agent's to reformat.
  return whole.filter((e) => lines.some((s) => e.range.start.line >= s.first && e.range.end.line <= s.last)).map(toLsp);
}

/**
 * Leaves no trace of a scratch copy: emptied (an empty untitled document is not dirty, so nothing asks
 * to save it) and its tab closed if VS Code showed one.
 */
async function discardScratch(scratch: vscode.TextDocument): Promise<void> {
  const clear = new vscode.WorkspaceEdit();
  clear.delete(scratch.uri, new vscode.Range(0, 0, scratch.lineCount, 0));
  await vscode.workspace.applyEdit(clear);
  const key = scratch.uri.toString();
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === key);
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
}

/**
 * `edit` with each edited file's touched lines formatted by the user's formatter. A file that cannot be
 * formatted (no formatter, an error) keeps its edits.
 */
export async function formatTouched(edit: LspWorkspaceEdit, log: vscode.LogOutputChannel): Promise<LspWorkspaceEdit> {
  // A review's edits carry the annotations its entries are made of: they are left as the plan made them.
  if (hasConfirmation(edit)) {
    log.info('a reviewed edit is not formatted: its Refactor Preview entries are the plan\'s edits');
    return edit;
  }
  const out: LspWorkspaceEdit = JSON.parse(JSON.stringify(edit));
  const entries: { uri: string; edits: LspTextEdit[]; set(edits: LspTextEdit[]): void }[] = [];
  if (Array.isArray(out.documentChanges)) {
    // Files created, moved or deleted by the edit are left as they are.
    const ops = new Set(
      (out.documentChanges as Record<string, unknown>[]).flatMap((c) => (c && typeof c.kind === 'string' ? [c.uri, c.oldUri, c.newUri].filter((u) => typeof u === 'string') : [])),
    );
    for (const c of out.documentChanges) {
      if (isTextDocumentEdit(c) && !ops.has(c.textDocument.uri)) entries.push({ uri: c.textDocument.uri, edits: c.edits, set: (e) => (c.edits = e) });
    }
  } else if (out.changes) {
    const changes = out.changes;
    for (const uri of Object.keys(changes)) entries.push({ uri, edits: changes[uri], set: (e) => (changes[uri] = e) });
  }
  for (const entry of entries) {
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(entry.uri));
      const before = doc.getText();
      const after = applyTextEdits(before, entry.edits);
      const lines = touchedLines(entry.edits);
      const scratch = await vscode.workspace.openTextDocument({ language: doc.languageId, content: after });
      const editor = vscode.workspace.getConfiguration('editor', doc);
      const options: vscode.FormattingOptions = { tabSize: editor.get<number>('tabSize') ?? 4, insertSpaces: editor.get<boolean>('insertSpaces') ?? true };
      let formatted: string;
      try {
        formatted = applyFormatting(after, await formatterEdits(scratch, lines, options));
      } finally {
        await discardScratch(scratch);
      }
      if (formatted !== after) {
        entry.set([spanEdit(before, formatted)].filter((e): e is LspTextEdit => !!e));
        log.info(`formatted the edited lines of ${doc.uri.fsPath || entry.uri}`);
      }
    } catch (err) {
      log.warn(`could not format the edit of ${entry.uri}: ${err}`);
    }
  }
  return out;
}
