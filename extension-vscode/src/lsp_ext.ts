// Every message and type multiedit adds to LSP, as the extension sees them: the mirror of
// server/src/lsp/ext.rs, under the same names (docs/protocol.md says what each means). No `vscode` import.

/** `workspace/executeCommand` commands the server offers; each takes a plan or patch, then CallOptions. */
export const SERVER_APPLY = 'multiedit.apply';
export const SERVER_PREVIEW = 'multiedit.preview';

export type ReviewPolicy = 'never' | 'multiFile' | 'always';

/** Which edited files the editor saves once a plan is applied (initialization option, call option, plan field `save`). */
export type SavePolicy = 'clean' | 'all' | 'never';

export type DiagnosticsReport = 'errors' | 'warnings' | 'off';

/** The call's options: the review decided here, and the request's own `diagnostics` when it has one. */
export interface CallOptions {
  review: boolean | ReviewPolicy;
  /** Who sent the plan: the server labels the edit with it ("Chat agent: 2 edits to 2 files"). */
  agent?: string;
  diagnostics?: DiagnosticsReport;
}

// ---- the result of multiedit.apply / multiedit.preview (server/src/result.rs)

export interface FileResult {
  file_path: string;
  edits_applied?: number;
  replacements?: number;
  created?: boolean;
  /** A patch deleted the file. */
  deleted?: boolean;
  /** A patch moved the file here (after its edits). */
  moved_to?: string;
  /** Edits matched by `match: tolerant`, with how. */
  tiers?: { edit_index: number; tier: string }[];
  version?: number | null;
  /** Through an editor: whether the file's edit is on disk (`multiedit/save`). */
  on_disk?: OnDisk;
}

/** Whether an edit the editor applied is on disk, where tests, compilers and git look. */
export type OnDisk = 'saved' | 'user_changes' | 'changed_since' | 'save_off' | 'no_save_support' | 'read_only' | 'save_failed' | 'save_running';

export interface PlanResult {
  ok: boolean;
  message: string;
  files?: FileResult[];
  edits_failed?: unknown[];
  diff?: string;
  edit?: unknown;
  /** What the plan did to the editor's diagnostics (multiedit/diagnostics; docs/protocol.md). */
  diagnostics?: unknown;
  /** The same, as the compact text a model reads. */
  diagnostics_text?: string;
  /** Where the editor's text is not the plan's (its formatter ran on the edit): the touched lines as they now read. */
  now_reads?: EditedLines[];
  /** The same in the words every front end gives a model (server/src/result.rs). */
  now_reads_text?: string;
  /** Whether each file's edit is on disk, in the words a model reads. */
  on_disk_text?: string;
}

/** Lines of a file as the editor has them after the edit (the server's `now_reads`; docs/protocol.md). */
export interface EditedLines {
  file_path: string;
  /** 1-based, inclusive. */
  first_line: number;
  last_line: number;
  text: string;
}

export interface RefusalData {
  kind?: string;
  edit_index?: number;
  file_path?: string;
  message?: string;
  hint?: string;
}


// ---- multiedit/diagnostics, a request from the server to the editor

export const DIAGNOSTICS_METHOD = 'multiedit/diagnostics';

/** An LSP diagnostic, as the request answers with. */
export interface LspDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  source?: string;
  code?: string | number;
  message: string;
}

/** The request's params. */
export interface DiagnosticsParams {
  phase: 'before' | 'after';
  uris: string[];
  settleMs?: number;
}

export interface AfterAnswer {
  diagnostics: Record<string, LspDiagnostic[]>;
  /** URIs whose diagnostics were not updated within the bound: the server reports nothing for them. */
  pending: string[];
  /** URIs whose language server sent no update within its usual time: taken as unchanged. */
  quiet: string[];
  /** URIs no language server checks (none is known for their language): not waited for. */
  unchecked: string[];
  /** From the edit to the answer. */
  waitedMs: number;
  /** From the edit to the last diagnostics change seen for an edited document (absent: none seen). */
  publishedMs?: number;
}


// ---- multiedit/save, a request from the server to an editor that announces
// `experimental.multiedit.save` (server/src/lsp/ext.rs)

export const SAVE_METHOD = 'multiedit/save';

export type SaveParams =
  /** Just before the edit: which of `uris` have unsaved changes. */
  | { phase: 'before'; uris: string[] }
  /** Once the edit is applied: save each file still at `version`; give up waiting after `timeoutMs`. */
  | { phase: 'after'; files: SaveFile[]; timeoutMs: number };

export interface SaveFile {
  uri: string;
  /** The version the edit left the document at; null: the server has not seen it. */
  version: number | null;
}

export type SaveStatus = 'saved' | 'changed' | 'closed' | 'readOnly' | 'failed' | 'running';

export interface SavedFile {
  uri: string;
  status: SaveStatus;
  /** The version once saved (a save participant may have changed the text). */
  version?: number;
  /** The editor's words when the save failed. */
  message?: string;
}

export interface SaveAnswer {
  unsaved?: string[];
  files?: SavedFile[];
}

// ---- multiedit/approve, a request from the server to an editor that announces
// `experimental.multiedit.approve` (server/src/lsp/ext.rs)

export const APPROVE_METHOD = 'multiedit/approve';

export interface ApproveParams {
  /** "Claude Code: 3 edits to 2 files". */
  label: string;
  agent?: string;
  /** The WorkspaceEdit sent if the user applies it. */
  edit: unknown;
  /** The server gives up after this and never applies the change. */
  timeoutMs: number;
}

export type Decision = 'apply' | 'discard';

export interface ApproveAnswer {
  decision: Decision;
}
