//! The one result object every front end returns, typed: `multiedit apply --json` prints it, the
//! language server's commands answer with it (and send it through the bridge), and the MCP tools give
//! it as `structuredContent`, so a caller parses one shape whichever way the plan went. What only one
//! front end knows (a dry run's `diff`, a document's `version`, where an MCP call was applied) is a
//! typed optional field, left out where it does not apply.
//!
//! A refusal is the engine's `Refusal` everywhere (`kind`, `edit_index`, `file_path`, `message`,
//! `hint`, each optional field left out where it does not apply): the CLI's `error`, every
//! `edits_failed` entry, the language server's error `data`, the bridge's `refusal`, and, as `Refused`
//! with `ok: false`, an MCP tool's `structuredContent`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::engine::{FileOp, LineBreaks, Outcome, Tier};
use crate::refusal::Refusal;

/// `n` of a thing in words, for a text: "1 edit", "3 edits".
pub(crate) fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// SHA-256 of a text, in hex: what a result and `multiedit_read` show for a file, and what a whole-file
/// write must give back (`crate::write`).
pub(crate) fn sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A plan's result. Fields are written in this order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PlanResult {
    /// `false` only for `multiedit apply --json`'s refusal, which also sets `error`.
    pub ok: bool,
    /// The engine's success text (one block per file), or the CLI's refusal text with its hint.
    pub message: String,
    pub files: Vec<FileResult>,
    /// In `mode: partial`, the refusals of the edits that were skipped.
    #[cfg_attr(test, schemars(with = "Vec<RefusalData>"))]
    pub edits_failed: Vec<Refusal>,
    /// `multiedit apply --json`: the refusal (`ok` is then false, `files` empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<RefusalData>"))]
    pub error: Option<Refusal>,
    /// `multiedit apply --json`: whether it was a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// MCP: a preview (`multiedit_preview`, `multiedit_patch` with `preview`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<bool>,
    /// MCP: where the plan was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_in: Option<Place>,
    /// MCP, a preview: what it was checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_in: Option<Place>,
    /// MCP: the editor whose server took the plan ("Neovim (multiedit lsp pid 4242)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
    /// A dry run or a preview: the unified diff of every file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// `multiedit.preview`: the WorkspaceEdit `multiedit.apply` would send; `multiedit.apply` from the
    /// editor itself: the one it sent, which the editor applied (neither passed on by MCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<serde_json::Value>"))]
    pub edit: Option<tower_lsp_server::ls_types::WorkspaceEdit>,
    /// `multiedit.apply` from the editor itself: what the editor calls the change (its undo entry),
    /// "Chat agent: 2 edits to 2 files".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `multiedit.apply`: how many times the plan was checked again after a document changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rechecked: Option<usize>,
    /// On disk: interrupted plans completed or rolled back first, journals left or ignored
    /// (`disk::Recovered::to_entry`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<RecoveredEntry>,
    /// `multiedit.apply`, when the editor's text is not the text the plan made (its formatter ran on
    /// the edit, say): the edited lines as they read in the editor once it applied the plan, which the
    /// caller's next `old_string` must match (`lsp::now_reads`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub now_reads: Vec<EditedLines>,
    /// The same as a model reads it (`now_reads_text`): the words every front end gives an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now_reads_text: Option<String>,
    /// `multiedit.apply` with a client that reports diagnostics: the delta (`lsp::diagnostics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsSummary>,
    /// The delta in words, as the MCP tool text ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics_text: Option<String>,
    /// `multiedit.apply`: whether each file's edit is on disk (its `on_disk`), in words: what the tests,
    /// compilers and git an agent runs next will see (`lsp::save`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disk_text: Option<String>,
    /// The plan's rename, through the editor's rename provider: the names and what it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename: Option<RenameSummary>,
    /// The diagnostics delta of this caller's earlier edits, settled since their answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_diagnostics: Vec<EarlierDiagnostics>,
}

/// What a plan's rename changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RenameSummary {
    pub old_name: String,
    pub new_name: String,
    /// Every place it changed, in every file.
    pub occurrences: usize,
    pub files: Vec<RenamedFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RenamedFile {
    pub file_path: String,
    pub occurrences: usize,
}

