//! What multiedit adds to LSP, typed: its requests to the editor and their answers. The extension's
//! mirror is `extension-vscode/src/lsp_ext.ts`, under the same names; docs/protocol.md says what each
//! means.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::request::Request;
use tower_lsp_server::ls_types::{NumberOrString, Position, Range};

/// `multiedit/approve`, from the server to an editor that announced it (client capability
/// `experimental.multiedit.approve: true`): one approval for a whole plan, before its edit is sent.
/// The editor shows the change (its diff) and the user applies all of it, or discards it; there are no
/// entries to tick one by one. The server gives up at `timeout_ms` and never applies the plan after
/// that, whatever the editor answers later.
pub enum ApproveRequest {}

impl Request for ApproveRequest {
    type Params = ApproveParams;
    type Result = ApproveAnswer;
    const METHOD: &'static str = "multiedit/approve";
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApproveParams {
    /// What the change is called: "Claude Code: 3 edits to 2 files".
    pub label: String,
    /// Who sent the plan, when it was an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Why the user is asked whatever their review setting, to show with the diff: the change writes
    /// files where an agent's permissions, servers or hooks are configured (`crate::gate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The WorkspaceEdit that is sent if the user applies it, to show as a diff.
    #[cfg_attr(test, schemars(with = "serde_json::Value"))]
    pub edit: tower_lsp_server::ls_types::WorkspaceEdit,
    /// How long the server waits for the decision.
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    /// Apply the whole change.
    Apply,
    /// Apply nothing.
    Discard,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ApproveAnswer {
    pub decision: Decision,
}

/// `multiedit/save`, from the server to an editor that announced it (client capability
/// `experimental.multiedit.save: true`): which documents hold changes the disk lacks, before the edit;
/// and, once the editor applied it, saving the edited documents, each only while it is still at the
/// version the edit left it at. LSP has no request to save a document, so multiedit defines one.
pub enum SaveRequest {}

impl Request for SaveRequest {
    type Params = SaveParams;
    type Result = SaveAnswer;
    const METHOD: &'static str = "multiedit/save";
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "phase", rename_all = "camelCase")]
pub enum SaveParams {
    /// Just before `workspace/applyEdit`: which of `uris` have unsaved changes in the editor.
    #[serde(rename_all = "camelCase")]
    Before { uris: Vec<String> },
    /// Once the editor applied the edit: save each of `files` (as `:write` or File > Save would, save
    /// participants included) if it is still at `version`; give up waiting on a save after `timeout_ms`.
    #[serde(rename_all = "camelCase")]
    After {
        files: Vec<SaveFile>,
        timeout_ms: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SaveFile {
    pub uri: String,
    /// The document's version once the edit was applied (`null`: the server has not seen the document:
    /// the editor saves it if it holds it).
    pub version: Option<i32>,
}

/// The answer to either phase: `unsaved` to `before`, `files` to `after`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SaveAnswer {
    /// Phase `before`: the URIs whose documents have changes the disk lacks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsaved: Vec<String>,
    /// Phase `after`: what became of each file, in any order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SavedFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SavedFile {
    pub uri: String,
    pub status: SaveStatus,
    /// The document's version once saved (a save participant, such as format on save, may have
    /// changed it): the server waits for that text before it reports what the file now reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    /// The editor's own words when the save failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum SaveStatus {
    /// On disk, with the edit (and whatever save participants made of it).
    Saved,
    /// The document moved past the edit's version (the user typed): not saved.
    Changed,
    /// The editor no longer holds the document.
    Closed,
    /// The file cannot be written (read-only).
    ReadOnly,
    /// The save failed (a full disk, the disk's copy newer, a save declined).
    Failed,
    /// Still saving at `timeout_ms`: whether it will reach the disk is not known yet.
    Running,
}

/// `multiedit/diagnostics`, from the server to an editor that announced it (initialization option
/// `diagnostics`): the diagnostics of the plan's documents just before its edit, and once the editor's
/// language servers have checked the new text (`lsp::diagnostics`).
pub enum DiagnosticsRequest {}

impl Request for DiagnosticsRequest {
    type Params = DiagnosticsParams;
    type Result = DiagnosticsAnswer;
    const METHOD: &'static str = "multiedit/diagnostics";
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "phase", rename_all = "camelCase")]
pub enum DiagnosticsParams {
    /// What the documents show now, before the edit.
    Before { uris: Vec<String> },
    /// What they show once their language servers published for the edited text, waiting at most
    /// `settle_ms` for them.
    #[serde(rename_all = "camelCase")]
    After { uris: Vec<String>, settle_ms: u64 },
}

/// The answer to either phase: a client's odd entry is skipped, never the whole answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsAnswer {
    /// Per document URI, its diagnostics.
    #[serde(default)]
    pub diagnostics: BTreeMap<String, Vec<Lenient<ReportedDiagnostic>>>,
    /// Phase `after`: documents whose diagnostics were not updated within the bound.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    /// ... whose language server sent no update in its usual time: taken as unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quiet: Vec<String>,
    /// ... that no language server checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    /// From the edit to the answer, as the client measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// From the edit to the last diagnostics change the client saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_ms: Option<u64>,
}

