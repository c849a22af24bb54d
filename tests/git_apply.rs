//! `multiedit apply --format diff` against `git apply`, the reference implementation of unified diffs,
//! on real material: this repository's own history. For a sample of commits, `git diff -M` of the
//! commit against its parent (binary files left out, every other file kept in the one diff) is applied
//! by both tools to two copies of the pre-image of every file it touches; the two folders must then
//! hold the same bytes, file for file, deleted and renamed ones included.
//!
//! Then generated variants, each a real `git diff` of a pre-image and a post-image committed in a
//! scratch repository, from the history's own file changes: CRLF files, files without a final newline,
//! a rename with edits, a deleted file, a new file, the pre-image shifted by lines inserted at its top
//! after the diff was made (both tools apply at an offset), a stale context line in one file of a
//! multi-file diff (both refuse; multiedit names the hunk and leaves every file as it was), a new
//! file that already exists (both refuse; multiedit says `file_exists`), names with spaces and
//! non-ASCII letters (C-quoted by git) with a rename between folders, a hunk whose lines stand at
//! two places equally far from its stated line (the tie below), and the classes of issue 19: a series
//! of diffs of the same files concatenated (pre-image to an intermediate text to the post-image, the
//! first file renamed in the second diff), CRLF files made LF and LF files made CRLF, a byte order
//! mark added or removed, modes (a mode-only change, a mode with an edit, a new executable file),
//! lines added to an empty file, and a file replaced by a folder of the same name and the reverse.
//! Modes are compared too: each file's permission bits in both folders.
//!
//! Where git applies, multiedit must give the same bytes; where git refuses, multiedit must refuse and
//! leave every file unchanged. One exception is counted apart and printed: a hunk that matches
//! equally well at two places the same distance from its stated line, which git settles by taking the
//! later one and multiedit refuses (`ambiguous`), never guessing.

mod support;
use crate::support::corpus::history;

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::Instant;

/// A history shorter than this is taken for a shallow or partial clone.
const MIN_COMMITS: usize = 20;
/// Commits replayed, evenly spread over the history.
const MAX_COMMITS: usize = 120;
/// Cases of each generated variant.
const PER_VARIANT: usize = 20;
/// Files of a generated multi-file diff.
const FILES_PER_CASE: usize = 3;
/// Disagreements printed.
const EXAMPLES: usize = 8;
/// git's empty tree: the parent of a root commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Relative path (with `/`) to bytes: a folder's files.
type Tree = BTreeMap<String, Vec<u8>>;
/// The files of a tree that are executable.
type Exec = std::collections::BTreeSet<String>;
/// Relative path to permission bits.
type Modes = BTreeMap<String, u32>;

/// `git`, free of the user's and the system's configuration and of any repository the test runs in.
fn git() -> Command {
    let mut c = Command::new("git");
    for v in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_COMMON_DIR",
    ] {
        c.env_remove(v);
    }
    c.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("LC_ALL", "C");
    c
}

