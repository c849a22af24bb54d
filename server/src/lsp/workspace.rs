//! Which files a plan may touch: those inside the workspace folders, judged on the real path (every
//! symbolic link resolved), so a link inside the workspace cannot carry an edit outside it.
//!
//! Without any workspace folder (an editor started on a lone file) only the documents open in the
//! editor may be edited: the user has them in front of them, while a path on disk could be anything.

use std::path::{Path, PathBuf};

use crate::paths::Folders;
use crate::refusal::{Kind, Refusal};

const OPT_OUT: &str =
    "To allow files outside the workspace, start the server with the initialization option \
                       {\"allowOutsideWorkspace\": true}.";

#[derive(Debug, Clone, Default)]
pub(crate) struct Workspace {
    folders: Folders,
    allow_outside: bool,
}

impl Workspace {
    /// Folders given as file URIs or paths. Returns warnings for folders that are not local paths.
    pub(crate) fn new(folders: &[String], allow_outside: bool) -> (Workspace, Vec<String>) {
        let mut ws = Workspace {
            folders: Folders::default(),
            allow_outside,
        };
        let mut warnings = Vec::new();
        for f in folders {
            if let Err(w) = ws.add(f) {
                warnings.push(w);
            }
        }
        (ws, warnings)
    }

    pub(crate) fn add(&mut self, folder: &str) -> Result<(), String> {
        let path = crate::paths::to_path(folder)
            .map_err(|r| format!("Ignoring the workspace folder {folder}: {}", r.message))?;
        if !path.is_absolute() {
            return Err(format!(
                "Ignoring the workspace folder {folder}: not an absolute path"
            ));
        }
        self.folders.add(&path);
        Ok(())
    }

    pub(crate) fn remove(&mut self, folder: &str) {
        if let Ok(path) = crate::paths::to_path(folder) {
            self.folders.remove(&path);
        }
    }

    /// The folders, as the gate judges paths below them.
    pub(crate) fn folders_held(&self) -> &Folders {
        &self.folders
    }

    /// Canonical folder paths.
    pub(crate) fn folders(&self) -> &[PathBuf] {
        self.folders.as_slice()
    }

    /// The folders, for a text: "/a, /b".
    pub(crate) fn listed(&self) -> String {
        self.folders.listed()
    }

    /// Whether the plan's `file_path` (at `path` on disk) may be edited; `open` says whether the editor
    /// has it open.
    pub(crate) fn check(&self, file_path: &str, path: &Path, open: bool) -> Result<(), Refusal> {
        if self.allow_outside {
            return Ok(());
        }
        let refuse =
            |why: String| Err(Refusal::new(Kind::OutsideWorkspace, why).in_file(file_path));
        if self.folders.is_empty() {
            if open {
                return Ok(());
            }
            return refuse(format!(
                "Cannot edit {file_path}: the editor opened no workspace folder, so only files open in the editor \
                 may be edited, and this one is not open. Nothing was changed. Open the file or a folder \
                 containing it. {OPT_OUT}"
            ));
        }
        let what = format!("the workspace folders ({})", self.folders.listed());
        self.folders.confine(file_path, path, &what, OPT_OUT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn inside_outside_and_links() {
        let root = tempfile::tempdir().unwrap();
        let ws_dir = root.path().join("ws");
        fs::create_dir(&ws_dir).unwrap();
        fs::write(root.path().join("secret.txt"), "x").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), ws_dir.join("link.txt"))
            .unwrap();
        std::os::unix::fs::symlink(root.path().join("nowhere"), ws_dir.join("dangling")).unwrap();
        let (ws, w) = Workspace::new(&[ws_dir.display().to_string()], false);
        assert!(w.is_empty());
        let ok = |p: PathBuf| ws.check("f", &p, false).is_ok();
        assert!(ok(ws_dir.join("a.txt")));
        assert!(ok(ws_dir.join("new/dir/b.txt")));
        assert!(!ok(ws_dir.join("new/../../x.txt")));
        assert!(!ok(root.path().join("secret.txt")));
        assert!(!ok(ws_dir.join("link.txt")));
        assert!(!ok(ws_dir.join("dangling")));
        let (open_only, _) = Workspace::new(&[], false);
        assert!(open_only.check("f", &ws_dir.join("a.txt"), true).is_ok());
        assert!(open_only.check("f", &ws_dir.join("a.txt"), false).is_err());
    }
}
