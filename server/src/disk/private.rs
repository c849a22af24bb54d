//! multiedit's private folders, in one place: where the journals are kept and where the editors'
//! bridge keeps its registry, and what makes a folder or file private (this user's, closed to others).
//!
//! The journals' folder: `$XDG_STATE_HOME/multiedit` (when
//! that is an absolute path), else `~/.local/state/multiedit`; where neither can be made (a sandbox
//! with a read-only home), `multiedit-state-<uid>` in the temporary folder. As the bridge's registry
//! folder, it must be a real folder (not a link) owned by the user, mode 0700, and each journal in it a
//! regular file owned by the user with no access for anyone else: only then is a journal taken to be
//! one this user's multiedit wrote. A journal anywhere else (a file in a repository named like one) is
//! never acted on.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::engine::Plan;
use crate::refusal::{Kind, Refusal};

/// The folders a journal may be in, the preferred one first (which may not exist yet).
pub(crate) fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::with_capacity(2);
    out.extend(state_folder());
    out.push(std::env::temp_dir().join(format!("multiedit-state-{}", uid())));
    out
}

/// The user's state folder for multiedit's own records (journals, `routes.json`,
/// `language-servers.json`): `$XDG_STATE_HOME/multiedit` when that is an absolute path, else
/// `~/.local/state/multiedit`; `None` when neither can be named.
pub(crate) fn state_folder() -> Option<PathBuf> {
    crate::paths::user_dir("XDG_STATE_HOME", ".local/state").map(|d| d.join("multiedit"))
}

/// Every folder multiedit keeps to itself: the journals' candidates, whichever this run would choose
/// (another run, with another environment, may choose another), and the bridge's registry folders.
fn all_private() -> Vec<PathBuf> {
    let mut out = candidates();
    if let Some(home) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
    {
        out.push(home.join(".local/state/multiedit"));
    }
    out.push(bridge_folder());
    out.push(std::env::temp_dir().join(format!("multiedit-{}", uid())));
    // As named, and with their links resolved, as a plan's path is compared both ways.
    let real: Vec<PathBuf> = out
        .iter()
        .filter_map(|d| fs::canonicalize(d).ok())
        .collect();
    out.extend(real);
    out.sort();
    out.dedup();
    out
}

/// Refuses a plan with a file (or a move's target) inside one of multiedit's private folders, as read
/// and with its links resolved: a journal planted there would be taken for this user's own, and the
/// next run would carry it out. Whatever the root: an MCP server started in the home folder has the
/// state folder inside it.
pub(crate) fn refuse_inside(plan: &Plan) -> Result<(), Refusal> {
    for name in crate::paths::names(plan) {
        refuse_path(name, &crate::paths::to_path(name)?, ("edit", "changed"))?;
    }
    Ok(())
}

/// `refuse_inside` for one path (`name`: as the request gave it), whoever asks: the gate's first rule.
/// `(verb, done)`: what the refusal says was not done ("edit", "changed"; "read", "read").
pub(crate) fn refuse_path(
    name: &str,
    path: &Path,
    (verb, done): (&str, &str),
) -> Result<(), Refusal> {
    let readings = [
        Some(crate::paths::lexical(path)),
        crate::paths::real_path(path).ok(),
    ];
    let private = all_private();
    let Some(folder) = private
        .iter()
        .find(|d| readings.iter().flatten().any(|r| r.starts_with(d)))
    else {
        return Ok(());
    };
    Err(Refusal::new(
        Kind::OutsideWorkspace,
        format!(
            "Cannot {verb} {name}: it lies inside {}, a private folder of multiedit's own (its journals and the \
             editors' bridge), which no plan or patch may touch. Nothing was {done}.",
            folder.display()
        ),
    )
    .in_file(name))
}

/// The first candidate that is (or can be made) private; `Err` says why none is.
pub(crate) fn ensure() -> Result<PathBuf, String> {
    let mut reasons = Vec::new();
    for dir in candidates() {
        match make(&dir).and_then(|()| check(&dir, true)) {
            Ok(()) => return Ok(dir),
            Err(e) => reasons.push(e),
        }
    }
    Err(reasons.join("; "))
}

