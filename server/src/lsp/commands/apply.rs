//! `multiedit.apply`: validates the plan, hands the editor ONE WorkspaceEdit through
//! `workspace/applyEdit`, and reports the engine's result once the editor has applied it.
//!
//! The server never changes its own copy of a document here: the editor applies the edit and then
//! sends the didChange like for any other change, so the server's text can never drift from the
//! buffer, whatever the editor made of the edit.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::{ApplyWorkspaceEditParams, MessageType};
use tower_lsp_server::Client;

use super::shared::{decode, prepare_logged, result_json, Failure};
use crate::engine;
use crate::engine::FileOp;
use crate::lsp::capabilities::APPLY;
use crate::lsp::config::Config;
use crate::lsp::diagnostics::{self, Later};
use crate::lsp::logging::log;
use crate::lsp::now_reads::EditorText;
use crate::lsp::prepare::Prepared;
use crate::lsp::request::Origin;
use crate::lsp::save::{self, Saving};
use crate::lsp::session::Session;
use crate::protocol::ext::{ApproveAnswer, ApproveParams, ApproveRequest, Decision};
use crate::refusal::{Kind, Refusal};

/// Told to an agent whose plan asked `"save": "all"`.
const SAVE_LOWERED: &str = "The plan asked to save every file it edits (\"save\": \"all\"), which only the user's own \
                            setting may choose: files holding unsaved changes of the user's were left unsaved, as \
                            with \"save\": \"clean\".";

fn not_applied(message: String) -> Failure {
    Failure::Refused(Refusal::of(engine::Kind::NotApplied, message))
}

/// An agent's call through the bridge is answered within `AGENT_CALL`, whatever the editor's own
/// timeout (`applyEditTimeoutMs`, which a reviewing editor sets long): its turn behind other plans at
/// most `AGENT_TURN`, the user's approval at most `AGENT_APPROVAL`, and the editor's answer to the edit
/// whatever is left but `AFTER_APPLY`, kept for the save (`save::SAVE_BOUND`) and the diagnostics. The
/// caller (`multiedit mcp`) waits `crate::bridge::wire::AGENT_ANSWER`, a little more.
pub(crate) const AGENT_CALL: Duration = Duration::from_secs(50);
pub(crate) const AGENT_TURN: Duration = Duration::from_secs(5);
const AFTER_APPLY: Duration = Duration::from_secs(10);

/// `multiedit.apply`, as named steps: the turn behind other plans, the plan prepared (and prepared
/// again when the editor refused it because the user typed), the user's approval, the edit sent, and
/// once applied the save, the texts and the diagnostics reported.
pub(crate) async fn run(
    session: &Arc<Session>,
    client: &Client,
    origin: Origin,
    caller: Option<&str>,
    arguments: &[Value],
) -> Result<Value, Failure> {
    let run = Run {
        session,
        client,
        origin,
        caller,
        deadline: tokio::time::Instant::now() + AGENT_CALL,
    };
    run.can_apply()?;
    let turn = run.turn().await?;
    // Decoded once: each check again below works on the same typed plan.
    let request = decode(session, APPLY, arguments)?;
    let mut rechecks = 0;
    // The plan as it was checked before the editor refused it: what the user's typing changed is
    // named against it.
    let mut checked: Option<Prepared> = None;
    loop {
        let (config, prepared) = run.prepare(&request, rechecks, checked.as_ref()).await?;
        check_abilities(&config, &prepared)?;
        run.approve(&config, &prepared).await?;
        let before = run.before_edit(&config, &prepared).await;
        // Subscribed before sending, so a didChange that arrives with the answer is not missed.
        let mut changes = session.documents.watch();
        let response = run.send(&config, &prepared).await?;
        if response.applied {
            let applied = Applied {
                config,
                prepared,
                before,
                rechecks,
            };
            return Ok(run.report(turn, applied, &mut changes).await);
        }
        // A document the plan was checked against changed before the editor applied it (the user
        // typed): the editor refused the whole edit, so the plan is checked again against the new
        // text. Any other refusal (the user declined, the editor could not) is final.
        if rechecks < RECHECKS && moved_on(session, &prepared, &mut changes, false, SETTLE).await {
            rechecks += 1;
            log(client, MessageType::LOG, format!("{APPLY}: a document changed before the editor applied the plan; checking it again")).await;
            checked = Some(prepared);
            continue;
        }
        return Err(Failure::Refused(not_applied_by_editor(
            response.failure_reason,
            &prepared,
            &config,
        )));
    }
}

