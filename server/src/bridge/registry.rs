//! The registry: one folder per user, private to them, where each `multiedit lsp` with the bridge on
//! keeps a Unix domain socket `<pid>.sock` and an entry `<pid>.json` beside it.
//!
//! The folder is `$XDG_RUNTIME_DIR/multiedit` when `XDG_RUNTIME_DIR` is an absolute path (the
//! per-user runtime folder systemd-logind makes, removed at logout), else `multiedit-<uid>` in the
//! temporary folder. It must be a real folder (not a link) owned by the user with no access for
//! anyone else; the sockets and entries in it likewise. Whatever is not is ignored by callers, and
//! the reason said, never used: another user could otherwise plant an entry that receives plans.
//!
//! An entry whose process is gone is removed by whoever finds it: a server at start, a caller of
//! `route`. Entries are written whole (a temporary file renamed over the old one), so a reader never
//! sees half of one.

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// An entry is a few hundred bytes; more than this is not one of ours.
const MAX_ENTRY: u64 = 1 << 20;

/// What a running server tells callers about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub(crate) pid: u32,
    /// The editor's name, from `clientInfo` in `initialize`.
    pub(crate) editor: String,
    /// The workspace folders, real paths (symbolic links resolved).
    pub(crate) folders: Vec<PathBuf>,
    pub(crate) socket: PathBuf,
    /// Sent back with every request: only a process that could read this entry may hand plans over.
    pub(crate) token: String,
    /// When the editor last opened, changed or saved a document or ran a command, in milliseconds
    /// since the Unix epoch (updated at most once a second).
    pub(crate) last_active_ms: u64,
    /// How long the server waits for the editor's answer to `workspace/applyEdit`: a caller waits
    /// that long and a margin for the answer.
    pub(crate) apply_edit_timeout_ms: u64,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub use crate::disk::private::{bridge_folder as folder, check_private, Expect};

pub fn entry_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{pid}.json"))
}

pub(crate) fn socket_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{pid}.sock"))
}

/// Creates the registry folder (mode 0700) if it is missing and checks that it is private.
pub(crate) fn ensure_folder() -> Result<PathBuf, String> {
    let dir = folder();
    crate::disk::private::make_folder(&dir, false)
        .map_err(|why| format!("cannot create the bridge folder: {why}"))?;
    check_private(&dir, Expect::Folder)?;
    Ok(dir)
}

/// Whether process `pid` exists (a process of another user counts: it exists).
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // 0 and negative values would signal process groups.
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    unsafe {
        libc::kill(pid, 0) == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
}

/// Writes the entry whole, private: a reader finds the old entry or the new one, never a part.
pub(crate) fn write(dir: &Path, entry: &Entry) -> std::io::Result<()> {
    let body = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    crate::disk::atomic::write(
        &entry_path(dir, entry.pid),
        &body,
        crate::disk::atomic::Mode::Private,
    )
}

/// Removes a server's entry, then its socket (a reader that finds the entry finds the socket).
pub(crate) fn remove(dir: &Path, pid: u32) {
    let _ = fs::remove_file(entry_path(dir, pid));
    let _ = fs::remove_file(socket_path(dir, pid));
}

/// What a look at the registry found: the usable entries of live servers, and notes on what was
/// removed or ignored, for the caller's reason.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub(crate) entries: Vec<Entry>,
    pub(crate) notes: Vec<String>,
}

fn read_entry(path: &Path) -> Result<Entry, String> {
    check_private(path, Expect::File)?;
    let mut body = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(MAX_ENTRY + 1).read_to_end(&mut body))
        .map_err(|e| format!("{} cannot be read ({e})", path.display()))?;
    if body.len() as u64 > MAX_ENTRY {
        return Err(format!("{} is larger than an entry can be", path.display()));
    }
    serde_json::from_slice(&body)
        .map_err(|e| format!("{} is not a registry entry ({e})", path.display()))
}

