//! `routes.json`: what setup wrote into each file and the splices that give the bytes back, trusted
//! only as journals are (`disk/private.rs`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cli::agents::home;
use crate::disk::private;

/// What setup wrote into one file, as the undo reads it back.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(super) struct Record {
    pub(super) agent: String,
    pub(super) file: PathBuf,
    /// The file did not exist before setup made it.
    pub(super) created: bool,
    /// Folders setup made for it, the deepest last.
    pub(super) folders: Vec<PathBuf>,
    /// SHA-256 of the file as setup left it: while it is that, `undo` gives back the bytes before.
    pub(super) after_sha256: String,
    /// The splices that turn the file as setup left it back into what it was, last one first.
    pub(super) undo: Vec<Splice>,
    pub(super) wrote: Vec<Wrote>,
    /// Claude Code: the command the project's `.mcp.json` ran when setup approved its multiedit server
    /// here (`enabledMcpjsonServers`); the approval is for that command only (`doctor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) approved: Option<String>,
}

/// Bytes `at..at+len` of the later text were `text` before.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(super) struct Splice {
    at: usize,
    len: usize,
    text: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Wrote {
    /// Strings setup added to the array at `path`; `made`: the member setup inserted to hold them (an
    /// ancestor of `path`, or `path` itself), whose whole value was setup's.
    List {
        path: Vec<String>,
        items: Vec<Value>,
        made: Option<Vec<String>>,
    },
    /// The member at `path` set to `value`.
    Member {
        path: Vec<String>,
        value: String,
        made: Option<Vec<String>>,
    },
    /// The whole file.
    File { text: String },
    /// A block of the file.
    Block { text: String },
    /// The TOML key `key` of the table at `table` set to `value`.
    Toml {
        table: Vec<String>,
        key: String,
        value: String,
    },
}

#[derive(Serialize, Deserialize, Default)]
pub(super) struct Records {
    pub(super) routes: Vec<Record>,
}

impl Records {
    /// Notes `new`, what setup just wrote into its file, whose hash was `before_sha256` before
    /// (`None`: there was no file). Written before: what this run added joins it; the bytes can be
    /// given back only if nothing else changed the file in between.
    pub(super) fn note(&mut self, new: Record, before_sha256: Option<String>) {
        let Some(r) = self.routes.iter_mut().find(|r| r.file == new.file) else {
            self.routes.push(new);
            return;
        };
        if before_sha256.as_deref() == Some(r.after_sha256.as_str()) {
            r.undo.extend(new.undo);
        } else {
            r.undo.clear();
            r.created = false;
            r.folders.clear();
        }
        r.after_sha256 = new.after_sha256;
        r.wrote.extend(new.wrote);
        if new.approved.is_some() {
            r.approved = new.approved;
        }
    }
}

/// `routes.json` in multiedit's state folder (`$XDG_STATE_HOME/multiedit`, else
/// `~/.local/state/multiedit`), where the journals live too.
fn records_path() -> Result<PathBuf, String> {
    let xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute());
    let state = match xdg {
        Some(d) => d,
        None => home()?.join(".local/state"),
    };
    Ok(state.join("multiedit/routes.json"))
}

/// What is wrong with the record at `path` (`routes.json`) or its folder, if either cannot be
/// trusted, and how to fix it: `disk::private`'s check, the one journals get (a real folder and a
/// regular file, this user's, closed to others). The undo rewrites and removes files on the record's
/// word, so one that another user could have written is neither read nor added to. Neither there yet:
/// nothing to trust (`write_records` makes the folder private, then checks it again).
fn untrusted(path: &Path) -> Option<(String, String)> {
    let there = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let dir = path.parent().filter(|d| there(d))?;
    if let Err(why) = private::check(dir, true) {
        let fix = if mine(dir, true) {
            format!(
                "Make the folder yours alone (chmod 700 {}), check that routes.json names only files setup wrote, \
                 and run setup again.",
                dir.display()
            )
        } else {
            format!(
                "Move {} away (setup then makes its own, closed to others) and run setup again.",
                dir.display()
            )
        };
        return Some((why, fix));
    }
    if !there(path) {
        return None;
    }
    let why = private::check(path, false).err()?;
    let fix = if mine(path, false) {
        format!(
            "Make it yours alone (chmod 600 {}), check that it names only files setup wrote, and run setup again.",
            path.display()
        )
    } else {
        format!("Move {} away and run setup again.", path.display())
    };
    Some((why, fix))
}

