// Generated from server/src/protocol/ext.rs and server/src/result.rs by server/src/lsp/typescript.rs:
// do not edit. `MULTIEDIT_BLESS=1 cargo test -p multiedit --lib typescript` writes it again.
/* eslint-disable */

/** Apply a plan, patch or write: `[request, CallOptions?]`, answered with a PlanResult. */
export const SERVER_APPLY = "multiedit.apply";

/** The same checks, nothing applied: answered with a PlanResult holding the diff and the edit. */
export const SERVER_PREVIEW = "multiedit.preview";

/** Files as the editor holds them: `[{file_path} | {files}]`, answered with a ReadResult. */
export const SERVER_READ = "multiedit.read";

/** A file's outline: `[{file_path}]`, answered with a SymbolsResult. */
export const SERVER_SYMBOLS = "multiedit.symbols";

/** Server to editor: one approval for a whole plan (ApproveParams, ApproveAnswer). */
export const APPROVE_METHOD = "multiedit/approve";

/** Server to editor: which documents are dirty, then save them (SaveParams, SaveAnswer). */
export const SAVE_METHOD = "multiedit/save";

/** Server to editor: the diagnostics before and after an edit (DiagnosticsParams, DiagnosticsAnswer). */
export const DIAGNOSTICS_METHOD = "multiedit/diagnostics";

/** Server to editor: a document's symbols (SymbolsParams, SymbolsAnswer). */
export const SYMBOLS_METHOD = "multiedit/symbols";

/** Server to editor: a rename's edit, unapplied (RenameParams, RenameAnswer). */
export const RENAME_METHOD = "multiedit/rename";

export interface ApproveAnswer {
  decision: Decision;
}

export interface ApproveParams {
  /** Who sent the plan, when it was an agent. */
  agent?: string | null;
  /** The WorkspaceEdit that is sent if the user applies it, to show as a diff. */
  edit: unknown;
  /** What the change is called: "Claude Code: 3 edits to 2 files". */
  label: string;
  /**
   * Why the user is asked whatever their review setting, to show with the diff: the change writes
   * files where an agent's permissions, servers or hooks are configured (`crate::gate`).
   */
  reason?: string | null;
  /** How long the server waits for the decision. */
  timeoutMs: number;
}

/**
 * The options of `multiedit.apply` and `multiedit.preview`: the command's optional second argument,
 * after the plan. Each left out takes the client's initialization option (or the plan's own field).
 */
export interface CallOptions {
  /** Who sent the plan ("Claude Code"), for the undo entry and the log; one line, at most 60 characters kept. */
  agent?: string | null;
  /** Which diagnostics the result reports: a level, or `true` (errors) / `false` (off). */
  diagnostics?: DiagnosticsReportOrBool | null;
  /** Whether the editor asks the user before the edit: a policy, or `true` (always) / `false` (never). */
  review?: ReviewPolicyOrBool | null;
  /** Which edited files the editor saves once the plan is applied. */
  save?: SavePolicy | null;
}

export type Decision = "apply" | "discard";

/** One diagnostic as a result reports it: 1-based line and column (characters), after the edit. */
export interface DiagnosticItem {
  code?: string | null;
  column: number;
  end_column: number;
  end_line: number;
  file_path: string;
  line: number;
  message: string;
  /** `error`, `warning`, `information` or `hint`. */
  severity: string;
  source?: string | null;
}

/** The answer to either phase: a client's odd entry is skipped, never the whole answer. */
export interface DiagnosticsAnswer {
  /** Per document URI, its diagnostics. */
  diagnostics?: Record<string, LenientReportedDiagnostic[]>;
  /** Phase `after`: documents whose diagnostics were not updated within the bound. */
  pending?: string[];
  /** From the edit to the last diagnostics change the client saw. */
  publishedMs?: number | null;
  /** ... whose language server sent no update in its usual time: taken as unchanged. */
  quiet?: string[];
  /** ... that no language server checks. */
  unchecked?: string[];
  /** From the edit to the answer, as the client measured it. */
  waitedMs?: number | null;
}