/// One `multiedit.apply`: who asked, and by when an agent's call must be answered.
struct Run<'a> {
    session: &'a Arc<Session>,
    client: &'a Client,
    origin: Origin,
    caller: Option<&'a str>,
    deadline: tokio::time::Instant,
}

/// What is asked of the editor before the edit, for after it: the diagnostics it showed, which
/// documents held unsaved changes.
struct BeforeEdit {
    watch: Option<diagnostics::Watch>,
    saving: Saving,
}

/// A plan the editor applied, with what the steps before it left.
struct Applied {
    config: Config,
    prepared: Prepared,
    before: BeforeEdit,
    rechecks: usize,
}

impl Run<'_> {
    /// Refuses at once an editor that cannot apply a WorkspaceEdit.
    fn can_apply(&self) -> Result<(), Failure> {
        if self.session.config().apply_edit {
            return Ok(());
        }
        Err(not_applied(format!(
            "The editor does not support workspace/applyEdit (it did not set the client capability \
             workspace.applyEdit), so {APPLY} cannot hand it the change. Nothing was changed. Run \
             multiedit.preview instead: it returns the WorkspaceEdit and a diff without applying anything."
        )))
    }

    /// The turn behind other plans, so the second of two plans for one file is checked against the
    /// first's result. The wait is bounded like the editor's answer, so a caller that gave up is never
    /// served later.
    async fn turn(&self) -> Result<tokio::sync::MutexGuard<'_, ()>, Failure> {
        let wait = match self.origin {
            Origin::Editor => self.session.config().apply_edit_timeout,
            Origin::Bridge(_) => self.session.config().apply_edit_timeout.min(AGENT_TURN),
        };
        tokio::time::timeout(wait, self.session.plans.lock())
            .await
            .map_err(|_| {
                Failure::Refused(Refusal::new(
                    Kind::Busy,
                    format!(
                        "Another plan is still being applied in the editor (this one waited {} ms for its turn). \
                         Nothing was changed. Try again in a moment.",
                        wait.as_millis()
                    ),
                ))
            })
    }

    /// The plan checked against the documents as they are; checked again after the user typed
    /// (`rechecks`), a refusal names what the typing changed against the plan as `checked` before.
    async fn prepare(
        &self,
        request: &crate::lsp::request::PlanCall,
        rechecks: usize,
        checked: Option<&Prepared>,
    ) -> Result<(Config, Prepared), Failure> {
        match prepare_logged(self.session, self.client, APPLY, self.origin, request).await {
            Err(Failure::Refused(r)) if rechecks > 0 => Err(Failure::Refused(changed_meanwhile(
                r,
                checked,
                self.session,
            ))),
            other => other,
        }
    }

    /// One approval for the whole plan, asked by an editor that can (`multiedit/approve`); a plan
    /// checked again after the user typed is asked again, with the new diff: the user's own text typed
    /// while the first diff was open is never changed without a second look.
    async fn approve(&self, config: &Config, prepared: &Prepared) -> Result<(), Failure> {
        if !(prepared.review || prepared.ask.is_some()) || !config.approve_support {
            return Ok(());
        }
        let bound = if self.origin.is_bridge() {
            config.apply_edit_timeout.min(config.agent_approval)
        } else {
            config.apply_edit_timeout
        };
        approve(self.client, prepared, bound).await
    }

    /// Asks a client that reports diagnostics for those of the files before the edit, and which
    /// documents hold unsaved changes of the user's, before the edit makes them all dirty.
    async fn before_edit(&self, config: &Config, prepared: &Prepared) -> BeforeEdit {
        let uris: Vec<String> = prepared
            .files
            .iter()
            .filter_map(|f| f.uri.clone())
            .collect();
        let open: Vec<String> = prepared
            .files
            .iter()
            .filter(|f| f.version.is_some())
            .filter_map(|f| f.uri.clone())
            .collect();
        let policy = prepared.save.unwrap_or(config.save);
        // Two questions to the editor, neither waiting on the other's answer.
        let (watch, saving) = tokio::join!(
            diagnostics::Watch::start(self.client, config.diagnostics, prepared.diagnostics, uris),
            Saving::start(self.client, config.save_support, policy, open),
        );
        BeforeEdit { watch, saving }
    }

    /// The edit sent as `workspace/applyEdit`, labelled as the editor shows it in its undo and review.
    /// An agent does not wait on the editor longer than its call may last; a review in the editor
    /// (change annotations) waits for the user as long as an approval would. A client that never
    /// answers must not hold this handler, one of the few that run at once, forever.
    async fn send(
        &self,
        config: &Config,
        prepared: &Prepared,
    ) -> Result<tower_lsp_server::ls_types::ApplyWorkspaceEditResponse, Failure> {
        let params = ApplyWorkspaceEditParams {
            label: Some(prepared.label()),
            edit: prepared.edit.clone(),
        };
        let timeout = match self.origin {
            Origin::Editor => config.apply_edit_timeout,
            Origin::Bridge(_) => {
                let left = self
                    .deadline
                    .saturating_duration_since(tokio::time::Instant::now())
                    .saturating_sub(AFTER_APPLY);
                config
                    .apply_edit_timeout
                    .min(left)
                    .max(Duration::from_secs(1))
            }
        };
        let answer = tokio::time::timeout(
            timeout,
            self.client.send_request::<ApplyWorkspaceEdit>(params),
        )
        .await;
        match answer {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(not_applied(format!(
                "The editor answered workspace/applyEdit with an error ({}), so it did not apply the change. \
                 Nothing was changed; run the plan again.",
                e.message
            ))),
            Err(_) => Err(not_applied(format!(
                "The editor did not answer workspace/applyEdit within {} ms. Whether it applied the change is \
                 unknown: check the documents before running the plan again.",
                timeout.as_millis()
            ))),
        }
    }

    /// Once the editor applied the plan: its didChange waited for, the files saved, the texts they now
    /// hold, the turn handed on, then the diagnostics; the result.
    async fn report(
        &self,
        turn: tokio::sync::MutexGuard<'_, ()>,
        applied: Applied,
        changes: &mut watch::Receiver<u64>,
    ) -> Value {
        let Applied {
            config,
            prepared,
            before,
            rechecks,
        } = applied;
        let session = self.session;
        // The next plan in line must see this one's result: wait (briefly) for its didChange.
        moved_on(session, &prepared, changes, true, SETTLE).await;
        let mut result = result_json(&prepared);
        // The editor's own caller learns what it applied from the answer (its changes are
        // highlighted): nothing kept aside between the edit and the answer, which another plan could
        // overwrite meanwhile.
        if self.origin == Origin::Editor {
            result.edit = Some(prepared.edit.clone());
            result.label = Some(prepared.label());
        }
        self.save(&config, &prepared, before.saving, &mut result)
            .await;
        let editor = editor_texts(session, &prepared);
        let after = texts_after(session, &prepared);
        result.add_sha256(after.iter().map(Option::as_deref));
        // The next plan may go on while this one waits for the language servers.
        drop(turn);
        if rechecks > 0 {
            result.rechecked = Some(rechecks);
        }
        let files = prepared.outcome.files.iter().zip(&editor);
        result.add_now_reads(
            files.flat_map(|(change, e)| e.iter().flat_map(|e| e.now_reads(&change.file_path))),
        );
        if let Some(watch) = before.watch {
            let edited = prepared.edited(&editor);
            let later = self.caller.map(|caller| Later {
                session: session.clone(),
                caller: caller.to_string(),
                label: prepared.label(),
            });
            let folders = config.workspace.folders();
            let docs = &session.documents;
            watch
                .finish(
                    docs,
                    self.client,
                    config.encoding,
                    folders,
                    edited,
                    later,
                    &mut result,
                )
                .await;
        }
        self.log_applied(&prepared).await;
        result.to_value()
    }

    /// Saved before the next plan goes on, so that it is checked against the saved text (a save
    /// participant may have changed it), and before `now_reads`, so that it reports that text.
    async fn save(
        &self,
        config: &Config,
        prepared: &Prepared,
        saving: Saving,
        result: &mut crate::result::PlanResult,
    ) {
        let name = config.client_name.as_deref().unwrap_or("the editor");
        let targets = save::targets(
            prepared
                .each()
                .enumerate()
                .map(|(i, (change, file))| (i, change, file.uri_after.clone())),
        );
        let folders = config.workspace.folders();
        saving
            .finish(
                &self.session.documents,
                self.client,
                name,
                folders,
                &targets,
                result,
            )
            .await;
        if prepared.save_lowered {
            let said = result
                .on_disk_text
                .take()
                .map(|t| format!("{t} "))
                .unwrap_or_default();
            result.on_disk_text = Some(format!("{said}{SAVE_LOWERED}"));
        }
    }

    /// One line per file in the editor's log: the full report, with every old and new string, goes to
    /// the caller.
    async fn log_applied(&self, prepared: &Prepared) {
        let summary: Vec<String> = prepared
            .outcome
            .files
            .iter()
            .map(|f| format!("{} edit(s) to {}", f.edits_applied(), f.file_path))
            .collect();
        let by = prepared
            .agent
            .as_ref()
            .map(|a| format!(" for {a}"))
            .unwrap_or_default();
        let said = format!("{APPLY}: applied {}{by}", summary.join(", "));
        log(self.client, MessageType::LOG, said).await;
    }
}

