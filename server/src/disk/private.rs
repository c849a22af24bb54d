//! The private per-user folder where multiedit keeps its journals: `$XDG_STATE_HOME/multiedit` (when
//! that is an absolute path), else `~/.local/state/multiedit`; where neither can be made (a sandbox
//! with a read-only home), `multiedit-state-<uid>` in the temporary folder. As the bridge's registry
//! folder, it must be a real folder (not a link) owned by the user, mode 0700, and each journal in it a
//! regular file owned by the user with no access for anyone else: only then is a journal taken to be
//! one this user's multiedit wrote. A journal anywhere else (a file in a repository named like one) is
//! never acted on.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::engine::{Kind, Plan, Refusal};

/// The folders a journal may be in, the preferred one first (which may not exist yet).
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::with_capacity(2);
    let xdg = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from).filter(|d| d.is_absolute());
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|d| d.is_absolute());
    if let Some(state) = xdg.or_else(|| home.map(|h| h.join(".local/state"))) {
        out.push(state.join("multiedit"));
    }
    out.push(std::env::temp_dir().join(format!("multiedit-state-{}", uid())));
    out
}

/// Every folder multiedit keeps to itself: the journals' candidates, whichever this run would choose
/// (another run, with another environment, may choose another), and the bridge's registry folders.
fn all_private() -> Vec<PathBuf> {
    let mut out = candidates();
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|d| d.is_absolute()) {
        out.push(home.join(".local/state/multiedit"));
    }
    out.push(crate::bridge::registry::folder());
    out.push(std::env::temp_dir().join(format!("multiedit-{}", uid())));
    // As named, and with their links resolved, as a plan's path is compared both ways.
    let real: Vec<PathBuf> = out.iter().filter_map(|d| fs::canonicalize(d).ok()).collect();
    out.extend(real);
    out.sort();
    out.dedup();
    out
}

/// Refuses a plan with a file (or a move's target) inside one of multiedit's private folders, as read
/// and with its links resolved: a journal planted there would be taken for this user's own, and the
/// next run would carry it out. Whatever the root: an MCP server started in the home folder has the
/// state folder inside it.
pub fn refuse_inside(plan: &Plan) -> Result<(), Refusal> {
    let private = all_private();
    for name in crate::paths::names(plan) {
        let path = crate::paths::to_path(name)?;
        let readings = [Some(crate::paths::lexical(&path)), crate::paths::real_path(&path).ok()];
        let Some(folder) = private.iter().find(|d| readings.iter().flatten().any(|r| r.starts_with(d))) else { continue };
        return Err(Refusal::new(
            Kind::OutsideWorkspace,
            format!(
                "Cannot edit {name}: it lies inside {}, a private folder of multiedit's own (its journals and the \
                 editors' bridge), which no plan or patch may touch. Nothing was changed.",
                folder.display()
            ),
        )
        .in_file(name));
    }
    Ok(())
}

/// The first candidate that is (or can be made) private; `Err` says why none is.
pub fn ensure() -> Result<PathBuf, String> {
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
pub fn existing() -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
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
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("{} cannot be created ({e})", parent.display()))?;
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
#[cfg(unix)]
pub fn check(path: &Path, folder: bool) -> Result<(), String> {
    use crate::bridge::registry::{check_private, Expect};
    check_private(path, if folder { Expect::Folder } else { Expect::File })
}

/// Without Unix owners and modes there is nothing to check beyond the kind.
#[cfg(not(unix))]
pub fn check(path: &Path, folder: bool) -> Result<(), String> {
    let meta = fs::symlink_metadata(path).map_err(|e| format!("{} cannot be read ({e})", path.display()))?;
    if if folder { meta.is_dir() } else { meta.is_file() } {
        Ok(())
    } else {
        Err(format!("{} is not a {}", path.display(), if folder { "folder" } else { "regular file" }))
    }
}

#[cfg(unix)]
fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
fn uid() -> u32 {
    0
}
