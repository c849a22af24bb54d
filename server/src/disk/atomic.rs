//! Writing one small file whole, for multiedit's own files (the bridge's registry entries, agents'
//! configuration files that `setup` changes): a temporary file beside it, synced, renamed over it, so a
//! reader finds the old text or the new one, never a part. A plan's files go through `disk::commit`.

use std::io::Write;
use std::path::Path;

/// The permissions the written file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Closed to everyone but this user (0600).
    Private,
    /// The old file's permissions, else readable by all as editors write a new file (0644).
    KeepOrShared,
}

/// Writes `bytes` to `path` whole. The folder must exist.
pub(crate) fn write(path: &Path, bytes: &[u8], mode: Mode) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent folder"))?;
    // tempfile makes the temporary file private (0600) with a name no other process can take first.
    let mut tmp = tempfile::Builder::new()
        .prefix(".multiedit-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if mode == Mode::KeepOrShared {
        match std::fs::metadata(path) {
            Ok(m) => tmp.as_file().set_permissions(m.permissions())?,
            #[cfg(unix)]
            Err(_) => {
                use std::os::unix::fs::PermissionsExt;
                tmp.as_file()
                    .set_permissions(std::fs::Permissions::from_mode(0o644))?
            }
            #[cfg(not(unix))]
            Err(_) => {}
        }
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
