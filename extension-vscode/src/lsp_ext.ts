// Every message and type multiedit adds to LSP, as the extension sees them: the mirror of
// server/src/lsp/ext.rs and server/src/result.rs, under the same names (docs/protocol.md says what each
// means). Their fields are checked against lsp_ext.shape.json, which the server's own test writes from
// the Rust types (test/unit/lsp_ext.test.ts): a field added on one side only fails a test, and so does
// one that the server may leave out but this side takes as always there (the reverse is allowed: a
// result read leniently). No `vscode` import.

/** `workspace/executeCommand` commands the server offers; each takes a plan or patch, then CallOptions. */
export const SERVER_APPLY = 'multiedit.apply';
export const SERVER_PREVIEW = 'multiedit.preview';
export const SERVER_READ = 'multiedit.read';
export const SERVER_SYMBOLS = 'multiedit.symbols';

export type ReviewPolicy = 'never' | 'multiFile' | 'always';

/** Which edited files the editor saves once a plan is applied (initialization option, call option, plan field `save`). */
export type SavePolicy = 'clean' | 'all' | 'never';

/** Which diagnostics a result reports (a call option may also be `true`: errors, `false`: off). */
export type DiagnosticsReport = 'errors' | 'warnings' | 'off';

/** The call's options, the commands' second argument (each left out takes the initialization option): the review decided here, and the request's own `diagnostics` when it has one. */
export interface CallOptions {
  review?: boolean | ReviewPolicy;
  /** Who sent the plan: the server labels the edit with it ("Chat agent: 2 edits to 2 files"). */
  agent?: string;
  diagnostics?: DiagnosticsReport;
  save?: SavePolicy;
}

// ---- the result of multiedit.apply / multiedit.preview (server/src/result.rs)

export interface PlanResult {
  ok: boolean;
  message: string;
  files?: FileResult[];
  /** In `mode: partial`, the refusals of the edits that were skipped. */
  edits_failed?: RefusalData[];
  error?: RefusalData;
  dry_run?: boolean;
  preview?: boolean;
  applied_in?: Place;
  checked_in?: Place;
  editor?: string;
  diff?: string;
  /** `multiedit.preview`: the WorkspaceEdit `multiedit.apply` would send. */
  edit?: unknown;
  rechecked?: number;
  /** On disk: interrupted plans completed or rolled back first, journals left or ignored. */
  recovered?: RecoveredEntry[];
  /** Where the editor's text is not the plan's (its formatter ran on the edit): the touched lines as they now read. */
  now_reads?: EditedLines[];
  /** The same in the words every front end gives a model. */
  now_reads_text?: string;
  /** What the plan did to the editor's diagnostics (multiedit/diagnostics; docs/protocol.md). */
  diagnostics?: DiagnosticsSummary;
  /** The same, as the compact text a model reads. */
  diagnostics_text?: string;
  /** Whether each file's edit is on disk, in the words a model reads. */
  on_disk_text?: string;
  /** The plan's rename, through the editor's rename provider: the names and what it changed. */
  rename?: RenameSummary;
}

export interface RenameSummary {
  old_name: string;
  new_name: string;
  /** Every place it changed, in every file. */
  occurrences: number;
  files: RenamedFile[];
}

export interface RenamedFile {
  file_path: string;
  occurrences: number;
}

export interface FileResult {
  file_path: string;
  edits_applied?: number;
  replacements?: number;
  created?: boolean;
  /** Applied (not a preview), not deleted: the sha256 of the text the editor holds after the edit, which
   * `multiedit_read` shows and `multiedit_write` takes. */
  sha256?: string;
  /** Edits matched by `match: tolerant`, with how. */
  tiers?: TierResult[];
  /** The style the edits' line breaks were written in, where the plan wrote them in another. */
  line_breaks?: 'lf' | 'crlf' | 'nearest';
  /** A patch deleted the file. */
  deleted?: boolean;
  /** A patch moved the file here (after its edits). */
  moved_to?: string;
  mode?: string;
  offsets?: OffsetResult[];
  version?: number | null;
  mode_applied?: boolean;
  /** Through an editor: whether the file's edit is on disk (`multiedit/save`). */
  on_disk?: OnDisk;
}

export interface TierResult {
  edit_index: number;
  tier: string;
}

export interface OffsetResult {
  edit_index: number;
  hunk?: string | null;
  line?: number | null;
  offset: number;
}

/** Lines of a file as the editor has them after the edit (the server's `now_reads`; docs/protocol.md). */
export interface EditedLines {
  file_path: string;
  /** 1-based, inclusive. */
  first_line: number;
  last_line: number;
  text: string;
}

export type Place = 'editor' | 'disk';

/** An interrupted plan met before this one's files were read, and what was done with it. */
export interface RecoveredEntry {
  action: Recovery;
  journal: string;
  message: string;
  plan?: string;
  pid?: number;
  time?: string;
  files?: string[];
}

export type Recovery = 'completed' | 'rolled_back' | 'left' | 'ignored';

/** Whether an edit the editor applied is on disk, where tests, compilers and git look. */
export type OnDisk = 'saved' | 'user_changes' | 'changed_since' | 'save_off' | 'no_save_support' | 'read_only' | 'save_failed' | 'save_running';

