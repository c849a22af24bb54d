//! The record a commit writes in the private folder: its format and names, the digest of each new
//! text it lists, and whether the run that wrote it may still be running.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::disk::temp::TEMP_PREFIX;

/// What older versions wrote beside the files, and what a repository may ship to look like one.
pub(super) const JOURNAL_PREFIX: &str = ".multiedit-journal-";
pub(super) const JOURNAL_SUFFIX: &str = ".json";
pub(super) const RECORD_PREFIX: &str = "journal-";
pub(super) const RECORD_SUFFIX: &str = ".json";
/// 3: records in the private folder. A run that knows only older formats must not act on them.
pub(super) const FORMAT: u32 = 3;
/// 4: a record that also removes or makes folders (`remove_dirs`, `make_dirs`): written only then, so
/// that a run knowing format 3 alone refuses it rather than roll it forward without its folders.
pub(super) const FORMAT_FOLDERS: u32 = 4;
/// 5: what this version writes: format 4 with every path relative to the record's `root` (the
/// folder that holds them all), which runs knowing only 3 and 4 refuse.
pub(super) const FORMAT_ROOTED: u32 = 5;

#[derive(Serialize, Deserialize, Clone)]
pub(super) struct Record {
    pub(super) multiedit_journal: u32,
    pub(super) plan: String,
    pub(super) pid: u32,
    /// The writer's start time (clock ticks since boot, `/proc/<pid>/stat`), so that a later process
    /// with the same pid is not taken for the writer.
    pub(super) started: Option<u64>,
    /// Seconds since the Unix epoch, for the message that names the plan.
    pub(super) time: u64,
    pub(super) committed: bool,
    /// The folders of the targets and those holding the temporary files (a new file's text waits in
    /// the nearest folder of it that exists).
    pub(super) folders: Vec<PathBuf>,
    pub(super) files: Vec<Entry>,
    /// Folders that new files replace, deepest first, removed after the deletions (committed record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) remove_dirs: Vec<PathBuf>,
    /// Folders that new files need, shallowest first, made after those removals (committed record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) make_dirs: Vec<PathBuf>,
    /// Format 5: the folder every path of the record is relative to (held absolute in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) root: Option<PathBuf>,
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
    pub(super) fn rooted(&self) -> Record {
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
    pub(super) fn absolute(mut self) -> Option<Record> {
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
pub(in crate::disk) struct Entry {
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

pub(super) fn record_name(plan: &str) -> String {
    format!("{RECORD_PREFIX}{plan}{RECORD_SUFFIX}")
}

/// A record's own temporary file, until it is renamed into place: recovery removes a killed run's.
pub(super) fn record_temp_prefix(plan: &str) -> String {
    format!(".record-{plan}-")
}

pub(super) fn temp_prefix(plan: &str) -> String {
    format!("{TEMP_PREFIX}{plan}-")
}

/// Length and hash of a new text, recorded so that recovery renames only a complete temporary file.
/// FNV-1a over 8-byte words: a check against a torn or foreign file, not against an adversary (the
/// record itself is private), and cheap enough for every multi-file commit.
pub(in crate::disk) fn digest(bytes: &[u8]) -> String {
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
pub(super) fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// Whether the journal's writer may still be running (then its journal is its own business).
pub(super) fn writer_alive(record: &Record, journal: &Path) -> bool {
    alive(record.pid, record.started, journal)
}

/// Whether process `pid`, started at `started` (clock ticks since boot; `None`: any start), may still
/// be writing `file`.
pub(super) fn alive(pid: u32, started: Option<u64>, file: &Path) -> bool {
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