/// An LSP diagnostic as an editor reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ReportedDiagnostic {
    #[cfg_attr(test, schemars(with = "LspRange"))]
    pub range: Range,
    /// 1 error .. 4 hint; none counts as an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<serde_json::Value>"))]
    pub code: Option<NumberOrString>,
    pub message: String,
}

/// `multiedit/symbols`, from the server to an editor that announced it (client capability
/// `experimental.multiedit.symbols: true`): the document symbols of one document from the editor's
/// language servers (VS Code: `vscode.executeDocumentSymbolProvider`; Neovim: `textDocument/documentSymbol`
/// of the attached servers), with the version of the text they were computed on. Positions are in the
/// encoding multiedit negotiated. The editor loads a document it does not hold (and syncs it to
/// multiedit like any other).
pub enum SymbolsRequest {}

impl Request for SymbolsRequest {
    type Params = SymbolsParams;
    type Result = SymbolsAnswer;
    const METHOD: &'static str = "multiedit/symbols";
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SymbolsParams {
    pub uri: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SymbolsAnswer {
    /// The version of the document the symbols were computed on (the version the editor sends in
    /// its didOpen and didChange).
    pub version: i32,
    /// The symbols, outermost first; `null` when no language server of the editor gives symbols for
    /// this document.
    #[serde(default)]
    pub symbols: Option<Vec<ReportedSymbol>>,
}

/// An LSP `DocumentSymbol`, as the editor's language server gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReportedSymbol {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// LSP's `SymbolKind` (5 class, 6 method, 12 function...).
    pub kind: u32,
    /// The whole symbol, as its language server spans it.
    #[cfg_attr(test, schemars(with = "LspRange"))]
    pub range: Range,
    /// Its name.
    #[cfg_attr(test, schemars(with = "LspRange"))]
    pub selection_range: Range,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ReportedSymbol>,
}

/// `multiedit/rename`, from the server to an editor that announced it (client capability
/// `experimental.multiedit.rename: true`): the editor's rename provider renames the symbol at
/// `position` to `newName` (prepare rename first), and answers with its WorkspaceEdit, unapplied, and
/// the version of every document it holds that the edit touches. multiedit applies it with the
/// plan's other edits as one WorkspaceEdit.
pub enum RenameRequest {}

impl Request for RenameRequest {
    type Params = RenameParams;
    type Result = RenameAnswer;
    const METHOD: &'static str = "multiedit/rename";
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RenameParams {
    pub uri: String,
    #[cfg_attr(test, schemars(with = "LspPosition"))]
    pub position: Position,
    pub new_name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RenameAnswer {
    /// The rename's edit (`changes`, or `documentChanges` of text edits only); absent when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<serde_json::Value>"))]
    pub edit: Option<tower_lsp_server::ls_types::WorkspaceEdit>,
    /// Per URI of a document the editor holds that the edit touches, its version when the edit was
    /// computed; a URI left out is a file the editor does not hold (its text is the disk's).
    #[serde(default)]
    pub versions: BTreeMap<String, i32>,
    /// The name as prepare rename gave it (its placeholder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// The language server refused: its words ("You cannot rename this element.").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// No language server of the editor renames in this document.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_provider: bool,
}

/// The options of `multiedit.apply` and `multiedit.preview`: the command's optional second argument,
/// after the plan. Each left out takes the client's initialization option (or the plan's own field).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CallOptions {
    /// Whether the editor asks the user before the edit: a policy, or `true` (always) / `false` (never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<OrBool<ReviewPolicy>>,
    /// Who sent the plan ("Claude Code"), for the undo entry and the log; one line, at most 60 characters kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Which diagnostics the result reports: a level, or `true` (errors) / `false` (off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<OrBool<DiagnosticsReport>>,
    /// Which edited files the editor saves once the plan is applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save: Option<SavePolicy>,
}

/// The server's initialization options (`initialize`'s `initializationOptions`): each left out takes
/// its default. Read one entry at a time (`config.rs`), so that a wrong one is named and the rest hold.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializationOptions {
    /// Plans may edit files outside the workspace folders (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_outside_workspace: Option<bool>,
    /// Plans may come from agents outside the editor, through the bridge (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<bool>,
    /// How long the server waits for the editor's answer to `workspace/applyEdit`, in ms (positive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_edit_timeout_ms: Option<u64>,
    /// When the editor asks the user before a plan's edit (default never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<OrBool<ReviewPolicy>>,
    /// The same, for agents' plans through the bridge (default never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_review: Option<OrBool<ReviewPolicy>>,
    /// How long an agent's plan waits for the user's approval, in ms (positive; at most 25 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_approval_ms: Option<u64>,
    /// The client answers `multiedit/diagnostics`: `true`, or how (`false`: it does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<OrBool<DiagnosticsOptions>>,
    /// Which edited files the editor saves once a plan is applied (default clean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save: Option<SavePolicy>,
    /// Agents' plans may write inside `.git` (default false: refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_dot_git: Option<bool>,
    /// Agents' plans may write the files where agents' permissions, servers and hooks are configured
    /// without the user's approval (default false: asked, or refused where the client cannot ask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_agent_config: Option<bool>,
}

/// The initialization option `diagnostics` as an object.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiagnosticsOptions {
    /// Which diagnostics a result reports (default errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<OrBool<DiagnosticsReport>>,
    /// How long the client waits for its language servers after an edit, in ms (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<u64>,
    /// At most this many diagnostics listed per result (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

/// A named setting, or a boolean standing for one of its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(rename = "{T}OrBool"))]
#[serde(untagged)]
pub enum OrBool<T> {
    Named(T),
    Bool(bool),
}

/// When the editor asks the user before a plan's edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum ReviewPolicy {
    Never,
    MultiFile,
    Always,
}

/// Which diagnostics a result reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum DiagnosticsReport {
    Errors,
    Warnings,
    Off,
}

/// Which edited files the editor saves once a plan is applied: those that had no unsaved changes
/// before it, all of them, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SavePolicy {
    Clean,
    All,
    Never,
}

/// An entry read leniently: one a client wrote wrong is `None`, and the rest of its answer still counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(rename = "Lenient{T}"))]
#[serde(transparent)]
pub struct Lenient<T>(pub Option<T>);

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(Lenient(serde_json::from_value(value).ok()))
    }
}

/// An LSP position, as ls_types serialises it (which derives no schema).
#[cfg(test)]
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
pub(crate) struct LspPosition {
    line: u32,
    character: u32,
}

/// An LSP range.
#[cfg(test)]
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
pub(crate) struct LspRange {
    start: LspPosition,
    end: LspPosition,
}
