//! A plan checked against what the user sees (open buffers, else the disk) and turned into the one
//! WorkspaceEdit that carries it out: the part `multiedit.apply` and `multiedit.preview` share.
//!
//! Synchronous and free of awaits: the snapshot it takes is the state after every notification that
//! arrived before the command (`sync.rs`).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use ropey::Rope;
use tower_lsp_server::ls_types::WorkspaceEdit;

use super::capabilities::PREVIEW;

use super::config::Config;
use super::convert::{self, FileEdit, Then};
use super::documents::Document;
use super::now_reads::EditorText;
use super::request::{Call, Origin, PlanCall};
use super::session::Session;
use super::symbols;
use crate::diagnostics::{Edited, Report};
use crate::engine::{self, FileChange, FileOp, Outcome};
use crate::gate::{self, Access, Gate, Who};
use crate::refusal::{Kind, Refusal};
use crate::result::plural;
use crate::symbols::{rename, retain_by, Answers, Expansion, Resolved};
use crate::write::WriteRequest;
use crate::{disk, paths};

/// One file of a validated plan, at the same index as the plan's file and `Outcome::files`' entry.
pub(crate) struct PreparedFile {
    /// The key its document is found under (`Documents::find`).
    pub(crate) key: String,
    /// The text the engine ran on (`None`: the file does not exist).
    pub(crate) before: Option<String>,
    /// The version its edit carries (`None`: the editor has not opened it).
    pub(crate) version: Option<i32>,
    /// The URI its edit addresses (`None`: not edited, or deleted or moved).
    pub(crate) uri: Option<String>,
    /// The URI its document has after the edit: `uri`, or a moved file's new one (`None`: deleted, or
    /// not changed).
    pub(crate) uri_after: Option<String>,
}

/// A validated plan: what the engine computed and the WorkspaceEdit that carries it out.
pub struct Prepared {
    pub(crate) outcome: Outcome,
    /// Per file of the plan, in its order.
    pub(crate) files: Vec<PreparedFile>,
    pub edit: WorkspaceEdit,
    /// The edit creates files.
    pub(crate) creates: bool,
    /// Who sent the plan (the call's `agent` option), if it said.
    pub(crate) agent: Option<String>,
    /// The call's `diagnostics` option (else the client's initialization option holds).
    pub(crate) diagnostics: Option<Report>,
    /// The call's `save` option, else the plan's (else the client's initialization option holds).
    pub(crate) save: Option<engine::Save>,
    /// The user is asked before the edit applies (the call's `review`, else the rule for its origin).
    pub(crate) review: bool,
    /// The plan's rename, counted (`symbols`).
    pub(crate) renamed: Option<rename::Count>,
    /// Why the user must approve this plan whatever the review setting (an agent's write to protected
    /// files, `crate::gate`), in words for the approval; the plan is then applied only once they did.
    pub(crate) ask: Option<String>,
    /// The plan asked to save every file it edits (`"save": "all"`), which an agent may not choose: it
    /// is saved as `clean` instead, and the result says so.
    pub(crate) save_lowered: bool,
}

impl Prepared {
    /// What the editor calls the change (its undo entry, its review): "Claude Code: 3 edits to 2 files".
    pub(crate) fn label(&self) -> String {
        let files = self
            .outcome
            .files
            .iter()
            .filter(|f| f.edits_applied() > 0 || f.op != FileOp::Edit)
            .count();
        let edits: usize = self.outcome.files.iter().map(|f| f.edits_applied()).sum();
        format!(
            "{}: {} to {}",
            self.agent.as_deref().unwrap_or("MultiEdit"),
            plural(edits, "edit"),
            plural(files, "file")
        )
    }

    /// Each file: the engine's change and what the server read and addresses.
    pub(crate) fn each(&self) -> impl Iterator<Item = (&FileChange, &PreparedFile)> {
        self.outcome.files.iter().zip(&self.files)
    }

    /// The documents the editor had open when the plan was checked, with the version it saw.
    pub(crate) fn open_versions(&self) -> impl Iterator<Item = (&str, i32)> {
        self.files
            .iter()
            .filter_map(|f| Some((f.key.as_str(), f.version?)))
    }

    /// The files whose edit stays in the editor (not deleted or moved), as the diagnostics delta reads
    /// them: each in the text the editor made of it (`editor`, per file as `now_reads::compare` gives it).
    pub(crate) fn edited<'a>(&'a self, editor: &'a [Option<EditorText>]) -> Vec<Edited<'a>> {
        self.each()
            .zip(editor)
            .filter_map(|((change, file), now)| {
                Some(Edited {
                    file_path: &change.file_path,
                    uri: file.uri.clone()?,
                    before: file.before.as_deref().unwrap_or(""),
                    after: now.as_ref().map_or(&change.text, |n| &n.text),
                    replacements: &change.replacements,
                    then: now.as_ref().map_or(&[], |n| &n.changes),
                    differs: false,
                    was_open: file.version.is_some(),
                })
            })
            .collect()
    }
}

