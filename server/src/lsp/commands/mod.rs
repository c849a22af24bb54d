//! `workspace/executeCommand`: the commands the server advertises, and the validation they share.

pub mod apply;
pub mod preview;

use std::collections::HashMap;

use ropey::Rope;
use serde_json::Value;
use tower_lsp_server::jsonrpc;
use tower_lsp_server::ls_types::{MessageType, WorkspaceEdit};
use tower_lsp_server::Client;

use super::convert::{self, internal_error, refusal_error, FileEdit, Then};
use super::diagnostics::Report;
use super::session::{Config, Review, Session};
use super::{catch_panic, log};
use crate::engine::{self, FileOp, Outcome, Refusal};
use crate::result::PlanResult;
use crate::{disk, formats, paths};

pub const APPLY: &str = "multiedit.apply";
pub const PREVIEW: &str = "multiedit.preview";
pub const ALL: &[&str] = &[APPLY, PREVIEW];

/// Why a command gave no result.
#[derive(Debug)]
pub enum Failure {
    /// The plan was refused (or the editor did not apply it): nothing was changed.
    Refused(Refusal),
    /// The server itself failed (a bug caught before it could change anything).
    Internal(String),
}

impl Failure {
    /// As the JSON-RPC error `workspace/executeCommand` answers with.
    pub fn into_rpc(self) -> jsonrpc::Error {
        match self {
            Failure::Refused(r) => refusal_error(&r),
            Failure::Internal(message) => internal_error(message),
        }
    }
}

/// Runs `multiedit.apply` (or, with `preview`, `multiedit.preview`) on `arguments`: the one function
/// behind both the editor's `workspace/executeCommand` and a plan arriving through the bridge, so the
/// two are validated, ordered, applied and answered alike.
pub async fn run(session: &Session, client: &Client, preview: bool, arguments: &[Value]) -> Result<Value, Failure> {
    if preview {
        preview::run(session, client, arguments).await
    } else {
        apply::run(session, client, arguments).await
    }
}

/// Where a file's text came from.
pub enum Source {
    /// The editor's buffer, at this version.
    Open { uri: String, version: i32, rope: Rope },
    /// The file on disk (`None`: it does not exist).
    Disk { text: Option<String> },
}

/// A validated plan: what the engine computed and the WorkspaceEdit that carries it out.
pub struct Prepared {
    pub outcome: Outcome,
    /// Per file of the plan, the text the engine ran on.
    pub before: Vec<Option<String>>,
    /// Per file, the version the edit carries (`None` for files the editor has not opened).
    pub versions: Vec<Option<i32>>,
    /// Per file, the key its document is found under (`Documents::find`).
    pub keys: Vec<String>,
    pub edit: WorkspaceEdit,
    /// The edit creates files.
    pub creates: bool,
    /// Who sent the plan (the call's `agent` option), if it said.
    pub agent: Option<String>,
    /// Per file, the URI its edit addresses (`None`: not edited, deleted or moved).
    pub uris: Vec<Option<String>>,
    /// The call's `diagnostics` option (else the client's initialization option holds).
    pub diagnostics: Option<Report>,
}

impl Prepared {
    /// What the editor calls the change (its undo entry, its review): "Claude Code: 3 edits to 2 files".
    pub fn label(&self) -> String {
        let files = self.outcome.files.iter().filter(|f| f.edits_applied() > 0 || f.op != FileOp::Edit).count();
        let edits: usize = self.outcome.files.iter().map(|f| f.edits_applied()).sum();
        let plural = |n: usize, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
        format!("{}: {} to {}", self.agent.as_deref().unwrap_or("MultiEdit"), plural(edits, "edit"), plural(files, "file"))
    }
}

/// For one of our commands whose `arguments` is not an array (a plan sent bare, say): the refusal to
/// answer with, instead of the framework's bare "invalid type: map, expected a sequence".
pub fn arguments_shape_error(params: Option<&Value>) -> Option<Refusal> {
    let params = params?;
    let command = params.get("command")?.as_str()?;
    if !ALL.contains(&command) {
        return None;
    }
    match params.get("arguments") {
        None | Some(Value::Array(_)) => None,
        Some(other) => Some(Refusal::input(format!(
            "the `arguments` of {command} must be an array holding the plan, [plan], but \
             is {}",
            match other {
                Value::Object(_) => "an object (send [plan], not the plan itself)",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            }
        ))),
    }
}

/// The call's options, the command's optional second argument.
#[derive(Default)]
struct CallOptions {
    /// `"review"`: `"never"`, `"multiFile"`, `"always"` or a boolean.
    review: Option<Review>,
    /// `"agent"`: who sent the plan ("Claude Code"), for the undo entry and the log.
    agent: Option<String>,
    /// `"diagnostics"`: `"errors"`, `"warnings"` or `"off"`.
    diagnostics: Option<Report>,
}

