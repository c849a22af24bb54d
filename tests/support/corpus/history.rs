//! This repository's own history, read with the `git` command: every non-merge commit, every text file
//! it adds or modifies, the file's text before and after, and the changed line ranges (`git diff -U0`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Files larger than this (before or after) are left out: lock files and generated data, not edits.
pub const MAX_FILE_BYTES: usize = 256 * 1024;
/// The extensions of the text files the corpus takes.
pub const TEXT_EXTENSIONS: &[&str] = &[
    "rs", "ts", "mjs", "js", "md", "json", "sh", "toml", "yml", "yaml",
];

/// One changed line range: `old_len` lines at `old_start` became `new_len` lines at `new_start` (0-based).
#[derive(Clone, Copy, Debug)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
}

#[derive(Debug)]
pub struct FileChange {
    pub path: String,
    /// `None`: the commit adds the file.
    pub pre: Option<String>,
    pub post: String,
    pub hunks: Vec<Hunk>,
}

#[derive(Debug)]
pub struct Commit {
    pub id: String,
    pub files: Vec<FileChange>,
}

pub struct History {
    pub commits: Vec<Commit>,
    /// Non-merge commits in the history, before any selection.
    pub total_commits: usize,
    /// Of those, the ones read (all, or `max_commits` evenly spread).
    pub taken: usize,
    /// File changes left out: binary, too large, not UTF-8, deleted, or not a text extension.
    pub skipped_files: usize,
}

/// This repository, or the clone `MULTIEDIT_CORPUS_REPO` names (to check the test on a shallow one).
pub fn repo_root() -> PathBuf {
    match std::env::var_os("MULTIEDIT_CORPUS_REPO") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    }
}

fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    // Lossy: a diff may quote bytes of a non-UTF-8 file, which the corpus leaves out anyway.
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Why the history cannot serve as a corpus (no git, not a clone, a shallow clone, too few commits), if so.
pub fn unusable(root: &Path, min_commits: usize) -> Option<String> {
    match git(root, &["rev-parse", "--is-shallow-repository"]) {
        Err(e) => return Some(format!("no git history: {e}")),
        Ok(s) if s.trim() == "true" => {
            return Some("the clone is shallow (run `git fetch --unshallow`; .ci/run does)".into())
        }
        Ok(_) => {}
    }
    match git(root, &["rev-list", "--count", "--no-merges", "HEAD"]) {
        Err(e) => Some(e),
        Ok(n) => match n.trim().parse::<usize>() {
            Ok(n) if n >= min_commits => None,
            Ok(n) => Some(format!(
                "only {n} commits in the history, fewer than {min_commits}"
            )),
            Err(e) => Some(format!("git rev-list --count: {e}")),
        },
    }
}

/// Every `max_commits`-th part of the history, oldest first, evenly spread and the same on every run.
pub fn read(root: &Path, max_commits: usize) -> Result<History, String> {
    let all: Vec<String> = git(
        root,
        &["log", "--no-merges", "--reverse", "--format=%H", "HEAD"],
    )?
    .lines()
    .map(str::to_string)
    .collect();
    let total_commits = all.len();
    let chosen: Vec<&String> = if all.len() <= max_commits {
        all.iter().collect()
    } else {
        (0..max_commits)
            .map(|i| &all[i * all.len() / max_commits])
            .collect()
    };
    let chosen_count = chosen.len();
    let mut skipped_files = 0;
    // Per commit, its files: the path, whether the file is new, its hunks.
    type Files = Vec<(String, bool, Vec<Hunk>)>;
    let mut pending: Vec<(String, Files)> = Vec::new();
    for id in chosen {
        let diff = git(
            root,
            &[
                "-c",
                "core.quotePath=false",
                "diff-tree",
                "-r",
                "-p",
                "-U0",
                "--no-renames",
                "--no-color",
                "--no-ext-diff",
                "--root",
                "--format=",
                id,
            ],
        )?;
        let (files, skipped) = parse_diff(&diff);
        skipped_files += skipped;
        pending.push((id.clone(), files));
    }
    // Both images of every file, in one `git cat-file --batch`.
    let mut wanted: Vec<String> = Vec::new();
    for (id, files) in &pending {
        for (path, added, _) in files {
            if !added {
                wanted.push(format!("{id}^:{path}"));
            }
            wanted.push(format!("{id}:{path}"));
        }
    }
    let blobs = cat_files(root, &wanted)?;
    let mut commits = Vec::new();
    for (id, files) in pending {
        let mut changes = Vec::new();
        for (path, added, hunks) in files {
            let pre = if added {
                None
            } else {
                blobs.get(&format!("{id}^:{path}")).cloned().flatten()
            };
            let post = blobs.get(&format!("{id}:{path}")).cloned().flatten();
            match (pre, post) {
                (pre, Some(post)) if added || pre.is_some() => changes.push(FileChange {
                    path,
                    pre,
                    post,
                    hunks,
                }),
                _ => skipped_files += 1,
            }
        }
        if !changes.is_empty() {
            commits.push(Commit {
                id: id[..10].to_string(),
                files: changes,
            });
        }
    }
    Ok(History {
        commits,
        total_commits,
        taken: chosen_count,
        skipped_files,
    })
}

