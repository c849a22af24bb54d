//! The changes a committed plan makes on disk, in the order that lets a file and a folder trade names,
//! each recorded (`Undo`) so that a failed commit puts back what it did (`roll_back`).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use cap_fs_ext::DirExt;

use super::folders::{self, folder};
use super::journal;
use super::opened::{self, Opened};
use super::parallel::{parallel, THREADS};
use super::permissions::{mode_bits, set_mode};
use super::refusal::io_refusal;
use super::stage::{stage, Staged, Write1};
use super::sync::flush_in;
use super::temp::TEMP_SUFFIX;
use crate::engine;
use crate::refusal::{Kind, Refusal};

/// Below this many files a plan's renames are done on this thread: starting a thread costs about as
/// much as a hundred renames (0.1 ms against 1 µs, measured on the median commit of this history).
const RENAMES_ON_ONE_THREAD: usize = 32;

/// One change of the commit, as `roll_back` undoes it.
pub(super) enum Undo {
    /// A file renamed over or deleted: the target, its old bytes (`None`: it was new) and permission
    /// bits.
    Replaced(PathBuf, Option<Vec<u8>>, Option<u32>),
    /// A folder removed (a new file took its name), with its permission bits.
    Removed(PathBuf, Option<u32>),
    /// A folder made for a new file.
    Made(PathBuf),
    /// A file the plan deletes, moved aside (the target, where it waits): put back as it was, the
    /// same file with its owner, mode and links, if the commit fails.
    Aside(PathBuf, PathBuf),
}

/// The changes of a committed plan, in the order that lets a file and a folder trade names: the
/// deletions, the folders removed (deepest first), the folders made (shallowest first), then the new
/// texts renamed into place. Stops at the first failure; returns what was done, and that failure.
pub(super) fn apply_all(
    staged: Vec<Staged>,
    steps: &folders::Steps,
    crash: &journal::CrashAt,
    prefix: &str,
    opened: &Opened,
) -> (Vec<Undo>, Option<Refusal>) {
    let renamed = std::sync::atomic::AtomicUsize::new(0);
    let (deletions, texts): (Vec<Staged>, Vec<Staged>) =
        staged.into_iter().partition(|s| s.temp.is_none());
    let aside = Aside {
        steps,
        prefix,
        count: std::sync::atomic::AtomicUsize::new(0),
        opened,
    };
    let (mut done, failed) = rename_all(deletions, crash, &renamed, &aside);
    if failed.is_some() {
        return (done, failed);
    }
    for (k, dir) in steps.remove.iter().enumerate() {
        let removed = opened.parent(dir).and_then(|(parent, name)| {
            let mode = parent
                .open_dir_nofollow(name)
                .and_then(|d| opened::as_file(&d)?.metadata())
                .ok()
                .as_ref()
                .map(mode_bits);
            parent.remove_dir(name).map(|()| mode)
        });
        match removed {
            Ok(mode) => done.push(Undo::Removed(dir.clone(), mode)),
            Err(e) => return (done, Some(io_refusal(dir, "remove the folder", &e))),
        }
        opened.forget(dir);
        crash.at("rmdir", k + 1);
    }
    for (k, dir) in steps.make.iter().enumerate() {
        match opened
            .parent(dir)
            .and_then(|(parent, name)| parent.create_dir(name))
        {
            Ok(()) => done.push(Undo::Made(dir.clone())),
            // Made meanwhile by someone else (perhaps a link to elsewhere): the world changed since
            // the plan was checked.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let message = format!("{} appeared while the plan was being applied. Nothing was changed; run the plan again.", dir.display());
                return (done, Some(Refusal::of(engine::Kind::NotApplied, message)));
            }
            Err(e) => return (done, Some(io_refusal(dir, "create the folder", &e))),
        }
        crash.at("mkdir", k + 1);
    }
    let (more, failed) = rename_all(texts, crash, &renamed, &aside);
    done.extend(more);
    (done, failed)
}

/// Where the files a plan deletes wait for the end of its commit: under a name of the plan's own
/// temporary files (so recovery removes them when it rolls forward), in the file's folder or, when
/// the commit removes that folder, the nearest one of it that stays.
struct Aside<'a> {
    steps: &'a folders::Steps,
    prefix: &'a str,
    count: std::sync::atomic::AtomicUsize,
    opened: &'a Opened,
}

