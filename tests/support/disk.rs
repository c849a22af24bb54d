//! What the disk tests share: a snapshot of a folder tree (every name, type, mode, owner and byte;
//! for a file of more than a GiB, its size, blocks and modification time) that never opens anything
//! but a regular file (reading a FIFO would block, a device might never end), and whether the test
//! runs as root.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Relative name -> (type and mode bits, device number, owner (uid, gid), bytes of a regular file or a
/// link's target).
pub type Snapshot = BTreeMap<PathBuf, (u32, u64, (u32, u32), Vec<u8>)>;

/// Files larger than this are compared by their metadata, not read.
const HUGE: u64 = 1 << 30;

pub fn snapshot(root: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let content = if m.file_type().is_symlink() {
                std::fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if m.is_dir() {
                stack.push(p.clone());
                Vec::new()
            } else if m.is_file() && m.len() > HUGE {
                // A sparse file of a terabyte (the size tests) is not read: its size, its blocks on
                // disk and its modification time stand for its bytes.
                format!(
                    "{} bytes in {} blocks, modified {}.{:09}",
                    m.len(),
                    m.blocks(),
                    m.mtime(),
                    m.mtime_nsec()
                )
                .into_bytes()
            } else if m.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            out.insert(
                p.strip_prefix(root).unwrap().to_path_buf(),
                (m.mode(), m.rdev(), (m.uid(), m.gid()), content),
            );
        }
    }
    out
}

/// A fresh folder holding `files` (relative name, text), folders made as needed.
pub fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}