/// The files of one commit's `diff-tree -p -U0` that the corpus takes (path, added, hunks), and how many it
/// left out.
fn parse_diff(diff: &str) -> (Vec<(String, bool, Vec<Hunk>)>, usize) {
    let mut files = Vec::new();
    let mut skipped = 0;
    let mut current: Option<(String, bool, Vec<Hunk>)> = None;
    let mut added = false;
    let mut deleted = false;
    let mut binary = false;
    let finish = |cur: Option<(String, bool, Vec<Hunk>)>, files: &mut Vec<_>| {
        if let Some(c) = cur {
            files.push(c);
        }
    };
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            finish(current.take(), &mut files);
            if binary || deleted {
                skipped += 1;
            }
            added = false;
            deleted = false;
            binary = false;
        } else if line.starts_with("new file mode") {
            added = true;
        } else if line.starts_with("deleted file mode") {
            deleted = true;
        } else if line.starts_with("Binary files ") {
            binary = true;
        } else if let Some(path) = line.strip_prefix("+++ b/") {
            let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
            if TEXT_EXTENSIONS.contains(&ext) && !path.starts_with('"') {
                current = Some((path.to_string(), added, Vec::new()));
            } else {
                skipped += 1;
            }
        } else if line.starts_with("@@ ") {
            if let (Some(cur), Some(h)) = (current.as_mut(), parse_hunk_header(line)) {
                cur.2.push(h);
            }
        }
    }
    finish(current.take(), &mut files);
    if binary || deleted {
        skipped += 1;
    }
    (files, skipped)
}

/// `@@ -a,b +c,d @@`: with a count of 0 the start is the line after which the change goes.
fn parse_hunk_header(line: &str) -> Option<Hunk> {
    let mut parts = line.split(' ').skip(1);
    let range = |s: &str| -> Option<(usize, usize)> {
        let (start, len) = match s[1..].split_once(',') {
            Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
            None => (s[1..].parse().ok()?, 1),
        };
        Some((if len == 0 { start } else { start - 1 }, len))
    };
    let (old_start, old_len) = range(parts.next()?)?;
    let (new_start, new_len) = range(parts.next()?)?;
    Some(Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
    })
}

/// The texts of `names` (`rev:path`), `None` for a missing, too large or non-UTF-8 one.
fn cat_files(root: &Path, names: &[String]) -> Result<HashMap<String, Option<String>>, String> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git cat-file: {e}"))?;
    let mut stdin = child.stdin.take().unwrap();
    let requests: String = names.iter().map(|n| format!("{n}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut blobs = HashMap::new();
    for name in names {
        let mut header = String::new();
        out.read_line(&mut header).map_err(|e| e.to_string())?;
        let fields: Vec<&str> = header.split_whitespace().collect();
        let text = match fields.as_slice() {
            [_, "blob", size] => {
                let size: usize = size
                    .parse()
                    .map_err(|_| format!("git cat-file: bad header {header:?}"))?;
                let mut bytes = vec![0; size + 1];
                out.read_exact(&mut bytes).map_err(|e| e.to_string())?;
                bytes.pop();
                if size > MAX_FILE_BYTES {
                    None
                } else {
                    String::from_utf8(bytes).ok()
                }
            }
            _ => None,
        };
        blobs.insert(name.clone(), text);
    }
    writer.join().unwrap().map_err(|e| e.to_string())?;
    child.wait().map_err(|e| e.to_string())?;
    Ok(blobs)
}
