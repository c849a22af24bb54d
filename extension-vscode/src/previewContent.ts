// The read-only documents a preview shows (the proposed side of each diff), under a scheme of our own.
import * as vscode from 'vscode';

export const PREVIEW_SCHEME = 'multiedit-preview';

/** The texts of the preview documents (the proposed side of each diff). */
export class PreviewContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private counter = 0;

  add(label: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: label, query: String(++this.counter) });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}
