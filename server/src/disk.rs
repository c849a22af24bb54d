//! Reading files for a plan and writing the results: each file replaced atomically (temporary file in
//! the same folder, fsync, rename), all files of a plan or none, also when the run is killed half-way
//! (`journal`).

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::engine::{Kind, Refusal};

pub mod journal;
pub mod plan;
pub use journal::{recover, Recovered};

/// Prefix of the temporary files, so a later run can recognise and remove what a killed run left.
pub const TEMP_PREFIX: &str = ".multiedit-";
pub const TEMP_SUFFIX: &str = ".tmp";

fn io_refusal(path: &Path, what: &str, e: &std::io::Error) -> Refusal {
    Refusal::new(Kind::Io, format!("Cannot {what} {}: {}. Nothing was changed.", path.display(), os_error(e)))
}

/// The error as the OS put it. tempfile appends ` at path "<temporary file>"`, a name the caller never
/// sees and that is gone by the time they read the message.
fn os_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at path \"") {
        Some(cut) if e.raw_os_error().is_none() && text.ends_with('"') => text[..cut].to_string(),
        _ => text,
    }
}

/// The file's bytes, `None` if it does not exist. A directory, a dangling symlink or an unreadable
/// file is refused.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, Refusal> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_refusal(path, "read", &e)),
        Ok(m) if m.file_type().is_symlink() && fs::metadata(path).is_err() => {
            return Err(Refusal::new(
                Kind::Io,
                format!(
                    "Cannot edit {}: it is a symbolic link to {}, which does not exist. Nothing was changed.",
                    path.display(),
                    fs::read_link(path).map(|p| p.display().to_string()).unwrap_or_default()
                ),
            ))
        }
        Ok(_) => {}
    }
    if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(Refusal::new(
            Kind::Io,
            format!("Cannot edit {}: it is a directory, not a file. Nothing was changed.", path.display()),
        ));
    }
    fs::read(path).map(Some).map_err(|e| io_refusal(path, "read", &e))
}

/// One file to write: where, the bytes read before (to detect a change under our feet), the new bytes
/// (`None`: the file is deleted), and the permission bits to give it (`None`: an existing file keeps
/// its own; a patch that states a mode sets it).
pub struct Write1 {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    pub mode: Option<u32>,
}

struct Staged {
    target: PathBuf,
    /// `None` for a file the plan deletes.
    temp: Option<tempfile::NamedTempFile>,
    before: Option<Vec<u8>>,
    /// Length and hash of the new text, for the journal.
    len: u64,
    hash: String,
}

/// The folder a file is in (`.` for a bare name).
fn folder(path: &Path) -> PathBuf {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf()
}

/// The file a write replaces: symlinks are followed, so the link's target is what changes.
fn target_of(w: &Write1) -> PathBuf {
    if w.before.is_some() { fs::canonicalize(&w.path).unwrap_or(w.path.clone()) } else { w.path.clone() }
}

/// Writes every file or none, also across a crash (see `journal`). Symlinks are followed: the link's
/// target is what changes. Callers run `recover` over the plan's files before reading them.
pub fn commit(writes: Vec<Write1>) -> Result<(), Refusal> {
    let crash = journal::CrashAt::from_env();
    // One rename is atomic by itself: a single-file plan needs no journal, and pays for none.
    let mut journal = (writes.len() > 1).then(|| {
        let targets: Vec<(PathBuf, bool)> = writes.iter().map(|w| (target_of(w), w.before.is_none())).collect();
        journal::Journal::new(&targets, journal::CrashAt::from_env())
    });
    let prefix = journal.as_ref().map_or_else(|| format!("{TEMP_PREFIX}{}-", std::process::id()), |j| j.temp_prefix());
    let mut staged = Vec::with_capacity(writes.len());
    for w in writes {
        if let Some(j) = &mut journal {
            // A folder says it holds part of the plan before it holds any of it.
            let target = target_of(&w);
            let dir = folder(&target);
            if w.before.is_none() {
                fs::create_dir_all(&dir).map_err(|e| io_refusal(&dir, "create the folder", &e))?;
            }
            j.mark(&dir, &w.path)?;
        }
        staged.push(stage(w, &prefix)?);
        crash.at("staged", staged.len());
    }
    // From the check to the last rename, other multiedit runs writing in the same folders wait: two
    // runs started together on one file must not both pass the check against the same text.
    let _locks = lock_folders(staged.iter().map(|s| folder(&s.target)));
    // The texts were checked against what was read; refuse if anyone changed a file since.
    for s in &staged {
        let now = match fs::read(&s.target) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(io_refusal(&s.target, "re-read", &e)),
        };
        if now != s.before {
            return Err(Refusal::new(
                Kind::NotApplied,
                format!("{} changed while the plan was being applied. Nothing was changed; run the plan again.",
                    s.target.display()),
            ));
        }
    }
    if let Some(j) = &mut journal {
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
        j.commit(entries, &staged[0].target)?;
    }
    let mut done: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    for s in staged {
        let dir = folder(&s.target);
        let result = match s.temp {
            None => fs::remove_file(&s.target),
            Some(temp) if s.before.is_none() => temp.persist_noclobber(&s.target).map(|_| ()).map_err(|e| e.error),
            Some(temp) => temp.persist(&s.target).map(|_| ()).map_err(|e| e.error),
        };
        if let Err(e) = result {
            // The plan had committed; putting back the files already renamed (then dropping the
            // journal) is the one way left to keep it whole. A crash in the midst of that put-back is
            // the one moment the journal does not cover.
            let refusal = io_refusal(&s.target, "replace", &e);
            roll_back(done);
            return Err(refusal);
        }
        sync_dir(&dir);
        done.push((s.target, s.before));
        crash.at("rename", done.len());
    }
    if let Some(j) = journal {
        j.finish();
    }
    Ok(())
}

