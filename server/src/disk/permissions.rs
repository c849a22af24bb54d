//! Permission bits and owner: read from a file, given to the text that replaces it.

use std::fs;
use std::path::Path;

/// The permission bits of the file at `path` (links followed), for a move that keeps them.
pub(crate) fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path).ok().as_ref().map(mode_bits)
}

#[cfg(unix)]
pub(super) fn mode_bits(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
pub(super) fn mode_bits(meta: &fs::Metadata) -> u32 {
    if meta.permissions().readonly() {
        0o444
    } else {
        0o666
    }
}

/// Gives the new text the owner of the file it replaces (root editing another user's file must not
/// take it over). Best effort: only a privileged process may, and then it must.
#[cfg(unix)]
pub(super) fn keep_owner(file: &fs::File, meta: &fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(mine) = file.metadata() {
        if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid()) {
            let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
        }
    }
}

#[cfg(not(unix))]
pub(super) fn keep_owner(_: &fs::File, _: &fs::Metadata) {}

/// Sets the permission bits of an open file or folder (never through a path a link could redirect).
#[cfg(unix)]
pub(super) fn set_mode(file: &fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode & 0o7777))
}

/// Permission bits other than read-only have no meaning here.
#[cfg(not(unix))]
pub(super) fn set_mode(file: &fs::File, mode: u32) -> std::io::Result<()> {
    let mut p = file.metadata()?.permissions();
    p.set_readonly(mode & 0o222 == 0);
    file.set_permissions(p)
}
