//! The journal that makes a multi-file commit whole under a crash, and the recovery that a later run
//! does when it meets one.
//!
//! A rename is atomic for one file only; a plan over several files needs one atomic step that decides
//! for all of them. As git's lock-then-rename and SQLite's journal do, that step is the rename of a
//! small record:
//!
//! 1. Before the first temporary file of the plan goes into a folder, a *marker* is written there
//!    (`.multiedit-journal-<plan>.json`: the plan, its writer, its folders and files). Every folder that
//!    holds anything of the plan thus says so, whichever folder the next run looks in.
//! 2. Every new text is staged and fsynced (`disk::stage`), then checked under the folder locks.
//! 3. The **commit point**: the record listing every target, its temporary file, and the new text's
//!    length and hash is renamed over the marker of the first folder (sorted), the *primary*.
//! 4. The temporary files are renamed over their targets.
//! 5. The other folders' markers are removed, then the primary record, last.
//!
//! Recovery, for a journal whose writer is gone: if the primary record is committed, every temporary
//! file still there (checked against its length and hash) is renamed over its target (roll forward);
//! otherwise the plan never committed and every file is still old, so its temporary files and markers
//! are deleted (roll back). Because the primary goes last in step 5, "no committed primary" can only
//! mean "never committed". Either way no file of the plan is left in a mix of old and new.
//!
//! Each file is written temporary-then-rename and its folder fsynced, so a journal is never seen half
//! written and survives a power loss once the step after it has started.

use std::collections::BTreeSet;
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{io_refusal, lock_folders, sync_dir, TEMP_PREFIX, TEMP_SUFFIX};
use crate::engine::{Kind, Refusal};

pub const JOURNAL_PREFIX: &str = ".multiedit-journal-";
pub const JOURNAL_SUFFIX: &str = ".json";
/// 2 when the plan deletes files: a run that knows only 1 would skip the deletions, so it must refuse
/// such a journal rather than roll it forward half-way.
const FORMAT: u32 = 1;
const FORMAT_WITH_DELETES: u32 = 2;

/// What is written in every folder of a plan. The markers and the committed primary share the shape;
/// only the primary, once committed, knows the temporary files.
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
    primary: PathBuf,
    folders: Vec<PathBuf>,
    files: Vec<Entry>,
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

/// A plan's journal as its writer keeps it: the record, and the journal files it has put on disk.
pub(super) struct Journal {
    record: Record,
    written: Vec<PathBuf>,
    crash: CrashAt,
}

impl Journal {
    pub fn new(targets: &[(PathBuf, bool)], crash: CrashAt) -> Journal {
        let pid = std::process::id();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let plan = format!("{pid}-{:x}", now.as_nanos() & 0xffff_ffff_ffff);
        let folders: BTreeSet<PathBuf> = targets.iter().map(|(t, _)| super::folder(t)).collect();
        let folders: Vec<PathBuf> = folders.into_iter().collect();
        let primary = folders[0].join(journal_name(&plan));
        let files = targets
            .iter()
            .map(|(t, new)| Entry { target: t.clone(), temp: None, new: *new, len: None, hash: None, delete: false })
            .collect();
        let record =
            Record { multiedit_journal: FORMAT, plan, pid, started: start_time(pid), time: now.as_secs(), committed: false, primary, folders, files };
        Journal { record, written: Vec::new(), crash }
    }

    /// Prefix of the plan's temporary files: recovery deletes exactly these.
    pub fn temp_prefix(&self) -> String {
        temp_prefix(&self.record.plan)
    }

    /// Writes the marker of `dir` unless there is one; `about` is the file that errors are about.
    pub fn mark(&mut self, dir: &Path, about: &Path) -> Result<(), Refusal> {
        let path = dir.join(journal_name(&self.record.plan));
        if self.written.contains(&path) {
            return Ok(());
        }
        write_record(&self.record, &path, &self.temp_prefix(), about)?;
        self.written.push(path);
        self.crash.at("marker", self.written.len());
        Ok(())
    }

    /// The commit point: the record with every temporary file replaces the primary's marker.
    pub fn commit(&mut self, entries: Vec<Entry>, about: &Path) -> Result<(), Refusal> {
        let mut record = self.record.clone();
        record.committed = true;
        if entries.iter().any(|e| e.delete) {
            record.multiedit_journal = FORMAT_WITH_DELETES;
        }
        record.files = entries;
        write_record(&record, &record.primary, &self.temp_prefix(), about)?;
        if !self.written.contains(&record.primary) {
            self.written.push(record.primary.clone());
        }
        self.crash.at("commit", 1);
        Ok(())
    }

