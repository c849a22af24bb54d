//! The atomic commit of a plan's files: every file or none, also across a crash (`journal`). The
//! texts are staged (`stage`), fsynced together with the journal's committed record, checked against
//! what was read, and put in place (`changes`) after the commit point.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use cap_fs_ext::DirExt;

use super::cap::TooBig;
use super::changes::{apply_all, roll_back, Undo};
use super::folders::{self, folder};
use super::journal;
use super::opened::Opened;
use super::parallel::{parallel, THREADS};
use super::read::{read_in, read_regular};
use super::refusal::io_refusal;
use super::stage::{stage, Staged, Write1};
use super::sync::{flush_in, lock_in, sync_in};
use super::temp::Temp;
use crate::engine;
use crate::refusal::Refusal;

/// The file a write replaces: its path as the caller resolved it (`read::resolve`), taken as it is. It is
/// not resolved again: a link on it now was swapped in since, and the commit, which follows none,
/// refuses it.
fn target_of(w: &Write1) -> PathBuf {
    w.path.clone()
}

/// The folder steps of a commit (`folders::steps`) for `files`: each file's target, whether it is
/// new, whether it is deleted.
fn steps_of<'a>(
    files: impl Iterator<Item = (&'a Path, bool, bool)> + Clone,
) -> Result<folders::Steps, Refusal> {
    let deleted = files
        .clone()
        .filter(|f| f.2)
        .map(|f| f.0.to_path_buf())
        .collect();
    folders::steps(files.filter(|f| f.1 && !f.2).map(|f| f.0), &deleted)
}

/// Writes every file or none, also across a crash (see `journal`). Each `Write1::path` is resolved
/// already (`read::resolve`: a link's target for an edit, the link itself for a deletion). Callers run `journal::recover` over the plan's files before reading them. A new
/// file may take the name of a folder the plan empties, or have a folder where the plan deletes a
/// file (`folders`): deletions come first, then the folders, then the new texts.
///
/// Durable in batches: every new text is written, then all are fsynced together, renamed, and each
/// folder fsynced once, rather than one file after another.
pub fn commit(writes: Vec<Write1>) -> Result<(), Refusal> {
    let crash = journal::CrashAt::from_env();
    let targets: Vec<PathBuf> = writes.iter().map(target_of).collect();
    let files = || {
        writes
            .iter()
            .zip(&targets)
            .map(|(w, t)| (t.as_path(), w.before.is_none(), w.after.is_none()))
    };
    let steps = steps_of(files())?;
    let staging: Vec<PathBuf> = targets.iter().map(|t| steps.staging(t)).collect();
    let begin: Vec<(PathBuf, bool)> = files().map(|(t, new, _)| (t.to_path_buf(), new)).collect();
    let mut journal = journal::Journal::begin(&begin, &staging, journal::CrashAt::from_env())?;
    let prefix = journal.temp_prefix();
    let opened = Opened::default();
    let touched = touched_folders(&targets, &staging, &steps);
    let staged = stage_all(writes, targets, &staging, &prefix, &opened, &crash)?;
    let record = committed_record(&journal, &staged, &steps)?;
    sync_all(&staged, record.as_ref(), &opened)?;
    crash.at("synced", 1);
    // From the check to the last rename, other multiedit runs writing in the same folders wait: two
    // runs started together on one file must not both pass the check against the same text.
    let _locks = lock_in(
        &opened,
        staged
            .iter()
            .map(|s| folder(&s.target))
            .chain(staging.iter().cloned()),
    );
    check_unchanged(&staged, &steps, &opened)?;
    if let Some(record) = record {
        journal.commit(record)?;
    }
    put_in_place(staged, &steps, &crash, &prefix, &opened, touched)?;
    journal.finish();
    Ok(())
}

/// What the commit fsyncs at the end: every folder it changed an entry of.
fn touched_folders(
    targets: &[PathBuf],
    staging: &[PathBuf],
    steps: &folders::Steps,
) -> BTreeSet<PathBuf> {
    let mut touched: BTreeSet<PathBuf> = targets
        .iter()
        .map(|t| folder(t))
        .chain(staging.iter().cloned())
        .collect();
    touched.extend(steps.remove.iter().chain(&steps.make).map(|d| folder(d)));
    touched
}

/// Every write staged (`stage`) in its folder of `staging`, the crash hook's `staged` step passed
/// after each.
fn stage_all(
    writes: Vec<Write1>,
    targets: Vec<PathBuf>,
    staging: &[PathBuf],
    prefix: &str,
    opened: &Opened,
    crash: &journal::CrashAt,
) -> Result<Vec<Staged>, Refusal> {
    let mut staged = Vec::with_capacity(writes.len());
    for ((w, target), dir) in writes.into_iter().zip(targets).zip(staging) {
        staged.push(stage(w, target, dir, prefix, opened)?);
        crash.at("staged", staged.len());
    }
    Ok(staged)
}

