//! Saving what the editor applied, so that the edit is where an agent's next step looks: its tests,
//! its compiler, git and its own file reads all read the disk, not the editor's buffers.
//!
//! The rule (policy `clean`, the default): a file the plan touched is saved when it had no unsaved
//! changes before the plan (a file no buffer held counts as clean), and only while its document is
//! still at the version the edit left it at, so neither the user's unsaved text nor what they type
//! right after the edit is ever written behind their back. `all` saves every file, `never` none. The
//! editor saves (LSP has no request for it, so multiedit defines `multiedit/save`, `ext.rs`): its save
//! participants run as for File > Save (format on save, code actions on save). Whatever happened, each
//! file's `on_disk` says whether its edit is on disk, and `on_disk_text` says it to a model.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use tower_lsp_server::Client;

use super::convert;
use super::documents::Documents;
use crate::engine::{FileOp, Save};
use crate::protocol::ext::{
    SaveAnswer, SaveFile, SaveParams, SavePolicy, SaveRequest, SaveStatus, SavedFile,
};
use crate::result::{OnDisk, PlanResult};

/// How long the editor may take to save the files of one plan (save participants included); a file
/// still saving then is reported as `save_running`, never as saved or failed.
pub(crate) const SAVE_BOUND: Duration = Duration::from_millis(5000);
/// Added to the bound for the answer to travel.
const ANSWER_MARGIN: Duration = Duration::from_millis(1000);
/// The "before" question is answered at once by a well-behaved client.
const BEFORE_TIMEOUT: Duration = Duration::from_millis(1000);
/// How long to wait for the text a save participant made (the didChange before the save's answer).
const SETTLE: Duration = Duration::from_millis(500);

pub(crate) fn policy(p: SavePolicy) -> Save {
    match p {
        SavePolicy::Clean => Save::Clean,
        SavePolicy::All => Save::All,
        SavePolicy::Never => Save::Never,
    }
}

/// One file of an applied plan, as saving sees it.
pub(crate) struct Target {
    /// Index in the plan (and the result's `files`).
    pub(crate) index: usize,
    /// The file's path as the plan named it, for the text.
    pub(crate) file_path: String,
    /// The URI of its document after the edit (a moved file's new one); `None`: nothing stays (deleted).
    pub(crate) uri: Option<String>,
    /// The edit changed its text (a moved file without edits is already where it belongs).
    pub(crate) edited: bool,
}

/// Started before the edit is sent: what the editor said of unsaved changes.
pub(crate) struct Saving {
    policy: Save,
    supported: bool,
    /// URIs (as keys) the editor said had unsaved changes; `None` under `clean` when it did not answer.
    unsaved: Option<HashSet<String>>,
}

impl Saving {
    /// `open`: the URIs of the plan's documents the editor holds (only they can hold unsaved changes).
    pub(crate) async fn start(
        client: &Client,
        supported: bool,
        policy: Save,
        open: Vec<String>,
    ) -> Saving {
        // Only `clean` asks, and only about the documents the editor holds.
        let unsaved = if !supported || policy != Save::Clean || open.is_empty() {
            Some(HashSet::new())
        } else {
            let params = SaveParams::Before { uris: open };
            match tokio::time::timeout(BEFORE_TIMEOUT, client.send_request::<SaveRequest>(params))
                .await
            {
                Ok(Ok(answer)) => {
                    Some(answer.unsaved.iter().map(|u| convert::uri_key(u)).collect())
                }
                _ => None,
            }
        };
        Saving {
            policy,
            supported,
            unsaved,
        }
    }

