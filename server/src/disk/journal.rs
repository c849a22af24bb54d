//! The journal that makes a multi-file commit whole under a crash, and the recovery that a later run
//! does when it meets one.
//!
//! A rename is atomic for one file only; a plan over several files needs one atomic step that decides
//! for all of them. As git's lock-then-rename and SQLite's journal do, that step is the rename of a
//! small record. The record is kept in this user's private folder (`private.rs`: 0700, owned by the
//! user), never beside the files: a file in a repository cannot pass for one, so recovery acts only on
//! plans this user's own multiedit wrote.
//!
//! 1. The *record* `journal-<plan>.json` is written in the private folder: the plan, its writer (pid
//!    and start time), its folders and files, each named relative to the record's `root`, the folder
//!    that holds them all (format 5). Its paths are the writer's resolved paths, and recovery takes
//!    each step along them in folders opened without following a link (`disk::opened`). Its temporary files are all named `.multiedit-<plan>-*.tmp`.
//! 2. Every new text is written to a temporary file beside its target, or, when the target's folder
//!    does not exist yet (a new folder, or one that takes the name of a file the plan deletes), in the
//!    nearest folder of it that does; the record's folders include those. Then all of them are fsynced
//!    together (`disk::sync_all`), and the files (and the folder steps, `disk::folders`) re-checked
//!    under the folder locks.
//! 3. The **commit point** (plans over several files, or that remove or make a folder): the record,
//!    now listing every target, its temporary file and the new text's length and hash, and the folders
//!    to remove (`remove_dirs`, deepest first) and make (`make_dirs`, shallowest first), marked
//!    committed, is written to `.record-<plan>-*.tmp` in the private folder before step 2's fsyncs and
//!    fsynced with the new texts (one round of fsyncs, not two); after the re-check it is renamed over
//!    the first one, and the private folder fsynced. A record with folder steps is format 4, which a
//!    run knowing only format 3 refuses.
//! 4. In this order, so that a file and a folder can trade names: the deletions (each file moved aside
//!    under a name of the plan's temporary files, in its folder or the nearest one the commit keeps,
//!    so that a failed commit puts back the same file, owner and all), the folders removed, the
//!    folders made, then the temporary files renamed over their targets (deletions and renames by
//!    folder on several threads); then each folder touched is fsynced once, and the files moved
//!    aside are removed.
//! 5. The record is removed.
//!
//! Recovery, for a record whose writer is gone, by any run whose plan has a file in one of the
//! record's folders: if the record is committed, it does step 4 again, each part taken as done when its
//! result is there already (a deleted file gone, or its folder already replaced by a new file, or the
//! file itself by a made folder; a removed folder gone or already its new file; a made folder there;
//! a temporary file no longer there renamed already), and every temporary file still there is checked
//! against its length and hash before it is renamed (roll forward); a run killed at any point of the
//! commit or of this roll-forward is thus completed. Otherwise the plan never committed and every file
//! and folder is still old, so its temporary files are deleted (roll back). Only
//! temporary files named by the plan's own pattern, in the record's folders, are ever touched. A dry
//! run or a preview writes nothing: it reports the record instead (`Recovered::Left`). A file named
//! like a journal in a plan's folder (`.multiedit-journal-*.json`, what older versions wrote there) is
//! never read: it is named in the output and left alone (`Recovered::Ignored`).
//!
//! The first record is not fsynced (a single-file plan has one only so that a later run can remove a
//! killed run's temporary file): lost in a power cut, it leaves at worst a temporary file no run
//! removes; an empty record (written but not flushed) is removed. The committed record is fsynced
//! before the first rename, and the folders after the last, before the record goes.

use std::collections::BTreeSet;
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{io_refusal, lock_folders, private, read_regular, sync_dir, TEMP_PREFIX, TEMP_SUFFIX};
use crate::engine::{Kind, Refusal};