fn run_ok(mut c: Command, what: &str) -> Vec<u8> {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn in_repo(root: &Path, args: &[&str]) -> Vec<u8> {
    let mut c = git();
    c.arg("-C").arg(root).args(args);
    run_ok(c, &format!("git {}", args.join(" ")))
}

/// One `git cat-file --batch` for the whole test.
struct Blobs {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Blobs {
    fn new(root: &Path) -> Blobs {
        let mut c = git();
        c.arg("-C")
            .arg(root)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = c.spawn().expect("git cat-file --batch");
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Blobs { child, stdin, out }
    }

    fn get(&mut self, rev: &str, path: &str) -> Vec<u8> {
        writeln!(self.stdin, "{rev}:{path}").unwrap();
        self.stdin.flush().unwrap();
        let mut header = String::new();
        self.out.read_line(&mut header).unwrap();
        let fields: Vec<&str> = header.split_whitespace().collect();
        let [_, "blob", size] = fields.as_slice() else {
            panic!("git cat-file {rev}:{path}: {header:?}")
        };
        let mut bytes = vec![0; size.parse::<usize>().unwrap() + 1];
        self.out.read_exact(&mut bytes).unwrap();
        bytes.pop();
        bytes
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write_tree(dir: &Path, tree: &Tree, exec: &Exec) {
    use std::os::unix::fs::PermissionsExt;
    for (rel, bytes) in tree {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        if exec.contains(rel) {
            // Execute wherever the umask left read, as git checks out a 100755 file.
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            std::fs::set_permissions(
                &p,
                std::fs::Permissions::from_mode(mode | (mode & 0o444) >> 2),
            )
            .unwrap();
        }
    }
}

/// Every file's permission bits under `dir` (`.git` left out).
fn read_modes(dir: &Path) -> Modes {
    use std::os::unix::fs::PermissionsExt;
    let tree = read_tree(dir);
    tree.keys()
        .map(|rel| {
            (
                rel.clone(),
                std::fs::metadata(dir.join(rel))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o7777,
            )
        })
        .collect()
}

/// The first file whose permission bits differ, for a failure message.
fn mode_difference(want: &Modes, got: &Modes) -> Option<String> {
    want.iter()
        .find(|(k, m)| got.get(*k) != Some(m))
        .map(|(k, m)| {
            format!(
                "{k}: mode {m:o} after git, {:o} after multiedit",
                got.get(k).copied().unwrap_or(0)
            )
        })
}

/// Every file under `dir` (folders only through their files; `.git` left out).
fn read_tree(dir: &Path) -> Tree {
    fn walk(base: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut t = Tree::new();
    walk(dir, dir, &mut t);
    t
}

/// The first difference between two folders, for a failure message.
fn tree_difference(want: &Tree, got: &Tree) -> Option<String> {
    for (k, w) in want {
        match got.get(k) {
            None => return Some(format!("{k}: in git's folder only")),
            Some(g) if g != w => {
                let (ws, gs) = (String::from_utf8_lossy(w), String::from_utf8_lossy(g));
                let (wl, gl): (Vec<&str>, Vec<&str>) =
                    (ws.split('\n').collect(), gs.split('\n').collect());
                let i = (0..wl.len().max(gl.len()))
                    .find(|&i| wl.get(i) != gl.get(i))
                    .unwrap_or(0);
                return Some(format!(
                    "{k}: differs at line {}: git {:?}, multiedit {:?} ({} and {} bytes)",
                    i + 1,
                    wl.get(i),
                    gl.get(i),
                    w.len(),
                    g.len()
                ));
            }
            _ => {}
        }
    }
    got.keys()
        .find(|k| !want.contains_key(*k))
        .map(|k| format!("{k}: in multiedit's folder only"))
}

/// `git apply` in `dir`, a plain folder outside any repository.
fn git_apply(dir: &Path, patch: &[u8]) -> (bool, String) {
    let mut c = git();
    c.current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .args(["apply", "--whitespace=nowarn", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("git apply");
    let mut stdin = child.stdin.take().unwrap();
    let bytes = patch.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `multiedit apply --format diff --root dir [--json] PATCH`, the patch in a file beside `dir`.
fn multiedit(dir: &Path, patch_file: &Path, json: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_multiedit"));
    c.current_dir(dir)
        .args(["apply", "--format", "diff", "--root"])
        .arg(dir);
    if json {
        c.arg("--json");
    }
    c.arg(patch_file).output().expect("multiedit apply")
}

/// The diff's file sections (`diff --git` to the next one), as byte ranges.
fn sections(patch: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in patch.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(b"diff --git ") {
            starts.push(at);
        }
        at += line.len();
    }
    let mut out = Vec::new();
    for (i, &s) in starts.iter().enumerate() {
        out.push(s..starts.get(i + 1).copied().unwrap_or(patch.len()));
    }
    out
}

/// Whether a section is a binary file's: its marker comes before any hunk.
fn is_binary_section(section: &[u8]) -> bool {
    for line in section.split(|&b| b == b'\n') {
        if line.starts_with(b"@@ ") {
            return false;
        }
        if line == b"GIT binary patch"
            || (line.starts_with(b"Binary files ") && line.ends_with(b" differ"))
        {
            return true;
        }
    }
    false
}

fn count_hunks(patch: &[u8]) -> usize {
    patch
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"@@ -"))
        .count()
}

/// One entry of `git diff --raw -z`: status letter, old path, new path (the same unless renamed).
struct RawEntry {
    status: u8,
    old: String,
    new: String,
}

fn raw_entries(raw: &[u8]) -> Vec<RawEntry> {
    let fields: Vec<&[u8]> = raw.split(|&b| b == 0).filter(|f| !f.is_empty()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < fields.len() {
        let meta = String::from_utf8_lossy(fields[i]);
        let status = meta.split_whitespace().last().unwrap().as_bytes()[0];
        let two = matches!(status, b'R' | b'C');
        let old = String::from_utf8_lossy(fields[i + 1]).into_owned();
        let new = if two {
            String::from_utf8_lossy(fields[i + 2]).into_owned()
        } else {
            old.clone()
        };
        out.push(RawEntry { status, old, new });
        i += if two { 3 } else { 2 };
    }
    out
}

/// One diff to try on both tools.
struct Case {
    label: String,
    patch: Vec<u8>,
    /// The folder before: the pre-image of every file the diff touches (and whatever the variant adds).
    pre: Tree,
    files: usize,
    hunks: usize,
    /// The stale variant: the file and hunk whose context line was changed (`hunk N of path`).
    stale: Option<(String, usize)>,
    /// The file-exists variant: multiedit must refuse with this kind.
    want_kind: Option<&'static str>,
    /// The files of `pre` that are executable.
    exec: Exec,
}

#[derive(Default)]
struct Tally {
    cases: usize,
    files: usize,
    hunks: usize,
    identical: usize,
    refused_alike: usize,
    ties: usize,
    disagreements: usize,
    /// git refused, multiedit applied.
    multiedit_only: usize,
    renames: usize,
    offsets_applied: usize,
}

#[derive(Default)]
struct Report {
    failures: Vec<String>,
    ties: Vec<String>,
    notes: Vec<String>,
}

fn check(case: &Case, scratch: &Path, t: &mut Tally, report: &mut Report) {
    t.cases += 1;
    t.files += case.files;
    t.hunks += case.hunks;
    let base = tempfile::tempdir_in(scratch).unwrap();
    let (gdir, mdir) = (base.path().join("git"), base.path().join("multiedit"));
    std::fs::create_dir(&gdir).unwrap();
    std::fs::create_dir(&mdir).unwrap();
    write_tree(&gdir, &case.pre, &case.exec);
    write_tree(&mdir, &case.pre, &case.exec);
    let modes_before = read_modes(&mdir);
    let patch_file = base.path().join("change.diff");
    std::fs::write(&patch_file, &case.patch).unwrap();

    let (git_ok, git_err) = git_apply(&gdir, &case.patch);
    let json = case.stale.is_none();
    let out = multiedit(&mdir, &patch_file, json);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let me_ok = out.status.success();
    let v: Value = if json {
        serde_json::from_str(&stdout).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let kind = v["error"]["kind"].as_str().unwrap_or("");
    let message = v["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| stderr.to_string());
    let first = |s: &str| s.lines().take(3).collect::<Vec<_>>().join(" / ");
    let got = read_tree(&mdir);
    let mut fail = |what: String| {
        t.disagreements += 1;
        report.failures.push(format!("{}: {what}", case.label));
    };
    match (git_ok, me_ok) {
        (true, true) => match tree_difference(&read_tree(&gdir), &got) {
            None => match mode_difference(&read_modes(&gdir), &read_modes(&mdir)) {
                None => t.identical += 1,
                Some(d) => fail(format!("both applied, different modes: {d}")),
            },
            Some(d) => fail(format!("both applied, different bytes: {d}")),
        },
        (true, false) => {
            if kind == "ambiguous" && message.contains("where it is expected") {
                if got != case.pre {
                    fail(format!(
                        "multiedit refused a tie but changed the folder: {}",
                        tree_difference(&case.pre, &got).unwrap_or_default()
                    ));
                }
                t.ties += 1;
                report
                    .ties
                    .push(format!("{}: {}", case.label, first(&message)));
            } else {
                fail(format!(
                    "git applied, multiedit refused ({kind}): {}",
                    first(&message)
                ));
            }
        }
        (false, true) => {
            t.multiedit_only += 1;
            fail(format!(
                "git refused ({}), multiedit applied",
                first(&git_err)
            ));
        }
        (false, false) => {
            let mut ok = true;
            if got != case.pre || read_modes(&mdir) != modes_before {
                ok = false;
                fail(format!(
                    "multiedit refused but changed the folder: {}",
                    tree_difference(&case.pre, &got).unwrap_or_default()
                ));
            }
            if out.status.code() != Some(1) {
                ok = false;
                fail(format!(
                    "multiedit refused with exit code {:?}, not 1",
                    out.status.code()
                ));
            }
            if let Some((path, n)) = &case.stale {
                // The stale hunk, or a later hunk of the same file: like git apply, multiedit looks for a
                // stale hunk's lines elsewhere in the file (a Cargo.lock repeats its blocks), and the hunk
                // after it may be the first one left without a place. Either way it names the file and hunk.
                let named = stderr
                    .strip_prefix("Hunk ")
                    .and_then(|rest| rest.split_once(&format!(" of {path}, at line ")))
                    .and_then(|(k, _)| k.parse::<usize>().ok());
                if named.is_none_or(|k| k < *n) {
                    ok = false;
                    fail(format!(
                        "the refusal does not name hunk {n} (or a later one) of {path}: {}",
                        first(&stderr)
                    ));
                }
            }
            if let Some(k) = case.want_kind {
                if kind != k {
                    ok = false;
                    fail(format!(
                        "refused with kind {kind:?}, not {k:?}: {}",
                        first(&message)
                    ));
                }
            }
            if ok {
                t.refused_alike += 1;
            }
        }
    }
    if case.stale.is_some() && git_ok {
        // Not stale after all for git (the hunk matched elsewhere): compared like any other case.
        report.notes.push(format!(
            "{}: git applied the stale case (the hunk matched elsewhere)",
            case.label
        ));
    }
}

/// A real `git diff -M` of `pre` to `post`, committed one after the other in a scratch repository.
fn scratch_diff(scratch: &Path, pre: &Tree, post: &Tree) -> Vec<u8> {
    let none = Exec::new();
    scratch_series(scratch, &[(pre, &none), (post, &none)])
}

/// The `git diff -M` of each state to the next, committed one after the other in a scratch repository,
/// concatenated: one diff for two states, a series for more.
fn scratch_series(scratch: &Path, states: &[(&Tree, &Exec)]) -> Vec<u8> {
    let repo = tempfile::tempdir_in(scratch).unwrap();
    let r = repo.path();
    let g = |args: &[&str]| {
        let mut c = git();
        c.arg("-C")
            .arg(r)
            .args([
                "-c",
                "core.autocrlf=false",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "core.filemode=true",
            ])
            .args(args);
        run_ok(c, &format!("git {}", args.join(" ")))
    };
    g(&["init", "-q", "-b", "main"]);
    let mut out = Vec::new();
    let mut previous: Option<&Tree> = None;
    for (i, (tree, exec)) in states.iter().enumerate() {
        for rel in previous
            .map(|p| p.keys().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            std::fs::remove_file(r.join(rel)).unwrap();
            // A folder left empty goes too: the next state may hold a file of its name.
            let mut dir = Path::new(rel.as_str()).parent();
            while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
                if std::fs::remove_dir(r.join(d)).is_err() {
                    break;
                }
                dir = d.parent();
            }
        }
        write_tree(r, tree, exec);
        g(&["add", "-A"]);
        g(&["commit", "-q", "--allow-empty", "-m", &format!("state {i}")]);
        if i > 0 {
            out.extend(g(&[
                "diff",
                "-M",
                "--no-color",
                "--no-ext-diff",
                "HEAD~1",
                "HEAD",
            ]));
        }
        previous = Some(tree);
    }
    out
}

fn crlf(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + b.len() / 20);
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' && (i == 0 || b[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(c);
    }
    out
}

fn strip_final_newline(b: &[u8]) -> Vec<u8> {
    b.strip_suffix(b"\n").unwrap_or(b).to_vec()
}

/// A modified text file of the history: its path and both images.
#[derive(Clone)]
struct Change {
    commit: String,
    path: String,
    pre: Vec<u8>,
    post: Vec<u8>,
}

/// The section of `patch` whose new name is `path`.
fn section_of<'p>(patch: &'p [u8], path: &str) -> Option<&'p [u8]> {
    let want = format!("+++ b/{path}\n");
    sections(patch)
        .into_iter()
        .map(|r| &patch[r])
        .find(|s| s.windows(want.len()).any(|w| w == want.as_bytes()))
}

/// In `section`, a non-blank context line of its middle hunk: (hunk number, 0-based line of the pre-image).
fn stale_target(section: &[u8]) -> Option<(usize, usize)> {
    let lines: Vec<&[u8]> = section.split(|&b| b == b'\n').collect();
    let mut hunks: Vec<Vec<usize>> = Vec::new();
    let mut old_line = 0usize;
    let mut in_hunk = false;
    for l in &lines {
        if l.starts_with(b"@@ -") {
            let s = String::from_utf8_lossy(l);
            let start: usize = s[4..].split([',', ' ']).next()?.parse().ok()?;
            old_line = start.saturating_sub(1);
            hunks.push(Vec::new());
            in_hunk = true;
        } else if in_hunk && l.first() == Some(&b' ') {
            if l[1..].iter().any(|b| !b.is_ascii_whitespace()) {
                hunks.last_mut()?.push(old_line);
            }
            old_line += 1;
        } else if in_hunk && l.first() == Some(&b'-') {
            old_line += 1;
        }
    }
    let n = hunks.len() / 2;
    let lines = hunks.get(n)?;
    Some((n + 1, *lines.get(lines.len() / 2)?))
}

/// `text` with its 0-based line `at` changed (its line break kept).
fn change_line(text: &[u8], at: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, l) in text.split_inclusive(|&b| b == b'\n').enumerate() {
        if i == at {
            let body_end = l.len()
                - l.iter()
                    .rev()
                    .take_while(|&&b| b == b'\n' || b == b'\r')
                    .count();
            out.extend_from_slice(&l[..body_end]);
            out.extend_from_slice(b" /* changed since the diff */");
            out.extend_from_slice(&l[body_end..]);
        } else {
            out.extend_from_slice(l);
        }
    }
    out
}

const VARIANTS: &[&str] = &[
    "crlf",
    "no-final-newline",
    "rename",
    "delete",
    "new-file",
    "offset",
    "stale",
    "exists",
    "paths",
    "tie",
    "series",
    "eol-change",
    "bom",
    "modes",
    "into-empty",
    "file-folder",
];
/// The variants of issue 19's classes (`class_case`).
const CLASSES: &[&str] = &[
    "series",
    "eol-change",
    "bom",
    "modes",
    "into-empty",
    "file-folder",
];
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Half of `b`'s lines, then the second half of `a`'s: a text between the two, for a series.
fn halfway(a: &[u8], b: &[u8]) -> Vec<u8> {
    let (la, lb): (Vec<&[u8]>, Vec<&[u8]>) = (
        a.split_inclusive(|&c| c == b'\n').collect(),
        b.split_inclusive(|&c| c == b'\n').collect(),
    );
    lb[..lb.len() / 2]
        .iter()
        .chain(&la[la.len() / 2..])
        .flat_map(|l| l.iter().copied())
        .collect()
}

/// Case `k` of one of `CLASSES`, from `picks`: each a real diff (a series for "series") made by git.
fn class_case(variant: &str, k: usize, picks: &[&Change], scratch: &Path) -> Option<Case> {
    let (mut pre, mut mid, mut post) = (Tree::new(), Tree::new(), Tree::new());
    let (mut exec_pre, mut exec_post) = (Exec::new(), Exec::new());
    for (i, c) in picks.iter().enumerate() {
        let (a, b, p) = (c.pre.clone(), c.post.clone(), c.path.clone());
        let first = i == 0;
        let with_bom = |t: &[u8]| [BOM, t].concat();
        let (before, after) = match variant {
            // Pre-image, a text between, post-image; the first file renamed by the first diff and
            // edited under its new name by the second.
            "series" => {
                let between = halfway(&a, &b);
                if first {
                    let to = format!("{p}.renamed");
                    pre.insert(p, a);
                    mid.insert(to.clone(), between);
                    post.insert(to, b);
                    continue;
                }
                mid.insert(p.clone(), between);
                (Some(a), Some(b))
            }
            "eol-change" if (k + i).is_multiple_of(2) => (Some(crlf(&a)), Some(b)),
            "eol-change" => (Some(a), Some(crlf(&b))),
            "bom" => match (k + i) % 3 {
                0 => (Some(a), Some(with_bom(&b))),
                1 => (Some(with_bom(&a)), Some(b)),
                _ => (Some(with_bom(&a)), Some(with_bom(&b))),
            },
            "modes" => match (k + i) % 3 {
                0 => {
                    exec_post.insert(p.clone());
                    (Some(a.clone()), Some(a))
                }
                1 => {
                    exec_pre.insert(p.clone());
                    (Some(a), Some(b))
                }
                _ => {
                    exec_post.insert(p.clone());
                    (None, Some(b))
                }
            },
            "into-empty" if first => (Some(Vec::new()), Some(b)),
            "file-folder" if first => {
                let inside = format!("{p}.d/inside");
                let (file, folder) = (format!("{p}.d"), inside);
                if k.is_multiple_of(2) {
                    pre.insert(file, a);
                    post.insert(folder, b);
                } else {
                    pre.insert(folder, a);
                    post.insert(file, b);
                }
                continue;
            }
            _ => (Some(a), Some(b)),
        };
        if let Some(t) = before {
            pre.insert(p.clone(), t);
        }
        if let Some(t) = after {
            post.insert(p, t);
        }
    }
    let patch = if variant == "series" {
        scratch_series(
            scratch,
            &[(&pre, &exec_pre), (&mid, &exec_pre), (&post, &exec_post)],
        )
    } else {
        scratch_series(scratch, &[(&pre, &exec_pre), (&post, &exec_post)])
    };
    if patch.is_empty() {
        return None;
    }
    Some(Case {
        label: format!(
            "{variant} #{k} ({})",
            picks
                .iter()
                .map(|c| format!("{}:{}", c.commit, c.path))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        files: sections(&patch).len(),
        hunks: count_hunks(&patch),
        patch,
        pre,
        stale: None,
        want_kind: None,
        exec: exec_pre,
    })
}

/// The tie variant: a 50-line file of real lines whose line 24 changes (one hunk, lines 21-27), and
/// the pre-image the tools get, where the hunk's 7 lines are gone from line 21 and stand at lines 14
/// and 28 instead: two places, both 7 lines from where the hunk says it is.
fn tie_case(k: usize, pool: &[Change], scratch: &Path) -> Option<Case> {
    let c = pool
        .iter()
        .filter(|c| c.pre.split(|&b| b == b'\n').count() > 60)
        .nth(k)?;
    let lines: Vec<&[u8]> = c.pre.split_inclusive(|&b| b == b'\n').take(50).collect();
    let (a, block, rest) = (&lines[..20], &lines[20..27], &lines[27..]);
    let cat = |parts: &[&[&[u8]]]| -> Vec<u8> {
        parts
            .iter()
            .flat_map(|p| p.iter().flat_map(|l| l.iter().copied()))
            .collect()
    };
    let mut changed = block.to_vec();
    let edited = change_line(block[3], 0);
    changed[3] = &edited;
    let path = format!("tie/{}", c.path.rsplit('/').next().unwrap());
    let pre = Tree::from([(path.clone(), cat(&[a, block, rest]))]);
    let post = Tree::from([(path.clone(), cat(&[a, &changed, rest]))]);
    let patch = scratch_diff(scratch, &pre, &post);
    let shifted = cat(&[&a[..13], block, &a[13..], block, rest]);
    // The hunk's lines (the block) must stand at the two planted places only.
    let needle = cat(&[block]);
    let count = |t: &[u8]| {
        t.windows(needle.len())
            .filter(|w| *w == needle.as_slice())
            .count()
    };
    if lines.len() < 50 || count(&shifted) != 2 || count(&pre[&path]) != 1 {
        return None;
    }
    Some(Case {
        label: format!("tie #{k} ({}:{})", c.commit, c.path),
        hunks: count_hunks(&patch),
        files: 1,
        patch,
        pre: Tree::from([(path, shifted)]),
        stale: None,
        want_kind: None,
        exec: Exec::new(),
    })
}

/// Case `k` of `variant`, from `FILES_PER_CASE` of the history's changes.
fn variant_case(variant: &str, k: usize, pool: &[Change], scratch: &Path) -> Option<Case> {
    if variant == "tie" {
        return tie_case(k, pool, scratch);
    }
    let n = pool.len();
    let picks: Vec<&Change> = {
        let mut seen = Vec::new();
        let mut j = 0;
        while seen.len() < FILES_PER_CASE.min(n) {
            let c = &pool[(k * 7919 + j * 104_729 + variant.len() * 31) % n];
            if !seen.iter().any(|s: &&Change| s.path == c.path) {
                seen.push(c);
            }
            j += 1;
            if j > 50 {
                break;
            }
        }
        seen
    };
    if CLASSES.contains(&variant) {
        return class_case(variant, k, &picks, scratch);
    }
    let mut pre = Tree::new();
    let mut post = Tree::new();
    for (i, c) in picks.iter().enumerate() {
        let (mut a, mut b) = (c.pre.clone(), c.post.clone());
        match variant {
            "crlf" => (a, b) = (crlf(&a), crlf(&b)),
            "no-final-newline" => match i % 3 {
                0 => (a, b) = (strip_final_newline(&a), strip_final_newline(&b)),
                1 => a = strip_final_newline(&a),
                _ => b = strip_final_newline(&b),
            },
            _ => {}
        }
        let first = i == 0;
        match variant {
            "rename" if first => {
                let base = c.path.rsplit('/').next().unwrap();
                pre.insert(c.path.clone(), a);
                post.insert(format!("moved/{base}.renamed"), b);
            }
            "paths" => {
                // Names git writes as they are (spaces) and C-quoted (non-ASCII), one of them renamed.
                let base = c.path.rsplit('/').next().unwrap();
                pre.insert(format!("dir with space/é {base}"), a);
                post.insert(
                    if first {
                        format!("new dir/ü {base}")
                    } else {
                        format!("dir with space/é {base}")
                    },
                    b,
                );
            }
            "delete" if first => {
                pre.insert(c.path.clone(), a);
            }
            "new-file" | "exists" if first => {
                post.insert(c.path.clone(), b);
            }
            _ => {
                pre.insert(c.path.clone(), a);
                post.insert(c.path.clone(), b);
            }
        }
    }
    let patch = scratch_diff(scratch, &pre, &post);
    if patch.is_empty() {
        return None;
    }
    let files = sections(&patch).len();
    let hunks = count_hunks(&patch);
    let mut case = Case {
        label: format!(
            "{variant} #{k} ({})",
            picks
                .iter()
                .map(|c| format!("{}:{}", c.commit, c.path))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        patch,
        pre,
        files,
        hunks,
        stale: None,
        want_kind: None,
        exec: Exec::new(),
    };
    match variant {
        "offset" => {
            // Lines inserted at the top of every file after the diff was made.
            let extra = 1 + k % 7;
            for text in case.pre.values_mut() {
                let mut shifted: Vec<u8> = (0..extra)
                    .flat_map(|i| format!("// inserted after the diff {i}\n").into_bytes())
                    .collect();
                shifted.extend_from_slice(text);
                *text = shifted;
            }
        }
        "stale" => {
            // One context line of the last file of the diff.
            let c = picks.last()?;
            let (hunk, line) = stale_target(section_of(&case.patch, &c.path)?)?;
            let text = case.pre.get_mut(&c.path)?;
            *text = change_line(text, line);
            case.stale = Some((c.path.clone(), hunk));
        }
        "exists" => {
            let c = picks[0];
            case.pre.insert(c.path.clone(), c.pre.clone());
            case.want_kind = Some("file_exists");
        }
        _ => {}
    }
    Some(case)
}

#[test]
fn multiedit_applies_diffs_as_git_apply_does() {
    let variants: Vec<&str> = VARIANTS
        .iter()
        .copied()
        .filter(|v| *v != "file-folder")
        .collect();
    differential(&variants);
}

/// A file replaced by a folder of its name and the reverse: the disk commit deletes before it creates
/// (the deleted file's name is the new folder's, or the emptied folder's the new file's) and reads a
/// path under a file as absent (`disk::folders`).
#[test]
fn a_file_replaced_by_a_folder_applies_as_git_apply_does() {
    differential(&["file-folder"]);
}

/// The history, then the variants `names`, each applied by both tools; panics on any disagreement.
fn differential(names: &[&'static str]) {
    let root = history::repo_root();
    println!("git apply differential: the history of {}", root.display());
    if let Some(why) = history::unusable(&root, MIN_COMMITS) {
        let bar = "!".repeat(100);
        let msg = format!("\n{bar}\nTHE GIT APPLY DIFFERENTIAL TEST DID NOT RUN: {why}.\nIt needs this repository's full git history.\n{bar}\n");
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{msg}");
        }
        let _ = std::io::Write::write_all(&mut std::io::stderr(), msg.as_bytes());
        return;
    }
    let t0 = Instant::now();
    let scratch_dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir.path();
    let log = String::from_utf8(in_repo(
        &root,
        &["log", "--no-merges", "--reverse", "--format=%H %P", "HEAD"],
    ))
    .unwrap();
    let all: Vec<(String, String)> = log
        .lines()
        .map(|l| {
            let mut it = l.split(' ');
            let id = it.next().unwrap().to_string();
            (
                id,
                it.next()
                    .filter(|p| !p.is_empty())
                    .unwrap_or(EMPTY_TREE)
                    .to_string(),
            )
        })
        .collect();
    let chosen: Vec<&(String, String)> = if all.len() <= MAX_COMMITS {
        all.iter().collect()
    } else {
        (0..MAX_COMMITS)
            .map(|i| &all[i * all.len() / MAX_COMMITS])
            .collect()
    };

    let mut blobs = Blobs::new(&root);
    let mut history = Tally::default();
    let mut report = Report::default();
    let mut pool: Vec<Change> = Vec::new();
    let (mut binary_files, mut no_text_change, mut not_utf8) = (0, 0, 0);
    for (id, parent) in &chosen {
        let short = &id[..10];
        let diff = in_repo(
            &root,
            &["diff", "-M", "--no-color", "--no-ext-diff", parent, id],
        );
        let entries = raw_entries(&in_repo(
            &root,
            &["diff", "-M", "--raw", "-z", "--no-ext-diff", parent, id],
        ));
        let ranges = sections(&diff);
        assert_eq!(
            ranges.len(),
            entries.len(),
            "{short}: the diff's sections and its --raw entries"
        );
        let mut patch = Vec::new();
        let mut pre = Tree::new();
        let mut files = 0;
        for (r, e) in ranges.into_iter().zip(&entries) {
            let section = &diff[r];
            if is_binary_section(section) {
                binary_files += 1;
                continue;
            }
            // multiedit edits UTF-8 text only (fuzz inputs in this history are not).
            if std::str::from_utf8(section).is_err() {
                not_utf8 += 1;
                continue;
            }
            patch.extend_from_slice(section);
            files += 1;
            if e.status != b'A' {
                pre.insert(e.old.clone(), blobs.get(parent, &e.old));
            }
            if e.status == b'M' && e.old == e.new {
                let post = blobs.get(id, &e.new);
                if std::str::from_utf8(&pre[&e.old]).is_ok()
                    && std::str::from_utf8(&post).is_ok()
                    && count_hunks(section) > 0
                {
                    pool.push(Change {
                        commit: short.to_string(),
                        path: e.old.clone(),
                        pre: pre[&e.old].clone(),
                        post,
                    });
                }
            }
        }
        if files == 0 {
            no_text_change += 1;
            continue;
        }
        history.renames += entries.iter().filter(|e| e.status == b'R').count();
        let hunks = count_hunks(&patch);
        let case = Case {
            label: format!("commit {short}"),
            patch,
            pre,
            files,
            hunks,
            stale: None,
            want_kind: None,
            exec: Exec::new(),
        };
        check(&case, scratch, &mut history, &mut report);
    }
    let history_time = t0.elapsed();

    assert!(!pool.is_empty(), "the history holds no modified text file");
    let t1 = Instant::now();
    let mut variants: Vec<(&str, Tally)> = Vec::new();
    for &variant in names {
        let mut t = Tally::default();
        for k in 0..PER_VARIANT {
            if let Some(case) = variant_case(variant, k, &pool, scratch) {
                if variant == "rename" && case.patch.windows(12).any(|w| w == b"\nrename from") {
                    t.renames += 1;
                }
                let before = t.identical;
                check(&case, scratch, &mut t, &mut report);
                if variant == "offset" && t.identical > before {
                    t.offsets_applied += 1;
                }
            }
        }
        variants.push((variant, t));
    }
    let variant_time = t1.elapsed();

    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nhistory: {} of {} non-merge commits sampled; {} diffs applied ({} commits with no text change); \
         {binary_files} binary and {} non-UTF-8 files left out; {:.1}s",
        chosen.len(),
        all.len(),
        history.cases,
        no_text_change,
        not_utf8,
        history_time.as_secs_f64()
    );
    let _ = writeln!(
        s,
        "{:<18} {:>6} {:>6} {:>6} {:>10} {:>14} {:>5} {:>14}",
        "", "diffs", "files", "hunks", "identical", "refused alike", "ties", "disagreements"
    );
    let row = |s: &mut String, name: &str, t: &Tally| {
        let _ = writeln!(
            s,
            "{name:<18} {:>6} {:>6} {:>6} {:>10} {:>14} {:>5} {:>14}",
            t.cases, t.files, t.hunks, t.identical, t.refused_alike, t.ties, t.disagreements
        );
    };
    row(&mut s, "history", &history);
    let mut total = Tally::default();
    for (name, t) in &variants {
        row(&mut s, name, t);
    }
    for t in variants.iter().map(|(_, t)| t).chain([&history]) {
        total.cases += t.cases;
        total.files += t.files;
        total.hunks += t.hunks;
        total.identical += t.identical;
        total.refused_alike += t.refused_alike;
        total.ties += t.ties;
        total.disagreements += t.disagreements;
    }
    row(&mut s, "total", &total);
    let none = Tally::default();
    let var = |name: &str| {
        variants
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&none, |(_, t)| t)
    };
    let _ = writeln!(
        s,
        "renames: {} in the history, {} of {} rename cases detected as renames by git; offset cases applied at an offset by both: {}; \
         variants {:.1}s",
        history.renames,
        var("rename").renames,
        var("rename").cases,
        var("offset").offsets_applied,
        variant_time.as_secs_f64()
    );
    if !report.ties.is_empty() {
        let _ = writeln!(
            s,
            "ties (git took one place, multiedit refused), {}:",
            report.ties.len()
        );
        for t in report.ties.iter().take(EXAMPLES) {
            let _ = writeln!(s, "  {t}");
        }
    }
    for n in &report.notes {
        let _ = writeln!(s, "note: {n}");
    }
    if !report.failures.is_empty() {
        let _ = writeln!(s, "disagreements, {}:", report.failures.len());
        for f in report.failures.iter().take(EXAMPLES) {
            let _ = writeln!(s, "  {f}");
        }
    }
    println!("{s}");

    assert!(
        history.cases > 0,
        "no commit of the history gave a text diff"
    );
    assert!(
        report.failures.is_empty(),
        "{} disagreements with git apply:{s}",
        report.failures.len()
    );
    // The variants must exercise what they are named for.
    let ran = |name: &str| variants.iter().any(|(n, _)| *n == name);
    type Exercised = (&'static str, fn(&Tally) -> bool, &'static str);
    let exercised: [Exercised; 11] = [
        (
            "stale",
            |t| t.refused_alike > 0,
            "no stale case was refused by both tools",
        ),
        (
            "exists",
            |t| t.refused_alike > 0,
            "no file-exists case was refused by both tools",
        ),
        (
            "offset",
            |t| t.offsets_applied > 0,
            "no offset case applied",
        ),
        (
            "rename",
            |t| t.renames > 0,
            "git detected no rename in the rename cases",
        ),
        (
            "tie",
            |t| t.ties > 0,
            "no tie case was refused by multiedit and applied by git",
        ),
        ("series", |t| t.identical > 0, "no series applied"),
        (
            "eol-change",
            |t| t.identical > 0,
            "no line-ending change applied",
        ),
        (
            "bom",
            |t| t.identical > 0,
            "no byte order mark change applied",
        ),
        ("modes", |t| t.identical > 0, "no mode change applied"),
        (
            "into-empty",
            |t| t.identical > 0,
            "no lines added to an empty file",
        ),
        (
            "file-folder",
            |t| t.identical > 0,
            "no file replaced by a folder or the reverse",
        ),
    ];
    for (name, ok, what) in exercised {
        assert!(!ran(name) || ok(var(name)), "{what}");
    }
}
