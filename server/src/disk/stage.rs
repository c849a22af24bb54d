//! A file's new text staged for the commit: what to write (`Write1`), written under a temporary name
//! beside its target with the permission bits it will have (`Staged`), not yet flushed or renamed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::folders;
use super::journal;
use super::opened::{self, Opened};
use super::permissions::{keep_owner, mode_bits, set_mode};
use super::read::not_regular;
use super::refusal::io_refusal;
use super::temp::{create_temp, Temp};
use crate::refusal::{Kind, Refusal};

/// One file to write: where, the bytes read before (to detect a change under our feet), the new bytes
/// (`None`: the file is deleted), and the permission bits to give it (`None`: an existing file keeps
/// its own; a patch that states a mode sets it).
pub struct Write1 {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    pub mode: Option<u32>,
}

pub(super) struct Staged {
    pub(super) target: PathBuf,
    /// `None` for a file the plan deletes. Closed once written (`commit::sync_all` opens it again to flush it):
    /// a plan may hold more files than the process may have open.
    pub(super) temp: Option<Temp>,
    pub(super) before: Option<Vec<u8>>,
    /// The permission bits the target had, to put them back if a later rename fails.
    pub(super) mode: Option<u32>,
    /// Length and hash of the new text, for the journal.
    pub(super) len: u64,
    pub(super) hash: String,
}

/// Writes the new text of `w` to a temporary file in `dir`, beside `target` or in the nearest folder
/// of it that exists (not yet flushed: `commit::sync_all`). The temporary file gets the permission bits the
/// file will have: those `w` states, else the existing file's (and its owner, where we may give it),
/// else those a new file gets from the umask.
pub(super) fn stage(
    w: Write1,
    target: PathBuf,
    dir: &Path,
    prefix: &str,
    opened: &Opened,
) -> Result<Staged, Refusal> {
    let existing = existing(&w, &target, opened)?;
    let mode = existing.as_ref().map(mode_bits);
    let Some(after) = w.after else {
        return Ok(Staged {
            target,
            temp: None,
            before: w.before,
            mode,
            len: 0,
            hash: String::new(),
        });
    };
    if w.before.is_some()
        && existing
            .as_ref()
            .is_some_and(|m| m.permissions().readonly())
    {
        // Renaming over it would succeed (the folder is writable), but the file says: do not write me.
        return Err(Refusal::new(
            Kind::Io,
            format!(
                "Cannot edit {}: the file is read-only. Nothing was changed.",
                w.path.display()
            ),
        ));
    }
    let temp = write_temp(
        &after,
        w.mode,
        existing.as_ref(),
        &target,
        dir,
        prefix,
        opened,
    )?;
    Ok(Staged {
        target,
        temp: Some(temp),
        before: w.before,
        mode,
        len: after.len() as u64,
        hash: journal::digest(&after),
    })
}

/// What is at the target of `w` now, looked at in its open folder: refused unless a regular file.
/// `None` for a deletion (it moves the entry aside as it is, a link included), and for a folder where
/// a new file goes (the folder steps' business).
fn existing(w: &Write1, target: &Path, opened: &Opened) -> Result<Option<fs::Metadata>, Refusal> {
    if w.after.is_none() {
        return Ok(None);
    }
    let existing = match opened
        .parent(target)
        .and_then(|(d, name)| d.open_with(name, opened::no_follow().read(true)))
    {
        Ok(f) => Some(
            f.into_std()
                .metadata()
                .map_err(|e| io_refusal(target, "examine", &e))?,
        ),
        Err(e) if folders::absent(&e) => None,
        Err(e) => return Err(io_refusal(&w.path, "read", &e)),
    };
    let existing = existing.filter(|m| !(m.is_dir() && w.before.is_none()));
    if let Some(meta) = &existing {
        not_regular(&w.path, meta, None)?;
    }
    Ok(existing)
}

/// The text `after` written to a new temporary file in `dir`, with the permission bits `mode` states,
/// else those (and the owner) of the `existing` file.
fn write_temp(
    after: &[u8],
    mode: Option<u32>,
    existing: Option<&fs::Metadata>,
    target: &Path,
    dir: &Path,
    prefix: &str,
    opened: &Opened,
) -> Result<Temp, Refusal> {
    let in_dir = opened
        .dir(dir)
        .map_err(|e| io_refusal(target, "create a temporary file beside", &e))?;
    // A new file is created as any program creates one: 0666 less the umask. An existing file's new
    // text starts private (0600) until it has the file's own bits.
    let create_mode = if existing.is_none() && mode.is_none() {
        0o666
    } else {
        0o600
    };
    let (file, name) = create_temp(&in_dir, prefix, create_mode)
        .map_err(|e| io_refusal(target, "create a temporary file beside", &e))?;
    let temp = Temp {
        dir: in_dir,
        path: dir.join(&name),
        name,
        renamed: false,
    };
    let mut file = file.into_std();
    file.write_all(after)
        .map_err(|e| io_refusal(target, "write", &e))?;
    if let Some(meta) = existing {
        keep_owner(&file, meta);
    }
    match (mode, existing) {
        (Some(m), _) => {
            set_mode(&file, m).map_err(|e| io_refusal(target, "set the permissions of", &e))?
        }
        (None, Some(meta)) => file
            .set_permissions(meta.permissions())
            .map_err(|e| io_refusal(target, "keep the permissions of", &e))?,
        (None, None) => {}
    }
    Ok(temp)
}