/** The initialization option `diagnostics` as an object. */
export interface DiagnosticsOptions {
  /** At most this many diagnostics listed per result (default 20). */
  max?: number | null;
  /** Which diagnostics a result reports (default errors). */
  report?: DiagnosticsReportOrBool | null;
  /** How long the client waits for its language servers after an edit, in ms (default 2000). */
  settleMs?: number | null;
}

/** A named setting, or a boolean standing for one of its values. */
export type DiagnosticsOptionsOrBool = DiagnosticsOptions | boolean;

export type DiagnosticsParams = {
  phase: "before";
  uris: string[];
} | {
  phase: "after";
  settleMs: number;
  uris: string[];
};

/** Which diagnostics a result reports. */
export type DiagnosticsReport = "errors" | "warnings" | "off";

/** A named setting, or a boolean standing for one of its values. */
export type DiagnosticsReportOrBool = DiagnosticsReport | boolean;

export interface DiagnosticsSummary {
  available: boolean;
  /**
   * The editor's language servers were still checking the change when this answer went out: the
   * delta comes with the caller's next call (`earlier_diagnostics`).
   */
  deferred?: boolean;
  /** This server's own time for the delta. */
  delta_ms?: number;
  /** New since the edit, at their lines after it. */
  introduced?: DiagnosticItem[];
  /** Files whose text changed after the editor applied the plan (typed since). */
  not_compared?: string[];
  /** Files not open before the edit (with `present`). */
  not_open_before?: string[];
  /** Left out past the client's `max`. */
  omitted?: number;
  /** Files whose diagnostics had not settled at the bound: nothing said of them. */
  pending?: string[];
  /** In files the editor had not open before the edit: nothing to compare with. */
  present?: DiagnosticItem[];
  /** From the edit to the last diagnostics change the client saw. */
  published_ms?: number | null;
  /** Files whose language server sent no update in its usual time: taken as unchanged. */
  quiet?: string[];
  /** `errors` or `warnings` (errors and warnings). */
  report?: string;
  /** There before the edit and gone since, at their mapped lines. */
  resolved?: DiagnosticItem[];
  /** Files no language server checks. */
  unchecked?: string[];
  /** From the edit to the client's answer. */
  waited_ms?: number;
}

/**
 * What an applied plan did to the editor's diagnostics. `available: false` alone when the editor
 * did not report them for this change.
 * The diagnostics delta of an earlier edit of the same caller, which had not settled when that
 * edit was answered: delivered with the caller's next call, whatever its tool.
 */
export interface EarlierDiagnostics {
  diagnostics: DiagnosticsSummary;
  /** The earlier edit's label: "Claude Code: 1 edit to 1 file". */
  label: string;
  /** The delta in the words a model reads. */
  text: string;
}

/**
 * Lines of a file as the editor has them after applying a plan: the lines a plan's edit touched,
 * widened to whatever the editor changed on or next to them.
 */
export interface EditedLines {
  file_path: string;
  /** 1-based, inclusive. */
  first_line: number;
  last_line: number;
  /** The lines, each without its line break, joined by `\n` (as an `old_string` matches them). */
  text: string;
}

/** What the plan did to one file. */
export interface FileResult {
  created: boolean;
  deleted?: boolean;
  edits_applied: number;
  file_path: string;
  /**
   * What the edits' line breaks were written as, where the plan wrote them in another style
   * (`lf`, `crlf`, or `nearest` in a file that has both).
   */
  line_breaks?: string | null;
  /** The mode a patch gives the file, as git writes it: "100755". */
  mode?: string | null;
  /** The language server, a file with a `mode`: whether it was set (a workspace edit cannot). */
  mode_applied?: boolean | null;
  moved_to?: string | null;
  /** Hunks found away from the line they stated, as `patch` reports them. */
  offsets?: OffsetResult[];
  /** `multiedit.apply`, a file that stays (not deleted): whether the editor's edit is on disk. */
  on_disk?: OnDisk | null;
  replacements: number;
  /**
   * The sha256 of the file's text once the plan was applied, as `multiedit_read` shows it and
   * `multiedit_write` takes it: on disk the text written, through an editor the text its buffer holds
   * (a formatter's or save participant's changes included). Left out by a dry run or a preview, and
   * for a deleted file.
   */
  sha256?: string | null;
  /** Edits matched by a tolerant tier. */
  tiers: TierResult[];
  /**
   * The language server: the document version the edit was computed against (`Some(None)`, written
   * `null`: a file the editor has not opened).
   */
  version?: number | null;
}