/// Whether `path` is a folder (`folder`) or a regular file of this user's, whatever its mode: then
/// `chmod` is the fix.
#[cfg(unix)]
fn mine(path: &Path, folder: bool) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.uid() == private::uid() && if folder { m.is_dir() } else { m.is_file() })
}

#[cfg(not(unix))]
fn mine(_: &Path, _: bool) -> bool {
    false
}

/// Refuses the record at `path` when it cannot be trusted (`untrusted`), saying so, that nothing was
/// used or written, and the fix.
fn trusted_at(path: &Path) -> Result<(), String> {
    match untrusted(path) {
        None => Ok(()),
        Some((why, fix)) => Err(format!(
            "{} cannot be trusted: {why}. Another user could have written it, and --undo-route-edits rewrites and \
             removes files on its word, so setup did not use it and wrote nothing. {fix}",
            path.display()
        )),
    }
}

/// `trusted_at` of this user's record: `setup --route-edits` and `--undo-route-edits` check it before
/// writing anything.
pub(crate) fn records_trusted() -> Result<(), String> {
    trusted_at(&records_path()?)
}

/// What `doctor` says of a record that cannot be trusted, if this user's cannot.
pub(crate) fn records_problem() -> Option<String> {
    let path = records_path().ok()?;
    let (why, fix) = untrusted(&path)?;
    Some(format!(
        "{} cannot be trusted: {why}. Another user could have written it, so setup --route-edits and \
         --undo-route-edits refuse to use it. {fix}",
        path.display()
    ))
}

pub(super) fn read_records() -> Result<(PathBuf, Records), String> {
    let path = records_path()?;
    trusted_at(&path)?;
    match crate::disk::read_text_capped(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(|r| (path.clone(), r))
            .map_err(|e| {
                format!(
                    "{} cannot be read back ({e}); move it away to start afresh",
                    path.display()
                )
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((path, Records::default())),
        Err(e) => Err(format!("cannot read {} ({e})", path.display())),
    }
}

/// Writes the record, in a folder only this user may enter (made so if missing, and checked again:
/// one another user made meanwhile is refused), as a file only this user may read.
pub(super) fn write_records(path: &Path, records: &Records) -> Result<(), String> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(format!("{} names no file", path.display()));
    };
    private::make_folder(dir, true)?;
    // Checked before this run wrote anything (`records_trusted`); a folder that fails now was made or
    // changed by someone else since.
    if let Some((why, fix)) = untrusted(path) {
        return Err(format!(
            "{} cannot be trusted: {why}. {fix}",
            path.display()
        ));
    }
    let real = std::fs::canonicalize(dir)
        .map_err(|e| format!("cannot resolve {} ({e})", dir.display()))?
        .join(name);
    let text = serde_json::to_string_pretty(records).expect("records serialise") + "\n";
    crate::disk::atomic::write_resolved(&real, text.as_bytes(), crate::disk::atomic::Mode::Private)
        .map_err(|e| format!("cannot write {} ({e})", path.display()))
}

/// The splice that turns `after` back into `before`: what lies between their common start and end.
pub(super) fn splice_back(before: &str, after: &str) -> Splice {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let mut start = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    while !before.is_char_boundary(start) {
        start -= 1;
    }
    let room = b.len().min(a.len()) - start;
    let mut end = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    while !before.is_char_boundary(b.len() - end) || !after.is_char_boundary(a.len() - end) {
        end -= 1;
    }
    Splice {
        at: start,
        len: a.len() - end - start,
        text: before[start..b.len() - end].to_string(),
    }
}

/// `text` with `splices` undone, the last one first.
pub(super) fn unsplice(text: &str, splices: &[Splice]) -> Option<String> {
    let mut text = text.to_string();
    for s in splices.iter().rev() {
        let end = s.at.checked_add(s.len)?;
        if end > text.len() || !text.is_char_boundary(s.at) || !text.is_char_boundary(end) {
            return None;
        }
        text.replace_range(s.at..end, &s.text);
    }
    Some(text)
}

/// The command setup approved in Claude Code's `file` (`Record::approved`), if it did.
pub(crate) fn approved_command(file: &Path) -> Option<String> {
    let real = crate::paths::real_path(file).unwrap_or_else(|_| file.to_path_buf());
    let (_, records) = read_records().ok()?;
    records
        .routes
        .into_iter()
        .find(|r| r.file == real)?
        .approved
}
