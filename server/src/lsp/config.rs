//! What the client can do and the options it started the server with, read once from `initialize`.

use std::time::Duration;

use serde_json::{Map, Value};

use super::convert::Encoding;
use super::workspace::Workspace;
use crate::diagnostics;
use crate::engine::Save;
use crate::protocol::ext::{InitializationOptions, OrBool, ReviewPolicy};

pub(crate) const DEFAULT_APPLY_EDIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an agent's plan waits for the user's approval at most.
pub(crate) const AGENT_APPROVAL: Duration = Duration::from_secs(25);

/// The client's capabilities and options, read from `initialize`.
#[derive(Debug, Clone)]
pub struct Config {
    pub encoding: Encoding,
    /// The client handles `workspace/applyEdit`.
    pub(crate) apply_edit: bool,
    /// The client takes `documentChanges` (versioned edits); otherwise only `changes`.
    pub(crate) document_changes: bool,
    /// The client can create files through a WorkspaceEdit.
    pub(crate) create_files: bool,
    /// ... delete and rename them (a patch's deleted and moved files).
    pub(crate) delete_files: bool,
    pub(crate) rename_files: bool,
    pub(crate) apply_edit_timeout: Duration,
    pub(crate) workspace: Workspace,
    /// Plans may come through the bridge (initialization option `bridge`, default true).
    pub(crate) bridge: bool,
    /// The editor's name, from `clientInfo`.
    pub(crate) client_name: Option<String>,
    /// The client takes change annotations (`workspace.workspaceEdit.changeAnnotationSupport`).
    pub(crate) change_annotations: bool,
    /// When the editor is asked to have the user review a plan (initialization option `review`).
    pub(crate) review: Review,
    /// ... a plan from an agent outside the editor, through the bridge (initialization option
    /// `agentReview`, default never: the agent's own client is where the user decides what it may do).
    pub(crate) agent_review: Review,
    /// How long an agent's plan waits for the user's approval (initialization option `agentApprovalMs`,
    /// at most the default, `commands::apply::AGENT_APPROVAL`, so that the agent's call stays within its bound).
    pub(crate) agent_approval: Duration,
    /// The client asks the user's one approval itself: it answers `multiedit/approve` (client capability
    /// `experimental.multiedit.approve`). Without it, a review is asked with change annotations.
    pub(crate) approve_support: bool,
    /// The client answers `multiedit/diagnostics` (initialization option `diagnostics`).
    pub(crate) diagnostics: Option<diagnostics::Options>,
    /// The client saves documents on request: it answers `multiedit/save` (client capability
    /// `experimental.multiedit.save`).
    pub(crate) save_support: bool,
    /// Which edited files it is asked to save (initialization option `save`, default `clean`).
    pub(crate) save: Save,
    /// The client gives its language servers' document symbols: it answers `multiedit/symbols`
    /// (client capability `experimental.multiedit.symbols`).
    pub(crate) symbols_support: bool,
    /// The client renames through its language servers: it answers `multiedit/rename` (client
    /// capability `experimental.multiedit.rename`).
    pub(crate) rename_support: bool,
    /// What agents may do beyond the gate's default (initialization options `allowDotGit` and
    /// `allowAgentConfig`, default false): `crate::gate`.
    pub(crate) allow: crate::gate::Allow,
}

/// When a plan's WorkspaceEdit asks the editor for the user's confirmation (`needsConfirmation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Review {
    #[default]
    Never,
    MultiFile,
    Always,
}

impl From<OrBool<ReviewPolicy>> for Review {
    fn from(v: OrBool<ReviewPolicy>) -> Review {
        match v {
            OrBool::Named(ReviewPolicy::Never) | OrBool::Bool(false) => Review::Never,
            OrBool::Named(ReviewPolicy::MultiFile) => Review::MultiFile,
            OrBool::Named(ReviewPolicy::Always) | OrBool::Bool(true) => Review::Always,
        }
    }
}

impl Review {
    pub(crate) fn applies(self, files: usize) -> bool {
        match self {
            Review::Never => false,
            Review::MultiFile => files > 1,
            Review::Always => true,
        }
    }
}