/// Where a file's text came from.
enum Source {
    /// The editor's buffer, at this version.
    Open {
        uri: String,
        version: i32,
        rope: Rope,
    },
    /// The file on disk: its text is the file's `before` (`None`: it does not exist).
    Disk,
}

/// A file of the plan as read, one per file of the plan in its order: where it is on disk, where its
/// text came from, and what the server knows of it (`Prepared::files`, once the edit is built).
struct Read {
    path: PathBuf,
    source: Source,
    file: PreparedFile,
}

/// The synchronous step of an editor's own `command` (`multiedit.apply`, `multiedit.preview`) on its
/// `arguments`, for a plan that needs no language server (no symbol, no rename): decoded, then
/// `prepare`d. What the benches measure (`server/benches/lsp.rs`).
pub fn prepare_command(
    session: &Session,
    config: &Config,
    command: &str,
    arguments: &[serde_json::Value],
) -> Result<Prepared, Refusal> {
    let request = super::request::decode(config, command, arguments)?;
    let answers = Answers::default();
    prepare(
        session,
        config,
        Origin::Editor,
        command,
        &request,
        &answers,
        &mut Vec::new(),
    )
}

/// Validates the plan of `command`'s `arguments` against what the user sees and builds the
/// WorkspaceEdit. `answers`: what the editor's language servers said of the plan's symbols and rename
/// (`symbols::gather`), computed on the texts this reads. An interrupted `multiedit apply` met in a folder of the plan is completed or rolled
/// back before that folder is read (`multiedit.apply`; a preview only reports it), and added to
/// `recovered` (kept even when the plan is then refused: it happened either way), as is a
/// journal-like file it ignored.
///
/// In steps: the plan judged by the gate (`judged`), its files read (`read_files`), its symbol edits
/// and rename made exact (`resolve`), run through the engine (`run_engine`) and turned into one
/// WorkspaceEdit (`file_edits`). None awaits, so the snapshot they read is the state the
/// notifications before the command left (`sync.rs`).
pub(crate) fn prepare(
    session: &Session,
    config: &Config,
    origin: Origin,
    command: &str,
    request: &PlanCall,
    answers: &Answers,
    recovered: &mut Vec<disk::Recovered>,
) -> Result<Prepared, Refusal> {
    let mut plan = request.change.plan().clone();
    let call = &request.options;
    let named = plan.files.len();
    let expansion = symbols::expand(&mut plan, answers, config, session)?;
    let (gate, opt_out) = gate_for(config, origin, call);
    let protected = judged(&gate, opt_out, &plan, named, command, config)?;
    // A whole-file write (`crate::write`): its text checked against what the user sees, as read below.
    let write = request.change.write();
    let mut read = read_files(session, config, command, &plan, recovered)?;
    let resolved = resolve(&mut plan, &mut read, answers, &expansion, config)?;
    let outcome = run_engine(session, config, &plan, &read, write, &resolved)?;
    let FileEdits {
        edits,
        labels,
        creates,
    } = file_edits(&outcome, &plan, &mut read, config)?;
    // A plan names its own review, else the rule for its origin holds; protected files always ask.
    let rule = match origin {
        Origin::Editor => config.review,
        Origin::Bridge(_) => config.agent_review,
    };
    let review = call.review.unwrap_or(rule).applies(plan.files.len()) || !protected.is_empty();
    let annotations = config.change_annotations.then_some(convert::Annotations {
        labels,
        // An editor that asks the one approval itself (`multiedit/approve`) gets an edit to apply as is.
        needs_confirmation: review && !config.approve_support,
    });
    let edit = convert::annotated_workspace_edit(edits, config.document_changes, annotations);
    // The call's option, else the plan's own field.
    let diagnostics = call
        .diagnostics
        .or(plan.options.diagnostics.map(Report::from_plan));
    // Saving the user's unsaved work is the user's setting, never an agent's plan's choice.
    let save_lowered = gate.who == Who::Agent
        && call.save.is_none()
        && plan.options.save == Some(engine::Save::All);
    let save = call.save.or(if save_lowered {
        Some(engine::Save::Clean)
    } else {
        plan.options.save
    });
    Ok(Prepared {
        outcome,
        files: read.into_iter().map(|r| r.file).collect(),
        edit,
        creates,
        agent: call.agent.clone(),
        diagnostics,
        save,
        review,
        renamed: resolved.count,
        ask: (!protected.is_empty()).then(|| gate::ask_reason(&protected)),
        save_lowered,
    })
}

