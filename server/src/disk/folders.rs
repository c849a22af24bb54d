//! The folders a commit removes and makes: a new file where a folder is (a patch that deletes every
//! file in `x/` and creates the file `x`), a new file under a file (one that deletes the file `x` and
//! creates `x/inside`), and a new file in folders that do not exist yet. `git apply` takes both
//! replacements, deleting before it creates; so does the commit (`disk::commit`), journaled.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::refusal::io_refusal;
use crate::engine;
use crate::refusal::Refusal;

/// What the commit does to folders, between deleting files and renaming the new texts into place.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Steps {
    /// Folders that new files replace, deepest first: the plan deletes every file in them.
    pub(crate) remove: Vec<PathBuf>,
    /// Folders that new files need, shallowest first: none exists, or the plan deletes the file there.
    pub(crate) make: Vec<PathBuf>,
}

impl Steps {
    pub(crate) fn is_empty(&self) -> bool {
        self.remove.is_empty() && self.make.is_empty()
    }

    /// The folder where the new text of `target` waits for the commit: its own, or, when that is
    /// made by the commit, the nearest one that exists (the rename then crosses folders, within the
    /// file system that holds them all).
    pub(crate) fn staging(&self, target: &Path) -> PathBuf {
        let mut dir = folder(target);
        while self.make.contains(&dir) {
            dir = folder(&dir);
        }
        dir
    }
}

/// The folder a file is in (`.` for a bare name).
pub(crate) fn folder(path: &Path) -> PathBuf {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// The folder steps for creating the files `new` while deleting the files `deleted` (paths as the
/// caller names them; both sets the same way). Refuses a new file whose path is a folder holding
/// anything the plan does not delete, one under a file the plan keeps, and one where another new
/// file needs a folder.
pub(crate) fn steps<'a>(
    new: impl IntoIterator<Item = &'a Path>,
    deleted: &BTreeSet<PathBuf>,
) -> Result<Steps, Refusal> {
    let new: BTreeSet<&Path> = new.into_iter().collect();
    let mut remove = Vec::new();
    let mut make = BTreeSet::new();
    for &file in &new {
        if let Some(parent) = file.ancestors().skip(1).find(|a| new.contains(a)) {
            return Err(conflict(format!(
                "Cannot create both {} and {}: {} would be a file and a folder at once. Nothing was changed.",
                parent.display(),
                file.display(),
                parent.display()
            )));
        }
        match fs::symlink_metadata(file) {
            Ok(m) if m.is_dir() => emptied(file, deleted, &mut remove)?,
            Ok(_) => {}
            Err(e) if absent(&e) => {
                for dir in file
                    .ancestors()
                    .skip(1)
                    .filter(|d| !d.as_os_str().is_empty())
                {
                    match fs::symlink_metadata(dir) {
                        Err(e) if absent(&e) => {}
                        Err(e) => return Err(io_refusal(dir, "examine", &e)),
                        Ok(m) if m.is_dir() => break,
                        Ok(m) if m.file_type().is_symlink() && fs::metadata(dir).is_ok_and(|t| t.is_dir()) => break,
                        Ok(m) if m.is_file() && deleted.contains(dir) => {}
                        Ok(_) => {
                            return Err(conflict(format!(
                                "Cannot create {}: {} is a file, not a folder, and the plan does not delete it. \
                                 Nothing was changed.",
                                file.display(),
                                dir.display()
                            )))
                        }
                    }
                    make.insert(dir.to_path_buf());
                }
            }
            Err(e) => return Err(io_refusal(file, "examine", &e)),
        }
    }
    let mut make: Vec<PathBuf> = make.into_iter().collect();
    make.sort_by_key(|d| d.components().count());
    Ok(Steps { remove, make })
}

/// The path, or one of its folders, does not exist (ENOENT), or a folder of it is a file (ENOTDIR).
pub(crate) fn absent(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

fn conflict(message: String) -> Refusal {
    Refusal::of(engine::Kind::FileExists, message)
}

/// Adds `dir` and the folders in it, deepest first, to `remove` when the plan deletes every file in
/// them; else refuses, naming what it keeps.
fn emptied(
    dir: &Path,
    deleted: &BTreeSet<PathBuf>,
    remove: &mut Vec<PathBuf>,
) -> Result<(), Refusal> {
    let kept = |what: &Path, is: &str| {
        conflict(format!(
            "Cannot create the file {}: it is a folder, and {} in it is {is} that the plan does not delete. A file \
             replaces a folder only when the same plan deletes every file in it. Nothing was changed.",
            dir.display(),
            what.display()
        ))
    };
    let mut stack = vec![(dir.to_path_buf(), false)];
    while let Some((d, listed)) = stack.pop() {
        if listed {
            remove.push(d);
            continue;
        }
        stack.push((d.clone(), true));
        let mut empty = true;
        for entry in fs::read_dir(&d).map_err(|e| io_refusal(&d, "list the folder", &e))? {
            let entry = entry.map_err(|e| io_refusal(&d, "list the folder", &e))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| io_refusal(&path, "examine", &e))?;
            empty = false;
            if kind.is_dir() {
                stack.push((path, false));
            } else if !deleted.contains(&path) {
                return Err(kept(
                    &path,
                    if kind.is_file() { "a file" } else { "an entry" },
                ));
            }
        }
        if empty && d != dir {
            return Err(kept(&d, "an empty folder"));
        }
    }
    Ok(())
}
