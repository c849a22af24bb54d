// Highlights the ranges a plan changed, for a moment, in the editors that show them.
import * as vscode from 'vscode';

const HIGHLIGHT_MS = 2500;
const PENDING_HIGHLIGHT_MS = 15_000;

/**
 * Highlights changed ranges: at once in the visible editors, and in files shown in the next seconds
 * (a tab opened in the background and then clicked) when they come into view.
 */
export class Highlighter implements vscode.Disposable {
  private decorations: { added: vscode.TextEditorDecorationType; removed: vscode.TextEditorDecorationType } | undefined;
  private readonly pending = new Map<string, { ranges: vscode.Range[]; until: number }>();
  private readonly disposables: vscode.Disposable[] = [
    vscode.window.onDidChangeVisibleTextEditors((editors) => this.highlightVisible(editors)),
    // A highlight waiting for its editor is stale once the text changes.
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length) this.pending.delete(e.document.uri.toString());
    }),
  ];

  /** Highlights `ranges` of each file; returns how many ranges. */
  show(files: { uri: vscode.Uri; ranges: vscode.Range[] }[]): number {
    this.decorations ??= {
      added: vscode.window.createTextEditorDecorationType({
        backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
        overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
      }),
      removed: vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
      }),
    };
    this.pending.clear();
    let count = 0;
    for (const f of files) {
      this.pending.set(f.uri.toString(), { ranges: f.ranges, until: Date.now() + PENDING_HIGHLIGHT_MS });
      count += f.ranges.length;
    }
    this.highlightVisible(vscode.window.visibleTextEditors);
    return count;
  }

  private highlightVisible(editors: readonly vscode.TextEditor[]): void {
    const h = this.decorations;
    if (!h) return;
    for (const editor of editors) {
      const key = editor.document.uri.toString();
      const pending = this.pending.get(key);
      if (!pending) continue;
      this.pending.delete(key);
      if (pending.until < Date.now()) continue;
      editor.setDecorations(h.added, pending.ranges.filter((r) => !r.isEmpty));
      editor.setDecorations(h.removed, pending.ranges.filter((r) => r.isEmpty));
      setTimeout(() => {
        editor.setDecorations(h.added, []);
        editor.setDecorations(h.removed, []);
      }, HIGHLIGHT_MS);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.decorations?.added.dispose();
    this.decorations?.removed.dispose();
  }
}