/**
 * The server's initialization options (`initialize`'s `initializationOptions`): each left out takes
 * its default. Read one entry at a time (`config.rs`), so that a wrong one is named and the rest hold.
 */
export interface InitializationOptions {
  /** How long an agent's plan waits for the user's approval, in ms (positive; at most 25 s). */
  agentApprovalMs?: number | null;
  /** The same, for agents' plans through the bridge (default never). */
  agentReview?: ReviewPolicyOrBool | null;
  /**
   * Agents' plans may write the files where agents' permissions, servers and hooks are configured
   * without the user's approval (default false: asked, or refused where the client cannot ask).
   */
  allowAgentConfig?: boolean | null;
  /** Agents' plans may write inside `.git` (default false: refused). */
  allowDotGit?: boolean | null;
  /** Plans may edit files outside the workspace folders (default false). */
  allowOutsideWorkspace?: boolean | null;
  /** How long the server waits for the editor's answer to `workspace/applyEdit`, in ms (positive). */
  applyEditTimeoutMs?: number | null;
  /** Plans may come from agents outside the editor, through the bridge (default true). */
  bridge?: boolean | null;
  /** The client answers `multiedit/diagnostics`: `true`, or how (`false`: it does not). */
  diagnostics?: DiagnosticsOptionsOrBool | null;
  /** When the editor asks the user before a plan's edit (default never). */
  review?: ReviewPolicyOrBool | null;
  /** Which edited files the editor saves once a plan is applied (default clean). */
  save?: SavePolicy | null;
}

/** An entry read leniently: one a client wrote wrong is `None`, and the rest of its answer still counts. */
export type LenientReportedDiagnostic = ReportedDiagnostic | null;

/** An LSP position, as ls_types serialises it (which derives no schema). */
export interface LspPosition {
  character: number;
  line: number;
}

/** An LSP range. */
export interface LspRange {
  end: LspPosition;
  start: LspPosition;
}

export interface OffsetResult {
  edit_index: number;
  /** The hunk's name (`hunk 2 of src/a.rs, at line 40`). */
  hunk?: string | null;
  /** The 1-based line where it applied. */
  line?: number | null;
  offset: number;
}

/** Whether an edit the editor applied is on disk, where tests, compilers, git and a file read look. */
export type OnDisk = "saved" | "user_changes" | "changed_since" | "save_off" | "no_save_support" | "read_only" | "save_failed" | "save_running";

export interface OutlineSymbol {
  children?: OutlineSymbol[];
  detail?: string | null;
  end_line: number;
  /** `class`, `method`, `function`... (LSP's SymbolKind). */
  kind: string;
  /** 1-based, inclusive. */
  line: number;
  name: string;
  /**
   * The name path a plan's `symbol` addresses it by, which names it alone: `Calculator/add`; `/add`
   * for a top-level add beside it; `add[1]` for the second of two overloads.
   */
  path: string;
}

/** Where an MCP call ran. */
export type Place = "editor" | "disk";