/// What older versions wrote beside the files, and what a repository may ship to look like one.
pub const JOURNAL_PREFIX: &str = ".multiedit-journal-";
pub const JOURNAL_SUFFIX: &str = ".json";
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
        let files = self.files.iter_mut().flat_map(|f| std::iter::once(&mut f.target).chain(f.temp.as_mut()));
        self.folders.iter_mut().chain(files).chain(self.remove_dirs.iter_mut()).chain(self.make_dirs.iter_mut())
    }

    /// The record as it is written: format 5, its paths relative to the folder that holds them all.
    fn rooted(&self) -> Record {
        let mut out = self.clone();
        let mut root: Option<PathBuf> = None;
        for p in out.paths_mut() {
            root = Some(match root {
                None => p.clone(),
                Some(r) => r.ancestors().find(|a| p.starts_with(a)).map(Path::to_path_buf).unwrap_or_default(),
            });
        }
        let root = root.unwrap_or_default();
        for p in out.paths_mut() {
            *p = p.strip_prefix(&root).map(Path::to_path_buf).unwrap_or_else(|_| p.clone());
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
            if p.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
                return None;
            }
            *p = if p.as_os_str().is_empty() { root.clone() } else { root.join(&*p) };
        }
        self.multiedit_journal = FORMAT_FOLDERS;
        Some(self)
    }
}

