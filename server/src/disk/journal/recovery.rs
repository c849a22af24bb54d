//! Recovery: what a run does with a record left by a run that is gone, before it reads its own plan's
//! files: completes a committed plan (roll forward, every step checked as done or redone), rolls back
//! one that never committed, reports one met by a dry run or a preview, and names a look-alike beside
//! the files without reading it.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::record::{
    alive, digest, record_name, record_temp_prefix, temp_prefix, writer_alive, Record, FORMAT,
    FORMAT_FOLDERS, FORMAT_ROOTED, JOURNAL_PREFIX, JOURNAL_SUFFIX, RECORD_PREFIX, RECORD_SUFFIX,
};
use crate::disk::folders::{self, folder};
use crate::disk::opened::Opened;
use crate::disk::private;
use crate::disk::read::read_in;
use crate::disk::read::read_regular;
use crate::disk::refusal::os_error;
use crate::disk::sync::lock_folders;
use crate::disk::sync::sync_in;
use crate::disk::temp::TEMP_SUFFIX;
use crate::refusal::{Kind, Refusal};
use crate::result::{RecoveredEntry, Recovery};

/// An interrupted plan as the message names it.
pub struct Interrupted {
    pub(crate) plan: String,
    pub(crate) pid: u32,
    pub(crate) time: u64,
    pub(crate) files: Vec<PathBuf>,
    /// The record, in the private folder.
    pub(crate) journal: PathBuf,
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
    pub(crate) fn describe(&self) -> String {
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
    pub(crate) fn journal(&self) -> &Path {
        match self {
            Recovered::Resolved { plan, .. } | Recovered::Left { plan, .. } => &plan.journal,
            Recovered::Ignored { journal, .. } => journal,
        }
    }

    /// The line a front end prints: `describe`, and for a plan that was acted on, `before` (what the
    /// run then did: "before applying this one").
    pub(crate) fn report(&self, before: &str) -> String {
        match self {
            Recovered::Resolved { .. } => format!("{} {before}", self.describe()),
            _ => self.describe(),
        }
    }

    /// As a result carries it (`recovered`).
    pub(crate) fn to_entry(&self) -> RecoveredEntry {
        let message = self.describe();
        match self {
            Recovered::Resolved { completed, plan } => plan.entry(
                if *completed {
                    Recovery::Completed
                } else {
                    Recovery::RolledBack
                },
                message,
            ),
            Recovered::Left { plan, .. } => plan.entry(Recovery::Left, message),
            Recovered::Ignored { journal, .. } => RecoveredEntry {
                action: Recovery::Ignored,
                journal: journal.display().to_string(),
                message,
                plan: None,
                pid: None,
                time: None,
                files: Vec::new(),
            },
        }
    }
}

impl Interrupted {
    fn named(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        format!(
            "of process {} from {} ({} files: {})",
            self.pid,
            utc(self.time),
            files.len(),
            files.join(", ")
        )
    }

    fn entry(&self, action: Recovery, message: String) -> RecoveredEntry {
        RecoveredEntry {
            action,
            journal: self.journal.display().to_string(),
            message,
            plan: Some(self.plan.clone()),
            pid: Some(self.pid),
            time: Some(utc(self.time)),
            files: self.files.iter().map(|f| f.display().to_string()).collect(),
        }
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
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Names in `dir` that look like journals (written by older versions, or planted), sorted.
fn lookalikes_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
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
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
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
        return Err(journal_refusal(
            path,
            &format!("it cannot be trusted ({why})"),
        ));
    }
    let bytes = match read_regular(path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(journal_refusal(
                path,
                &format!("it cannot be read ({})", os_error(&e)),
            ))
        }
    };
    if bytes.is_empty() {
        if !dry_run {
            let _ = fs::remove_file(path);
        }
        return Ok(None);
    }
    let record: Record = serde_json::from_slice(&bytes).map_err(|e| {
        journal_refusal(
            path,
            &format!("it is not a journal this version can read ({e})"),
        )
    })?;
    let record = match record.multiedit_journal {
        FORMAT_ROOTED => record
            .absolute()
            .ok_or_else(|| journal_refusal(path, "its paths do not stay below its root"))?,
        _ if record.root.is_some() => {
            return Err(journal_refusal(
                path,
                "it is not a journal this version can read",
            ))
        }
        _ => record,
    };
    let named =
        path.file_name().and_then(|n| n.to_str()) == Some(record_name(&record.plan).as_str());
    let format_ok = match record.multiedit_journal {
        FORMAT => record.remove_dirs.is_empty() && record.make_dirs.is_empty(),
        FORMAT_FOLDERS => true,
        _ => false,
    };
    if !format_ok || record.folders.is_empty() || !named {
        return Err(journal_refusal(
            path,
            "it is not a journal this version can read",
        ));
    }
    Ok(Some(record))
}