    /// Removes the journal: markers first, the primary last (see the module's step 5).
    pub fn finish(mut self) {
        let written = std::mem::take(&mut self.written);
        remove_journal_files(&written, &self.record.primary, &self.crash);
    }
}

impl Drop for Journal {
    /// A refused plan takes its markers with it (its files are all still old).
    fn drop(&mut self) {
        remove_journal_files(&std::mem::take(&mut self.written), &self.record.primary, &CrashAt(None));
    }
}

fn remove_journal_files(written: &[PathBuf], primary: &Path, crash: &CrashAt) {
    let mut n = 0;
    for p in written.iter().filter(|p| p.as_path() != primary) {
        let _ = fs::remove_file(p);
        sync_dir(&super::folder(p));
        n += 1;
        crash.at("unmark", n);
    }
    if written.iter().any(|p| p == primary) {
        let _ = fs::remove_file(primary);
        sync_dir(&super::folder(primary));
        crash.at("done", 1);
    }
}

fn journal_name(plan: &str) -> String {
    format!("{JOURNAL_PREFIX}{plan}{JOURNAL_SUFFIX}")
}

fn temp_prefix(plan: &str) -> String {
    format!("{TEMP_PREFIX}{plan}-")
}

fn write_record(record: &Record, path: &Path, temp_prefix: &str, about: &Path) -> Result<(), Refusal> {
    let dir = super::folder(path);
    let bytes = serde_json::to_vec_pretty(record).map_err(|e| {
        Refusal::new(Kind::Io, format!("Cannot write the journal beside {}: {e}. Nothing was changed.", about.display()))
    })?;
    let mut temp = tempfile::Builder::new()
        .prefix(temp_prefix)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(&dir)
        .map_err(|e| io_refusal(about, "create a temporary file beside", &e))?;
    temp.write_all(&bytes).map_err(|e| io_refusal(about, "write", &e))?;
    temp.as_file().sync_all().map_err(|e| io_refusal(about, "flush", &e))?;
    temp.persist(path).map_err(|e| io_refusal(path, "write the journal", &e.error))?;
    sync_dir(&dir);
    Ok(())
}

/// Length and hash of a new text, recorded so that recovery renames only a complete temporary file.
/// FNV-1a over 8-byte words: a check against a torn or foreign file, not against an adversary, and
/// cheap enough for every multi-file commit.
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
    if record.pid == std::process::id() {
        return true;
    }
    if Path::new("/proc/self/stat").exists() {
        return match start_time(record.pid) {
            None => false,
            Some(t) => record.started.is_none_or(|s| s == t),
        };
    }
    // No /proc: a journal younger than a minute is taken for a live one.
    fs::metadata(journal).and_then(|m| m.modified()).map(|t| t.elapsed().map_or(true, |d| d.as_secs() <= 60)).unwrap_or(true)
}

/// Test hook, read only by `disk::commit`: `MULTIEDIT_TEST_CRASH_AT=<step>:<n>` kills the process
/// (SIGKILL, as a crash would: no destructor runs) right after the n-th time the commit passes
/// `<step>`; `<step>:<n>:stop` stops it (SIGSTOP) instead, so a test can look at a live writer. The
/// steps, in order: `marker` (a folder's marker written), `staged` (a new text staged and fsynced),
/// `commit` (the primary record renamed: the commit point), `rename` (a target replaced), `unmark` (a
/// marker removed), `done` (the primary removed). A single-file plan passes only `staged` and `rename`.
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

/// What recovery did with one interrupted plan.
pub struct Recovered {
    pub completed: bool,
    pub plan: String,
    pub pid: u32,
    pub time: u64,
    pub files: Vec<PathBuf>,
}