#[derive(Serialize, Deserialize, Clone)]
pub(super) struct Entry {
    pub target: PathBuf,
    /// Only in the committed record.
    pub temp: Option<PathBuf>,
    pub new: bool,
    pub len: Option<u64>,
    pub hash: Option<String>,
    /// The plan deletes this file (a patch's deleted or moved file): rolling forward removes it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delete: bool,
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
    pub fn begin(targets: &[(PathBuf, bool)], staging: &[PathBuf], crash: CrashAt) -> Result<Journal, Refusal> {
        let pid = std::process::id();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let plan = format!("{pid}-{:x}", now.as_nanos() & 0xffff_ffff_ffff);
        let folders: BTreeSet<PathBuf> = targets.iter().map(|(t, _)| super::folder(t)).chain(staging.iter().cloned()).collect();
        let files = targets
            .iter()
            .map(|(t, new)| Entry { target: t.clone(), temp: None, new: *new, len: None, hash: None, delete: false })
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
        let mut journal = Journal { record, path: None, crash };
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
    pub fn temp_prefix(&self) -> String {
        temp_prefix(&self.record.plan)
    }

    /// The committed record, with every temporary file and the folder steps, written beside the first
    /// one but not yet in its place: the caller fsyncs it with the new texts (one round of fsyncs, not
    /// two) and then `commit`s it. Dropped uncommitted (a refusal), it is deleted.
    pub fn prepare(&self, entries: Vec<Entry>, steps: &super::folders::Steps, about: &Path) -> Result<Option<Prepared>, Refusal> {
        let Some(path) = &self.path else { return Ok(None) };
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
    pub fn commit(&mut self, prepared: Prepared) -> Result<(), Refusal> {
        let Some(path) = &self.path else { return Ok(()) };
        persist_record(prepared.0, path)?;
        sync_dir(&super::folder(path));
        self.crash.at("commit", 1);
        Ok(())
    }

    /// Removes the record: the plan is whole.
    pub fn finish(mut self) {
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
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    pub fn file(&self) -> &fs::File {
        self.0.as_file()
    }
}

/// The record written whole to a temporary file beside `path` (deleted if it is dropped).
fn stage_record(record: &Record, path: &Path, about: &Path) -> Result<tempfile::NamedTempFile, Refusal> {
    let bytes = serde_json::to_vec_pretty(&record.rooted()).map_err(|e| {
        Refusal::new(Kind::Io, format!("Cannot write the journal of {}: {e}. Nothing was changed.", about.display()))
    })?;
    let journal_refusal = |e: &std::io::Error| io_refusal(path, "write the journal", e);
    let mut temp =
        tempfile::Builder::new().prefix(&record_temp_prefix(&record.plan)).suffix(TEMP_SUFFIX).tempfile_in(super::folder(path)).map_err(|e| journal_refusal(&e))?;
    temp.write_all(&bytes).map_err(|e| journal_refusal(&e))?;
    Ok(temp)
}

/// The staged record renamed over `path`: a reader sees the old record or the new one whole.
fn persist_record(temp: tempfile::NamedTempFile, path: &Path) -> Result<(), Refusal> {
    temp.persist(path).map(|_| ()).map_err(|e| io_refusal(path, "write the journal", &e.error))
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
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(19)?.parse().ok()
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
    fs::metadata(file).and_then(|m| m.modified()).map(|t| t.elapsed().map_or(true, |d| d.as_secs() <= 60)).unwrap_or(true)
}

/// Test hook, read only by `disk::commit`: `MULTIEDIT_TEST_CRASH_AT=<step>:<n>` kills the process
/// (SIGKILL, as a crash would: no destructor runs) right after the n-th time the commit passes
/// `<step>`; `<step>:<n>:stop` stops it (SIGSTOP) instead, so a test can look at a live writer. The
/// steps, in order: `record` (the first record written to its temporary file, not yet renamed into
/// place), `begin` (the first record written), `staged` (a file of the plan staged: its new
/// text written to its temporary file, or a deletion noted), `synced` (all of them fsynced), `commit`
/// (the committed record renamed: the commit point), `rename` (a target deleted, that is moved
/// aside, the deletions first), `rmdir` (a folder removed), `mkdir` (a folder made), `rename` again (a target replaced, the
/// count going on), `done` (the record removed). A single-file plan that makes or removes no folder
/// does not pass `commit`.
pub(super) struct CrashAt(Option<(String, usize, bool)>);

impl CrashAt {
    pub fn from_env() -> CrashAt {
        let spec = std::env::var("MULTIEDIT_TEST_CRASH_AT").ok();
        CrashAt(spec.and_then(|s| {
            let mut parts = s.split(':');
            let step = parts.next()?.to_string();
            let n = parts.next()?.parse().ok()?;
            Some((step, n, parts.next() == Some("stop")))
        }))
    }

    pub fn at(&self, step: &str, n: usize) {
        if let Some((s, k, stop)) = &self.0 {
            if s == step && *k == n {
                #[cfg(unix)]
                // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
                unsafe {
                    libc::kill(libc::getpid(), if *stop { libc::SIGSTOP } else { libc::SIGKILL });
                }
                // No signals elsewhere: an abort ends the process as abruptly (there is no stop).
                #[cfg(not(unix))]
                {
                    let _ = stop;
                    std::process::abort();
                }
            }
        }
    }
}

/// An interrupted plan as the message names it.
pub struct Interrupted {
    pub plan: String,
    pub pid: u32,
    pub time: u64,
    pub files: Vec<PathBuf>,
    /// The record, in the private folder.
    pub journal: PathBuf,
}

/// What a run met in a plan's folders before reading them.
pub enum Recovered {
    /// An interrupted plan of this user's, completed (it had committed) or rolled back.
    Resolved { completed: bool, plan: Interrupted },
    /// The same, met by a dry run or a preview, which writes nothing: left for the next run.
    Left { committed: bool, plan: Interrupted },
    /// A file named like a journal beside the files: not one this user's multiedit wrote, never read.
    Ignored { journal: PathBuf, why: String },
}

impl Recovered {
    /// `completed an interrupted plan of process 123 from 2025-01-02 03:04:05 UTC (3 files: /a, /b, /c)`
    pub fn describe(&self) -> String {
        match self {
            Recovered::Resolved { completed, plan } => {
                let what = if *completed {
                    "completed an interrupted plan"
                } else {
                    "rolled back an interrupted plan (it had not changed any file yet)"
                };
                format!("{what} {}", plan.named())
            }
            Recovered::Left { committed, plan } => format!(
                "left an interrupted plan {} as it is, since a dry run or preview writes nothing: the next multiedit \
                 apply in its folders will {}, and until then its files are read as that plan left them",
                plan.named(),
                if *committed { "complete it" } else { "roll it back (it had not changed any file yet)" }
            ),
            Recovered::Ignored { journal, why } => {
                format!("ignored {}: {why}; nothing in it was used, and it was left as it is", journal.display())
            }
        }
    }

    /// The journal it is about.
    pub fn journal(&self) -> &Path {
        match self {
            Recovered::Resolved { plan, .. } | Recovered::Left { plan, .. } => &plan.journal,
            Recovered::Ignored { journal, .. } => journal,
        }
    }

    /// The line a front end prints: `describe`, and for a plan that was acted on, `before` (what the
    /// run then did: "before applying this one").
    pub fn report(&self, before: &str) -> String {
        match self {
            Recovered::Resolved { .. } => format!("{} {before}", self.describe()),
            _ => self.describe(),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        let message = self.describe();
        match self {
            Recovered::Resolved { completed, plan } => {
                plan.json(if *completed { "completed" } else { "rolled_back" }, message)
            }
            Recovered::Left { plan, .. } => plan.json("left", message),
            Recovered::Ignored { journal, .. } => serde_json::json!({"action": "ignored", "journal": journal, "message": message}),
        }
    }
}

impl Interrupted {
    fn named(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        format!("of process {} from {} ({} files: {})", self.pid, utc(self.time), files.len(), files.join(", "))
    }

    fn json(&self, action: &str, message: String) -> serde_json::Value {
        serde_json::json!({
            "action": action,
            "plan": self.plan,
            "pid": self.pid,
            "time": utc(self.time),
            "files": self.files,
            "journal": self.journal,
            "message": message,
        })
    }
}

/// `2025-01-02 03:04:05 UTC`, from seconds since the epoch (days to a civil date as in Howard
/// Hinnant's algorithm: no date crate for one timestamp).
fn utc(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Names in `dir` that look like journals (written by older versions, or planted), sorted.
fn lookalikes_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with(JOURNAL_PREFIX) && n.ends_with(JOURNAL_SUFFIX)
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The records in the private folders, sorted.
fn records_in(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(entries) = fs::read_dir(dir) else { continue };
        out.extend(
            entries
                .flatten()
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with(RECORD_PREFIX) && n.ends_with(RECORD_SUFFIX)
                })
                .map(|e| e.path()),
        );
    }
    out.sort();
    out
}

fn journal_refusal(journal: &Path, problem: &str) -> Refusal {
    Refusal::new(
        Kind::Io,
        format!(
            "Cannot apply the plan: {} is the journal of an interrupted multiedit run, and {problem}. \
             Nothing was changed. Check the files that run was writing (its new texts are in the \
             .multiedit-*.tmp files beside them), then delete the journal and run the plan again.",
            journal.display()
        ),
    )
}

/// The record at `path`: `None` once gone, or when empty (written but never flushed: a first record
/// lost to a power cut, which is removed unless `dry_run`).
fn read_record(path: &Path, dry_run: bool) -> Result<Option<Record>, Refusal> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    if let Err(why) = private::check(path, false) {
        // Another run may finish its plan and remove its journal between the two looks: gone is
        // not untrusted.
        if matches!(fs::symlink_metadata(path), Err(e) if e.kind() == ErrorKind::NotFound) {
            return Ok(None);
        }
        return Err(journal_refusal(path, &format!("it cannot be trusted ({why})")));
    }
    let bytes = match read_regular(path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(journal_refusal(path, &format!("it cannot be read ({})", super::os_error(&e)))),
    };
    if bytes.is_empty() {
        if !dry_run {
            let _ = fs::remove_file(path);
        }
        return Ok(None);
    }
    let record: Record = serde_json::from_slice(&bytes)
        .map_err(|e| journal_refusal(path, &format!("it is not a journal this version can read ({e})")))?;
    let record = match record.multiedit_journal {
        FORMAT_ROOTED => record.absolute().ok_or_else(|| journal_refusal(path, "its paths do not stay below its root"))?,
        _ if record.root.is_some() => return Err(journal_refusal(path, "it is not a journal this version can read")),
        _ => record,
    };
    let named = path.file_name().and_then(|n| n.to_str()) == Some(record_name(&record.plan).as_str());
    let format_ok = match record.multiedit_journal {
        FORMAT => record.remove_dirs.is_empty() && record.make_dirs.is_empty(),
        FORMAT_FOLDERS => true,
        _ => false,
    };
    if !format_ok || record.folders.is_empty() || !named {
        return Err(journal_refusal(path, "it is not a journal this version can read"));
    }
    Ok(Some(record))
}

/// The folders a plan's files are in, as given and with links resolved.
fn folders_of(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut folders = BTreeSet::new();
    for f in files {
        let dir = super::folder(f);
        if let Ok(real) = fs::canonicalize(f) {
            folders.insert(super::folder(&real));
        } else if let Ok(real) = fs::canonicalize(&dir) {
            folders.insert(real);
        }
        folders.insert(dir);
    }
    folders
}

/// Deals with what interrupted plans left in the folders of `files`, before a run reads them: each
/// interrupted plan of this user's whose record names one of those folders is completed or rolled
/// back, holding the locks of that plan's folders (a `dry_run` only reports it); every file there
/// named like a journal is reported as ignored. Records of running writers are left alone; a record
/// that cannot be read is refused rather than guessed at.
pub fn recover(files: &[PathBuf], dry_run: bool) -> Result<Vec<Recovered>, Refusal> {
    let folders = folders_of(files);
    let mut met = Vec::new();
    let (private_dirs, untrusted) = private::existing();
    for dir in &folders {
        for journal in lookalikes_in(dir) {
            let why = "multiedit keeps its journals in a private folder, never beside the files, so this is not a journal \
                       of this user's multiedit"
                .to_string();
            met.push(Recovered::Ignored { journal, why });
        }
    }
    // Journals in a folder, or files, that others could have written are named, never used.
    for (dir, problem) in &untrusted {
        for journal in records_in(std::slice::from_ref(dir)) {
            met.push(Recovered::Ignored { journal, why: format!("{problem}, so a journal there cannot be trusted") });
        }
    }
    if !dry_run {
        remove_orphan_records(&private_dirs);
    }
    for path in records_in(&private_dirs) {
        if let Err(problem) = private::check(&path, false) {
            // Removed since it was listed: its run finished (or was recovered) meanwhile.
            if fs::symlink_metadata(&path).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
                continue;
            }
            met.push(Recovered::Ignored { journal: path, why: format!("{problem}, so it cannot be trusted") });
            continue;
        }
        let Some(record) = read_record(&path, dry_run)? else { continue };
        if !record.folders.iter().any(|f| folders.contains(f)) || writer_alive(&record, &path) {
            continue;
        }
        if dry_run {
            // A single-file record holds nothing a reader could see: its temporary file is not the file.
            if record.files.len() > 1 {
                met.push(Recovered::Left { committed: record.committed, plan: interrupted(&record, &path) });
            }
            continue;
        }
        let _locks = lock_folders(record.folders.clone());
        // Another run may have recovered it while this one waited for the locks.
        let Some(record) = read_record(&path, false)? else { continue };
        let completed = resolve(&record, &path)?;
        if record.files.len() > 1 {
            met.push(Recovered::Resolved { completed, plan: interrupted(&record, &path) });
        }
    }
    Ok(met)
}

