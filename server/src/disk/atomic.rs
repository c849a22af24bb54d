//! Writing one small file whole, for multiedit's own files (the bridge's registry entries, agents'
//! configuration files that `setup` changes, its `routes.json`): a temporary file beside it, synced,
//! renamed over it, so a reader finds the old text or the new one, never a part. `write_resolved` does
//! it by name in folders opened without following a link, for a path checked once (`setup`'s). A plan's
//! files go through `disk::commit`.

use std::io::Write;
use std::path::Path;

use super::opened::{self, Opened};
use super::permissions::set_mode;
use super::temp::{create_temp, TEMP_PREFIX};

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

/// `write` of a file whose path is resolved (absolute, every link in it already followed, as
/// `paths::real_path` gives it), making the folders it lacks. Each folder is opened from the file
/// system's root one component at a time without following a link (`disk::Opened`), the missing ones
/// are made and opened by name inside the last one that exists, and the temporary file is made and
/// renamed by name inside the file's own open folder. So a folder swapped for a link after the path
/// was checked (by `setup`'s check that a project's file stays inside the project, say) is refused,
/// never followed: the bytes land where the path was checked to be, or nowhere.
pub(crate) fn write_resolved(path: &Path, bytes: &[u8], mode: Mode) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other(format!(
            "{} names no file",
            path.display()
        )));
    };
    // The deepest folder that is there (a link counts: opening it is then refused), and the names
    // of the missing ones below it, the outermost last.
    let mut missing = Vec::new();
    let mut existing = dir;
    while std::fs::symlink_metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(folder)) => {
                missing.push(folder);
                existing = parent;
            }
            _ => break,
        }
    }
    let mut folder = Opened::default().dir(existing)?;
    for name in missing.iter().rev() {
        match folder.create_dir(name) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        folder = std::sync::Arc::new(cap_fs_ext::DirExt::open_dir_nofollow(&*folder, name)?);
    }
    let bits = match mode {
        Mode::Private => 0o600,
        Mode::KeepOrShared => match folder.symlink_metadata(name) {
            Ok(m) if m.is_file() => bits_of(&m),
            _ => 0o644,
        },
    };
    let (tmp, tmp_name) = create_temp(&folder, TEMP_PREFIX, bits)?;
    let file = tmp.into_std();
    let written = (|| {
        (&file).write_all(bytes)?;
        // Created with the umask applied; the bits asked for, exactly (a kept mode is the old file's).
        set_mode(&file, bits)?;
        file.sync_all()?;
        folder.rename(&tmp_name, &folder, name)
    })();
    if let Err(e) = written {
        let _ = folder.remove_file(&tmp_name);
        return Err(e);
    }
    if let Ok(d) = opened::as_file(&folder) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes the file at a resolved path by name in its folder, opened as `write_resolved` opens it.
pub(crate) fn remove_resolved(path: &Path) -> std::io::Result<()> {
    let (dir, name) = Opened::default().parent(path)?;
    dir.remove_file(name)
}

#[cfg(unix)]
fn bits_of(meta: &cap_std::fs::Metadata) -> u32 {
    use cap_std::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn bits_of(meta: &cap_std::fs::Metadata) -> u32 {
    if meta.permissions().readonly() {
        0o444
    } else {
        0o666
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_resolved_write_makes_its_folders_keeps_the_mode_and_never_follows_a_swapped_link() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let (inside, outside) = (root.join("inside"), root.join("outside"));
        std::fs::create_dir(&inside).unwrap();
        std::fs::create_dir(&outside).unwrap();
        // Missing folders made; a new file shared (0644), then its mode kept (0600).
        let file = inside.join("a/b/f.json");
        write_resolved(&file, b"one", Mode::KeepOrShared).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"one");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o644);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_resolved(&file, b"two", Mode::KeepOrShared).unwrap();
        assert_eq!(
            (std::fs::read(&file).unwrap(), mode(&file)),
            (b"two".to_vec(), 0o600)
        );
        // The folder `a` swapped for a link to a folder outside after the path was resolved: the
        // write is refused, nothing lands outside, nor is a folder made there.
        std::fs::create_dir_all(outside.join("b")).unwrap();
        std::fs::rename(inside.join("a"), root.join("a-was")).unwrap();
        std::os::unix::fs::symlink(&outside, inside.join("a")).unwrap();
        assert!(write_resolved(&file, b"three", Mode::KeepOrShared).is_err());
        assert!(write_resolved(&inside.join("a/new/g.json"), b"x", Mode::Private).is_err());
        let left: Vec<_> = std::fs::read_dir(outside.join("b")).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        assert!(!outside.join("new").exists());
        assert_eq!(std::fs::read(root.join("a-was/b/f.json")).unwrap(), b"two");
        // And the removal likewise.
        std::fs::write(outside.join("b/f.json"), b"theirs").unwrap();
        assert!(remove_resolved(&file).is_err());
        assert_eq!(std::fs::read(outside.join("b/f.json")).unwrap(), b"theirs");
    }
}