/// `multiedit.read` (and the bridge's `read`): files as the user sees them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ReadResult {
    pub files: Vec<ReadFile>,
    /// The diagnostics delta of this caller's earlier edits, settled since their answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_diagnostics: Vec<EarlierDiagnostics>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ReadFile {
    pub file_path: String,
    /// The editor's buffer, unsaved changes included; else the file on disk.
    pub text: String,
    /// Where `text` came from.
    pub source: Place,
    /// The editor's text is not the disk's: it holds changes that are not saved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub differs_from_disk: bool,
}

/// `multiedit.symbols` (and the bridge's `symbols`): a file's outline from the editor's language servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SymbolsResult {
    pub file_path: String,
    /// The outermost symbols, in file order, each with what it holds.
    pub symbols: Vec<OutlineSymbol>,
    /// The outline as an agent reads it: one symbol a line, indented by depth.
    pub text: String,
    /// The diagnostics delta of this caller's earlier edits, settled since their answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_diagnostics: Vec<EarlierDiagnostics>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OutlineSymbol {
    pub name: String,
    /// The name path a plan's `symbol` addresses it by, which names it alone: `Calculator/add`; `/add`
    /// for a top-level add beside it; `add[1]` for the second of two overloads.
    pub path: String,
    /// `class`, `method`, `function`... (LSP's SymbolKind).
    pub kind: String,
    /// 1-based, inclusive.
    pub line: usize,
    pub end_line: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<OutlineSymbol>,
}

/// Where an MCP call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Place {
    Editor,
    Disk,
}

/// What the plan did to one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FileResult {
    pub file_path: String,
    pub edits_applied: usize,
    pub replacements: usize,
    pub created: bool,
    /// The sha256 of the file's text once the plan was applied, as `multiedit_read` shows it and
    /// `multiedit_write` takes it: on disk the text written, through an editor the text its buffer holds
    /// (a formatter's or save participant's changes included). Left out by a dry run or a preview, and
    /// for a deleted file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Edits matched by a tolerant tier.
    pub tiers: Vec<TierResult>,
    /// What the edits' line breaks were written as, where the plan wrote them in another style
    /// (`lf`, `crlf`, or `nearest` in a file that has both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    pub line_breaks: Option<LineBreaks>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    /// The mode a patch gives the file, as git writes it: "100755".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Hunks found away from the line they stated, as `patch` reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offsets: Vec<OffsetResult>,
    /// The language server: the document version the edit was computed against (`Some(None)`, written
    /// `null`: a file the editor has not opened).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub version: Option<Option<i32>>,
    /// The language server, a file with a `mode`: whether it was set (a workspace edit cannot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_applied: Option<bool>,
    /// `multiedit.apply`, a file that stays (not deleted): whether the editor's edit is on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disk: Option<OnDisk>,
}

/// An interrupted plan met before this one's files were read, and what was done with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RecoveredEntry {
    pub action: Recovery,
    /// The record (in the private folder), or the look-alike file that was ignored.
    pub journal: String,
    /// In words, as the front ends print it.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The process that was writing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// When it started, `2025-01-02 03:04:05 UTC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// It had committed: finished.
    Completed,
    /// It had not: its temporary files removed.
    RolledBack,
    /// Met by a dry run or a preview: left for the next run.
    Left,
    /// A file named like a journal beside the files: never read.
    Ignored,
}

/// What an applied plan did to the editor's diagnostics. `available: false` alone when the editor
/// did not report them for this change.
/// The diagnostics delta of an earlier edit of the same caller, which had not settled when that
/// edit was answered: delivered with the caller's next call, whatever its tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EarlierDiagnostics {
    /// The earlier edit's label: "Claude Code: 1 edit to 1 file".
    pub label: String,
    pub diagnostics: DiagnosticsSummary,
    /// The delta in the words a model reads.
    pub text: String,
}

/// The earlier edits' deltas as a model reads them, one paragraph each; `None` when there are none.
pub fn earlier_text(earlier: &[EarlierDiagnostics]) -> Option<String> {
    (!earlier.is_empty()).then(|| {
        earlier
            .iter()
            .map(|e| format!("{EARLIER} ({}):\n{}", e.label, e.text))
            .collect::<Vec<_>>()
            .join("\n\n")
    })
}