/// Removes the records' temporary files (`.record-<plan>-*.tmp`) that a killed run left before its
/// first record was renamed into place: no record names that plan, so no recovery would ever meet
/// them. Those of a plan whose record exists are its recovery's; those of a live writer are its own.
fn remove_orphan_records(dirs: &[PathBuf]) {
    for dir in dirs {
        let Ok(entries) = fs::read_dir(dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(".record-")).filter(|n| n.ends_with(TEMP_SUFFIX)) else { continue };
            // `<pid>-<hex>-<random>.tmp`: the plan is the first two parts.
            let mut parts = rest.splitn(3, '-');
            let (Some(pid), Some(hex)) = (parts.next(), parts.next()) else { continue };
            let Ok(pid) = pid.parse::<u32>() else { continue };
            let path = e.path();
            if dir.join(record_name(&format!("{pid}-{hex}"))).exists() || alive(pid, None, &path) || private::check(&path, false).is_err() {
                continue;
            }
            let _ = fs::remove_file(&path);
        }
    }
}

/// `recover`, adding to `met` what it did not hold already (a run that looks at one file at a time
/// meets an ignored journal, or a plan it leaves, once per file of that folder).
pub fn recover_into(met: &mut Vec<Recovered>, files: &[PathBuf], dry_run: bool) -> Result<(), Refusal> {
    for r in recover(files, dry_run)? {
        if !met.iter().any(|m| m.journal() == r.journal()) {
            met.push(r);
        }
    }
    Ok(())
}