impl Aside<'_> {
    fn path(&self, target: &Path) -> PathBuf {
        let mut dir = folder(target);
        while self.steps.remove.contains(&dir) {
            dir = folder(&dir);
        }
        let n = self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        dir.join(format!("{}deleted-{n}{TEMP_SUFFIX}", self.prefix))
    }

    /// Moves `target` aside; refused where that would cross file systems (a folder the commit removes
    /// that is a mount point: removing it would fail too).
    fn put(&self, target: &Path) -> Result<PathBuf, Refusal> {
        let aside = self.path(target);
        let moved = self.opened.parent(target).and_then(|(dir, name)| {
            let (to, to_name) = self.opened.parent(&aside)?;
            opened::rename_new(&dir, name, &to, to_name)
        });
        match moved {
            Ok(()) => Ok(aside),
            Err(e) if cross_device(&e) => Err(Refusal::new(
                Kind::Io,
                format!(
                    "Cannot delete {}: it is on another file system than {} (its folder is a mount point), where the \
                     commit keeps it until every file is in place. Nothing was changed.",
                    target.display(),
                    folder(&aside).display()
                ),
            )),
            Err(e) => Err(io_refusal(target, "delete", &e)),
        }
    }
}

/// The rename would cross file systems (EXDEV; Windows says ERROR_NOT_SAME_DEVICE, 17).
fn cross_device(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    return e.raw_os_error() == Some(libc::EXDEV);
    #[cfg(not(unix))]
    return e.raw_os_error() == Some(17);
}

/// Renames every staged text over its target (and moves aside what the plan deletes), the folders on
/// several threads; stops at the first failure. Returns what was replaced, and that failure.
/// `renamed` counts the targets done, for the test hook.
fn rename_all(
    staged: Vec<Staged>,
    crash: &journal::CrashAt,
    renamed: &std::sync::atomic::AtomicUsize,
    aside: &Aside<'_>,
) -> (Vec<Undo>, Option<Refusal>) {
    let staged_count = staged.len();
    let mut by_folder: std::collections::BTreeMap<PathBuf, Vec<Staged>> =
        std::collections::BTreeMap::new();
    for s in staged {
        by_folder.entry(folder(&s.target)).or_default().push(s);
    }
    let failed = std::sync::atomic::AtomicBool::new(false);
    let threads = if staged_count < RENAMES_ON_ONE_THREAD {
        1
    } else {
        THREADS
    };
    let results = parallel(by_folder.into_values().collect(), threads, |group| {
        let mut done = Vec::new();
        for s in group {
            if failed.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let result = match s.temp {
                None => aside.put(&s.target).map(Some),
                Some(mut temp) => {
                    let renamed = aside.opened.parent(&s.target).and_then(|(dir, name)| {
                        if s.before.is_none() {
                            opened::rename_new(&temp.dir, &temp.name, &dir, name)
                        } else {
                            temp.dir.rename(&temp.name, &dir, name)
                        }
                    });
                    temp.renamed = renamed.is_ok();
                    renamed
                        .map(|()| None)
                        .map_err(|e| io_refusal(&s.target, "replace", &e))
                }
            };
            match result {
                Err(refusal) => {
                    failed.store(true, std::sync::atomic::Ordering::SeqCst);
                    return (done, Some(refusal));
                }
                Ok(Some(aside)) => done.push(Undo::Aside(s.target, aside)),
                Ok(None) => done.push(Undo::Replaced(s.target, s.before, s.mode)),
            }
            crash.at(
                "rename",
                renamed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1,
            );
        }
        (done, None)
    });
    let mut done = Vec::new();
    let mut failure = None;
    for (d, f) in results {
        done.extend(d);
        failure = failure.or(f);
    }
    (done, failure)
}

/// Undoes what a failed commit did, last first (best effort: each file put back atomically, with the
/// permission bits it had; each folder removed or made again).
pub(super) fn roll_back(done: Vec<Undo>, prefix: &str, opened: &Opened) {
    for undo in done.into_iter().rev() {
        let _ = put_back(undo, prefix, opened);
    }
}

fn put_back(undo: Undo, prefix: &str, opened: &Opened) -> std::io::Result<()> {
    match undo {
        Undo::Replaced(path, None, _) => {
            let (dir, name) = opened.parent(&path)?;
            dir.remove_file(name)
        }
        Undo::Replaced(path, Some(bytes), mode) => {
            let w = Write1 {
                path: path.clone(),
                before: None,
                after: Some(bytes),
                mode,
            };
            if let Ok(Staged {
                temp: Some(mut temp),
                ..
            }) = stage(w, path.clone(), &folder(&path), prefix, opened)
            {
                flush_in(&temp.dir, &temp.name)?;
                let (dir, name) = opened.parent(&path)?;
                temp.dir.rename(&temp.name, &dir, name)?;
                temp.renamed = true;
            }
            Ok(())
        }
        Undo::Removed(path, mode) => {
            let (dir, name) = opened.parent(&path)?;
            dir.create_dir(name)?;
            if let Some(m) = mode {
                set_mode(&opened::as_file(&dir.open_dir_nofollow(name)?)?, m)?;
            }
            Ok(())
        }
        Undo::Made(path) => {
            let (dir, name) = opened.parent(&path)?;
            opened.forget(&path);
            dir.remove_dir(name)
        }
        Undo::Aside(path, aside) => {
            let (from, from_name) = opened.parent(&aside)?;
            let (to, name) = opened.parent(&path)?;
            from.rename(from_name, &to, name)
        }
    }
}