/// Why the editor's answer to the edit, `applied: false` with no document changed, refuses it: its
/// own reason, the user's decline in its review, or no reason.
fn not_applied_by_editor(reason: Option<String>, prepared: &Prepared, config: &Config) -> Refusal {
    match (reason, prepared.review && !config.approve_support) {
        (Some(reason), _) => Refusal::of(
            engine::Kind::NotApplied,
            format!("The editor did not apply the change (the editor said: {reason}). Nothing was changed."),
        ),
        (None, true) => Refusal::new(
            Kind::Declined,
            format!(
                "The user declined the change in the editor's review ({}), or left every edit of it out. Nothing \
                 was changed. Do not send it again unchanged: ask the user what they want instead.",
                prepared.label()
            ),
        ),
        (None, false) => Refusal::of(
            engine::Kind::NotApplied,
            "The editor did not apply the change and did not say why; no document changed since the plan \
             was checked. Nothing was changed."
                .to_string(),
        ),
    }
}

/// Asks the editor for the user's one approval of the whole plan; `Err` with the refusal to answer when
/// the user discarded it or did not decide within `bound` (then it is never applied: this command is
/// done with it, whatever the editor answers later).
async fn approve(client: &Client, prepared: &Prepared, bound: Duration) -> Result<(), Failure> {
    let params = ApproveParams {
        label: prepared.label(),
        agent: prepared.agent.clone(),
        reason: prepared.ask.clone(),
        edit: prepared.edit.clone(),
        timeout_ms: bound.as_millis() as u64,
    };
    match tokio::time::timeout(bound, client.send_request::<ApproveRequest>(params)).await {
        Ok(Ok(ApproveAnswer { decision: Decision::Apply })) => Ok(()),
        Ok(Ok(ApproveAnswer { decision: Decision::Discard })) => Err(Failure::Refused(Refusal::new(
            Kind::Declined,
            format!(
                "The user discarded the change in the editor ({}). Nothing was changed. Do not send it again \
                 unchanged: ask the user what they want instead.",
                prepared.label()
            ),
        ))),
        Ok(Err(e)) => Err(not_applied(format!(
            "The editor could not ask the user to approve the change ({}). Nothing was changed.",
            e.message
        ))),
        Err(_) => Err(Failure::Refused(Refusal::new(
            Kind::Undecided,
            format!(
                "The user did not decide on the change within {}, so it was withdrawn from the editor and will not be \
                 applied. Nothing was changed. Ask the user, then send the plan again if they want it.",
                if bound.subsec_millis() == 0 { format!("{} s", bound.as_secs()) } else { format!("{} ms", bound.as_millis()) }
            ),
        ))),
    }
}

