//! `route`, the caller's side: find the editor, hand it the plan, bring its answer back.

use std::cmp::Reverse;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::time::timeout;

use super::registry::{self, Entry};
use super::routed::{Routed, Sender};
use super::wire::{self, Answer, Intent, Request};
use crate::engine;
use crate::paths::{real_path, Folders};
use crate::refusal::{Kind, Refusal};
use serde::de::DeserializeOwned;

pub(crate) async fn route<T: DeserializeOwned>(
    plan: &Value,
    files: &[PathBuf],
    intent: Intent,
    sender: Sender<'_>,
) -> Routed<T> {
    let no_editor = |reason: String| Routed::NoEditor { reason };
    if files.is_empty() {
        return no_editor("the plan names no file, so no editor can be chosen".into());
    }
    for f in files {
        if !f.is_absolute() {
            return no_editor(format!(
                "{} is not an absolute path, so no editor can be chosen",
                f.display()
            ));
        }
        if let Err(why) = real_path(f) {
            return no_editor(format!(
                "{}: {why}, so no editor can be chosen",
                f.display()
            ));
        }
    }
    let dir = registry::folder();
    if let Some(refusal) = untrusted(&dir) {
        return Routed::Blind { refusal };
    }
    let scan = match registry::scan(&dir) {
        Ok(scan) => scan,
        Err(reason) => return no_editor(reason),
    };
    let running = scan.entries.len();
    let mut notes = scan.notes;
    let mut candidates: Vec<Entry> = scan
        .entries
        .into_iter()
        .filter(|e| holds_all(e, files))
        .collect();
    // The editor the user worked in last is the one they are looking at.
    candidates.sort_by_key(|e| Reverse(e.last_active_ms));
    for entry in &candidates {
        match offer(&dir, entry, plan, intent, sender).await {
            Ok(routed) => return routed,
            Err(note) => notes.push(note),
        }
    }
    no_editor(no_editor_reason(files, running, candidates.len(), &notes))
}

/// The refusal for a bridge folder that exists but is not this user's private folder: a squatter's
/// folder (made first by another user, in a shared temporary folder), one open to others, a link.
/// Editors registered elsewhere cannot be seen from here, and a plan written on disk could land
/// behind one holding the files unsaved.
fn untrusted(dir: &Path) -> Option<Refusal> {
    std::fs::symlink_metadata(dir).ok()?;
    let why = registry::check_private(dir, registry::Expect::Folder).err()?;
    Some(not_applied(format!(
        "Cannot apply the plan: the editors' bridge folder {} cannot be trusted ({why}), so multiedit cannot see whether \
         an editor holds these files with unsaved changes, and it writes nothing behind one. Nothing was changed. \
         Remove {} if it is not yours, or set XDG_RUNTIME_DIR to a private folder (mode 0700) for the editor and \
         the agent alike.",
        dir.display(),
        dir.display()
    )))
}

/// Whether every file lies inside one of the editor's workspace folders, judged as the editor's
/// server will judge it (`Folders::check`).
fn holds_all(entry: &Entry, files: &[PathBuf]) -> bool {
    let mut folders = Folders::default();
    for d in &entry.folders {
        folders.add(d);
    }
    files.iter().all(|f| folders.check(f).is_ok())
}

fn no_editor_reason(files: &[PathBuf], running: usize, tried: usize, notes: &[String]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut reason = if running == 0 && tried == 0 {
        "no editor is running multiedit lsp with the bridge on".to_string()
    } else if tried == 0 {
        let which = if files.len() == 1 { "it" } else { "them all" };
        format!(
            "no editor has {} open: none of the {running} running multiedit lsp has {which} in its workspace folders",
            names.join(", ")
        )
    } else {
        format!(
            "no editor that has {} open is still running",
            names.join(", ")
        )
    };
    for note in notes {
        reason.push_str("; ");
        reason.push_str(note);
    }
    reason
}

fn not_applied(message: String) -> Refusal {
    Refusal::of(engine::Kind::NotApplied, message)
}

/// The editor is running and holds the files but did not take the plan. Nothing was sent, yet it must
/// not go to disk either: the editor may hold the files with unsaved changes, which a write behind it
/// would put in conflict (or be lost under).
fn busy<T>(editor: &str, why: String) -> Routed<T> {
    Routed::Refused {
        editor: editor.to_string(),
        refusal: Refusal::new(
            Kind::Busy,
            format!(
                "The editor ({editor}) has the files in its workspace but is busy: {why}. Nothing was changed, in the \
                 editor or on disk (it may hold unsaved changes). Try again in a moment."
            ),
        ),
    }
}

