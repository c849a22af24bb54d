//! The journal that makes a multi-file commit whole under a crash: the record a commit writes in the
//! private folder and renames at its commit point (this file), the recovery a later run does when it
//! meets one (`recovery.rs`), and the tests' crash hook (`crash.rs`). The protocol, step by step, and
//! the tests that hold it: docs/guarantees.md, "The journal".

mod crash;
mod recovery;

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::folders::folder;
use super::private;
use super::read::read_regular;
use super::refusal::io_refusal;
use super::sync::{lock_folders, sync_dir};
use super::temp::{TEMP_PREFIX, TEMP_SUFFIX};
use crate::engine::{Kind, Refusal};
pub(in crate::disk) use crash::CrashAt;
pub(crate) use recovery::{recover, recover_into, Recovered};

/// What older versions wrote beside the files, and what a repository may ship to look like one.
pub(crate) const JOURNAL_PREFIX: &str = ".multiedit-journal-";
pub(crate) const JOURNAL_SUFFIX: &str = ".json";
const RECORD_PREFIX: &str = "journal-";
const RECORD_SUFFIX: &str = ".json";
/// 3: records in the private folder. A run that knows only older formats must not act on them.
const FORMAT: u32 = 3;
/// 4: a record that also removes or makes folders (`remove_dirs`, `make_dirs`): written only then, so
/// that a run knowing format 3 alone refuses it rather than roll it forward without its folders.
const FORMAT_FOLDERS: u32 = 4;
/// 5: what this version writes: format 4 with every path relative to the record's `root` (the
/// folder that holds them all), which runs knowing only 3 and 4 refuse.
const FORMAT_ROOTED: u32 = 5;

#[derive(Serialize, Deserialize, Clone)]
pub(super) struct Record {
    multiedit_journal: u32,
    plan: String,
    pid: u32,
    /// The writer's start time (clock ticks since boot, /proc/<pid>/stat), so that a later process
    /// with the same pid is not taken for the writer.
    started: Option<u64>,
    /// Seconds since the Unix epoch, for the message that names the plan.
    time: u64,
    committed: bool,
    /// The folders of the targets and those holding the temporary files (a new file's text waits in
    /// the nearest folder of it that exists).
    folders: Vec<PathBuf>,
    files: Vec<Entry>,
    /// Folders that new files replace, deepest first, removed after the deletions (committed record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    remove_dirs: Vec<PathBuf>,
    /// Folders that new files need, shallowest first, made after those removals (committed record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    make_dirs: Vec<PathBuf>,
    /// Format 5: the folder every path of the record is relative to (held absolute in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root: Option<PathBuf>,
}

impl Record {
    /// Every path of the record, for `rooted` and `absolute`.
    fn paths_mut(&mut self) -> impl Iterator<Item = &mut PathBuf> {
        let files = self
            .files
            .iter_mut()
            .flat_map(|f| std::iter::once(&mut f.target).chain(f.temp.as_mut()));
        self.folders
            .iter_mut()
            .chain(files)
            .chain(self.remove_dirs.iter_mut())
            .chain(self.make_dirs.iter_mut())
    }

    /// The record as it is written: format 5, its paths relative to the folder that holds them all.
    fn rooted(&self) -> Record {
        let mut out = self.clone();
        let mut root: Option<PathBuf> = None;
        for p in out.paths_mut() {
            root = Some(match root {
                None => p.clone(),
                Some(r) => r
                    .ancestors()
                    .find(|a| p.starts_with(a))
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
            });
        }
        let root = root.unwrap_or_default();
        for p in out.paths_mut() {
            *p = p
                .strip_prefix(&root)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| p.clone());
        }
        out.multiedit_journal = FORMAT_ROOTED;
        out.root = Some(root);
        out
    }

    /// A format 5 record read back, its paths absolute again; `None` when they do not stay below
    /// its root (an absolute path or a `..` in them).
    fn absolute(mut self) -> Option<Record> {
        let root = self.root.take().filter(|r| r.is_absolute())?;
        for p in self.paths_mut() {
            if p.components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                return None;
            }
            *p = if p.as_os_str().is_empty() {
                root.clone()
            } else {
                root.join(&*p)
            };
        }
        self.multiedit_journal = FORMAT_FOLDERS;
        Some(self)
    }
}

#[derive(Serialize, Deserialize, Clone)]
pub(super) struct Entry {
    pub(crate) target: PathBuf,
    /// Only in the committed record.
    pub(crate) temp: Option<PathBuf>,
    pub(crate) new: bool,
    pub(crate) len: Option<u64>,
    pub(crate) hash: Option<String>,
    /// The plan deletes this file (a patch's deleted or moved file): rolling forward removes it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) delete: bool,
}