/// How a delivered earlier delta begins, for a model.
pub const EARLIER: &str = "Diagnostics of your earlier edit";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DiagnosticsSummary {
    pub available: bool,
    /// The editor's language servers were still checking the change when this answer went out: the
    /// delta comes with the caller's next call (`earlier_diagnostics`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<DiagnosticsDelta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DiagnosticsDelta {
    /// `errors` or `warnings` (errors and warnings).
    pub report: String,
    /// New since the edit, at their lines after it.
    pub introduced: Vec<DiagnosticItem>,
    /// There before the edit and gone since, at their mapped lines.
    pub resolved: Vec<DiagnosticItem>,
    /// In files the editor had not open before the edit: nothing to compare with.
    pub present: Vec<DiagnosticItem>,
    /// Left out past the client's `max`.
    pub omitted: usize,
    /// Files whose diagnostics had not settled at the bound: nothing said of them.
    pub pending: Vec<String>,
    /// Files no language server checks.
    pub unchecked: Vec<String>,
    /// Files whose language server sent no update in its usual time: taken as unchanged.
    pub quiet: Vec<String>,
    /// Files whose text changed after the editor applied the plan (typed since).
    pub not_compared: Vec<String>,
    /// Files not open before the edit (with `present`).
    pub not_open_before: Vec<String>,
    /// From the edit to the client's answer.
    pub waited_ms: u64,
    /// From the edit to the last diagnostics change the client saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_ms: Option<u64>,
    /// This server's own time for the delta.
    pub delta_ms: f64,
}

/// One diagnostic as a result reports it: 1-based line and column (characters), after the edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DiagnosticItem {
    pub file_path: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// `error`, `warning`, `information` or `hint`.
    pub severity: String,
    pub source: Option<String>,
    pub code: Option<String>,
    pub message: String,
}

/// Whether an edit the editor applied is on disk, where tests, compilers, git and a file read look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnDisk {
    /// The editor saved the file: the disk has the edit (and what save participants made of it).
    Saved,
    /// Not saved: the file had unsaved changes of the user's, which saving would have written too.
    UserChanges,
    /// Not saved: the user changed the file in the editor right after the edit.
    ChangedSince,
    /// Not saved: the `save` setting (or the plan's) is `never`.
    SaveOff,
    /// Not saved: the editor cannot save on request (it did not announce `multiedit/save`).
    NoSaveSupport,
    /// Not saved: the file is read-only.
    ReadOnly,
    /// Not saved: the editor failed to save it, or did not answer.
    SaveFailed,
    /// The save had not finished at the bound: whether the disk has the edit is not known yet.
    SaveRunning,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TierResult {
    pub edit_index: usize,
    #[cfg_attr(test, schemars(with = "String"))]
    pub tier: Tier,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OffsetResult {
    pub edit_index: usize,
    /// The hunk's name (`hunk 2 of src/a.rs, at line 40`).
    pub hunk: Option<String>,
    /// The 1-based line where it applied.
    pub line: Option<usize>,
    pub offset: isize,
}

/// Lines of a file as the editor has them after applying a plan: the lines a plan's edit touched,
/// widened to whatever the editor changed on or next to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EditedLines {
    pub file_path: String,
    /// 1-based, inclusive.
    pub first_line: usize,
    pub last_line: usize,
    /// The lines, each without its line break, joined by `\n` (as an `old_string` matches them).
    pub text: String,
}

/// The deepest folder that holds every path (`/` at least).
fn common_folder(paths: &[&str]) -> String {
    let mut common: Vec<&str> = match paths.first() {
        Some(p) => p
            .rsplit_once('/')
            .map_or(vec![], |(dir, _)| dir.split('/').collect()),
        None => return "/".into(),
    };
    for p in &paths[1..] {
        let dir: Vec<&str> = p
            .rsplit_once('/')
            .map_or(vec![], |(d, _)| d.split('/').collect());
        let same = common.iter().zip(&dir).take_while(|(a, b)| a == b).count();
        common.truncate(same);
    }
    let joined = common.join("/");
    if joined.is_empty() {
        "/".into()
    } else {
        joined
    }
}