/// How many times a plan is checked again after the editor refused it because a document changed.
const RECHECKS: usize = 3;
/// How long to wait for the didChange that follows (or explains) the editor's answer. Editors send it
/// before or with the answer; the bound only matters for one that never does.
const SETTLE: Duration = Duration::from_millis(500);

/// Waits, at most `bound`, until the documents the editor had open when the plan was checked have
/// moved on (another version, or closed): `every` one of them (after an applied edit: each gets its
/// didChange) or any one (after a refusal: the user's typing that explains it). Files that were not
/// open have no version to wait for. Returns whether they moved.
async fn moved_on(
    session: &Session,
    prepared: &Prepared,
    changes: &mut watch::Receiver<u64>,
    every: bool,
    bound: Duration,
) -> bool {
    let open: Vec<(&str, i32)> = prepared.open_versions().collect();
    if open.is_empty() {
        return false;
    }
    let moved = |(key, version): &(&str, i32)| {
        session
            .documents
            .find(key)
            .is_none_or(|d| d.version != *version)
    };
    let wait = async {
        loop {
            if (every && open.iter().all(moved)) || (!every && open.iter().any(moved)) {
                return true;
            }
            if changes.changed().await.is_err() {
                return false;
            }
        }
    };
    tokio::time::timeout(bound, wait).await.unwrap_or(false)
}

/// Per file of the plan, the editor's text where it is not the plan's (its formatter ran on the edit,
/// say), read once the editor answered and its didChange arrived. A file the editor does not hold, or
/// one deleted or moved, has none.
fn editor_texts(session: &Session, prepared: &Prepared) -> Vec<Option<EditorText>> {
    prepared
        .each()
        .map(|(change, file)| {
            file.uri.as_ref()?;
            let doc = session.documents.find(&file.key)?;
            EditorText::compare(
                &doc.rope,
                &change.text,
                file.before.as_deref(),
                &change.replacements,
            )
        })
        .collect()
}