/** A plan's result. Fields are written in this order. */
export interface PlanResult {
  /** MCP: where the plan was applied. */
  applied_in?: Place | null;
  /** MCP, a preview: what it was checked against. */
  checked_in?: Place | null;
  /** `multiedit.apply` with a client that reports diagnostics: the delta (`lsp::diagnostics`). */
  diagnostics?: DiagnosticsSummary | null;
  /** The delta in words, as the MCP tool text ends. */
  diagnostics_text?: string | null;
  /** A dry run or a preview: the unified diff of every file. */
  diff?: string | null;
  /** `multiedit apply --json`: whether it was a dry run. */
  dry_run?: boolean | null;
  /** The diagnostics delta of this caller's earlier edits, settled since their answer. */
  earlier_diagnostics?: EarlierDiagnostics[];
  /**
   * `multiedit.preview`: the WorkspaceEdit `multiedit.apply` would send; `multiedit.apply` from the
   * editor itself: the one it sent, which the editor applied (neither passed on by MCP).
   */
  edit?: unknown;
  /** MCP: the editor whose server took the plan ("Neovim (multiedit lsp pid 4242)"). */
  editor?: string | null;
  /** In `mode: partial`, the refusals of the edits that were skipped. */
  edits_failed: RefusalData[];
  /** `multiedit apply --json`: the refusal (`ok` is then false, `files` empty). */
  error?: RefusalData | null;
  files: FileResult[];
  /**
   * `multiedit.apply` from the editor itself: what the editor calls the change (its undo entry),
   * "Chat agent: 2 edits to 2 files".
   */
  label?: string | null;
  /** The engine's success text (one block per file), or the CLI's refusal text with its hint. */
  message: string;
  /**
   * `multiedit.apply`, when the editor's text is not the text the plan made (its formatter ran on
   * the edit, say): the edited lines as they read in the editor once it applied the plan, which the
   * caller's next `old_string` must match (`lsp::now_reads`).
   */
  now_reads?: EditedLines[];
  /** The same as a model reads it (`now_reads_text`): the words every front end gives an agent. */
  now_reads_text?: string | null;
  /** `false` only for `multiedit apply --json`'s refusal, which also sets `error`. */
  ok: boolean;
  /**
   * `multiedit.apply`: whether each file's edit is on disk (its `on_disk`), in words: what the tests,
   * compilers and git an agent runs next will see (`lsp::save`).
   */
  on_disk_text?: string | null;
  /** MCP: a preview (`multiedit_preview`, `multiedit_patch` with `preview`). */
  preview?: boolean | null;
  /** `multiedit.apply`: how many times the plan was checked again after a document changed. */
  rechecked?: number | null;
  /**
   * On disk: interrupted plans completed or rolled back first, journals left or ignored
   * (`disk::Recovered::to_entry`).
   */
  recovered?: RecoveredEntry[];
  /** The plan's rename, through the editor's rename provider: the names and what it changed. */
  rename?: RenameSummary | null;
}

export interface ReadFile {
  /** The editor's text is not the disk's: it holds changes that are not saved. */
  differs_from_disk?: boolean;
  file_path: string;
  /** Where `text` came from. */
  source: Place;
  /** The editor's buffer, unsaved changes included; else the file on disk. */
  text: string;
}

/** `multiedit.read` (and the bridge's `read`): files as the user sees them. */
export interface ReadResult {
  /** The diagnostics delta of this caller's earlier edits, settled since their answer. */
  earlier_diagnostics?: EarlierDiagnostics[];
  files: ReadFile[];
}

/** An interrupted plan met before this one's files were read, and what was done with it. */
export interface RecoveredEntry {
  action: Recovery;
  files?: string[];
  /** The record (in the private folder), or the look-alike file that was ignored. */
  journal: string;
  /** In words, as the front ends print it. */
  message: string;
  /** The process that was writing it. */
  pid?: number | null;
  plan?: string | null;
  /** When it started, `2025-01-02 03:04:05 UTC`. */
  time?: string | null;
}

export type Recovery = "completed" | "rolled_back" | "left" | "ignored";

/**
 * A refusal as it travels (`refusal::Refusal`, the engine's struct with the server's kinds, whose
 * crate keeps free of schemars), for the wire contract (`lsp/typescript.rs`, which checks it against
 * the struct's own fields).
 */
export interface RefusalData {
  edit_index?: number | null;
  file_path?: string | null;
  hint?: string | null;
  kind: RefusalKind;
  message: string;
}

/** Why a plan was refused (the engine's kinds, then the server's own): a stable name for programs. */
export type RefusalKind = "invalid_plan" | "not_found" | "ambiguous" | "no_op" | "file_exists" | "file_not_found" | "chained" | "apply_failed" | "count_mismatch" | "unchanged" | "not_utf8" | "not_applied" | "too_large" | "needs_editor" | "overlaps" | "io" | "outside_workspace" | "declined" | "undecided" | "busy" | "internal_error" | "stale" | "no_language_server" | "symbol_not_found" | "symbol_ambiguous" | "no_body" | "rename_refused" | "protected" | "read_only";