fn interrupted(record: &Record, path: &Path) -> Interrupted {
    Interrupted {
        plan: record.plan.clone(),
        pid: record.pid,
        time: record.time,
        files: record.files.iter().map(|f| f.target.clone()).collect(),
        journal: path.to_path_buf(),
    }
}

/// Whether `temp` is one of the plan's own temporary files: named by its pattern, in one of its folders.
fn own_temp(record: &Record, temp: &Path) -> bool {
    let prefix = temp_prefix(&record.plan);
    let named = temp.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix) && n.ends_with(TEMP_SUFFIX));
    named && record.folders.iter().any(|d| temp.parent() == Some(d.as_path()))
}

/// Rolls the plan of `record` forward (committed) or back; returns whether it was completed. Forward
/// goes in the commit's order (`disk::apply_all`), each step taken as done when its result is there
/// already: a run killed at any point of the commit, or of this roll-forward, is completed.
fn resolve(record: &Record, path: &Path) -> Result<bool, Refusal> {
    if record.committed {
        let refuse = |what: String| journal_refusal(path, &what);
        let os = |e: &std::io::Error| super::os_error(e);
        for f in &record.files {
            if !record.folders.iter().any(|d| super::folder(&f.target) == *d) {
                return Err(refuse(format!("it names {}, outside its folders", f.target.display())));
            }
        }
        for dir in record.remove_dirs.iter().chain(&record.make_dirs) {
            if !record.folders.iter().any(|d| d.starts_with(dir) || dir.starts_with(d)) {
                return Err(refuse(format!("it names the folder {}, outside its folders", dir.display())));
            }
        }
        // The record's paths were resolved by its writer: each folder is opened along them without
        // following a link (`opened`), so one swapped in since cannot lead the recovery elsewhere.
        let opened = super::Opened::default();
        fn entry<'p>(opened: &super::Opened, p: &'p Path) -> std::io::Result<(std::sync::Arc<cap_std::fs::Dir>, &'p std::ffi::OsStr)> {
            opened.parent(p)
        }
        let sync = |d: &Path| super::sync_in(&opened, d);
        for f in record.files.iter().filter(|f| f.delete) {
            match entry(&opened, &f.target).and_then(|(d, name)| d.remove_file(name)) {
                Ok(()) => sync(&super::folder(&f.target)),
                // Gone, or its folder already replaced by a new file, or itself by a new folder.
                Err(e) if super::folders::absent(&e) => {}
                Err(_) if record.make_dirs.contains(&f.target) && f.target.is_dir() => {}
                Err(e) => return Err(refuse(format!("{} cannot be deleted ({})", f.target.display(), os(&e)))),
            }
        }
        for dir in &record.remove_dirs {
            match entry(&opened, dir).and_then(|(d, name)| d.remove_dir(name)) {
                Ok(()) => {
                    opened.forget(dir);
                    sync(&super::folder(dir))
                }
                // Removed already, and perhaps already replaced by its new file.
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                // A folder it was in is already a new file.
                Err(_) if fs::symlink_metadata(dir).is_err_and(|e| super::folders::absent(&e)) => {}
                Err(_) if fs::symlink_metadata(dir).is_ok_and(|m| m.is_file()) && record.files.iter().any(|f| f.target == *dir && !f.delete) => {}
                Err(e) => return Err(refuse(format!("the folder {} cannot be removed ({})", dir.display(), os(&e)))),
            }
        }
        for dir in &record.make_dirs {
            match entry(&opened, dir).and_then(|(d, name)| d.create_dir(name)) {
                Ok(()) => sync(&super::folder(dir)),
                // Made before the crash: a folder, never a link put there since.
                Err(e) if e.kind() == ErrorKind::AlreadyExists && opened.dir(dir).is_ok() => {}
                Err(e) => return Err(refuse(format!("the folder {} cannot be created ({})", dir.display(), os(&e)))),
            }
        }
        for f in record.files.iter().filter(|f| !f.delete) {
            let Some(temp) = &f.temp else { continue };
            if !own_temp(record, temp) {
                return Err(refuse(format!("{} is not one of its temporary files", temp.display())));
            }
            // A link or anything but a regular file in its place is not the text it recorded.
            let (temp_dir, temp_name) = entry(&opened, temp).map_err(|e| refuse(format!("{} cannot be read ({})", temp.display(), os(&e))))?;
            let bytes = match temp_dir.symlink_metadata(temp_name) {
                Err(e) if e.kind() == ErrorKind::NotFound => continue, // renamed before the crash
                Ok(m) if m.is_file() => super::read_in(&temp_dir, temp_name).ok(),
                _ => None,
            };
            if bytes.as_ref().map(|b| b.len() as u64) != f.len || bytes.as_deref().map(digest) != f.hash {
                return Err(refuse(format!("{}, the new text of {}, is not the text it recorded", temp.display(), f.target.display())));
            }
            entry(&opened, &f.target)
                .and_then(|(d, name)| temp_dir.rename(temp_name, &d, name))
                .map_err(|e| refuse(format!("{} cannot be replaced ({})", f.target.display(), os(&e))))?;
        }
    }
    // What is left: temporary files of the plan (all of them when it never committed), then the record.
    let prefix = temp_prefix(&record.plan);
    for dir in &record.folders {
        remove_matching(dir, |n| n.starts_with(&prefix) && n.ends_with(TEMP_SUFFIX));
    }
    // A committed record the run had written and fsynced but not yet renamed into place.
    let staged = record_temp_prefix(&record.plan);
    let private = fs::canonicalize(super::folder(path)).unwrap_or_else(|_| super::folder(path));
    remove_matching(&private, |n| n.starts_with(&staged) && n.ends_with(TEMP_SUFFIX));
    let _ = fs::remove_file(path);
    Ok(record.committed)
}