/// Per file of the plan, its text once the editor applied (and, where it did, saved) the edit: the
/// document the editor holds, a formatter's or save participant's changes included, else the plan's
/// text; `None` for a deleted file. Their sha256 is what `multiedit_read` shows next and
/// `multiedit_write` takes.
fn texts_after(session: &Session, prepared: &Prepared) -> Vec<Option<String>> {
    prepared
        .each()
        .map(|(change, file)| {
            if change.op == FileOp::Delete {
                return None;
            }
            let key = match &file.uri_after {
                Some(uri) => crate::lsp::convert::uri_key(uri),
                None => file.key.clone(),
            };
            Some(match session.documents.find(&key) {
                Some(doc) => doc.rope.to_string(),
                None => change.text.clone(),
            })
        })
        .collect()
}

/// A plan refused on its second check: the refusal says why the first check passed. Where the text
/// old_string needs was changed past recognition ("No line of the file resembles..."), the hint names
/// what the document holds there now, as a refusal against a file names the closest text.
fn changed_meanwhile(mut r: Refusal, checked: Option<&Prepared>, session: &Session) -> Refusal {
    r.message = format!(
        "A document changed while the editor was applying the plan; checked again against its new text: {}",
        r.message
    );
    let unhelpful = r
        .hint
        .as_deref()
        .is_none_or(|h| h.starts_with("No line of the file resembles"));
    if r.kind == engine::Kind::NotFound && unhelpful {
        if let Some(hint) = checked.and_then(|p| typed_over(p, &r, session)) {
            r.hint = Some(hint);
        }
    }
    r
}

/// The lines of the refused file that changed since `checked` was checked against it, nearest to
/// where the refused edit's old_string was then, as the hint says them.
fn typed_over(checked: &Prepared, r: &Refusal, session: &Session) -> Option<String> {
    let (change, file) = checked
        .each()
        .find(|(c, _)| r.file_path.as_deref() == Some(c.file_path.as_str()))?;
    let before = file.before.as_deref()?;
    let now = session.documents.find(&file.key)?.rope.to_string();
    let old = r
        .edit_index
        .and_then(|i| change.applied.iter().find(|e| e.edit_index == i))
        .map(|e| e.old_string.as_str());
    let near = old
        .and_then(|o| o.lines().find(|l| !l.trim().is_empty()))
        .and_then(|l| before.find(l.trim()));
    let (first, last, text) = crate::lsp::now_reads::changed_lines(before, &now, near)?;
    let at = if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    };
    Some(format!("The document changed at {at} while the plan was being applied. The file has there now:\n{text}"))
}

/// Refuses a plan whose file operations the editor cannot carry out.
fn check_abilities(config: &Config, prepared: &Prepared) -> Result<(), Failure> {
    if prepared.creates && !(config.document_changes && config.create_files) {
        let created: Vec<&str> = prepared
            .outcome
            .files
            .iter()
            .filter(|f| f.created)
            .map(|f| f.file_path.as_str())
            .collect();
        return Err(not_applied(format!(
            "The plan creates {}, but the editor cannot create files through a workspace edit (its client \
             capabilities lack workspace.workspaceEdit.documentChanges or \"create\" in resourceOperations). \
             Nothing was changed. Create the file first, then run the plan with an empty first old_string.",
            created.join(", ")
        )));
    }
    let needs = |op: fn(&FileOp) -> bool| {
        prepared
            .outcome
            .files
            .iter()
            .filter(|f| op(&f.op))
            .map(|f| f.file_path.as_str())
            .collect::<Vec<_>>()
    };
    for (verb, ability, files) in [
        (
            "deletes",
            config.delete_files,
            needs(|o| *o == FileOp::Delete),
        ),
        (
            "renames",
            config.rename_files,
            needs(|o| matches!(o, FileOp::MoveTo(_))),
        ),
    ] {
        if !files.is_empty() && (!config.document_changes || !ability) {
            let op = if verb == "deletes" {
                "delete"
            } else {
                "rename"
            };
            return Err(not_applied(format!(
                "The plan {verb} {}, but the editor cannot {op} files through a workspace edit (its client \
                 capabilities lack workspace.workspaceEdit.documentChanges or \"{op}\" in resourceOperations). \
                 Nothing was changed. Apply the patch with `multiedit apply` instead.",
                files.join(", ")
            )));
        }
    }
    Ok(())
}
