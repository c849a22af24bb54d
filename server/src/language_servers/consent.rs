//! Whether the user allowed multiedit to start language servers for a project: opt-in, per project,
//! recorded in the user's state folder (`language-servers.json` beside the journals, trusted only as
//! they are: a private folder and file of this user's, `disk::private`) for the project's real path,
//! and never read from the project itself. A language server started on a cloned repository can run
//! that repository's code (rust-analyzer's build scripts and proc macros, TypeScript's plugins and
//! the workspace's own `typescript`, pyright asking the project's Python, gopls fetching a
//! toolchain), so nothing is started where the user has not said so: `multiedit setup
//! --language-servers` in the project records it, `--no-language-servers` takes it back.
//!
//! A folder counts as allowed when it or the nearest recorded folder above it is allowed; that
//! folder is then the servers' workspace folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::disk::private;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    /// Per project real path: allowed (`true`) or refused (`false`).
    #[serde(default)]
    projects: BTreeMap<PathBuf, bool>,
}

/// The record file, `language-servers.json` in the state folder.
pub(crate) fn record_path() -> Option<PathBuf> {
    private::state_folder().map(|d| d.join("language-servers.json"))
}

/// Why the record cannot be trusted, if it cannot: its folder or itself not this user's alone.
fn untrusted(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    if std::fs::symlink_metadata(dir).is_err() {
        return None;
    }
    if let Err(why) = private::check(dir, true) {
        return Some(why);
    }
    if std::fs::symlink_metadata(path).is_err() {
        return None;
    }
    private::check(path, false).err()
}

fn read(path: &Path) -> Result<Record, String> {
    if let Some(why) = untrusted(path) {
        return Err(format!(
            "{} cannot be trusted: {why}. Another user could have written it, so it is not read: no language server \
             is started. Make it yours alone (chmod 700 the folder, chmod 600 the file), or move it away and run \
             `multiedit setup --language-servers` again",
            path.display()
        ));
    }
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} cannot be read back ({e}); move it away and run `multiedit setup --language-servers` again",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
        Err(e) => Err(format!("cannot read {} ({e})", path.display())),
    }
}

/// What the record says of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Consent {
    /// Allowed, through this recorded folder (the folder itself or one above it).
    Allowed(PathBuf),
    /// Refused for this recorded folder (`--no-language-servers`).
    Refused(PathBuf),
    /// Nothing recorded for it or above it.
    Unset,
    /// The record cannot be used, and why.
    Unreadable(String),
}

/// What the record says of `folder` (resolved first: the record holds real paths).
pub(crate) fn of(folder: &Path) -> Consent {
    let Some(path) = record_path() else {
        return Consent::Unset;
    };
    let record = match read(&path) {
        Ok(r) => r,
        Err(why) => return Consent::Unreadable(why),
    };
    let real = crate::paths::real_path(folder).unwrap_or_else(|_| folder.to_path_buf());
    let found = real
        .ancestors()
        .find_map(|a| record.projects.get(a).map(|on| (a.to_path_buf(), *on)));
    match found {
        Some((at, true)) => Consent::Allowed(at),
        Some((at, false)) => Consent::Refused(at),
        None => Consent::Unset,
    }
}

/// Records that language servers may (`allowed`) or may not be started for `project` (resolved);
/// `Ok` with the record's path and the project's real path.
pub(crate) fn record(project: &Path, allowed: bool) -> Result<(PathBuf, PathBuf), String> {
    let path = record_path().ok_or("no state folder: neither XDG_STATE_HOME nor HOME is set")?;
    let mut record = read(&path)?;
    let real = crate::paths::real_path(project)
        .map_err(|e| format!("cannot resolve {} ({e})", project.display()))?;
    record.projects.insert(real.clone(), allowed);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(format!("{} names no file", path.display()));
    };
    private::make_folder(dir, true)?;
    if let Some(why) = untrusted(&path) {
        return Err(format!("{} cannot be trusted: {why}", path.display()));
    }
    let resolved = std::fs::canonicalize(dir)
        .map_err(|e| format!("cannot resolve {} ({e})", dir.display()))?
        .join(name);
    let text = serde_json::to_string_pretty(&record).expect("a record serialises") + "\n";
    crate::disk::atomic::write_resolved(
        &resolved,
        text.as_bytes(),
        crate::disk::atomic::Mode::Private,
    )
    .map_err(|e| format!("cannot write {} ({e})", path.display()))?;
    Ok((path, real))
}