/// A refusal as it travels (`refusal::Refusal`, the engine's struct with the server's kinds, whose
/// crate keeps free of schemars), for the wire contract (`lsp/typescript.rs`, which checks it against
/// the struct's own fields).
#[cfg(test)]
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
pub struct RefusalData {
    kind: RefusalKind,
    #[schemars(default)]
    edit_index: Option<usize>,
    #[schemars(default)]
    file_path: Option<String>,
    message: String,
    #[schemars(default)]
    hint: Option<String>,
}

/// Every refusal kind (`refusal::Kind`: the engine's, then the server's own), by its `as_str` name.
#[cfg(test)]
pub struct RefusalKind;

#[cfg(test)]
impl schemars::JsonSchema for RefusalKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RefusalKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = crate::refusal::Kind::all().map(|k| k.as_str()).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": names,
            "description": "Why a plan was refused (the engine's kinds, then the server's own): a stable name for programs."
        })
    }
}

/// A field that is present (even as `null`) is `Some`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Lines of `now_reads` the text gives a model, all regions together.
const NOW_READS_TEXT_LINES: usize = 200;
/// Past this many files, the text a model reads summarises the plan instead of giving every edit.
pub const SUMMARY_FILES: usize = 5;

impl PlanResult {
    /// The result of an applied (or checked) plan, before any front end's fields.
    pub fn of(outcome: &Outcome) -> PlanResult {
        PlanResult {
            ok: true,
            message: outcome.message(),
            files: outcome.files.iter().map(FileResult::of).collect(),
            edits_failed: outcome.failed().cloned().map(Refusal::from).collect(),
            ..PlanResult::refused(String::new(), None)
        }
    }

    /// `multiedit apply --json`'s refusal: `message` the refusal's text and hint, `error` the refusal.
    pub fn refusal(r: &Refusal) -> PlanResult {
        PlanResult::refused(r.full_text(), Some(r.clone()))
    }

    fn refused(message: String, error: Option<Refusal>) -> PlanResult {
        PlanResult {
            ok: false,
            message,
            files: Vec::new(),
            edits_failed: Vec::new(),
            error,
            dry_run: None,
            preview: None,
            applied_in: None,
            checked_in: None,
            editor: None,
            diff: None,
            edit: None,
            label: None,
            earlier_diagnostics: Vec::new(),
            rechecked: None,
            recovered: Vec::new(),
            now_reads: Vec::new(),
            now_reads_text: None,
            diagnostics: None,
            diagnostics_text: None,
            on_disk_text: None,
            rename: None,
        }
    }

    /// Adds the plan's rename: `rename`, and its count before the message.
    pub fn add_rename(&mut self, rename: RenameSummary) {
        self.message = format!("{}\n\n{}", rename.text(), self.message);
        self.rename = Some(rename);
    }