/// The command's arguments: the plan, then optionally the call's options `{"review", "agent",
/// "diagnostics"}`; a missing argument is the engine's `invalid_plan` refusal.
fn plan_argument(session: &Session, command: &str, arguments: &[Value]) -> Result<(engine::Plan, CallOptions), Refusal> {
    let plan_from_value = |v: &Value| match v.get("patch") {
        Some(_) => patch_plan(session, v),
        None => engine::plan_from_value(v),
    };
    match arguments {
        [plan] => Ok((plan_from_value(plan)?, CallOptions::default())),
        [plan, Value::Object(options)] => {
            let mut call = CallOptions::default();
            for (key, value) in options {
                match (key.as_str(), value) {
                    ("review", v) if Review::from_value(v).is_some() => call.review = Review::from_value(v),
                    ("diagnostics", v) if Report::from_value(v).is_some() => call.diagnostics = Report::from_value(v),
                    ("agent", Value::String(name)) if !name.trim().is_empty() => {
                        // A name, not a text: one line, and short enough for an undo entry.
                        call.agent = Some(name.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(60).collect())
                    }
                    _ => {
                        return Err(Refusal::input(format!(
                            "the options of {command} (its second argument) take only \
                             \"review\": \"never\", \"multiFile\", \"always\" or a boolean, \"diagnostics\": \
                             \"errors\", \"warnings\" or \"off\", and \"agent\": the name of who sent the plan; \
                             got {key}={value}"
                        )))
                    }
                }
            }
            Ok((plan_from_value(plan)?, call))
        }
        _ => Err(Refusal::input(format!(
            "{command} takes the plan (an object such as \
             {{\"file_path\": \"/abs/path\", \"edits\": [{{\"old_string\": \"a\", \"new_string\": \"b\"}}]}}) and optionally its options {{\"review\": ..., \"agent\": ..., \"diagnostics\": ...}}, \
             but was given {} arguments",
            arguments.len()
        ))),
    }
}

/// Validates the plan against what the user sees (open buffers, else the disk) and builds the
/// WorkspaceEdit. Synchronous and free of awaits: the snapshot it takes is the state after every
/// notification that arrived before the command. An interrupted `multiedit apply` met in a folder of
/// the plan is completed or rolled back before that folder is read (`multiedit.apply`; a preview only
/// reports it), and added to `recovered` (kept even when the plan is then refused: it happened either
/// way), as is a journal-like file it ignored.
pub fn prepare(
    session: &Session,
    config: &Config,
    command: &str,
    arguments: &[Value],
    recovered: &mut Vec<disk::Recovered>,
) -> Result<Prepared, Refusal> {
    let (plan, call) = plan_argument(session, command, arguments)?;
    let mut sources = Vec::with_capacity(plan.files.len());
    let mut paths_on_disk = Vec::with_capacity(plan.files.len());
    let mut keys = Vec::with_capacity(plan.files.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, f) in plan.files.iter().enumerate() {
        let path = paths::to_path(&f.file_path)?;
        let key = convert::path_key(&path);
        // Two spellings of one file (a link and its target, a URI and a path) must not become two
        // edits of one document.
        let identity = std::fs::canonicalize(&path).map(|p| convert::path_key(&p)).unwrap_or_else(|_| key.clone());
        if let Some(j) = seen.insert(identity, i) {
            return Err(Refusal::input(format!(
                "MultiEdit failed due to the following issue:\n`files[{i}].file_path` \
                 ({}) names the same file as `files[{j}].file_path` ({}): put all edits of one file in one entry",
                f.file_path, plan.files[j].file_path
            ))
            .in_file(&f.file_path));
        }
        let open = session.documents.find(&key);
        config.workspace.check(&f.file_path, &path, open.is_some())?;
        // A preview writes nothing: it reports an interrupted plan rather than finishing it.
        disk::journal::recover_into(recovered, std::slice::from_ref(&path), command == PREVIEW)?;
        let source = match open {
            Some(doc) => Source::Open { uri: doc.uri, version: doc.version, rope: doc.rope },
            None => {
                let bytes = disk::read(&path).map_err(|r| r.in_file(&f.file_path))?;
                let text = bytes.map(|b| engine::decode(&f.file_path, &b).map(str::to_string)).transpose()?;
                Source::Disk { text }
            }
        };
        sources.push(source);
        paths_on_disk.push(path);
        keys.push(key);
    }
    let before: Vec<Option<String>> = sources
        .iter()
        .map(|s| match s {
            Source::Open { rope, .. } => Some(rope.to_string()),
            Source::Disk { text } => text.clone(),
        })
        .collect();
    let texts: Vec<Option<&str>> = before.iter().map(Option::as_deref).collect();
    // A file is moved only onto a path that is free in the editor and on disk, and inside the workspace.
    disk::plan::move_targets(&plan, &paths_on_disk, convert::path_key, |f, to, target| {
        let open = session.documents.find(&convert::path_key(target));
        config.workspace.check(to, target, open.is_some()).map_err(|r| r.in_file(&f.file_path))?;
        Ok(open.is_some() || disk::read(target)?.is_some())
    })?;
    let outcome = engine::apply_plan(&plan, &texts)?;

    let mut files = Vec::new();
    let mut labels = Vec::new();
    let mut versions = Vec::with_capacity(sources.len());
    let mut uris = Vec::with_capacity(sources.len());
    let mut creates = false;
    let plans_and_texts = plan.files.iter().zip(&before);
    for (((change, source), path), (file_plan, original)) in outcome.files.iter().zip(&sources).zip(&paths_on_disk).zip(plans_and_texts) {
        let version = match source {
            Source::Open { version, .. } => Some(*version),
            Source::Disk { .. } => None,
        };
        versions.push(version);
        uris.push(None);
        let then = match &change.op {
            FileOp::Edit | FileOp::Create => Then::Keep,
            FileOp::Delete => Then::Delete,
            FileOp::MoveTo(to) => Then::RenameTo(convert::file_uri(&paths::to_path(to)?, to)?),
        };
        if change.replacements.is_empty() && !change.created && matches!(then, Then::Keep) {
            continue;
        }
        let file_edit = match source {
            Source::Open { uri, version, rope } => FileEdit {
                uri: convert::parse_uri(uri)?,
                version: Some(*version),
                create: false,
                edits: convert::text_edits(rope, &change.replacements, config.encoding),
                then: then.clone(),
            },
            Source::Disk { text } => {
                // Positions are counted on the text the engine ran on, as the protocol requires.
                let rope = Rope::from_str(text.as_deref().unwrap_or(""));
                creates |= change.created;
                FileEdit {
                    uri: convert::file_uri(path, &change.file_path)?,
                    version: None,
                    create: change.created,
                    edits: convert::text_edits(&rope, &change.replacements, config.encoding),
                    then: then.clone(),
                }
            }
        };
        let mut file_edit = file_edit;
        if matches!(file_edit.then, Then::Delete) {
            // The deletion says it all; the engine has checked that the hunks held the whole text.
            file_edit.edits.clear();
        }
        if matches!(file_edit.then, Then::Keep) {
            *uris.last_mut().expect("pushed above") = Some(file_edit.uri.as_str().to_string());
        }
        if config.change_annotations {
            labels.push(convert::edit_labels(original.as_deref(), file_plan, &plan.options, &change.replacements));
        }
        files.push(file_edit);
    }
    let annotations = config.change_annotations.then(|| convert::Annotations {
        labels,
        needs_confirmation: call.review.unwrap_or(config.review).applies(plan.files.len()),
    });
    let edit = convert::annotated_workspace_edit(files, config.document_changes, annotations);
    // The call's option, else the plan's own field.
    let diagnostics = call.diagnostics.or(plan.options.diagnostics.map(Report::from_plan));
    Ok(Prepared { outcome, before, versions, keys, edit, creates, agent: call.agent, uris, diagnostics })
}