/// How long a caller waits for the server to take the connection and the request:
/// `MULTIEDIT_BRIDGE_SEND_TIMEOUT_MS` if set (tests of a busy server), else `wire::SEND_TIMEOUT`.
fn send_timeout() -> Duration {
    std::env::var("MULTIEDIT_BRIDGE_SEND_TIMEOUT_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(wire::SEND_TIMEOUT, Duration::from_millis)
}

async fn read_answer(read: OwnedReadHalf, wait: Duration) -> Result<Answer, String> {
    match timeout(
        wait,
        wire::read_line(&mut BufReader::new(read), wire::MAX_ANSWER),
    )
    .await
    {
        Ok(Ok(Some(line))) => {
            Answer::from_line(&line).map_err(|why| format!("The editor's server sent {why}"))
        }
        Ok(Ok(None)) => Err("The editor's server closed the connection without an answer".into()),
        Ok(Err(wire::LineError::Io(e))) => {
            Err(format!("Reading the editor's server's answer failed ({e})"))
        }
        Ok(Err(why)) => Err(format!("The editor's server sent {why}")),
        Err(_) => Err(format!(
            "The editor's server did not answer within {} s",
            wait.as_secs()
        )),
    }
}

/// Hands the plan to one editor. `Err` (a note for the reason) only when the editor is gone, so the
/// next editor may be tried; an editor that is there but does not take the plan is `busy`; once the
/// request is out, whatever happens is this editor's answer.
async fn offer<T: DeserializeOwned>(
    dir: &Path,
    entry: &Entry,
    plan: &Value,
    intent: Intent,
    sender: Sender<'_>,
) -> Result<Routed<T>, String> {
    let pid = entry.pid;
    let editor = format!("{} (multiedit lsp pid {pid})", entry.editor);
    let send = send_timeout();
    let sent = match connect(entry, send).await {
        Ok(stream) => hand_over(stream, entry, plan, intent, sender, send).await,
        Err(unreached) => Err(unreached),
    };
    // The write half stays open until the answer is read.
    let (read, _write) = match sent {
        Ok(halves) => halves,
        Err(Unreached::Gone) => {
            registry::remove(dir, pid);
            return Err(format!(
                "the editor at pid {pid} is gone, its entry was removed"
            ));
        }
        Err(Unreached::Busy(why)) => return Ok(busy(&editor, why)),
        Err(Unreached::Refused(refusal)) => return Ok(Routed::Refused { editor, refusal }),
    };
    // Sent: from here on the answer is this editor's, whatever it is.
    let wait = (Duration::from_millis(entry.apply_edit_timeout_ms) + wire::ANSWER_MARGIN)
        .min(wire::AGENT_ANSWER);
    Ok(answered(editor, read_answer(read, wait).await))
}

/// Why a plan did not reach an editor's server, so that nothing of it was carried out.
enum Unreached {
    /// The editor is gone: its entry is removed, and the next editor may be tried.
    Gone,
    /// Its server is there but did not take the plan, for this reason (`busy`).
    Busy(String),
    /// Its server refused the plan before it had read it whole.
    Refused(Refusal),
}

/// The connection to the editor's server, taken within `send`.
async fn connect(entry: &Entry, send: Duration) -> Result<UnixStream, Unreached> {
    match timeout(send, UnixStream::connect(&entry.socket)).await {
        Ok(Ok(s)) => Ok(s),
        // Nobody listens there any more (the process died, or its pid was reused).
        Ok(Err(e)) if matches!(e.kind(), ErrorKind::ConnectionRefused | ErrorKind::NotFound) => {
            Err(Unreached::Gone)
        }
        // Its queue of connections is full (EAGAIN), say.
        Ok(Err(e)) => Err(Unreached::Busy(format!(
            "its server could not take the connection ({e})"
        ))),
        Err(_) => Err(Unreached::Busy(format!(
            "its server did not take the connection within {} ms",
            send.as_millis()
        ))),
    }
}

/// The request written whole to `stream` within `send`; its two halves, to read the answer on.
async fn hand_over(
    stream: UnixStream,
    entry: &Entry,
    plan: &Value,
    intent: Intent,
    sender: Sender<'_>,
    send: Duration,
) -> Result<(OwnedReadHalf, OwnedWriteHalf), Unreached> {
    let (read, mut write) = stream.into_split();
    let request = wire::line(&Request {
        token: entry.token.clone(),
        plan: plan.clone(),
        intent,
        agent: sender.agent.map(String::from),
        allow: sender.allow,
    });
    // The line break is the request's last byte and the server acts only on a whole line, so a write
    // that failed or timed out delivered nothing the server would carry out.
    match timeout(send, write.write_all(&request)).await {
        Ok(Ok(())) => Ok((read, write)),
        Ok(Err(e)) => {
            // The server may have answered (busy) and closed before reading the whole plan.
            let not_handed = || Unreached::Busy(format!("the plan could not be handed over ({e})"));
            Err(match read_answer(read, Duration::from_secs(1)).await {
                Ok(Answer::Refusal(r)) => match serde_json::from_value::<Refusal>(r) {
                    Ok(refusal) => Unreached::Refused(refusal),
                    Err(_) => not_handed(),
                },
                _ if !registry::alive(entry.pid) => Unreached::Gone,
                _ => not_handed(),
            })
        }
        Err(_) => Err(Unreached::Busy(format!(
            "its server did not read the plan within {} ms",
            send.as_millis()
        ))),
    }
}

/// What the editor's `answer` to a plan it was sent makes of it; one that cannot be read leaves
/// unknown whether the plan was applied.
fn answered<T: DeserializeOwned>(editor: String, answer: Result<Answer, String>) -> Routed<T> {
    let unknown = |what: String| {
        Routed::Refused {
        editor: editor.clone(),
        refusal: not_applied(format!(
            "{what}. Whether the editor ({editor}) applied the plan is unknown: check the files before running \
             it again."
        )),
    }
    };
    match answer {
        Ok(Answer::Result(result)) => match serde_json::from_value::<T>(result) {
            Ok(answer) => Routed::Answered { editor, answer },
            Err(e) => unknown(format!(
                "The editor's server sent a result that cannot be read ({e})"
            )),
        },
        Ok(Answer::Refusal(r)) => match serde_json::from_value::<Refusal>(r) {
            Ok(refusal) => Routed::Refused { editor, refusal },
            Err(e) => unknown(format!(
                "The editor's server sent a refusal that cannot be read ({e})"
            )),
        },
        Ok(Answer::Error(e)) => Routed::Refused {
            editor: editor.clone(),
            refusal: not_applied(format!(
                "The editor ({editor}) did not take the plan: {e}. Nothing was changed."
            )),
        },
        Err(why) => unknown(why),
    }
}