impl Config {
    /// Takes the entries `o` sets (one, as `from_initialize` reads them); `false` when one is out of
    /// its range (a timeout of 0).
    fn take(&mut self, o: &InitializationOptions, allow_outside: &mut bool) -> bool {
        if matches!(o.apply_edit_timeout_ms, Some(0)) || matches!(o.agent_approval_ms, Some(0)) {
            return false;
        }
        if let Some(b) = o.allow_outside_workspace {
            *allow_outside = b;
        }
        if let Some(b) = o.bridge {
            self.bridge = b;
        }
        if let Some(b) = o.allow_dot_git {
            self.allow.dot_git = b;
        }
        if let Some(b) = o.allow_agent_config {
            self.allow.agent_config = b;
        }
        if let Some(ms) = o.apply_edit_timeout_ms {
            self.apply_edit_timeout = Duration::from_millis(ms);
        }
        if let Some(r) = o.review {
            self.review = Review::from(r);
        }
        if let Some(r) = o.agent_review {
            self.agent_review = Review::from(r);
        }
        if let Some(ms) = o.agent_approval_ms {
            self.agent_approval = Duration::from_millis(ms).min(AGENT_APPROVAL);
        }
        if let Some(p) = o.save {
            self.save = super::save::policy(p);
        }
        true
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            encoding: Encoding::Utf16,
            apply_edit: false,
            document_changes: false,
            create_files: false,
            delete_files: false,
            rename_files: false,
            apply_edit_timeout: DEFAULT_APPLY_EDIT_TIMEOUT,
            workspace: Workspace::default(),
            bridge: true,
            client_name: None,
            change_annotations: false,
            review: Review::Never,
            agent_review: Review::Never,
            agent_approval: AGENT_APPROVAL,
            approve_support: false,
            diagnostics: None,
            save_support: false,
            save: Save::Clean,
            symbols_support: false,
            rename_support: false,
            allow: crate::gate::Allow::default(),
        }
    }
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

impl Config {
    /// Reads `initialize` params leniently, straight from JSON: a client that sends an odd capability
    /// still gets a working server with defaults for what could not be read. Returns the config and
    /// warnings about options that were ignored.
    pub fn from_initialize(params: &Value) -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let mut config = Config::of_capabilities(params);
        let allow_outside = config.take_options(params, &mut warnings);
        let (workspace, bad) = Workspace::new(&workspace_folders(params), allow_outside);
        warnings.extend(bad);
        config.workspace = workspace;
        (config, warnings)
    }

    /// What the client's capabilities and name say, the rest left at its default.
    fn of_capabilities(params: &Value) -> Config {
        let caps = params.get("capabilities").unwrap_or(&Value::Null);
        let flag = |path: &[&str]| at(caps, path).and_then(Value::as_bool).unwrap_or(false);
        // UTF-8 when offered, since it needs no conversion; UTF-16 otherwise (the protocol's default).
        let offers_utf8 = at(caps, &["general", "positionEncodings"])
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|e| e.as_str() == Some("utf-8")));
        let resource_ops = at(caps, &["workspace", "workspaceEdit", "resourceOperations"])
            .and_then(Value::as_array);
        Config {
            encoding: if offers_utf8 {
                Encoding::Utf8
            } else {
                Encoding::Utf16
            },
            apply_edit: flag(&["workspace", "applyEdit"]),
            document_changes: flag(&["workspace", "workspaceEdit", "documentChanges"]),
            create_files: resource_ops
                .is_some_and(|ops| ops.iter().any(|o| o.as_str() == Some("create"))),
            delete_files: resource_ops
                .is_some_and(|ops| ops.iter().any(|o| o.as_str() == Some("delete"))),
            rename_files: resource_ops
                .is_some_and(|ops| ops.iter().any(|o| o.as_str() == Some("rename"))),
            client_name: at(params, &["clientInfo", "name"])
                .and_then(Value::as_str)
                .map(String::from),
            change_annotations: at(
                caps,
                &["workspace", "workspaceEdit", "changeAnnotationSupport"],
            )
            .is_some_and(Value::is_object),
            save_support: flag(&["experimental", "multiedit", "save"]),
            approve_support: flag(&["experimental", "multiedit", "approve"]),
            symbols_support: flag(&["experimental", "multiedit", "symbols"]),
            rename_support: flag(&["experimental", "multiedit", "rename"]),
            ..Config::default()
        }
    }

    /// Takes the initialization options one entry at a time, a wrong one named in `warnings`;
    /// whether they allow files outside the workspace.
    fn take_options(&mut self, params: &Value, warnings: &mut Vec<String>) -> bool {
        let mut allow_outside = false;
        match params.get("initializationOptions") {
            None | Some(Value::Null) => {}
            Some(Value::Object(opts)) => {
                for (key, value) in opts {
                    if key == "diagnostics" {
                        // Its own words for a wrong entry inside it.
                        match diagnostics::Options::from_value(value) {
                            Ok(d) => self.diagnostics = d,
                            Err(why) => warnings.push(why),
                        }
                        continue;
                    }
                    // One entry at a time, typed (`ext::InitializationOptions`), so a wrong one is named.
                    let one = Value::Object(Map::from_iter([(key.clone(), value.clone())]));
                    match serde_json::from_value::<InitializationOptions>(one) {
                        Ok(o) if self.take(&o, &mut allow_outside) => {}
                        _ => warnings.push(format!(
                            "Ignoring the initialization option {key}={value}: the options are allowOutsideWorkspace \
                             (true or false), applyEditTimeoutMs (a positive number of milliseconds), bridge \
                             (true or false), review (\"never\", \"multiFile\" or \"always\"), agentReview (the same, for agents' plans through the bridge), agentApprovalMs, diagnostics, save (\"clean\", \"all\" or \"never\"), allowDotGit and allowAgentConfig (true or false)."
                        )),
                    }
                }
            }
            Some(other) => warnings.push(format!(
                "Ignoring initializationOptions {other}: expected an object."
            )),
        }
        allow_outside
    }
}

