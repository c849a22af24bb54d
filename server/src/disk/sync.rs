//! fsyncs and advisory locks, through folders opened without following a link (`opened`).

use std::fs;
use std::path::{Path, PathBuf};

use super::opened::{self, Opened};

/// Flushes the file `name` of the open folder `dir` to the disk. Read access is enough for fsync on
/// Unix; Windows asks for write access to flush.
pub(super) fn flush_in(dir: &cap_std::fs::Dir, name: &std::ffi::OsStr) -> std::io::Result<()> {
    dir.open_with(name, opened::no_follow().read(true).write(cfg!(windows)))?
        .sync_all()
}

/// Exclusive advisory locks on `folders`, taken in sorted order (so two runs cannot wait on each
/// other) and released when dropped. Best effort: a folder that cannot be locked is not.
pub(super) fn lock_folders(folders: impl IntoIterator<Item = PathBuf>) -> Vec<fs::File> {
    lock_in(
        &Opened::default(),
        folders.into_iter().filter_map(|d| fs::canonicalize(d).ok()),
    )
}

/// `lock_folders` through the open folders of a commit. Each folder is locked once, however many
/// of its names lead to it.
pub(super) fn lock_in(
    opened: &Opened,
    folders: impl IntoIterator<Item = PathBuf>,
) -> Vec<fs::File> {
    let mut dirs: Vec<PathBuf> = folders.into_iter().collect();
    dirs.sort();
    dirs.dedup();
    dirs.iter()
        .filter_map(|d| opened.dir(d).and_then(|d| opened::as_file(&d)).ok())
        .filter(lock_exclusive)
        .collect()
}

fn lock_exclusive(f: &fs::File) -> bool {
    f.lock().is_ok()
}

pub(super) fn sync_dir(dir: &Path) {
    if let Ok(dir) = fs::canonicalize(dir) {
        sync_in(&Opened::default(), &dir)
    }
}

/// fsyncs the open folder `dir` (best effort).
pub(crate) fn sync_in(opened: &Opened, dir: &Path) {
    if let Ok(d) = opened.dir(dir).and_then(|d| opened::as_file(&d)) {
        let _ = d.sync_all();
    }
}