/// The one gate (`crate::gate`) for this call, and how its user lifts a rule: an agent is a plan
/// through the bridge or one that names its agent.
fn gate_for<'a>(
    config: &'a Config,
    origin: Origin,
    call: &Call,
) -> (Gate<'a>, &'static gate::OptOut) {
    let gate = Gate {
        who: if origin.is_bridge() || call.agent.is_some() {
            Who::Agent
        } else {
            Who::Person
        },
        allow: match origin {
            Origin::Bridge(allow) => config.allow.or(allow),
            Origin::Editor => config.allow,
        },
        folders: Some(config.workspace.folders_held()),
    };
    let opt_out = if origin.is_bridge() {
        &gate::BRIDGE_OPT_OUT
    } else {
        &gate::LSP_OPT_OUT
    };
    (gate, opt_out)
}

/// The plan's paths judged by `gate` (the files past the `named` ones are those a rename reaches):
/// `Err` for one that may not be touched; else the protected files an agent's write reaches, which
/// the user must approve (refused where the editor cannot ask).
fn judged(
    gate: &Gate,
    opt_out: &gate::OptOut,
    plan: &engine::Plan,
    named: usize,
    command: &str,
    config: &Config,
) -> Result<Vec<gate::Protected>, Refusal> {
    let access = if command == PREVIEW {
        Access::Preview
    } else {
        Access::Write
    };
    // What a rename reaches is the language server's choice, not the sender's: never .git.
    gate.refuse_reached(
        plan.files[named..].iter().map(|f| f.file_path.as_str()),
        opt_out,
    )?;
    let protected = gate.judge(access, paths::names(plan), opt_out)?;
    if !protected.is_empty() && !config.approve_support {
        return Err(gate::refuse_protected(&protected, opt_out));
    }
    Ok(protected)
}

