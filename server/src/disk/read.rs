//! Reading a plan's files: each path resolved once (`resolve`), then read without following a link
//! swapped in since, only a regular file, and no more than the cap (`cap`).

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::cap::read_capped;
use super::folders;
use super::opened::{self, Opened};
use super::refusal::io_refusal;
use crate::refusal::{Kind, Refusal};

/// The file's bytes, `None` if it does not exist (nor does a folder of it, or one is a file: a plan
/// may delete that file and create this one). A directory, a dangling symlink, anything but a
/// regular file (a FIFO, a device, a socket, or a link to one) and an unreadable file are refused,
/// without opening the file in a way that could block; so is a file larger than `MAX_READ`
/// (`too_large`), from its metadata.
pub(crate) fn read(path: &Path) -> Result<Option<Vec<u8>>, Refusal> {
    read_at(path, None)
}

/// `read` of the file a plan names `path`, whose bytes are read at `real`, the path it resolved to
/// once (`resolve`): never resolved again, so a link swapped in since cannot lead the read elsewhere.
pub(crate) fn read_at(path: &Path, real: Option<&Path>) -> Result<Option<Vec<u8>>, Refusal> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if folders::absent(&e) => return Ok(None),
        Err(e) => return Err(io_refusal(path, "read", &e)),
        Ok(m) => m,
    };
    let link = meta.file_type().is_symlink().then(|| {
        fs::read_link(path)
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    });
    let meta = match &link {
        None => meta,
        Some(to) => match fs::metadata(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Refusal::new(
                    Kind::Io,
                    format!("Cannot edit {}: it is a symbolic link to {to}, which does not exist. Nothing was changed.", path.display()),
                ))
            }
            Err(e) => return Err(io_refusal(path, "read", &e)),
            Ok(m) => m,
        },
    };
    if meta.is_dir() {
        return Err(Refusal::new(
            Kind::Io,
            format!(
                "Cannot edit {}: it is a directory, not a file. Nothing was changed.",
                path.display()
            ),
        ));
    }
    not_regular(path, &meta, link.as_deref())?;
    let real = match real {
        Some(r) => r.to_path_buf(),
        None => fs::canonicalize(path).map_err(|e| io_refusal(path, "read", &e))?,
    };
    let (dir, name) = Opened::default()
        .parent(&real)
        .map_err(|e| io_refusal(path, "read", &e))?;
    read_in(&dir, name)
        .map(Some)
        .map_err(|e| io_refusal(path, "read", &e))
}

/// Where a plan's `path` is, resolved once, as the kernel resolves it (links followed): the file an
/// edit changes (a link's target), the entry a deletion removes (`entry`: the link itself, its
/// folders resolved), the path a new file takes. Everything after uses this path, folder by folder,
/// without following a link (`opened`). Unresolvable: the path as given (reading it then says why).
pub(crate) fn resolve(path: &Path, entry: bool) -> PathBuf {
    let resolved = if entry {
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => fs::canonicalize(folder_or_here(dir))
                .map(|d| d.join(name))
                .ok(),
            _ => None,
        }
    } else {
        fs::canonicalize(path)
            .ok()
            .or_else(|| crate::paths::real_path(path).ok())
    };
    resolved.unwrap_or_else(|| path.to_path_buf())
}

/// Refuses anything but a regular file: reading a FIFO blocks, a device may never end, and replacing
/// either by a regular file destroys it. `link`: what the symbolic link `path` points to, if it is one.
pub(super) fn not_regular(
    path: &Path,
    meta: &fs::Metadata,
    link: Option<&str>,
) -> Result<(), Refusal> {
    if meta.is_file() {
        return Ok(());
    }
    let what = special_kind(&meta.file_type());
    let is = match link {
        Some(to) => format!("a symbolic link to {to}, which is {what}"),
        None => what.to_string(),
    };
    Err(Refusal::new(
        Kind::Io,
        format!("Cannot edit {}: it is {is}, not a regular file. multiedit reads and writes only regular files; nothing was changed.", path.display()),
    ))
}

#[cfg(unix)]
fn special_kind(t: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(t: &fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Reads a file that must be regular, at `path` with its links resolved: its folders are opened
/// without following a link (`opened`), and so is the file itself, so that nothing swapped in since
/// the path was resolved can lead the read elsewhere. It is opened without blocking (a FIFO put in
/// its place after the check would otherwise wait for a writer forever) and checked again on the open
/// handle.
pub(crate) fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ErrorKind::InvalidInput.into());
    };
    let dir = Opened::default().dir(&fs::canonicalize(folder_or_here(dir))?)?;
    read_in(&dir, name)
}

/// `dir`, or the current folder for the empty parent of a bare name.
fn folder_or_here(dir: &Path) -> &Path {
    if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }
}

/// `read_regular` of the file `name` in the open folder `dir`, refused past `MAX_READ` (`read_capped`):
/// every read of a plan's file, by every front end, comes here.
pub(crate) fn read_in(dir: &cap_std::fs::Dir, name: &std::ffi::OsStr) -> std::io::Result<Vec<u8>> {
    let mut file = dir
        .open_with(name, opened::no_follow().read(true))?
        .into_std();
    let meta = file.metadata()?;
    // A directory fails on its own when read, with the system's words.
    if !meta.is_file() && !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "it is {}, not a regular file",
            special_kind(&meta.file_type())
        )));
    }
    read_capped(&mut file, meta.len())
}