    /// Gives each file its `sha256` once the plan is written: `texts` holds, per file in plan order, its
    /// text after the plan (`None`: it no longer exists).
    pub fn add_sha256<'t>(&mut self, texts: impl IntoIterator<Item = Option<&'t str>>) {
        for (f, text) in self.files.iter_mut().zip(texts) {
            f.sha256 = text.map(sha256);
        }
    }

    /// `add_sha256` for a plan written on disk: each file's text is the engine's.
    pub fn add_sha256_written(&mut self, outcome: &Outcome) {
        self.add_sha256(
            outcome
                .files
                .iter()
                .map(|f| (f.op != FileOp::Delete).then_some(f.text.as_str())),
        );
    }

    /// The files' new sha256 as a model reads it, one line: what `multiedit_write` takes next to
    /// replace a file. `None` when no file has one (a preview, only deletions). Past `SUMMARY_FILES`
    /// files, the line says where to find them instead of giving every one.
    pub fn sha256_text(&self) -> Option<String> {
        let hashed: Vec<(&str, &str)> = self
            .files
            .iter()
            .filter_map(|f| {
                let path = f.moved_to.as_deref().unwrap_or(&f.file_path);
                Some((path, f.sha256.as_deref()?))
            })
            .collect();
        match hashed.as_slice() {
            [] => None,
            [(_, hash)] if self.files.len() == 1 => Some(format!("New sha256: {hash}")),
            many if many.len() > SUMMARY_FILES => Some(format!(
                "New sha256: each file's is in this result's structured files[].sha256 ({} files), and multiedit_read shows it.",
                many.len()
            )),
            many => Some(format!(
                "New sha256: {}",
                many.iter()
                    .map(|(path, hash)| format!("{path} {hash}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Adds the editor's edited lines: `now_reads` and its text.
    pub fn add_now_reads(&mut self, regions: impl IntoIterator<Item = EditedLines>) {
        self.now_reads.extend(regions);
        self.now_reads_text = self.now_reads_text();
    }

    /// `now_reads` as a model reads it: what happened, then each region as `path, lines A-B:` and its
    /// lines. `None` when the editor kept the plan's text.
    fn now_reads_text(&self) -> Option<String> {
        if self.now_reads.is_empty() {
            return None;
        }
        // A formatter that rewrote a whole file next to an edit would hand the model all of it: past a
        // budget a region is named, not shown.
        let mut budget = NOW_READS_TEXT_LINES;
        let regions: Vec<String> = self
            .now_reads
            .iter()
            .map(|r| {
                let lines = if r.first_line == r.last_line {
                    format!("line {}", r.first_line)
                } else {
                    format!("lines {}-{}", r.first_line, r.last_line)
                };
                let count = r.last_line + 1 - r.first_line;
                if count > budget {
                    budget = 0;
                    let many = if count == 1 {
                        "1 line; read it"
                    } else {
                        &format!("{count} lines; read them")
                    };
                    return format!("{}, {lines}: not shown ({many} from the file)", r.file_path);
                }
                budget -= count;
                format!("{}, {lines}:\n{}", r.file_path, r.text)
            })
            .collect();
        Some(format!(
            "The editor changed the edited lines after the edit (its formatter, or a review). They now read (match \
             these in your next old_string):\n{}",
            regions.join("\n\n")
        ))
    }

    /// The engine's message as a model reads it: whole for a plan of a few files; past `SUMMARY_FILES`,
    /// the counts and every file by name, grouped by folder, and in full only the edits that failed.
    /// `message` itself stays whole.
    pub fn message_for_model(&self) -> String {
        if self.files.len() <= SUMMARY_FILES {
            return self.message.clone();
        }
        if let Some(r) = &self.rename {
            return format!("{}\n\n{}", r.text(), self.summary());
        }
        self.summary()
    }

    /// The counts, and every file by name, grouped by folder.
    fn summary(&self) -> String {
        let edits: usize = self.files.iter().map(|f| f.edits_applied).sum();
        let replacements: usize = self.files.iter().map(|f| f.replacements).sum();
        let paths: Vec<&str> = self.files.iter().map(|f| f.file_path.as_str()).collect();
        let root = common_folder(&paths);
        let mut folders: Vec<(String, Vec<String>)> = Vec::new();
        for f in &self.files {
            let rel = f
                .file_path
                .strip_prefix(&root)
                .unwrap_or(&f.file_path)
                .trim_start_matches('/');
            let (dir, name) = match rel.rfind('/') {
                Some(i) => (rel[..=i].to_string(), rel[i + 1..].to_string()),
                None => (String::new(), rel.to_string()),
            };
            let mut name = match (&f.moved_to, f.deleted, f.created) {
                (Some(to), ..) => format!("{name} → {}", to.rsplit('/').next().unwrap_or(to)),
                (None, true, _) => format!("{name} (deleted)"),
                (None, false, true) => format!("{name} (new)"),
                _ => name,
            };
            if f.edits_applied > 1 {
                name.push_str(&format!(" ({} edits)", f.edits_applied));
            }
            match folders.iter_mut().find(|(d, _)| *d == dir) {
                Some((_, names)) => names.push(name),
                None => folders.push((dir, vec![name])),
            }
        }
        let mut out = format!(
            "Applied {} ({}) to {} in {root}:",
            plural(edits, "edit"),
            plural(replacements, "replacement"),
            plural(self.files.len(), "file")
        );
        for (dir, names) in folders {
            out.push_str(&format!(
                "\n{}{}",
                if dir.is_empty() {
                    String::new()
                } else {
                    format!("{dir}: ")
                },
                names.join(", ")
            ));
        }
        for r in &self.edits_failed {
            out.push_str(&format!("\nSkipped: {}", r.full_text()));
        }
        out
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a result serialises")
    }
}

impl RenameSummary {
    /// "Renamed total to sum: 7 occurrences in 3 files."
    pub fn text(&self) -> String {
        format!(
            "Renamed {} to {}: {} in {}.",
            self.old_name,
            self.new_name,
            plural(self.occurrences, "occurrence"),
            plural(self.files.len(), "file")
        )
    }
}

impl FileResult {
    fn of(f: &crate::engine::FileChange) -> FileResult {
        FileResult {
            file_path: f.file_path.clone(),
            edits_applied: f.edits_applied(),
            replacements: f.replacement_count(),
            created: f.created,
            sha256: None,
            tiers: f
                .applied
                .iter()
                .filter_map(|e| {
                    Some(TierResult {
                        edit_index: e.edit_index,
                        tier: e.tier?,
                    })
                })
                .collect(),
            line_breaks: f.line_breaks,
            deleted: f.op == FileOp::Delete,
            moved_to: match &f.op {
                FileOp::MoveTo(to) => Some(to.clone()),
                _ => None,
            },
            mode: f.mode.map(|m| format!("{m:o}")),
            offsets: f
                .applied
                .iter()
                .filter(|e| e.offset != 0)
                .map(|e| OffsetResult {
                    edit_index: e.edit_index,
                    hunk: e.label.clone(),
                    line: e.line,
                    offset: e.offset,
                })
                .collect(),
            version: None,
            mode_applied: None,
            on_disk: None,
        }
    }
}

/// An MCP tool's refusal as `structuredContent`: the refusal, marked `ok: false`, and the editor whose
/// server refused it when the plan went through one.
#[derive(Debug, Serialize)]
pub struct Refused<'a> {
    pub ok: bool,
    #[serde(flatten)]
    pub refusal: &'a Refusal,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<&'a str>,
}

impl<'a> Refused<'a> {
    pub fn new(refusal: &'a Refusal, editor: Option<&'a str>) -> Self {
        Refused {
            ok: false,
            refusal,
            editor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_its_budget_the_text_names_a_region_instead_of_showing_it() {
        let mut r = PlanResult::refused("m".into(), None);
        let lines = |n: usize| {
            (1..=n)
                .map(|i| format!("line {i}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        r.add_now_reads([
            EditedLines {
                file_path: "/w/a".into(),
                first_line: 1,
                last_line: 150,
                text: lines(150),
            },
            EditedLines {
                file_path: "/w/b".into(),
                first_line: 3,
                last_line: 53,
                text: lines(51),
            },
            EditedLines {
                file_path: "/w/c".into(),
                first_line: 9,
                last_line: 9,
                text: "x = 1".into(),
            },
        ]);
        let text = r.now_reads_text.as_deref().unwrap();
        assert!(
            text.contains(&format!("/w/a, lines 1-150:\n{}\n\n", lines(150))),
            "{text}"
        );
        assert!(text.ends_with("\n\n/w/b, lines 3-53: not shown (51 lines; read them from the file)\n\n/w/c, line 9: not shown (1 line; read it from the file)"), "{text}");
        assert_eq!(
            r.now_reads.len(),
            3,
            "the structured field keeps every region whole"
        );
    }

    fn file(path: &str, edits: usize) -> FileResult {
        FileResult {
            file_path: path.into(),
            edits_applied: edits,
            replacements: edits,
            created: false,
            sha256: None,
            tiers: vec![],
            deleted: false,
            moved_to: None,
            mode: None,
            offsets: vec![],
            version: None,
            mode_applied: None,
            on_disk: None,
            line_breaks: None,
        }
    }

    #[test]
    fn a_many_file_result_is_summarised_for_a_model_and_names_every_file() {
        let mut r = PlanResult::refused(String::new(), None);
        r.ok = true;
        for i in 0..200 {
            let dir = if i < 150 { "src/parts" } else { "tests" };
            r.files.push(file(
                &format!("/home/me/project/{dir}/part_{i:03}.ts"),
                1 + usize::from(i == 7),
            ));
            r.message.push_str(&format!("Applied 1 edit to /home/me/project/{dir}/part_{i:03}.ts:\n1. Replaced \"total\" with \"sum\"\n\n"));
        }
        let text = r.message_for_model();
        assert!(text.len() < 4096, "{} bytes", text.len());
        assert!(r.message.len() > 4 * text.len(), "the message stays whole");
        assert!(text.starts_with("Applied 201 edits (201 replacements) to 200 files in /home/me/project:\nsrc/parts/: part_000.ts, "), "{text}");
        assert!(
            text.contains("part_007.ts (2 edits), part_008.ts"),
            "{text}"
        );
        assert!(text.contains("\ntests/: part_150.ts, "), "{text}");
        for i in 0..200 {
            assert!(
                text.contains(&format!("part_{i:03}.ts")),
                "part_{i:03}.ts is named"
            );
        }
        // A few files: the engine's words, as Claude Code gives them.
        r.files.truncate(SUMMARY_FILES);
        assert_eq!(r.message_for_model(), r.message);
    }

    #[test]
    fn the_new_hashes_are_one_line_for_a_model() {
        let mut r = PlanResult::refused(String::new(), None);
        assert_eq!(r.sha256_text(), None, "no file");
        r.files.push(file("/w/a.txt", 1));
        assert_eq!(r.sha256_text(), None, "a preview: no hash");
        r.add_sha256([Some("one\n")]);
        let one = sha256("one\n");
        assert_eq!(r.files[0].sha256.as_deref(), Some(one.as_str()));
        assert_eq!(r.sha256_text(), Some(format!("New sha256: {one}")));
        r.files.push(file("/w/gone.txt", 1));
        r.files.push(FileResult {
            moved_to: Some("/w/c.txt".into()),
            ..file("/w/b.txt", 1)
        });
        r.add_sha256([Some("one\n"), None, Some("")]);
        let empty = sha256("");
        assert_eq!(
            r.sha256_text(),
            Some(format!("New sha256: /w/a.txt {one}, /w/c.txt {empty}")),
            "a deleted file has none, a moved one is named where it went"
        );
        for i in 0..SUMMARY_FILES {
            r.files.push(file(&format!("/w/{i}.txt"), 1));
        }
        r.add_sha256(std::iter::repeat_n(Some("x"), r.files.len()));
        assert_eq!(
            r.sha256_text().as_deref(),
            Some("New sha256: each file's is in this result's structured files[].sha256 (8 files), and multiedit_read shows it.")
        );
    }

    #[test]
    fn a_result_reads_back_as_it_was_written() {
        let mut r = PlanResult::refused("m".into(), None);
        r.ok = true;
        r.files.push(FileResult {
            file_path: "/w/a".into(),
            edits_applied: 1,
            replacements: 2,
            created: false,
            sha256: Some("ab".repeat(32)),
            tiers: vec![TierResult {
                edit_index: 0,
                tier: Tier::Quotes,
            }],
            line_breaks: Some(LineBreaks::Crlf),
            deleted: false,
            moved_to: Some("/w/b".into()),
            mode: Some("100755".into()),
            offsets: vec![OffsetResult {
                edit_index: 0,
                hunk: Some("hunk 1".into()),
                line: Some(3),
                offset: -2,
            }],
            version: Some(None),
            mode_applied: Some(false),
            on_disk: Some(OnDisk::UserChanges),
        });
        r.on_disk_text = Some("a has unsaved changes".into());
        r.diff = Some("d".into());
        r.now_reads.push(EditedLines {
            file_path: "/w/b".into(),
            first_line: 2,
            last_line: 3,
            text: "x = 1\ny = 2".into(),
        });
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.starts_with(r#"{"ok":true,"message":"m","files":[{"file_path":"/w/a""#),
            "{text}"
        );
        assert!(
            text.contains(r#""version":null,"mode_applied":false"#),
            "{text}"
        );
        assert!(text.contains(r#""now_reads":[{"file_path":"/w/b","first_line":2,"last_line":3,"text":"x = 1\ny = 2"}]"#), "{text}");
        assert_eq!(serde_json::from_str::<PlanResult>(&text).unwrap(), r);
        let mut unopened = r.files[0].clone();
        unopened.version = None;
        assert!(!serde_json::to_string(&unopened)
            .unwrap()
            .contains("version"));
    }
}