/// The folders a plan's files are in, as given and with links resolved.
fn folders_of(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut folders = BTreeSet::new();
    for f in files {
        let dir = folder(f);
        if let Ok(real) = fs::canonicalize(f) {
            folders.insert(folder(&real));
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
pub(crate) fn recover(files: &[PathBuf], dry_run: bool) -> Result<Vec<Recovered>, Refusal> {
    recover_folders(&folders_of(files), dry_run)
}

/// `recover` of the files in `folders`.
fn recover_folders(folders: &BTreeSet<PathBuf>, dry_run: bool) -> Result<Vec<Recovered>, Refusal> {
    let mut met = Vec::new();
    let (private_dirs, untrusted) = private::existing();
    for dir in folders {
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
            met.push(Recovered::Ignored {
                journal,
                why: format!("{problem}, so a journal there cannot be trusted"),
            });
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
            met.push(Recovered::Ignored {
                journal: path,
                why: format!("{problem}, so it cannot be trusted"),
            });
            continue;
        }
        let Some(record) = read_record(&path, dry_run)? else {
            continue;
        };
        if !record.folders.iter().any(|f| folders.contains(f)) || writer_alive(&record, &path) {
            continue;
        }
        if dry_run {
            // A single-file record holds nothing a reader could see: its temporary file is not the file.
            if record.files.len() > 1 {
                met.push(Recovered::Left {
                    committed: record.committed,
                    plan: interrupted(&record, &path),
                });
            }
            continue;
        }
        let _locks = lock_folders(record.folders.clone());
        // Another run may have recovered it while this one waited for the locks.
        let Some(record) = read_record(&path, false)? else {
            continue;
        };
        let completed = resolve(&record, &path)?;
        if record.files.len() > 1 {
            met.push(Recovered::Resolved {
                completed,
                plan: interrupted(&record, &path),
            });
        }
    }
    Ok(met)
}

/// Removes the records' temporary files (`.record-<plan>-*.tmp`) that a killed run left before its
/// first record was renamed into place: no record names that plan, so no recovery would ever meet
/// them. Those of a plan whose record exists are its recovery's; those of a live writer are its own.
fn remove_orphan_records(dirs: &[PathBuf]) {
    for dir in dirs {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(rest) = name
                .to_str()
                .and_then(|n| n.strip_prefix(".record-"))
                .filter(|n| n.ends_with(TEMP_SUFFIX))
            else {
                continue;
            };
            // `<pid>-<hex>-<random>.tmp`: the plan is the first two parts.
            let mut parts = rest.splitn(3, '-');
            let (Some(pid), Some(hex)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Ok(pid) = pid.parse::<u32>() else {
                continue;
            };
            let path = e.path();
            if dir.join(record_name(&format!("{pid}-{hex}"))).exists()
                || alive(pid, None, &path)
                || private::check(&path, false).is_err()
            {
                continue;
            }
            let _ = fs::remove_file(&path);
        }
    }
}

/// `recover` for a run that reads one file at a time, adding to `met` what it did not hold already:
/// the folders in `done` were dealt with earlier in this run and are not looked at again (each look
/// lists the folder, which per file of a large folder cost time quadratic in its files).
pub(crate) fn recover_into(
    met: &mut Vec<Recovered>,
    files: &[PathBuf],
    dry_run: bool,
    done: &mut BTreeSet<PathBuf>,
) -> Result<(), Refusal> {
    let folders: BTreeSet<PathBuf> = folders_of(files)
        .into_iter()
        .filter(|f| !done.contains(f))
        .collect();
    if folders.is_empty() {
        return Ok(());
    }
    done.extend(folders.iter().cloned());
    for r in recover_folders(&folders, dry_run)? {
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
    let named = temp
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(TEMP_SUFFIX));
    named
        && record
            .folders
            .iter()
            .any(|d| temp.parent() == Some(d.as_path()))
}

/// Rolls the plan of `record` forward (committed) or back; returns whether it was completed. Forward
/// goes in the commit's order (`disk::changes::apply_all`), each step taken as done when its result is there
/// already: a run killed at any point of the commit, or of this roll-forward, is completed.
fn resolve(record: &Record, path: &Path) -> Result<bool, Refusal> {
    if record.committed {
        names_only_its_folders(record, path)?;
        // The record's paths were resolved by its writer: each folder is opened along them without
        // following a link (`opened`), so one swapped in since cannot lead the recovery elsewhere.
        let opened = Opened::default();
        delete_files(record, path, &opened)?;
        remove_folders(record, path, &opened)?;
        make_folders(record, path, &opened)?;
        rename_texts(record, path, &opened)?;
    }
    // What is left: temporary files of the plan (all of them when it never committed), then the record.
    let prefix = temp_prefix(&record.plan);
    for dir in &record.folders {
        remove_matching(dir, |n| n.starts_with(&prefix) && n.ends_with(TEMP_SUFFIX));
    }
    // A committed record the run had written and fsynced but not yet renamed into place.
    let staged = record_temp_prefix(&record.plan);
    let private = fs::canonicalize(folder(path)).unwrap_or_else(|_| folder(path));
    remove_matching(&private, |n| {
        n.starts_with(&staged) && n.ends_with(TEMP_SUFFIX)
    });
    let _ = fs::remove_file(path);
    Ok(record.committed)
}

/// Refuses a committed record (at `path`) that names a file or a folder outside its folders.
fn names_only_its_folders(record: &Record, path: &Path) -> Result<(), Refusal> {
    let refuse = |what: String| journal_refusal(path, &what);
    for f in &record.files {
        if !record.folders.iter().any(|d| folder(&f.target) == *d) {
            return Err(refuse(format!(
                "it names {}, outside its folders",
                f.target.display()
            )));
        }
    }
    for dir in record.remove_dirs.iter().chain(&record.make_dirs) {
        if !record
            .folders
            .iter()
            .any(|d| d.starts_with(dir) || dir.starts_with(d))
        {
            return Err(refuse(format!(
                "it names the folder {}, outside its folders",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Rolling forward, first: the files the plan deletes (`record` read at `path`).
fn delete_files(record: &Record, path: &Path, opened: &Opened) -> Result<(), Refusal> {
    for f in record.files.iter().filter(|f| f.delete) {
        match opened
            .parent(&f.target)
            .and_then(|(d, name)| d.remove_file(name))
        {
            Ok(()) => sync_in(opened, &folder(&f.target)),
            // Gone, or its folder already replaced by a new file, or itself by a new folder.
            Err(e) if folders::absent(&e) => {}
            Err(_) if record.make_dirs.contains(&f.target) && f.target.is_dir() => {}
            Err(e) => {
                return Err(journal_refusal(
                    path,
                    &format!(
                        "{} cannot be deleted ({})",
                        f.target.display(),
                        os_error(&e)
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Rolling forward, then: the folders new files replace, deepest first.
fn remove_folders(record: &Record, path: &Path, opened: &Opened) -> Result<(), Refusal> {
    for dir in &record.remove_dirs {
        match opened.parent(dir).and_then(|(d, name)| d.remove_dir(name)) {
            Ok(()) => {
                opened.forget(dir);
                sync_in(opened, &folder(dir))
            }
            // Removed already, and perhaps already replaced by its new file.
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            // A folder it was in is already a new file.
            Err(_) if fs::symlink_metadata(dir).is_err_and(|e| folders::absent(&e)) => {}
            Err(_)
                if fs::symlink_metadata(dir).is_ok_and(|m| m.is_file())
                    && record.files.iter().any(|f| f.target == *dir && !f.delete) => {}
            Err(e) => {
                return Err(journal_refusal(
                    path,
                    &format!(
                        "the folder {} cannot be removed ({})",
                        dir.display(),
                        os_error(&e)
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Rolling forward, then: the folders new files need, shallowest first.
fn make_folders(record: &Record, path: &Path, opened: &Opened) -> Result<(), Refusal> {
    for dir in &record.make_dirs {
        match opened.parent(dir).and_then(|(d, name)| d.create_dir(name)) {
            Ok(()) => sync_in(opened, &folder(dir)),
            // Made before the crash: a folder, never a link put there since.
            Err(e) if e.kind() == ErrorKind::AlreadyExists && opened.dir(dir).is_ok() => {}
            Err(e) => {
                return Err(journal_refusal(
                    path,
                    &format!(
                        "the folder {} cannot be created ({})",
                        dir.display(),
                        os_error(&e)
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Rolling forward, last: each new text still in its temporary file checked against the length and
/// hash the record holds, then renamed over its target.
fn rename_texts(record: &Record, path: &Path, opened: &Opened) -> Result<(), Refusal> {
    let refuse = |what: String| journal_refusal(path, &what);
    for f in record.files.iter().filter(|f| !f.delete) {
        let Some(temp) = &f.temp else { continue };
        if !own_temp(record, temp) {
            return Err(refuse(format!(
                "{} is not one of its temporary files",
                temp.display()
            )));
        }
        // A link or anything but a regular file in its place is not the text it recorded.
        let (temp_dir, temp_name) = opened.parent(temp).map_err(|e| {
            refuse(format!(
                "{} cannot be read ({})",
                temp.display(),
                os_error(&e)
            ))
        })?;
        let bytes = match temp_dir.symlink_metadata(temp_name) {
            Err(e) if e.kind() == ErrorKind::NotFound => continue, // renamed before the crash
            Ok(m) if m.is_file() => read_in(&temp_dir, temp_name).ok(),
            _ => None,
        };
        if bytes.as_ref().map(|b| b.len() as u64) != f.len || bytes.as_deref().map(digest) != f.hash
        {
            return Err(refuse(format!(
                "{}, the new text of {}, is not the text it recorded",
                temp.display(),
                f.target.display()
            )));
        }
        opened
            .parent(&f.target)
            .and_then(|(d, name)| temp_dir.rename(temp_name, &d, name))
            .map_err(|e| {
                refuse(format!(
                    "{} cannot be replaced ({})",
                    f.target.display(),
                    os_error(&e)
                ))
            })?;
    }
    Ok(())
}

/// Removes the entries of folder `dir` (opened without following a link) whose names match.
fn remove_matching(dir: &Path, matches: impl Fn(&str) -> bool) {
    let opened = Opened::default();
    let Ok(handle) = opened.dir(dir) else { return };
    let Ok(entries) = handle.entries() else {
        return;
    };
    for e in entries.flatten() {
        // A deleted file waiting aside may be a symbolic link: that link is removed, never followed.
        if matches(&e.file_name().to_string_lossy())
            && e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink())
        {
            let _ = handle.remove_file(e.file_name());
        }
    }
    sync_in(&opened, dir);
}
