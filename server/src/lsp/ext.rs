//! What multiedit adds to LSP, typed: its requests to the editor and their answers. The extension's
//! mirror is `extension-vscode/src/lsp_ext.ts`, under the same names; docs/protocol.md says what each
//! means.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::request::Request;
use tower_lsp_server::ls_types::{NumberOrString, Range};

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
#[serde(rename_all = "camelCase")]
pub struct ApproveParams {
    /// What the change is called: "Claude Code: 3 edits to 2 files".
    pub label: String,
    /// Who sent the plan, when it was an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The WorkspaceEdit that is sent if the user applies it, to show as a diff.
    pub edit: tower_lsp_server::ls_types::WorkspaceEdit,
    /// How long the server waits for the decision.
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    /// Apply the whole change.
    Apply,
    /// Apply nothing.
    Discard,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[serde(tag = "phase", rename_all = "camelCase")]
pub enum SaveParams {
    /// Just before `workspace/applyEdit`: which of `uris` have unsaved changes in the editor.
    #[serde(rename_all = "camelCase")]
    Before { uris: Vec<String> },
    /// Once the editor applied the edit: save each of `files` (as `:write` or File > Save would, save
    /// participants included) if it is still at `version`; give up waiting on a save after `timeout_ms`.
    #[serde(rename_all = "camelCase")]
    After { files: Vec<SaveFile>, timeout_ms: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveFile {
    pub uri: String,
    /// The document's version once the edit was applied (`null`: the server has not seen the document:
    /// the editor saves it if it holds it).
    pub version: Option<i32>,
}

/// The answer to either phase: `unsaved` to `before`, `files` to `after`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
pub struct ReportedDiagnostic {
    pub range: Range,
    /// 1 error .. 4 hint; none counts as an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<NumberOrString>,
    pub message: String,
}

/// An entry read leniently: one a client wrote wrong is `None`, and the rest of its answer still counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Lenient<T>(pub Option<T>);

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(Lenient(serde_json::from_value(value).ok()))
    }
}
