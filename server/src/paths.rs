//! From a plan's `file_path` (an absolute path or a `file://` URI) to a path on disk.

use std::path::{Component, Path, PathBuf};

use crate::engine::{FileOp, Plan};
use crate::refusal::{Kind, Refusal};

pub use multiedit_engine::paths::to_path;

/// The path as the kernel resolves it: components walked from the root, each symbolic link followed
/// where it is met, `..` taken on the resolved prefix (`link/..` is the link target's parent, not the
/// folder holding the link). For a file that does not exist yet, the part from its first missing
/// component on is appended as given: none of it exists, so none of it is a link. A `..` after a
/// missing component is refused, as the kernel refuses it (ENOENT), rather than read textually: a
/// writer that creates the missing folder first would then go wherever the rest leads. A dangling link
/// in the way is refused too (writing through it would land wherever it points).
pub(crate) fn real_path(path: &Path) -> Result<PathBuf, String> {
    // The common case, a path that exists: the kernel's own answer, in one call.
    if let Ok(real) = std::fs::canonicalize(path) {
        return Ok(real);
    }
    let mut real = PathBuf::new();
    let mut rest = path.components().peekable();
    while let Some(c) = rest.next() {
        let name = match c {
            Component::Prefix(_) | Component::RootDir => {
                real.push(c.as_os_str());
                continue;
            }
            Component::CurDir => continue,
            Component::ParentDir => {
                real.pop();
                continue;
            }
            Component::Normal(name) => name,
        };
        let next = real.join(name);
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(&next) {
                Ok(target) => real = target,
                Err(_) => {
                    return Err(format!(
                        "{} is a symbolic link that cannot be resolved",
                        next.display()
                    ))
                }
            },
            // A file where a folder is named: the path does not exist, and a plan that deletes the
            // file may make the folder there (`disk::folders`).
            Ok(m) if !m.is_dir() && rest.peek().is_some() => {
                return missing(next, ("is a file", "a file"), rest.collect())
            }
            Ok(_) => real = next,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return missing(next, ("does not exist", "a missing folder"), rest.collect())
            }
            Err(e) => return Err(format!("{} cannot be examined ({e})", next.display())),
        }
    }
    Ok(real)
}

/// `real_path` of a path whose folder `next` (resolved) is not one (`is`: what it is instead, and as
/// a noun), `after` the rest.
fn missing(
    next: PathBuf,
    (is, noun): (&str, &str),
    after: Vec<Component>,
) -> Result<PathBuf, String> {
    if after.iter().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!(
            "{} {is}, and the `..` after it cannot be resolved (the system refuses a path through {noun})",
            next.display()
        ));
    }
    let mut real = next;
    real.extend(after.iter().filter(|c| matches!(c, Component::Normal(_))));
    Ok(real)
}

/// A user's folder as the XDG base directories name it: `$var` when it is an absolute path, else
/// `$HOME/under_home`; `None` when neither can be named.
pub(crate) fn user_dir(var: &str, under_home: &str) -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
    };
    absolute(var).or_else(|| absolute("HOME").map(|h| h.join(under_home)))
}

/// The path with `.` and `..` taken textually, as a URI's dot segments are (RFC 3986 5.2.4).
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c.as_os_str()),
        }
    }
    out
}

/// Folders a front end may edit in, held as real paths.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Folders(Vec<PathBuf>);

/// Why a path is not inside `Folders`.
#[derive(Debug)]
pub(crate) enum Outside {
    /// It resolves to this real path, which no folder holds.
    At(PathBuf),
    /// It cannot be resolved: why.
    Unresolvable(String),
}

impl Folders {
    /// Adds a folder (resolved; kept as given if it cannot be), once.
    pub(crate) fn add(&mut self, folder: &Path) {
        let real = real_path(folder).unwrap_or_else(|_| folder.to_path_buf());
        if !self.0.contains(&real) {
            self.0.push(real);
        }
    }

    pub(crate) fn remove(&mut self, folder: &Path) {
        let real = real_path(folder).unwrap_or_else(|_| folder.to_path_buf());
        self.0.retain(|f| f != &real);
    }