/// A plan's journal as its writer keeps it.
pub(super) struct Journal {
    record: Record,
    /// Where the record is, once written (`None`: a single-file plan where no private folder could be
    /// made; it goes without).
    path: Option<PathBuf>,
    crash: CrashAt,
}

impl Journal {
    /// Writes the first record, for `targets` (each with whether it is new) whose temporary files go
    /// in `staging`. A plan over several files needs it (`Err` when no private folder can hold it); a
    /// single-file plan goes on without one.
    pub(crate) fn begin(
        targets: &[(PathBuf, bool)],
        staging: &[PathBuf],
        crash: CrashAt,
    ) -> Result<Journal, Refusal> {
        let pid = std::process::id();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let plan = format!("{pid}-{:x}", now.as_nanos() & 0xffff_ffff_ffff);
        let folders: BTreeSet<PathBuf> = targets
            .iter()
            .map(|(t, _)| folder(t))
            .chain(staging.iter().cloned())
            .collect();
        let files = targets
            .iter()
            .map(|(t, new)| Entry {
                target: t.clone(),
                temp: None,
                new: *new,
                len: None,
                hash: None,
                delete: false,
            })
            .collect();
        let record = Record {
            multiedit_journal: FORMAT,
            plan,
            pid,
            started: start_time(pid),
            time: now.as_secs(),
            committed: false,
            folders: folders.into_iter().collect(),
            files,
            remove_dirs: Vec::new(),
            make_dirs: Vec::new(),
            root: None,
        };
        let mut journal = Journal {
            record,
            path: None,
            crash,
        };
        let about = &targets[0].0;
        match private::ensure() {
            Ok(dir) => {
                let path = dir.join(record_name(&journal.record.plan));
                let written = stage_record(&journal.record, &path, about).and_then(|temp| {
                    journal.crash.at("record", 1);
                    persist_record(temp, &path)
                });
                match written {
                    Ok(()) => journal.path = Some(path),
                    Err(refusal) if targets.len() > 1 => return Err(refusal),
                    Err(_) => {}
                }
            }
            Err(why) if targets.len() > 1 => {
                return Err(Refusal::new(
                    Kind::Io,
                    format!(
                        "Cannot keep the journal of this plan: {why}. Nothing was changed. multiedit keeps it in a private \
                         folder (mode 0700, owned by you): fix that folder or set XDG_STATE_HOME to one it may use."
                    ),
                ))
            }
            Err(_) => {}
        }
        journal.crash.at("begin", 1);
        Ok(journal)
    }

    /// Prefix of the plan's temporary files: recovery deletes exactly these.
    pub(crate) fn temp_prefix(&self) -> String {
        temp_prefix(&self.record.plan)
    }

    /// The committed record, with every temporary file and the folder steps, written beside the first
    /// one but not yet in its place: the caller fsyncs it with the new texts (one round of fsyncs, not
    /// two) and then `commit`s it. Dropped uncommitted (a refusal), it is deleted.
    pub(crate) fn prepare(
        &self,
        entries: Vec<Entry>,
        steps: &super::folders::Steps,
        about: &Path,
    ) -> Result<Option<Prepared>, Refusal> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let mut record = self.record.clone();
        record.committed = true;
        record.files = entries;
        record.remove_dirs = steps.remove.clone();
        record.make_dirs = steps.make.clone();
        if !steps.is_empty() {
            record.multiedit_journal = FORMAT_FOLDERS;
        }
        Ok(Some(Prepared(stage_record(&record, path, about)?)))
    }

    /// The commit point: the prepared record, fsynced already, replaces the first one, and the private
    /// folder is fsynced.
    pub(crate) fn commit(&mut self, prepared: Prepared) -> Result<(), Refusal> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        persist_record(prepared.0, path)?;
        sync_dir(&folder(path));
        self.crash.at("commit", 1);
        Ok(())
    }

    /// Removes the record: the plan is whole.
    pub(crate) fn finish(mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_file(p);
            self.crash.at("done", 1);
        }
    }
}

impl Drop for Journal {
    /// A refused plan takes its record with it (its files are all still old).
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_file(p);
        }
    }
}

fn record_name(plan: &str) -> String {
    format!("{RECORD_PREFIX}{plan}{RECORD_SUFFIX}")
}

/// A record's own temporary file, until it is renamed into place: recovery removes a killed run's.
fn record_temp_prefix(plan: &str) -> String {
    format!(".record-{plan}-")
}

fn temp_prefix(plan: &str) -> String {
    format!("{TEMP_PREFIX}{plan}-")
}

