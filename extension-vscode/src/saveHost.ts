// Answers the server's `multiedit/save`: which documents hold unsaved changes before a plan's edit, and
// once it is applied, saving the edited documents through `TextDocument.save()`, so that save
// participants run as for File > Save (format on save, code actions on save). A document is saved only
// while it is at the version the edit left it at: never what the user typed after it.
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { SaveAnswer, SavedFile, SaveFile, SaveParams } from './lsp_ext';

function documentOf(uri: string): vscode.TextDocument | undefined {
  const key = vscode.Uri.parse(uri).toString();
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
}

/** Read-only as VS Code judges it: no write permission bit (it refuses to save such a file, even as root), or no write access. */
function readOnly(doc: vscode.TextDocument): boolean {
  if (doc.uri.scheme !== 'file') return false;
  try {
    if ((fs.statSync(doc.uri.fsPath).mode & 0o222) === 0) return true;
    fs.accessSync(doc.uri.fsPath, fs.constants.W_OK);
    return false;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'EACCES' || code === 'EROFS' || code === 'EPERM';
  }
}

const RUNNING = Symbol('running');

async function saveOne(file: SaveFile, deadline: Promise<typeof RUNNING>, log: vscode.LogOutputChannel): Promise<SavedFile> {
  const doc = documentOf(file.uri);
  if (!doc) return { uri: file.uri, status: 'closed' };
  if (file.version !== null && doc.version !== file.version) return { uri: file.uri, status: 'changed' };
  // A document whose text is the disk's (the edit left nothing to save) is on disk already.
  if (!doc.isDirty) return { uri: file.uri, status: 'saved', version: doc.version };
  if (readOnly(doc)) return { uri: file.uri, status: 'readOnly' };
  let saved: boolean | typeof RUNNING;
  try {
    saved = await Promise.race([doc.save(), deadline]);
  } catch (e) {
    log.warn(`saving ${doc.uri.fsPath} failed: ${e}`);
    return { uri: file.uri, status: 'failed', message: String((e as Error)?.message ?? e) };
  }
  if (saved === RUNNING) return { uri: file.uri, status: 'running' };
  if (saved && !doc.isDirty) return { uri: file.uri, status: 'saved', version: doc.version };
  if (readOnly(doc)) return { uri: file.uri, status: 'readOnly' };
  return { uri: file.uri, status: 'failed', message: 'VS Code did not save it (see its notification: a newer copy on disk, a full disk or no permission)' };
}

export class SaveHost {
  /**
   * Runs between the edit and its save: the end-to-end tests' stand-in for a user who types right after
   * the edit (testCommands.ts). Unset in use.
   */
  beforeSaving: ((uris: string[]) => Promise<void>) | undefined;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  async handle(params: SaveParams): Promise<SaveAnswer> {
    if (params.phase === 'before') {
      return { unsaved: params.uris.filter((u) => documentOf(u)?.isDirty === true) };
    }
    await this.beforeSaving?.(params.files.map((f) => f.uri));
    const started = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<typeof RUNNING>((resolve) => {
      timer = setTimeout(() => resolve(RUNNING), params.timeoutMs);
    });
    try {
      const files = await Promise.all(params.files.map((f) => saveOne(f, deadline, this.log)));
      for (const f of files) if (f.status !== 'saved') this.log.info(`not saved (${f.status}): ${vscode.Uri.parse(f.uri).fsPath}`);
      const saved = files.filter((f) => f.status === 'saved').length;
      this.log.info(`multiedit/save: ${saved} of ${files.length} files saved in ${(performance.now() - started).toFixed(1)} ms`);
      return { files };
    } finally {
      clearTimeout(timer);
    }
  }
}