/// Each file of `plan` as the user sees it (`read_one`), in the plan's order, once it is found inside
/// the workspace (`confined`) and an interrupted plan in its folder was dealt with (each folder once,
/// however many files it holds); two spellings of one file are refused.
fn read_files(
    session: &Session,
    config: &Config,
    command: &str,
    plan: &engine::Plan,
    recovered: &mut Vec<disk::Recovered>,
) -> Result<Vec<Read>, Refusal> {
    let mut read = Vec::with_capacity(plan.files.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut recovered_in = BTreeSet::new();
    for (i, f) in plan.files.iter().enumerate() {
        let path = paths::to_path(&f.file_path)?;
        let key = convert::path_key(&path);
        // Two spellings of one file (a link and its target, a URI and a path) must not become two
        // edits of one document.
        let identity = std::fs::canonicalize(&path)
            .map(|p| convert::path_key(&p))
            .unwrap_or_else(|_| key.clone());
        if let Some(j) = seen.insert(identity, i) {
            return Err(Refusal::input(format!(
                "MultiEdit failed due to the following issue:\n`files[{i}].file_path` \
                 ({}) names the same file as `files[{j}].file_path` ({}): put all edits of one file in one entry",
                f.file_path, plan.files[j].file_path
            ))
            .in_file(&f.file_path));
        }
        let open = session.documents.find(&key);
        let real = confined(config, &f.file_path, &path, open.is_some())?;
        // A preview writes nothing: it reports an interrupted plan rather than finishing it.
        disk::journal::recover_into(
            recovered,
            std::slice::from_ref(&path),
            command == PREVIEW,
            &mut recovered_in,
        )?;
        read.push(read_one(&f.file_path, path, &real, key, open)?);
    }
    Ok(read)
}

/// `path`, the plan's `file_path`, resolved once and confined on that resolution (and as named): it
/// is then read there without following a link, so a folder swapped for a link after the check is
/// refused, never followed out of the workspace. `open`: the editor holds it.
fn confined(config: &Config, file_path: &str, path: &Path, open: bool) -> Result<PathBuf, Refusal> {
    let real = disk::resolve(path, false);
    config
        .workspace
        .check(file_path, path, open)
        .and_then(|()| config.workspace.check(file_path, &real, open))?;
    Ok(real)
}

/// The file `file_path` (at `path`, resolved as `real`, its document under `key`) as the user sees
/// it: the editor's buffer (`open`), else the disk.
fn read_one(
    file_path: &str,
    path: PathBuf,
    real: &Path,
    key: String,
    open: Option<Document>,
) -> Result<Read, Refusal> {
    let (source, before, version) = match open {
        Some(doc) => {
            let before = Some(doc.rope.to_string());
            (
                Source::Open {
                    uri: doc.uri,
                    version: doc.version,
                    rope: doc.rope,
                },
                before,
                Some(doc.version),
            )
        }
        None => {
            let bytes = disk::read_at(&path, Some(real)).map_err(|r| r.in_file(file_path))?;
            let text = bytes
                .map(|b| engine::decode(file_path, &b).map(str::to_string))
                .transpose()?;
            (Source::Disk, text, None)
        }
    };
    Ok(Read {
        path,
        source,
        file: PreparedFile {
            key,
            before,
            version,
            uri: None,
            uri_after: None,
        },
    })
}

/// Every symbol edit and the rename made exact spans of the texts read (`crate::symbols::resolve`);
/// the files the rename reaches without changing them left out of the plan and of `read` alike.
fn resolve(
    plan: &mut engine::Plan,
    read: &mut Vec<Read>,
    answers: &Answers,
    expansion: &Expansion,
    config: &Config,
) -> Result<Resolved, Refusal> {
    let versions: Vec<Option<i32>> = read.iter().map(|r| r.file.version).collect();
    let texts: Vec<Option<&str>> = read.iter().map(|r| r.file.before.as_deref()).collect();
    let mut resolved =
        crate::symbols::resolve(plan, answers, expansion, &texts, &versions, config.encoding)?;
    if let Some(keep) = resolved.leave_out(plan) {
        retain_by(read, &keep);
    }
    Ok(resolved)
}

/// The engine's outcome on the texts read (a whole-file write's, checked against the text it
/// replaces), numbered as the plan numbers its edits; the links it acts on, where it moves files and
/// the folders it needs checked first, as the disk commit would check them.
fn run_engine(
    session: &Session,
    config: &Config,
    plan: &engine::Plan,
    read: &[Read],
    write: Option<&WriteRequest>,
    resolved: &Resolved,
) -> Result<Outcome, Refusal> {
    let texts: Vec<Option<&str>> = read.iter().map(|r| r.file.before.as_deref()).collect();
    let paths_on_disk: Vec<PathBuf> = read.iter().map(|r| r.path.clone()).collect();
    disk::plan::links_acted_on(plan, &paths_on_disk)?;
    // A file is moved only onto a path that is free in the editor and on disk, and inside the workspace.
    let targets =
        disk::plan::move_targets(plan, &paths_on_disk, convert::path_key, |f, to, target| {
            let open = session.documents.find(&convert::path_key(target));
            config
                .workspace
                .check(to, target, open.is_some())
                .map_err(|r| r.in_file(&f.file_path))?;
            Ok(open.is_some() || disk::read(target)?.is_some())
        })?;
    let mut outcome = match write {
        Some(w) => w.outcome(texts[0], || unsaved(&read[0]))?,
        None => engine::apply_plan(plan, &texts).map_err(|r| {
            resolved.renumber_refusal(unsaved_hint(r.into(), plan, read), &plan.files)
        })?,
    };
    resolved.renumber(&mut outcome);
    editor_can_place(plan, &outcome, &paths_on_disk, &targets)?;
    Ok(outcome)
}

/// The parts of the WorkspaceEdit.
struct FileEdits {
    /// One per file the outcome changes.
    edits: Vec<FileEdit>,
    /// Per edit of `edits`, the labels of its text edits, where the client annotates them.
    labels: Vec<Vec<String>>,
    /// The edit creates files.
    creates: bool,
}

/// The WorkspaceEdit's part for each file the outcome changes (`file_edit`), and its labels; each
/// file's `uri` and `uri_after` filled in.
fn file_edits(
    outcome: &Outcome,
    plan: &engine::Plan,
    read: &mut [Read],
    config: &Config,
) -> Result<FileEdits, Refusal> {
    let mut edits = Vec::new();
    let mut labels = Vec::new();
    let mut creates = false;
    for ((change, file_plan), read) in outcome.files.iter().zip(&plan.files).zip(read) {
        let Some(file_edit) = file_edit(change, read, config)? else {
            continue;
        };
        creates |= file_edit.create;
        let file = &mut read.file;
        match &file_edit.then {
            Then::Keep => {
                file.uri = Some(file_edit.uri.as_str().to_string());
                file.uri_after = file.uri.clone();
            }
            Then::RenameTo(to) => file.uri_after = Some(to.as_str().to_string()),
            Then::Delete => {}
        }
        if config.change_annotations {
            labels.push(convert::edit_labels(
                file.before.as_deref(),
                file_plan,
                &plan.options,
                &change.replacements,
            ));
        }
        edits.push(file_edit);
    }
    Ok(FileEdits {
        edits,
        labels,
        creates,
    })
}

/// The edit of one file: its text edits, their positions counted on the text the engine ran on (as
/// the protocol requires), and what follows them; `None` when the outcome leaves the file as it is.
fn file_edit(
    change: &FileChange,
    read: &Read,
    config: &Config,
) -> Result<Option<FileEdit>, Refusal> {
    let then = match &change.op {
        FileOp::Edit | FileOp::Create => Then::Keep,
        FileOp::Delete => Then::Delete,
        FileOp::MoveTo(to) => Then::RenameTo(convert::file_uri(&paths::to_path(to)?, to)?),
    };
    if change.replacements.is_empty() && !change.created && matches!(then, Then::Keep) {
        return Ok(None);
    }
    let mut file_edit = match &read.source {
        Source::Open { uri, version, rope } => FileEdit {
            uri: convert::parse_uri(uri)?,
            version: Some(*version),
            create: false,
            edits: convert::text_edits(rope, &change.replacements, config.encoding),
            then,
        },
        Source::Disk => {
            let rope = Rope::from_str(read.file.before.as_deref().unwrap_or(""));
            FileEdit {
                uri: convert::file_uri(&read.path, &change.file_path)?,
                version: None,
                create: change.created,
                edits: convert::text_edits(&rope, &change.replacements, config.encoding),
                then,
            }
        }
    };
    if matches!(file_edit.then, Then::Delete) {
        // The deletion says it all; the engine has checked that the hunks held the whole text.
        file_edit.edits.clear();
    }
    Ok(Some(file_edit))
}

/// A refusal about text the plan did not find, in a file the editor holds with changes the disk lacks:
/// the agent probably wrote its `old_string` from the disk (its own read tools see nothing else), so the
/// hint says so and names the tool that reads what the user sees.
fn unsaved_hint(r: Refusal, plan: &engine::Plan, read: &[Read]) -> Refusal {
    if !matches!(
        r.kind,
        Kind::Engine(engine::Kind::NotFound)
            | Kind::Engine(engine::Kind::Ambiguous)
            | Kind::Engine(engine::Kind::CountMismatch)
    ) {
        return r;
    }
    let Some(i) = plan
        .files
        .iter()
        .position(|f| Some(f.file_path.as_str()) == r.file_path.as_deref())
    else {
        return r;
    };
    if !unsaved(&read[i]) {
        return r;
    }
    let note = "The editor holds unsaved changes to this file that the disk lacks, and the plan was checked against \
                the editor's text: read it as the editor has it (the multiedit_read tool) before writing old_string.";
    let hint = match &r.hint {
        Some(h) => format!("{h}\n{note}"),
        None => note.to_string(),
    };
    r.with_hint(Some(hint))
}

/// Whether the file is an editor's buffer holding changes that the disk lacks.
fn unsaved(read: &Read) -> bool {
    let Read {
        path,
        source: Source::Open { rope, .. },
        ..
    } = read
    else {
        return false;
    };
    match disk::read(path) {
        Ok(Some(bytes)) => *rope != String::from_utf8_lossy(&bytes).as_ref(),
        _ => true,
    }
}

/// New files and move targets checked as the disk commit checks them (`disk::plan::folder_steps`): never
/// under a file the plan keeps, nor where a folder holds what the plan keeps. A workspace edit cannot
/// remove a folder, and deletes and creates in the plan's order, so a file and a folder trading names
/// are refused here, with the way that can do it.
fn editor_can_place(
    plan: &engine::Plan,
    outcome: &engine::Outcome,
    paths: &[PathBuf],
    targets: &[Option<PathBuf>],
) -> Result<(), Refusal> {
    let deleted = disk::plan::vacated(plan, paths);
    let steps = disk::plan::folder_steps(outcome, paths, targets, &deleted)?;
    let traded = match (
        steps.remove.first(),
        steps.make.iter().find(|m| deleted.contains(*m)),
    ) {
        (Some(folder), _) => Some(format!(
            "replaces the folder {} with a file",
            folder.display()
        )),
        (None, Some(file)) => Some(format!(
            "replaces the file {} with a folder",
            file.display()
        )),
        (None, None) => None,
    };
    match traded {
        None => Ok(()),
        Some(what) => Err(Refusal::of(
            engine::Kind::NotApplied,
            format!(
                "The plan {what}; an editor's workspace edit cannot remove a folder or order that exchange. \
                 Nothing was changed. Apply the patch with `multiedit apply` instead."
            ),
        )),
    }
}