/// The candidates that exist and are private (for reading: nothing is created); the others that exist,
/// with the reason, for the caller to tell.
pub(crate) fn existing() -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for dir in candidates() {
        match fs::symlink_metadata(&dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            _ => match check(&dir, true) {
                Ok(()) => ok.push(dir),
                Err(e) => bad.push((dir, e)),
            },
        }
    }
    (ok, bad)
}

fn make(dir: &Path) -> Result<(), String> {
    make_folder(dir, true)
}

/// Creates `dir` with no access for anyone else (and, with `parents`, the folders above it as the
/// umask gives); one that exists is left as it is, for the caller to check (`check_private`).
pub(crate) fn make_folder(dir: &Path, parents: bool) -> Result<(), String> {
    if let Some(parent) = dir.parent().filter(|_| parents) {
        fs::create_dir_all(parent)
            .map_err(|e| format!("{} cannot be created ({e})", parent.display()))?;
    }
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("{} cannot be created ({e})", dir.display())),
    }
}

/// Whether `path` is this user's private folder (`folder`) or file.
pub(crate) fn check(path: &Path, folder: bool) -> Result<(), String> {
    check_private(path, if folder { Expect::Folder } else { Expect::File })
}

#[derive(Clone, Copy, PartialEq)]
pub enum Expect {
    Folder,
    Socket,
    File,
}

/// Checks that `path` is a `what` (not a link to one) owned by this user, with no access for group or
/// others. `Err` says what is wrong, in words for the caller's reason.
#[cfg(unix)]
pub fn check_private(path: &Path, what: Expect) -> Result<(), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = fs::symlink_metadata(path)
        .map_err(|e| format!("{} cannot be read ({e})", path.display()))?;
    let t = meta.file_type();
    let (is_kind, noun, mode) = match what {
        Expect::Folder => (t.is_dir(), "a folder", "0700"),
        Expect::Socket => (t.is_socket(), "a socket", "0600"),
        Expect::File => (t.is_file(), "a regular file", "0600"),
    };
    if t.is_symlink() {
        return Err(format!("{} is a symbolic link, not {noun}", path.display()));
    }
    if !is_kind {
        return Err(format!("{} is not {noun}", path.display()));
    }
    if meta.uid() != uid() {
        return Err(format!(
            "{} is owned by uid {}, not by this user (uid {})",
            path.display(),
            meta.uid(),
            uid()
        ));
    }
    let bits = meta.mode() & 0o777;
    if bits & 0o077 != 0 {
        return Err(format!(
            "{} has mode {bits:04o}, which lets other users in ({mode} is required)",
            path.display()
        ));
    }
    Ok(())
}

/// Without Unix owners and modes there is nothing to check beyond the kind.
#[cfg(not(unix))]
pub fn check_private(path: &Path, what: Expect) -> Result<(), String> {
    let meta = fs::symlink_metadata(path)
        .map_err(|e| format!("{} cannot be read ({e})", path.display()))?;
    let (is_kind, noun) = match what {
        Expect::Folder => (meta.is_dir(), "a folder"),
        Expect::Socket => (true, "a socket"),
        Expect::File => (meta.is_file(), "a regular file"),
    };
    if is_kind {
        Ok(())
    } else {
        Err(format!("{} is not {noun}", path.display()))
    }
}

/// Makes a file private to this user (a socket is created with the process's umask).
#[cfg(unix)]
pub(crate) fn make_file_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
}

/// The folder the editors' bridge keeps its registry in, for this user (which may not exist yet):
/// `$XDG_RUNTIME_DIR/multiedit` (the per-user runtime folder) when that is an absolute path, else
/// `multiedit-<uid>` in the temporary folder.
pub fn bridge_folder() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        // The XDG specification says to ignore a relative value.
        Some(dir) if dir.is_absolute() => dir.join("multiedit"),
        _ => std::env::temp_dir().join(format!("multiedit-{}", uid())),
    }
}

#[cfg(unix)]
pub(crate) fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
pub(crate) fn uid() -> u32 {
    0
}