    /// Once the editor applied the edit: saves what the rule allows, waits for the text a save
    /// participant made, and sets each file's `on_disk` and the result's `on_disk_text`.
    pub(crate) async fn finish(
        self,
        documents: &Documents,
        client: &Client,
        editor: &str,
        folders: &[PathBuf],
        targets: &[Target],
        result: &mut PlanResult,
    ) {
        let mut states: Vec<State> = Vec::new();
        let mut asked: Vec<(usize, String)> = Vec::new();
        for t in targets {
            let Some(uri) = &t.uri else { continue };
            match self.known(t, uri) {
                Some(s) => states.push((
                    t.index,
                    s,
                    (self.unsaved.is_none() && s == OnDisk::SaveFailed)
                        .then(|| UNKNOWN_BEFORE.to_string()),
                )),
                None => asked.push((t.index, uri.clone())),
            }
        }
        if !asked.is_empty() {
            states.extend(save(documents, client, editor, &asked).await);
        }
        states.sort_by_key(|(i, ..)| *i);
        for (i, state, _) in &states {
            if let Some(f) = result.files.get_mut(*i) {
                f.on_disk = Some(*state);
            }
        }
        let named: Vec<(String, OnDisk, Option<String>)> = states
            .into_iter()
            .filter_map(|(i, s, w)| {
                Some((
                    shown(&targets.iter().find(|t| t.index == i)?.file_path, folders),
                    s,
                    w,
                ))
            })
            .collect();
        result.on_disk_text = text(&named, editor, self.policy);
    }

    /// What becomes of target `t` (its document `uri`) without asking the editor to save it: `None`
    /// when the rule lets it be saved.
    fn known(&self, t: &Target, uri: &str) -> Option<OnDisk> {
        if !t.edited {
            Some(OnDisk::Saved)
        } else if self.policy == Save::Never {
            Some(OnDisk::SaveOff)
        } else if !self.supported {
            Some(OnDisk::NoSaveSupport)
        } else {
            match &self.unsaved {
                None => Some(OnDisk::SaveFailed),
                Some(set) if set.contains(&convert::uri_key(uri)) && self.policy == Save::Clean => {
                    Some(OnDisk::UserChanges)
                }
                Some(_) => None,
            }
        }
    }
}

/// What became of a file (by its index in the plan), and the editor's words when a save failed.
type State = (usize, OnDisk, Option<String>);

/// Asks the editor to save the documents `asked` (by index, with their URIs) at the versions this
/// server holds, within `SAVE_BOUND`, and waits for the text a save participant made; what became of
/// each.
async fn save(
    documents: &Documents,
    client: &Client,
    editor: &str,
    asked: &[(usize, String)],
) -> Vec<State> {
    let files = asked
        .iter()
        .map(|(_, uri)| SaveFile {
            uri: uri.clone(),
            version: documents.find(&convert::uri_key(uri)).map(|d| d.version),
        })
        .collect();
    let params = SaveParams::After {
        files,
        timeout_ms: SAVE_BOUND.as_millis() as u64,
    };
    let mut changes = documents.watch();
    let answer: Option<SaveAnswer> = tokio::time::timeout(
        SAVE_BOUND + ANSWER_MARGIN,
        client.send_request::<SaveRequest>(params),
    )
    .await
    .ok()
    .and_then(Result::ok);
    let answered = answer.unwrap_or_default();
    // A save participant's changes arrive as a didChange before the answer; wait for the version
    // the editor reports, so that `now_reads` and the diagnostics see the saved text.
    let expected: Vec<(String, i32)> = answered
        .files
        .iter()
        .filter_map(|f| Some((convert::uri_key(&f.uri), f.version?)))
        .collect();
    settle(documents, &mut changes, &expected).await;
    asked
        .iter()
        .map(|(index, uri)| {
            let key = convert::uri_key(uri);
            let reply = answered
                .files
                .iter()
                .find(|f| convert::uri_key(&f.uri) == key);
            let (state, words) = saved(reply, editor);
            (*index, state, words)
        })
        .collect()
}