/// `prepare` with the session's current config, a panic turned into `Failure::Internal`, and each
/// interrupted plan it completed or rolled back told to the editor's log (and stderr). Returns the
/// config the plan was checked under.
async fn prepare_logged(
    session: &Session,
    client: &Client,
    command: &str,
    arguments: &[Value],
) -> Result<(Config, Prepared), Failure> {
    let config = session.config();
    let mut recovered = Vec::new();
    // Everything up to the first await is synchronous: the documents are read exactly as the
    // notifications before this command left them.
    let prepared = catch_panic(command, || prepare(session, &config, command, arguments, &mut recovered));
    for r in &recovered {
        log(client, MessageType::INFO, format!("{command}: {}", r.report("before reading this plan's files"))).await;
    }
    let prepared = prepared.map_err(Failure::Internal)?.map_err(Failure::Refused)?;
    Ok((config, prepared))
}

/// The result both commands return: the engine's result object, each file with the version its edit
/// was computed against (`null` for a file the editor has not opened). A workspace edit cannot set a
/// file's mode: a mode the patch gives is reported as not set (`mode_applied: false`, and said in the
/// message), never dropped.
pub fn result_json(prepared: &Prepared) -> PlanResult {
    let mut report = PlanResult::of(&prepared.outcome);
    let mut unset = Vec::new();
    for (f, version) in report.files.iter_mut().zip(&prepared.versions) {
        f.version = Some(*version);
        if let Some(mode) = &f.mode {
            f.mode_applied = Some(false);
            unset.push(format!("{} {mode}", f.file_path));
        }
    }
    if !unset.is_empty() {
        report.message = format!(
            "{}\n\nNot set: the mode{} {} (an editor's workspace edit cannot change a file's mode; run \
             chmod, or apply the patch with `multiedit apply`).",
            report.message,
            if unset.len() == 1 { "" } else { "s" },
            unset.join(", ")
        );
    }
    report
}

/// `{"patch": TEXT, "format"?, "root"?, "match"?}` as the plan it stands for. Relative paths resolve
/// against `root`, else the one workspace folder; with none or several, a relative path is refused and
/// asks for `root`.
pub fn patch_plan(session: &Session, value: &Value) -> Result<engine::Plan, Refusal> {
    let request = formats::PatchRequest::from_value(value, &[])?;
    let fallback = match session.config().workspace.folders() {
        [one] => Some(one.clone()),
        _ => None,
    };
    request.plan(fallback.as_deref())
}