export interface RenameAnswer {
  /** The rename's edit (`changes`, or `documentChanges` of text edits only); absent when refused. */
  edit?: unknown;
  /** No language server of the editor renames in this document. */
  noProvider?: boolean;
  /** The name as prepare rename gave it (its placeholder). */
  placeholder?: string | null;
  /** The language server refused: its words ("You cannot rename this element."). */
  refused?: string | null;
  /**
   * Per URI of a document the editor holds that the edit touches, its version when the edit was
   * computed; a URI left out is a file the editor does not hold (its text is the disk's).
   */
  versions?: Record<string, number>;
}

export interface RenameParams {
  newName: string;
  position: LspPosition;
  uri: string;
}

/** What a plan's rename changed. */
export interface RenameSummary {
  files: RenamedFile[];
  new_name: string;
  /** Every place it changed, in every file. */
  occurrences: number;
  old_name: string;
}

export interface RenamedFile {
  file_path: string;
  occurrences: number;
}

/** An LSP diagnostic as an editor reports it. */
export interface ReportedDiagnostic {
  code?: unknown;
  message: string;
  range: LspRange;
  /** 1 error .. 4 hint; none counts as an error. */
  severity?: number | null;
  source?: string | null;
}

/** An LSP `DocumentSymbol`, as the editor's language server gave it. */
export interface ReportedSymbol {
  children?: ReportedSymbol[];
  detail?: string | null;
  /** LSP's `SymbolKind` (5 class, 6 method, 12 function...). */
  kind: number;
  name: string;
  /** The whole symbol, as its language server spans it. */
  range: LspRange;
  /** Its name. */
  selectionRange: LspRange;
}

/** When the editor asks the user before a plan's edit. */
export type ReviewPolicy = "never" | "multiFile" | "always";

/** A named setting, or a boolean standing for one of its values. */
export type ReviewPolicyOrBool = ReviewPolicy | boolean;

/** The answer to either phase: `unsaved` to `before`, `files` to `after`. */
export interface SaveAnswer {
  /** Phase `after`: what became of each file, in any order. */
  files?: SavedFile[];
  /** Phase `before`: the URIs whose documents have changes the disk lacks. */
  unsaved?: string[];
}

export interface SaveFile {
  uri: string;
  /**
   * The document's version once the edit was applied (`null`: the server has not seen the document:
   * the editor saves it if it holds it).
   */
  version?: number | null;
}

export type SaveParams = {
  phase: "before";
  uris: string[];
} | {
  files: SaveFile[];
  phase: "after";
  timeoutMs: number;
};

/**
 * Which edited files the editor saves once a plan is applied: those that had no unsaved changes
 * before it, all of them, or none.
 */
export type SavePolicy = "clean" | "all" | "never";

export type SaveStatus = "saved" | "changed" | "closed" | "readOnly" | "failed" | "running";

export interface SavedFile {
  /** The editor's own words when the save failed. */
  message?: string | null;
  status: SaveStatus;
  uri: string;
  /**
   * The document's version once saved (a save participant, such as format on save, may have
   * changed it): the server waits for that text before it reports what the file now reads.
   */
  version?: number | null;
}

export interface SymbolsAnswer {
  /**
   * The symbols, outermost first; `null` when no language server of the editor gives symbols for
   * this document.
   */
  symbols?: ReportedSymbol[] | null;
  /**
   * The version of the document the symbols were computed on (the version the editor sends in
   * its didOpen and didChange).
   */
  version: number;
}

export interface SymbolsParams {
  uri: string;
}

/** `multiedit.symbols` (and the bridge's `symbols`): a file's outline from the editor's language servers. */
export interface SymbolsResult {
  /** The diagnostics delta of this caller's earlier edits, settled since their answer. */
  earlier_diagnostics?: EarlierDiagnostics[];
  file_path: string;
  /** The outermost symbols, in file order, each with what it holds. */
  symbols: OutlineSymbol[];
  /** The outline as an agent reads it: one symbol a line, indented by depth. */
  text: string;
}

export interface TierResult {
  edit_index: number;
  tier: string;
}

