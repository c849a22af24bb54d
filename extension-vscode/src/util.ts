// Small helpers over VS Code's API that several modules share.
import * as vscode from 'vscode';

export function uriOf(fileOrUri: string): vscode.Uri {
  return /^file:\/\//i.test(fileOrUri) ? vscode.Uri.parse(fileOrUri) : vscode.Uri.file(fileOrUri);
}

export function activeFilePath(): string | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc && doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
}

/** The folder relative paths start from: the first workspace folder. */
export function baseDir(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}