/// Removes the entries of folder `dir` (opened without following a link) whose names match.
fn remove_matching(dir: &Path, matches: impl Fn(&str) -> bool) {
    let opened = super::Opened::default();
    let Ok(handle) = opened.dir(dir) else { return };
    let Ok(entries) = handle.entries() else { return };
    for e in entries.flatten() {
        // A deleted file waiting aside may be a symbolic link: that link is removed, never followed.
        if matches(&e.file_name().to_string_lossy()) && e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()) {
            let _ = handle.remove_file(e.file_name());
        }
    }
    super::sync_in(&opened, dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_its_paths_relative_to_its_root_and_reads_back_whole() {
        let entry = |t: &str, temp: Option<&str>| Entry { target: t.into(), temp: temp.map(PathBuf::from), new: false, len: Some(1), hash: None, delete: false };
        let record = Record {
            multiedit_journal: FORMAT_FOLDERS,
            plan: "1-a".into(),
            pid: 1,
            started: None,
            time: 0,
            committed: true,
            folders: vec!["/w/p/src".into(), "/w/p/doc".into()],
            files: vec![entry("/w/p/src/a.rs", Some("/w/p/src/.multiedit-1-a-x.tmp")), entry("/w/p/doc/b.md", None)],
            remove_dirs: vec!["/w/p/doc/old".into()],
            make_dirs: vec![],
            root: None,
        };
        let written = serde_json::to_value(record.rooted()).unwrap();
        assert_eq!((written["multiedit_journal"].as_u64(), written["root"].as_str()), (Some(5), Some("/w/p")));
        assert_eq!(written["folders"], serde_json::json!(["src", "doc"]));
        assert_eq!(written["files"][0]["temp"], "src/.multiedit-1-a-x.tmp");
        let back = serde_json::from_value::<Record>(written.clone()).unwrap().absolute().unwrap();
        assert_eq!((back.folders.clone(), back.files[0].target.clone(), back.remove_dirs.clone()), (record.folders, record.files[0].target.clone(), record.remove_dirs));
        // A path that would leave the root is not a record this version acts on.
        let mut escaping = written;
        escaping["files"][1]["target"] = "../../etc/passwd".into();
        assert!(serde_json::from_value::<Record>(escaping).unwrap().absolute().is_none());
    }
}
