//! The folders a commit works in, each opened once and every step taken relative to it: reading,
//! creating, renaming, deleting, making and removing folders, setting modes, flushing and locking.
//!
//! The plan's paths were resolved (links followed, as the kernel follows them) and confined before the
//! commit began. Using them again by name would resolve them again, and a process that swaps a folder
//! with a link in between would carry the write wherever the link leads. So each folder is opened from
//! the root of its file system one component at a time, never following a link (the resolved path has
//! none: a link met now was put there since the check, a change of the world, refused), and from then
//! on only names inside an open folder are used, never a path.
//!
//! Built on cap-std's `Dir` (with cap-fs-ext for `open_dir_nofollow`): the Bytecode Alliance's
//! capability library, made for exactly this (operations relative to a directory handle that cannot
//! be led out of it), kept up and used by Wasmtime, and working alike on Linux, macOS and Windows;
//! Linux's `openat2` alone would leave the other two without it.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};

/// The open folders of one commit, by their resolved path; shared by its threads.
#[derive(Default)]
pub(crate) struct Opened(Mutex<HashMap<PathBuf, Arc<Dir>>>);

impl Opened {
    /// The folder `dir` (absolute, links resolved), opened from its file system's root without
    /// following a link, once.
    pub(crate) fn dir(&self, dir: &Path) -> io::Result<Arc<Dir>> {
        if let Some(d) = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(dir) {
            return Ok(d.clone());
        }
        let opened = match (dir.parent(), dir.file_name()) {
            (Some(parent), Some(name)) => self
                .dir(parent)?
                .open_dir_nofollow(name)
                .map_err(|e| replaced(dir, e))?,
            (Some(_), None) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a resolved path", dir.display()),
                ))
            }
            // The root of the file system (`/`, `C:\`): where every walk starts.
            (None, _) => Dir::open_ambient_dir(dir, cap_std::ambient_authority())?,
        };
        let opened = Arc::new(opened);
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), opened.clone());
        Ok(opened)
    }

    /// The open folder of `path` and its name in it.
    pub(crate) fn parent<'p>(&self, path: &'p Path) -> io::Result<(Arc<Dir>, &'p OsStr)> {
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => Ok((self.dir(dir)?, name)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} names no file", path.display()),
            )),
        }
    }

    /// Drops the handles of `dir` and of the folders in it (it was removed).
    pub(crate) fn forget(&self, dir: &Path) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k, _| !k.starts_with(dir));
    }
}

/// A folder that is a link now: the world changed since the plan was checked.
fn replaced(dir: &Path, e: io::Error) -> io::Error {
    // A file there (ENOTDIR) reads as absent, as the plan's checks read it: a plan may delete that
    // file and make the folder.
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return io::Error::other(format!(
            "{} is no longer the folder it was when the plan was checked (a symbolic link took its place)",
            dir.display()
        ));
    }
    e
}

/// Options that open `name` in a folder without following a link in its place, and (on Unix)
/// without blocking on a FIFO put there.
pub(crate) fn no_follow() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.follow(FollowSymlinks::No);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK | libc::O_NOCTTY);
    options
}

/// Renames `from` in `from_dir` to `to` in `to_dir` only if nothing is there: a new file never
/// replaces one that appeared meanwhile.
pub(crate) fn rename_new(from_dir: &Dir, from: &OsStr, to_dir: &Dir, to: &OsStr) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let c = |s: &OsStr| {
            std::ffi::CString::new(s.as_bytes())
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
        };
        let (a, b) = (c(from)?, c(to)?);
        // SAFETY: two open folder descriptors and two NUL-terminated names; no other preconditions.
        let r = unsafe {
            libc::renameat2(
                from_dir.as_raw_fd(),
                a.as_ptr(),
                to_dir.as_raw_fd(),
                b.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        // A file system without the flag: checked, then renamed, below.
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(e);
        }
    }
    if to_dir.symlink_metadata(to).is_ok() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    from_dir.rename(from, to_dir, to)
}

/// The open folder as a std file that can be read, for what cap-std's `Dir` does not offer: fsync,
/// locks, modes. On Linux cap-std holds folders as `O_PATH` descriptors, on which those fail: the
/// folder is opened again from its own handle (`.`), never by a path.
pub(crate) fn as_file(dir: &Dir) -> io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: an open folder descriptor and a NUL-terminated name; the result is checked.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                c".".as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(unsafe { std::fs::File::from_raw_fd(fd) })
    }
    #[cfg(not(unix))]
    Ok(dir.try_clone()?.into_std_file())
}