/// A committed record written to its temporary file, waiting for its fsync and its rename.
pub(super) struct Prepared(tempfile::NamedTempFile);

impl Prepared {
    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }

    pub(crate) fn file(&self) -> &fs::File {
        self.0.as_file()
    }
}

/// The record written whole to a temporary file beside `path` (deleted if it is dropped).
fn stage_record(
    record: &Record,
    path: &Path,
    about: &Path,
) -> Result<tempfile::NamedTempFile, Refusal> {
    let bytes = serde_json::to_vec_pretty(&record.rooted()).map_err(|e| {
        Refusal::new(
            Kind::Io,
            format!(
                "Cannot write the journal of {}: {e}. Nothing was changed.",
                about.display()
            ),
        )
    })?;
    let journal_refusal = |e: &std::io::Error| io_refusal(path, "write the journal", e);
    let mut temp = tempfile::Builder::new()
        .prefix(&record_temp_prefix(&record.plan))
        .suffix(TEMP_SUFFIX)
        .tempfile_in(folder(path))
        .map_err(|e| journal_refusal(&e))?;
    temp.write_all(&bytes).map_err(|e| journal_refusal(&e))?;
    Ok(temp)
}

/// The staged record renamed over `path`: a reader sees the old record or the new one whole.
fn persist_record(temp: tempfile::NamedTempFile, path: &Path) -> Result<(), Refusal> {
    temp.persist(path)
        .map(|_| ())
        .map_err(|e| io_refusal(path, "write the journal", &e.error))
}

/// Length and hash of a new text, recorded so that recovery renames only a complete temporary file.
/// FNV-1a over 8-byte words: a check against a torn or foreign file, not against an adversary (the
/// record itself is private), and cheap enough for every multi-file commit.
pub(super) fn digest(bytes: &[u8]) -> String {
    const PRIME: u64 = 0x100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().expect("8 bytes"))).wrapping_mul(PRIME);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(PRIME);
    }
    format!("{h:016x}")
}

/// Start time of process `pid` in clock ticks since boot, `None` without /proc or once it is gone.
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// Whether the journal's writer may still be running (then its journal is its own business).
fn writer_alive(record: &Record, journal: &Path) -> bool {
    alive(record.pid, record.started, journal)
}

/// Whether process `pid`, started at `started` (clock ticks since boot; `None`: any start), may still
/// be writing `file`.
fn alive(pid: u32, started: Option<u64>, file: &Path) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if Path::new("/proc/self/stat").exists() {
        return match start_time(pid) {
            None => false,
            Some(t) => started.is_none_or(|s| s == t),
        };
    }
    // No /proc: a journal younger than a minute is taken for a live one.
    fs::metadata(file)
        .and_then(|m| m.modified())
        .map(|t| t.elapsed().map_or(true, |d| d.as_secs() <= 60))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_its_paths_relative_to_its_root_and_reads_back_whole() {
        let entry = |t: &str, temp: Option<&str>| Entry {
            target: t.into(),
            temp: temp.map(PathBuf::from),
            new: false,
            len: Some(1),
            hash: None,
            delete: false,
        };
        let record = Record {
            multiedit_journal: FORMAT_FOLDERS,
            plan: "1-a".into(),
            pid: 1,
            started: None,
            time: 0,
            committed: true,
            folders: vec!["/w/p/src".into(), "/w/p/doc".into()],
            files: vec![
                entry("/w/p/src/a.rs", Some("/w/p/src/.multiedit-1-a-x.tmp")),
                entry("/w/p/doc/b.md", None),
            ],
            remove_dirs: vec!["/w/p/doc/old".into()],
            make_dirs: vec![],
            root: None,
        };
        let written = serde_json::to_value(record.rooted()).unwrap();
        assert_eq!(
            (
                written["multiedit_journal"].as_u64(),
                written["root"].as_str()
            ),
            (Some(5), Some("/w/p"))
        );
        assert_eq!(written["folders"], serde_json::json!(["src", "doc"]));
        assert_eq!(written["files"][0]["temp"], "src/.multiedit-1-a-x.tmp");
        let back = serde_json::from_value::<Record>(written.clone())
            .unwrap()
            .absolute()
            .unwrap();
        assert_eq!(
            (
                back.folders.clone(),
                back.files[0].target.clone(),
                back.remove_dirs.clone()
            ),
            (
                record.folders,
                record.files[0].target.clone(),
                record.remove_dirs
            )
        );
        // A path that would leave the root is not a record this version acts on.
        let mut escaping = written;
        escaping["files"][1]["target"] = "../../etc/passwd".into();
        assert!(serde_json::from_value::<Record>(escaping)
            .unwrap()
            .absolute()
            .is_none());
    }
}