    pub(crate) fn as_slice(&self) -> &[PathBuf] {
        &self.0
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The folders as a list for a message.
    pub(crate) fn listed(&self) -> String {
        self.0
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether a folder holds `path`, resolved as the kernel resolves it. A path with `..` must also be
    /// inside when its `..` are taken textually: an editor may read it as a URI, whose dot segments
    /// are removed before any link is followed.
    pub(crate) fn check(&self, path: &Path) -> Result<(), Outside> {
        let inside = |real: PathBuf| {
            if self.0.iter().any(|f| real.starts_with(f)) {
                Ok(())
            } else {
                Err(Outside::At(real))
            }
        };
        inside(real_path(path).map_err(Outside::Unresolvable)?)?;
        if path.components().any(|c| c == Component::ParentDir) {
            inside(real_path(&lexical(path)).map_err(Outside::Unresolvable)?)?;
        }
        Ok(())
    }
}

impl Folders {
    /// `check` worded as a refusal: "Cannot edit NAME: it lies outside WHAT…. Nothing was changed.
    /// OPT_OUT" (`name`: the path as the plan gave it).
    pub(crate) fn confine(
        &self,
        name: &str,
        path: &Path,
        what: &str,
        opt_out: &str,
    ) -> Result<(), Refusal> {
        self.refuse_outside(("edit", "changed"), name, path, what, opt_out)
    }

    /// `confine` for a file to be read (`multiedit_read`).
    pub(crate) fn confine_read(
        &self,
        name: &str,
        path: &Path,
        what: &str,
        opt_out: &str,
    ) -> Result<(), Refusal> {
        self.refuse_outside(("read", "read"), name, path, what, opt_out)
    }

    /// `check`, refused as "Cannot VERB NAME: …. Nothing was DONE. OPT_OUT".
    fn refuse_outside(
        &self,
        (verb, done): (&str, &str),
        name: &str,
        path: &Path,
        what: &str,
        opt_out: &str,
    ) -> Result<(), Refusal> {
        self.check(path).map_err(|outside| {
            let why = outside.describe(path, what);
            Refusal::new(
                Kind::OutsideWorkspace,
                format!("Cannot {verb} {name}: {why}. Nothing was {done}. {opt_out}"),
            )
            .in_file(name)
        })
    }

    /// `confine` for every path a plan touches: its files and where it moves them.
    pub(crate) fn confine_plan(
        &self,
        plan: &Plan,
        what: &str,
        opt_out: &str,
    ) -> Result<(), Refusal> {
        for name in names(plan) {
            self.confine(name, &to_path(name)?, what, opt_out)?;
        }
        Ok(())
    }
}

/// Every path a plan touches, as it names them: its files, where it moves them, and the file its
/// rename starts from (the other files a rename reaches only the editor knows, and confines).
pub(crate) fn names(plan: &Plan) -> impl Iterator<Item = &str> {
    plan.files
        .iter()
        .flat_map(|f| {
            let moved = match &f.op {
                FileOp::MoveTo(to) => Some(to.as_str()),
                _ => None,
            };
            std::iter::once(f.file_path.as_str()).chain(moved)
        })
        .chain(plan.rename.as_ref().map(|r| r.file_path.as_str()))
}

/// Refuses a patch's path (its files and move targets, joined to `root`) that goes through a
/// symbolic link below `root`, as `git apply` refuses a file "beyond a symbolic link": a link in a
/// patch's path may lead anywhere, and the patch's author chose neither. The last component may be a
/// link (an edit reaches the file it points to; a deletion removes the link). Paths outside `root`
/// are the confinement's business.
pub(crate) fn refuse_patch_links(plan: &Plan, root: &Path) -> Result<(), Refusal> {
    for name in names(plan) {
        let path = lexical(&to_path(name)?);
        let Ok(below) = path.strip_prefix(root) else {
            continue;
        };
        let mut at = root.to_path_buf();
        let mut parts = below.components().peekable();
        while let Some(c) = parts.next() {
            at.push(c);
            if parts.peek().is_none() {
                break;
            }
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                let message = format!(
                    "Cannot apply the patch to {name}: {} is a symbolic link, and like git apply, multiedit follows no \
                     link in a patch's path (a file beyond a link may lie anywhere). Nothing was changed.",
                    at.display()
                );
                return Err(Refusal::new(Kind::OutsideWorkspace, message).in_file(name));
            }
        }
    }
    Ok(())
}

impl Outside {
    /// ` (it resolves to …)` when that differs from what the caller named, else nothing; or the
    /// reason it cannot be resolved. Completes "Cannot edit X: …".
    pub(crate) fn describe(&self, path: &Path, outside_what: &str) -> String {
        match self {
            Outside::At(real) if real.as_path() == path => {
                format!("it lies outside {outside_what}")
            }
            Outside::At(real) => {
                format!(
                    "it lies outside {outside_what} (it resolves to {}, symbolic links followed)",
                    real.display()
                )
            }
            Outside::Unresolvable(why) => {
                format!("{why}, so it cannot be shown to lie inside {outside_what}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_dots_resolve_as_the_kernel_resolves_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (ws, deep) = (root.join("ws"), root.join("ws/a/b"));
        std::fs::create_dir_all(&deep).unwrap();
        std::os::unix::fs::symlink(&root, ws.join("up")).unwrap();
        std::os::unix::fs::symlink(&deep, ws.join("deep")).unwrap();
        // `..` after a link is taken on the link's target.
        assert_eq!(
            real_path(&ws.join("deep/../new.txt")).unwrap(),
            ws.join("a/new.txt")
        );
        assert_eq!(
            real_path(&ws.join("up/ws/new/x.txt")).unwrap(),
            ws.join("new/x.txt")
        );
        // Through a missing folder: refused, naming it, whatever follows.
        let why = real_path(&ws.join("missing/../up/secret.txt")).unwrap_err();
        assert!(
            why.starts_with(&format!("{} does not exist", ws.join("missing").display())),
            "{why}"
        );
        assert!(real_path(&ws.join("missing/x/../y")).is_err());
        let file = ws.join("f.txt");
        std::fs::write(&file, "").unwrap();
        // Under a file: a path that does not exist yet (a plan may delete the file and make the folder).
        assert_eq!(real_path(&ws.join("f.txt/x")).unwrap(), ws.join("f.txt/x"));
        let why = real_path(&ws.join("f.txt/../x")).unwrap_err();
        assert!(
            why.starts_with(&format!(
                "{} is a file, and the `..` after it",
                file.display()
            )),
            "{why}"
        );
        // Inside by the kernel's reading, outside by a URI's: not inside.
        let mut folders = Folders::default();
        folders.add(&ws);
        assert!(folders.check(&ws.join("deep/../../x.txt")).is_err());
        assert!(folders.check(&ws.join("a/../x.txt")).is_ok());
        assert!(folders.check(&ws.join("up/ws/x.txt")).is_ok());
        assert!(folders.check(&ws.join("up/x.txt")).is_err());
    }
}