/** `available: false` alone when the editor did not report diagnostics for the change. */
export interface DiagnosticsSummary {
  available: boolean;
  report?: string;
  introduced?: DiagnosticItem[];
  resolved?: DiagnosticItem[];
  present?: DiagnosticItem[];
  omitted?: number;
  pending?: string[];
  unchecked?: string[];
  quiet?: string[];
  not_compared?: string[];
  not_open_before?: string[];
  waited_ms?: number;
  published_ms?: number;
  delta_ms?: number;
}

export interface DiagnosticItem {
  file_path: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  severity: string;
  source?: string | null;
  code?: string | null;
  message: string;
}

/** The engine's refusal (the server's `Refusal`): a JSON-RPC error's `data`. */
export interface RefusalData {
  kind?: string;
  edit_index?: number;
  file_path?: string;
  message?: string;
  hint?: string;
}

/** `multiedit.read`: files as the user sees them. */
export interface ReadResult {
  files: ReadFile[];
}

export interface ReadFile {
  file_path: string;
  text: string;
  source: Place;
  differs_from_disk?: boolean;
}

/** `multiedit.symbols`: a file's outline from the editor's language servers. */
export interface SymbolsResult {
  file_path: string;
  symbols: OutlineSymbol[];
  /** The outline as an agent reads it. */
  text: string;
}

export interface OutlineSymbol {
  name: string;
  /** The name path a plan's `symbol` addresses it by (`Calculator/add`). */
  path: string;
  kind: string;
  /** 1-based, inclusive. */
  line: number;
  end_line: number;
  detail?: string;
  children?: OutlineSymbol[];
}

// ---- multiedit/diagnostics, a request from the server to the editor

export const DIAGNOSTICS_METHOD = 'multiedit/diagnostics';

export type DiagnosticsParams = { phase: 'before'; uris: string[] } | { phase: 'after'; uris: string[]; settleMs: number };

/** An LSP diagnostic, as the request answers with. */
export interface ReportedDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity?: number;
  source?: string;
  code?: string | number;
  message: string;
}

export interface DiagnosticsAnswer {
  diagnostics?: Record<string, ReportedDiagnostic[]>;
  /** URIs whose diagnostics were not updated within the bound: the server reports nothing for them. */
  pending?: string[];
  /** URIs whose language server sent no update within its usual time: taken as unchanged. */
  quiet?: string[];
  /** URIs no language server checks (none is known for their language): not waited for. */
  unchecked?: string[];
  /** From the edit to the answer. */
  waitedMs?: number;
  /** From the edit to the last diagnostics change seen for an edited document (absent: none seen). */
  publishedMs?: number;
}

// ---- multiedit/save, a request from the server to an editor that announces
// `experimental.multiedit.save`

export const SAVE_METHOD = 'multiedit/save';

export type SaveParams =
  /** Just before the edit: which of `uris` have unsaved changes. */
  | { phase: 'before'; uris: string[] }
  /** Once the edit is applied: save each file still at `version`; give up waiting after `timeoutMs`. */
  | { phase: 'after'; files: SaveFile[]; timeoutMs: number };

export interface SaveFile {
  uri: string;
  /** The version the edit left the document at; null: the server has not seen it. */
  version?: number | null;
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
// `experimental.multiedit.approve`

export const APPROVE_METHOD = 'multiedit/approve';

export interface ApproveParams {
  /** "Claude Code: 3 edits to 2 files". */
  label: string;
  agent?: string;
  /** Why the user is asked whatever their review setting: the change writes files where an agent's
   * permissions, servers or hooks are configured. Shown with the question. */
  reason?: string;
  /** The WorkspaceEdit sent if the user applies it. */
  edit: unknown;
  /** The server gives up after this and never applies the change. */
  timeoutMs: number;
}

export type Decision = 'apply' | 'discard';

export interface ApproveAnswer {
  decision: Decision;
}

// ---- multiedit/symbols and multiedit/rename, requests from the server to an editor that announces
// `experimental.multiedit.symbols` and `experimental.multiedit.rename`

export const SYMBOLS_METHOD = 'multiedit/symbols';

export interface SymbolsParams {
  uri: string;
}

/** An LSP position and range (in the encoding the server negotiated: UTF-16 for VS Code). */
export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/** An LSP `DocumentSymbol` (its `kind` is LSP's SymbolKind, one more than vscode.SymbolKind). */
export interface ReportedSymbol {
  name: string;
  detail?: string;
  kind: number;
  range: LspRange;
  selectionRange: LspRange;
  children?: ReportedSymbol[];
}

export interface SymbolsAnswer {
  /** The version of the document the symbols were computed on. */
  version: number;
  /** null: no language server gives symbols for the document. */
  symbols?: ReportedSymbol[] | null;
}

export const RENAME_METHOD = 'multiedit/rename';

export interface RenameParams {
  uri: string;
  position: LspPosition;
  newName: string;
}

export interface RenameAnswer {
  /** The rename's WorkspaceEdit, unapplied (`changes`: URI -> text edits). */
  edit?: { changes: Record<string, { range: LspRange; newText: string }[]> };
  /** Per URI of a document the editor holds that the edit touches, its version. */
  versions?: Record<string, number>;
  /** The name as prepare rename gave it. */
  placeholder?: string;
  /** The language server refused: its words. */
  refused?: string;
  /** No rename provider for the document. */
  noProvider?: boolean;
}