/// Puts back the files already replaced when a later one fails (best effort: each put back atomically).
fn roll_back(done: Vec<(PathBuf, Option<Vec<u8>>)>) {
    for (path, before) in done.into_iter().rev() {
        match before {
            None => {
                let _ = fs::remove_file(&path);
            }
            Some(bytes) => {
                let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
                if let Ok(Staged { temp: Some(temp), .. }) = stage(Write1 { path: path.clone(), before: None, after: Some(bytes), mode: None }, &prefix) {
                    let _ = temp.persist(&path);
                }
            }
        }
    }
}

fn stage(w: Write1, prefix: &str) -> Result<Staged, Refusal> {
    let target = target_of(&w);
    let dir = folder(&target);
    let Some(after) = w.after else {
        return Ok(Staged { target, temp: None, before: w.before, len: 0, hash: String::new() });
    };
    if w.before.is_none() {
        fs::create_dir_all(&dir).map_err(|e| io_refusal(&dir, "create the folder", &e))?;
    }
    if w.before.is_some() && fs::metadata(&target).is_ok_and(|m| m.permissions().readonly()) {
        // Renaming over it would succeed (the folder is writable), but the file says: do not write me.
        return Err(Refusal::new(
            Kind::Io,
            format!("Cannot edit {}: the file is read-only. Nothing was changed.", w.path.display()),
        ));
    }
    remove_stale_temps(&dir);
    let mut temp = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(&dir)
        .map_err(|e| io_refusal(&target, "create a temporary file beside", &e))?;
    temp.write_all(&after).map_err(|e| io_refusal(&target, "write", &e))?;
    if let Some(mode) = w.mode {
        set_mode(temp.path(), mode).map_err(|e| io_refusal(&target, "set the permissions of", &e))?;
    } else if let Ok(meta) = fs::metadata(&target) {
        fs::set_permissions(temp.path(), meta.permissions()).map_err(|e| io_refusal(&target, "keep the permissions of", &e))?;
    }
    temp.as_file().sync_all().map_err(|e| io_refusal(&target, "flush", &e))?;
    Ok(Staged { target, temp: Some(temp), before: w.before, len: after.len() as u64, hash: journal::digest(&after) })
}

/// Removes the temporary files that a killed run left in `dir`: those whose writer (the pid in the
/// name) is gone, or, where that cannot be told, that are older than a minute. Those of a plan with a
/// journal in `dir` are left to `recover`: they may be about to become the files.
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let journaled = journal::journaled_temp_prefixes(dir);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(rest) = name.strip_prefix(TEMP_PREFIX).filter(|_| name.ends_with(TEMP_SUFFIX)) else { continue };
        if journaled.iter().any(|p| name.starts_with(p.as_str())) {
            continue;
        }
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let stale = match pid {
            Some(pid) if Path::new("/proc/self").exists() => {
                pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
            }
            _ => entry
                .metadata()
                .and_then(|m| m.modified())
                .map(|t| t.elapsed().is_ok_and(|d| d.as_secs() > 60))
                .unwrap_or(false),
        };
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Exclusive advisory locks on `folders`, taken in sorted order (so two runs cannot wait on each
/// other) and released when dropped. Best effort: a folder that cannot be locked is not.
fn lock_folders(folders: impl IntoIterator<Item = PathBuf>) -> Vec<fs::File> {
    let mut dirs: Vec<PathBuf> = folders.into_iter().collect();
    dirs.sort();
    dirs.dedup();
    dirs.iter().filter_map(|d| fs::File::open(d).ok()).filter(lock_exclusive).collect()
}

fn lock_exclusive(f: &fs::File) -> bool {
    f.lock().is_ok()
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o7777))
}

/// Permission bits other than read-only have no meaning here.
#[cfg(not(unix))]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    let mut p = fs::metadata(path)?.permissions();
    p.set_readonly(mode & 0o222 == 0);
    fs::set_permissions(path, p)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}