/// Reads every entry of the registry folder `dir`, removing those of processes that are gone. `Err`
/// when the folder is missing or not private (then nothing in it is used).
pub(crate) fn scan(dir: &Path) -> Result<Scan, String> {
    if let Err(e) = fs::symlink_metadata(dir) {
        return Err(if e.kind() == ErrorKind::NotFound {
            format!(
                "no editor is running multiedit lsp with the bridge on (there is no {})",
                dir.display()
            )
        } else {
            format!("the bridge folder {} cannot be read ({e})", dir.display())
        });
    }
    check_private(dir, Expect::Folder)
        .map_err(|why| format!("ignored the bridge folder: {why}"))?;
    let listing = fs::read_dir(dir)
        .map_err(|e| format!("the bridge folder {} cannot be read ({e})", dir.display()))?;
    let mut scan = Scan::default();
    for item in listing.flatten() {
        let name = item.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !alive(pid) {
            remove(dir, pid);
            scan.notes.push(format!(
                "the editor at pid {pid} is gone, its entry was removed"
            ));
            continue;
        }
        let entry = match read_entry(&item.path()) {
            Ok(e) if e.pid == pid => e,
            Ok(e) => {
                scan.notes.push(format!(
                    "ignored {}: it names pid {}",
                    item.path().display(),
                    e.pid
                ));
                continue;
            }
            Err(why) => {
                scan.notes
                    .push(format!("ignored the editor at pid {pid}: {why}"));
                continue;
            }
        };
        if entry.socket != socket_path(dir, pid) {
            scan.notes.push(format!(
                "ignored the editor at pid {pid}: its socket {} is not {}",
                entry.socket.display(),
                socket_path(dir, pid).display()
            ));
            continue;
        }
        match fs::symlink_metadata(&entry.socket) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                remove(dir, pid);
                scan.notes.push(format!(
                    "the editor at pid {pid} has no socket any more, its entry was removed"
                ));
                continue;
            }
            _ => {}
        }
        if let Err(why) = check_private(&entry.socket, Expect::Socket) {
            scan.notes
                .push(format!("ignored the editor at pid {pid}: {why}"));
            continue;
        }
        scan.entries.push(entry);
    }
    Ok(scan)
}

pub(crate) use crate::disk::private::make_file_private as make_private;

/// A secret no other process can guess: 32 bytes from the operating system's random source, in hex.
pub(crate) fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| format!("no random source for the bridge token ({e})"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares two tokens in time that does not depend on where they first differ.
pub(crate) fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::DirBuilder;
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

    #[test]
    fn private_means_ours_and_closed() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("reg");
        DirBuilder::new().mode(0o700).create(&sub).unwrap();
        assert_eq!(check_private(&sub, Expect::Folder), Ok(()));
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o755)).unwrap();
        let e = check_private(&sub, Expect::Folder).unwrap_err();
        assert!(e.contains("mode 0755"), "{e}");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&sub, &link).unwrap();
        assert!(check_private(&link, Expect::Folder)
            .unwrap_err()
            .contains("symbolic link"));
        assert!(check_private(&sub, Expect::File)
            .unwrap_err()
            .contains("not a regular file"));
    }

    #[test]
    fn tokens() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(same_token(&a, &a.clone()) && !same_token(&a, &b) && !same_token(&a, "x"));
    }

    #[test]
    fn entries_of_dead_processes_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("reg");
        DirBuilder::new().mode(0o700).create(&dir).unwrap();
        // Above any pid_max Linux allows (2^22), so no process has it.
        let dead = 5_000_000;
        let entry = Entry {
            pid: dead,
            editor: "x".into(),
            folders: vec![],
            socket: socket_path(&dir, dead),
            token: "t".into(),
            last_active_ms: 0,
            apply_edit_timeout_ms: 1,
        };
        write(&dir, &entry).unwrap();
        assert_eq!(check_private(&entry_path(&dir, dead), Expect::File), Ok(()));
        let scan = scan(&dir).unwrap();
        assert!(scan.entries.is_empty());
        assert_eq!(
            scan.notes,
            ["the editor at pid 5000000 is gone, its entry was removed"]
        );
        assert!(!entry_path(&dir, dead).exists());
    }
}