/// The committed record (`Journal::prepare`), written now so that it is fsynced with the new texts.
/// `None` where one rename is atomic by itself: a single-file plan that makes or removes no folder
/// needs no commit point.
fn committed_record(
    journal: &journal::Journal,
    staged: &[Staged],
    steps: &folders::Steps,
) -> Result<Option<journal::Prepared>, Refusal> {
    if staged.len() <= 1 && steps.is_empty() {
        return Ok(None);
    }
    let entries = staged
        .iter()
        .map(|s| journal::Entry {
            target: s.target.clone(),
            temp: s.temp.as_ref().map(|t| t.path().to_path_buf()),
            new: s.before.is_none(),
            len: Some(s.len),
            hash: Some(s.hash.clone()),
            delete: s.temp.is_none(),
        })
        .collect();
    journal.prepare(entries, steps, &staged[0].target)
}

/// The texts were checked against what was read: refuses if anyone changed a file since (or a
/// folder that the commit removes or makes).
fn check_unchanged(
    staged: &[Staged],
    steps: &folders::Steps,
    opened: &Opened,
) -> Result<(), Refusal> {
    let changed = |path: &Path| {
        Refusal::of(
            engine::Kind::NotApplied,
            format!("{} changed while the plan was being applied. Nothing was changed; run the plan again.", path.display()),
        )
    };
    if !steps.is_empty()
        && steps_of(
            staged
                .iter()
                .map(|s| (s.target.as_path(), s.before.is_none(), s.temp.is_none())),
        )? != *steps
    {
        return Err(changed(&staged[0].target));
    }
    for s in staged.iter().filter(|s| !steps.remove.contains(&s.target)) {
        let now = match recheck(opened, s) {
            Ok(b) => Some(b),
            Err(e) if folders::absent(&e) => None,
            // Grown past the cap since it was read: not the text the plan was checked on.
            Err(e) if TooBig::of(&e).is_some() => return Err(changed(&s.target)),
            Err(e) => return Err(io_refusal(&s.target, "re-read", &e)),
        };
        if now != s.before {
            return Err(changed(&s.target));
        }
    }
    Ok(())
}

/// After the commit point: the plan's changes made (`changes::apply_all`), every folder in `touched`
/// fsynced once, then the deleted files kept aside removed.
fn put_in_place(
    staged: Vec<Staged>,
    steps: &folders::Steps,
    crash: &journal::CrashAt,
    prefix: &str,
    opened: &Opened,
    touched: BTreeSet<PathBuf>,
) -> Result<(), Refusal> {
    let (done, failed) = apply_all(staged, steps, crash, prefix, opened);
    let touched: Vec<PathBuf> = touched.into_iter().collect();
    if let Some(refusal) = failed {
        // The plan had committed; putting back what was already done (then dropping the journal) is
        // the one way left to keep it whole. A crash in the midst of that put-back is the one moment
        // the journal does not cover.
        roll_back(done, prefix, opened);
        parallel(touched, THREADS, |d| sync_in(opened, &d));
        return Err(refusal);
    }
    // The renames reach the disk before the journal goes; the deleted files, kept aside until now,
    // go just before it (a crash between: recovery rolls forward, which removes them).
    parallel(touched, THREADS, |d| sync_in(opened, &d));
    for undo in &done {
        if let Undo::Aside(_, aside) = undo {
            if let Ok((dir, name)) = opened.parent(aside) {
                let _ = dir.remove_file_or_symlink(name);
            }
        }
    }
    Ok(())
}

/// The text of a staged file now, read in its open folder. A symbolic link the plan deletes was read
/// through (its target's text is what the plan checked): so is it here, on the target resolved anew.
fn recheck(opened: &Opened, s: &Staged) -> std::io::Result<Vec<u8>> {
    let (dir, name) = opened.parent(&s.target)?;
    if s.temp.is_none()
        && dir
            .symlink_metadata(name)
            .is_ok_and(|m| m.file_type().is_symlink())
    {
        return read_regular(&fs::canonicalize(&s.target)?);
    }
    read_in(&dir, name)
}

/// fsyncs every staged text, and the prepared journal record, `THREADS` at a time: each text opened
/// again, flushed and closed, so no more than `THREADS` are open at once.
fn sync_all(
    staged: &[Staged],
    record: Option<&journal::Prepared>,
    _opened: &Opened,
) -> Result<(), Refusal> {
    let texts: Vec<(&Path, &Temp)> = staged
        .iter()
        .filter_map(|s| s.temp.as_ref().map(|t| (s.target.as_path(), t)))
        .collect();
    let flush = |(target, temp): (&Path, &Temp)| {
        flush_in(&temp.dir, &temp.name).map_err(|e| io_refusal(target, "flush", &e))
    };
    parallel(texts, THREADS, flush)
        .into_iter()
        .collect::<Result<(), Refusal>>()?;
    match record {
        Some(r) => r
            .file()
            .sync_all()
            .map_err(|e| io_refusal(r.path(), "flush", &e)),
        None => Ok(()),
    }
}