/// What the editor's `reply` says became of a file (`None`: it said nothing of it), and its words.
fn saved(reply: Option<&SavedFile>, editor: &str) -> (OnDisk, Option<String>) {
    match reply.map(|r| (r.status, r.message.clone())) {
        Some((SaveStatus::Saved, _)) => (OnDisk::Saved, None),
        Some((SaveStatus::Changed, _)) => (OnDisk::ChangedSince, None),
        Some((SaveStatus::ReadOnly, _)) => (OnDisk::ReadOnly, None),
        Some((SaveStatus::Running, _)) => (OnDisk::SaveRunning, None),
        Some((SaveStatus::Closed, _)) => (
            OnDisk::SaveFailed,
            Some("the editor no longer holds it".to_string()),
        ),
        Some((SaveStatus::Failed, m)) => (OnDisk::SaveFailed, m),
        None => (
            OnDisk::SaveFailed,
            Some(format!("{editor} did not say it saved it")),
        ),
    }
}

const UNKNOWN_BEFORE: &str = "the editor did not say whether it held unsaved changes of the user's in it, so it was not saved";

/// Waits, at most `SETTLE`, until each document is at least at the version the editor reported.
async fn settle(
    documents: &Documents,
    changes: &mut tokio::sync::watch::Receiver<u64>,
    expected: &[(String, i32)],
) {
    let reached = || {
        expected
            .iter()
            .all(|(key, v)| documents.find(key).is_none_or(|d| d.version >= *v))
    };
    let wait = async {
        while !reached() {
            if changes.changed().await.is_err() {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(SETTLE, wait).await;
}

/// A file as the model is shown it: relative to the workspace folder holding it, else as it is.
fn shown(file_path: &str, folders: &[PathBuf]) -> String {
    let path = std::path::Path::new(file_path);
    let path = crate::paths::to_path(file_path)
        .ok()
        .unwrap_or_else(|| path.to_path_buf());
    folders
        .iter()
        .find_map(|f| path.strip_prefix(f).ok())
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// "a.ts", "a.ts and b.ts", "a.ts, b.ts and c.ts".
fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

const NOT_SEEN: &str = "tests, compilers and git will not see it until the file is saved";

/// The names of `files` in `state`.
fn in_state(files: &[(String, OnDisk, Option<String>)], state: OnDisk) -> Vec<&str> {
    files
        .iter()
        .filter(|(_, s, _)| *s == state)
        .map(|(n, ..)| n.as_str())
        .collect()
}

/// `one` for one name, else `many`.
fn either(names: &[&str], one: &'static str, many: &'static str) -> &'static str {
    if names.len() == 1 {
        one
    } else {
        many
    }
}

/// The words a model reads: one sentence for the files saved, one per reason a file is not
/// (`not_saved`).
fn text(files: &[(String, OnDisk, Option<String>)], editor: &str, policy: Save) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let saved = in_state(files, OnDisk::Saved);
    if saved.len() == files.len() {
        return Some(if files.len() == 1 {
            "Saved: the edit is on disk.".into()
        } else {
            format!("Saved: the edits are on disk ({} files).", files.len())
        });
    }
    if !saved.is_empty() {
        out.push(format!("Saved: {}.", list(&saved)));
    }
    out.extend(not_saved(files, editor, policy));
    Some(out.join("\n"))
}

/// One sentence per reason files of `files` are not saved, in the order a model reads them.
fn not_saved(
    files: &[(String, OnDisk, Option<String>)],
    editor: &str,
    policy: Save,
) -> Vec<String> {
    let mut out = Vec::new();
    let user = in_state(files, OnDisk::UserChanges);
    if !user.is_empty() {
        out.push(format!(
            "{} {} unsaved changes of the user's in the editor, so this edit is not on disk yet: {NOT_SEEN}.",
            list(&user),
            either(&user, "has", "have")
        ));
    }
    let since = in_state(files, OnDisk::ChangedSince);
    if !since.is_empty() {
        out.push(format!(
            "{} {} changed in the editor right after the edit, so {} not saved: this edit is not on disk yet; {NOT_SEEN}.",
            list(&since),
            either(&since, "was", "were"),
            either(&since, "it was", "they were")
        ));
    }
    let off = in_state(files, OnDisk::SaveOff);
    if !off.is_empty() {
        out.push(format!(
            "{} {} not saved (save: {}), so this edit is in the editor only, not on disk: {NOT_SEEN}.",
            list(&off),
            either(&off, "was", "were"),
            policy.name()
        ));
    }
    let unsupported = in_state(files, OnDisk::NoSaveSupport);
    if !unsupported.is_empty() {
        out.push(format!(
            "{} {} not saved: {editor} cannot save a file on request (it does not answer multiedit/save), so this edit is \
             in its buffer only, not on disk: {NOT_SEEN}.",
            list(&unsupported),
            either(&unsupported, "was", "were")
        ));
    }
    let read_only = in_state(files, OnDisk::ReadOnly);
    if !read_only.is_empty() {
        out.push(format!(
            "{} could not be saved: {} read-only. This edit is in the editor only, not on disk: {NOT_SEEN}.",
            list(&read_only),
            either(&read_only, "the file is", "the files are")
        ));
    }
    for (name, _, words) in files.iter().filter(|(_, s, _)| *s == OnDisk::SaveFailed) {
        let why = words.as_deref().unwrap_or("the editor did not save it");
        out.push(format!("{name} could not be saved ({why}). This edit is in the editor only, not on disk: {NOT_SEEN}."));
    }
    let running = in_state(files, OnDisk::SaveRunning);
    if !running.is_empty() {
        out.push(format!(
            "{} {} still being saved after {} ms: the edit may not be on disk yet.",
            list(&running),
            either(&running, "was", "were"),
            SAVE_BOUND.as_millis()
        ));
    }
    out
}

/// The files of an applied plan, as saving sees them (`uris`: each file's document URI after the edit,
/// as `Prepared` knows it).
pub(crate) fn targets<'a>(
    files: impl Iterator<Item = (usize, &'a crate::engine::FileChange, Option<String>)>,
) -> Vec<Target> {
    files
        .map(|(index, change, uri)| Target {
            index,
            file_path: match &change.op {
                FileOp::MoveTo(to) => to.clone(),
                _ => change.file_path.clone(),
            },
            uri: if change.op == FileOp::Delete {
                None
            } else {
                uri
            },
            edited: !change.replacements.is_empty() || change.created,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(files: &[(&str, OnDisk)]) -> String {
        let files: Vec<_> = files
            .iter()
            .map(|(n, s)| (n.to_string(), *s, None))
            .collect();
        text(&files, "Visual Studio Code", Save::Clean).unwrap()
    }

    #[test]
    fn the_text_says_what_is_on_disk_and_why_not() {
        assert_eq!(
            t(&[("calc.ts", OnDisk::Saved)]),
            "Saved: the edit is on disk."
        );
        assert_eq!(
            t(&[("a.ts", OnDisk::Saved), ("b.ts", OnDisk::Saved)]),
            "Saved: the edits are on disk (2 files)."
        );
        assert_eq!(
            t(&[("a.ts", OnDisk::Saved), ("calc.ts", OnDisk::UserChanges)]),
            "Saved: a.ts.\ncalc.ts has unsaved changes of the user's in the editor, so this edit is not on disk yet: tests, \
             compilers and git will not see it until the file is saved."
        );
        assert_eq!(
            t(&[("a.ts", OnDisk::ChangedSince), ("b.ts", OnDisk::ChangedSince), ("c.ts", OnDisk::ReadOnly)]),
            "a.ts and b.ts were changed in the editor right after the edit, so they were not saved: this edit is not on disk \
             yet; tests, compilers and git will not see it until the file is saved.\nc.ts could not be saved: the file is \
             read-only. This edit is in the editor only, not on disk: tests, compilers and git will not see it until the \
             file is saved."
        );
        assert_eq!(
            t(&[("x", OnDisk::SaveRunning)]),
            "x was still being saved after 5000 ms: the edit may not be on disk yet."
        );
    }
}
