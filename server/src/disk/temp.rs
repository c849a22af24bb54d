//! The temporary files new texts wait in until they are renamed over their targets: their names,
//! which recovery knows (`journal`), and their making, never over anything already there.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::opened;

/// Prefix of the temporary files (`.multiedit-<plan>-<random>.tmp`), so that a later run can remove
/// what a killed run left (`journal`).
pub(crate) const TEMP_PREFIX: &str = ".multiedit-";
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// A new text waiting under a temporary name in an open folder: removed if dropped before its rename.
pub(super) struct Temp {
    pub(super) dir: std::sync::Arc<cap_std::fs::Dir>,
    pub(super) name: std::ffi::OsString,
    /// Where it is, for the journal.
    pub(super) path: PathBuf,
    pub(super) renamed: bool,
}

impl Temp {
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = self.dir.remove_file(&self.name);
        }
    }
}

/// A new file `<prefix><random>.tmp` in the open folder `dir`, created with `mode` (less the umask),
/// never over anything already there.
pub(super) fn create_temp(
    dir: &cap_std::fs::Dir,
    prefix: &str,
    mode: u32,
) -> std::io::Result<(cap_std::fs::File, std::ffi::OsString)> {
    let mut options = opened::no_follow();
    options.write(true).create_new(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    loop {
        let mut random = [0u8; 6];
        getrandom::fill(&mut random).map_err(std::io::Error::other)?;
        let letters: String = random
            .iter()
            .map(|b| {
                char::from(
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        [usize::from(*b) % 62],
                )
            })
            .collect();
        let name = std::ffi::OsString::from(format!("{prefix}{letters}{TEMP_SUFFIX}"));
        match dir.open_with(&name, &options) {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}