impl Recovered {
    /// `completed an interrupted plan of process 123 from 2025-01-02 03:04:05 UTC (3 files: /a, /b, /c)`
    pub fn describe(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        let what = if self.completed {
            "completed an interrupted plan"
        } else {
            "rolled back an interrupted plan (it had not changed any file yet)"
        };
        format!("{what} of process {} from {} ({} files: {})", self.pid, utc(self.time), files.len(), files.join(", "))
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "action": if self.completed { "completed" } else { "rolled_back" },
            "plan": self.plan,
            "pid": self.pid,
            "time": utc(self.time),
            "files": self.files,
            "message": self.describe(),
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

/// The journals in `dir`, sorted.
fn journals_in(dir: &Path) -> Vec<PathBuf> {
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

/// Temporary-file prefixes of the plans that have a journal in `dir`: `disk::remove_stale_temps` leaves
/// those to recovery, which alone knows whether they are about to become the files.
pub(super) fn journaled_temp_prefixes(dir: &Path) -> Vec<String> {
    journals_in(dir)
        .iter()
        .filter_map(|j| {
            let name = j.file_name()?.to_str()?;
            Some(temp_prefix(name.strip_prefix(JOURNAL_PREFIX)?.strip_suffix(JOURNAL_SUFFIX)?))
        })
        .collect()
}

fn journal_refusal(journal: &Path, problem: &str) -> Refusal {
    Refusal::new(
        Kind::Io,
        format!(
            "Cannot write in {}: it holds {}, the journal of an interrupted multiedit run, and {problem}. \
             Nothing was changed. Check the files that run was writing (its new texts are in the \
             .multiedit-*.tmp files beside them), then delete the journal and run the plan again.",
            super::folder(journal).display(),
            journal.display()
        ),
    )
}

fn read_record(journal: &Path) -> Result<Option<Record>, Refusal> {
    let bytes = match fs::read(journal) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(journal_refusal(journal, &format!("it cannot be read ({})", super::os_error(&e)))),
    };
    let record: Record = serde_json::from_slice(&bytes)
        .map_err(|e| journal_refusal(journal, &format!("it is not a journal this version can read ({e})")))?;
    if !(FORMAT..=FORMAT_WITH_DELETES).contains(&record.multiedit_journal) || record.folders.is_empty() {
        return Err(journal_refusal(journal, "it is not a journal this version can read"));
    }
    Ok(Some(record))
}

/// Completes or rolls back every interrupted plan that left a journal in the folders of `files`,
/// holding the locks of that plan's folders. Both front ends call it before reading a plan's files,
/// so no run ever reads, shows or edits a half-applied plan. Journals of running writers are left
/// alone; a journal that cannot be read is refused rather than guessed at.
pub fn recover(files: &[PathBuf]) -> Result<Vec<Recovered>, Refusal> {
    let mut folders = BTreeSet::new();
    for f in files {
        folders.insert(super::folder(f));
        if let Ok(real) = fs::canonicalize(f) {
            folders.insert(super::folder(&real));
        }
    }
    let mut done = Vec::new();
    for dir in folders {
        for journal in journals_in(&dir) {
            let Some(record) = read_record(&journal)? else { continue };
            if writer_alive(&record, &journal) {
                continue;
            }
            let mut lock_dirs = record.folders.clone();
            lock_dirs.push(dir.clone());
            let _locks = lock_folders(lock_dirs);
            // Another run may have recovered it while this one waited for the locks.
            if read_record(&journal)?.is_none() {
                continue;
            }
            done.push(resolve(&record)?);
        }
    }
    Ok(done)
}

fn resolve(record: &Record) -> Result<Recovered, Refusal> {
    let primary = read_record(&record.primary)?.filter(|p| p.committed && p.plan == record.plan);
    let prefix = temp_prefix(&record.plan);
    let name = journal_name(&record.plan);
    let completed = primary.is_some();
    if let Some(p) = &primary {
        for f in &p.files {
            if f.delete {
                match fs::remove_file(&f.target) {
                    Ok(()) => sync_dir(&super::folder(&f.target)),
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(e) => return Err(journal_refusal(&p.primary, &format!("{} cannot be deleted ({})", f.target.display(), super::os_error(&e)))),
                }
                continue;
            }
            let Some(temp) = &f.temp else { continue };
            let bytes = match fs::read(temp) {
                Ok(b) => b,
                // Renamed before the crash.
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(journal_refusal(&p.primary, &format!("{} cannot be read ({})", temp.display(), super::os_error(&e)))),
            };
            if Some(bytes.len() as u64) != f.len || Some(digest(&bytes)) != f.hash {
                return Err(journal_refusal(
                    &p.primary,
                    &format!("{}, the new text of {}, is not the text it recorded", temp.display(), f.target.display()),
                ));
            }
            fs::rename(temp, &f.target).map_err(|e| journal_refusal(&p.primary, &format!("{} cannot be replaced ({})", f.target.display(), super::os_error(&e))))?;
            sync_dir(&super::folder(&f.target));
        }
    }
    // What is left: temporary files of the plan (all of them when it never committed, only the
    // journal's own otherwise), the markers, then the primary.
    for dir in &record.folders {
        remove_matching(dir, |n| n.starts_with(&prefix) && n.ends_with(TEMP_SUFFIX));
    }
    let markers: Vec<PathBuf> = record.folders.iter().map(|d| d.join(&name)).collect();
    remove_journal_files(&markers, &record.primary, &CrashAt(None));
    Ok(Recovered { completed, plan: record.plan.clone(), pid: record.pid, time: record.time, files: record.files.iter().map(|f| f.target.clone()).collect() })
}

fn remove_matching(dir: &Path, matches: impl Fn(&str) -> bool) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        if matches(&e.file_name().to_string_lossy()) {
            let _ = fs::remove_file(e.path());
        }
    }
    sync_dir(dir);
}