/// The client's workspace folders, as URIs; a pre-3.6 client's single root instead.
fn workspace_folders(params: &Value) -> Vec<String> {
    let mut folders: Vec<String> = params
        .get("workspaceFolders")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|f| f.get("uri")?.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if folders.is_empty() {
        // Pre-3.6 clients name a single root instead.
        if let Some(root) = params.get("rootUri").and_then(Value::as_str) {
            folders.push(root.to_string());
        } else if let Some(root) = params.get("rootPath").and_then(Value::as_str) {
            folders.push(root.to_string());
        }
    }
    folders
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialize_is_read_leniently() {
        let (c, warnings) = Config::from_initialize(&json!({
            "capabilities": {
                "general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]},
                "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}},
            },
            "rootUri": "file:///tmp",
            "initializationOptions": {"applyEditTimeoutMs": 250, "allowOutsideWorkspace": "yes", "bridge": false, "review": "multiFile"},
            "clientInfo": {"name": "Neovim", "version": "0.7.2"},
        }));
        assert!(!c.bridge);
        assert_eq!(c.client_name.as_deref(), Some("Neovim"));
        assert_eq!(c.review, Review::MultiFile);
        assert!(!c.change_annotations);
        assert_eq!(c.encoding, Encoding::Utf8);
        assert!(c.apply_edit && c.document_changes && c.create_files);
        assert_eq!(c.apply_edit_timeout, Duration::from_millis(250));
        assert_eq!(c.workspace.folders().len(), 1);
        assert_eq!(
            warnings.len(),
            1,
            "the mistyped option is reported: {warnings:?}"
        );
        assert!(warnings[0].contains("allowOutsideWorkspace"));

        let (c, warnings) =
            Config::from_initialize(&json!({"capabilities": 7, "initializationOptions": [1]}));
        assert_eq!(c.encoding, Encoding::Utf16);
        assert!(!c.apply_edit && !c.document_changes && !c.create_files);
        assert_eq!(c.apply_edit_timeout, DEFAULT_APPLY_EDIT_TIMEOUT);
        assert!(c.bridge, "on unless the editor turns it off");
        assert_eq!(warnings.len(), 1);
    }
}
