//! Patches end to end: `cargo bench --bench cli`. The `git diff` of a 500-file commit (realistic
//! source, a few hunks a file) applied to a fresh copy of the pre-image folder by `multiedit apply` and
//! by `git apply`, each run a new process as a user runs it (the copy is made outside the timing).
//! Goal: multiedit under 1 s. The parse and placing alone are the engine's `formats` bench.
//!
//! `history_median_commit`: the same, whole process, on the median real commit of this repository's
//! history (by lines changed), durable (`multiedit apply`, `git apply`) and checking only
//! (`multiedit apply --dry-run`, `git apply --check`). Goal (issue 19): at most 1.2x `git apply`
//! durable, at most 1.0x checking; `durable-floor` measures what making the files durable costs alone
//! (the README says why the first cannot hold with fsync here).
//!
//! `durable-floor` there is the least any tool can take to make that commit durable on this machine:
//! a process that only writes, fsyncs and renames the post-image (`support/durable_floor.rs`, compiled
//! with rustc when the bench starts and linked as the release binary is, statically).
//!
//! `MULTIEDIT_BENCH_BINARY=PATH` measures that binary instead of the one cargo built for the bench;
//! the release figures are of the binary as shipped:
//! `MULTIEDIT_BENCH_BINARY="$(node packaging/release-build.mjs)" cargo bench --bench cli`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn main() {
    divan::main();
}

const FILES: usize = 500;

/// A Rust-like source file of about 150 lines: functions whose bodies repeat lines (`}`, `break;`,
/// blank lines), as real code does, so hunks' context is not always unique in the file.
fn source_file(f: usize) -> String {
    let mut s = format!("//! Module {f}: generated for the patch benchmark.\n\nuse std::collections::HashMap;\nuse crate::error::Error;\n\n");
    for i in 0..12 {
        s.push_str(&format!(
            "/// Sums the lengths of the first lines of the input, step {i} of module {f}.\n\
             pub fn measure_{f}_{i}(input: &str, limit: usize) -> Result<usize, Error> {{\n    \
             let mut total = 0;\n    \
             let mut seen: HashMap<&str, usize> = HashMap::new();\n    \
             for (n, line) in input.lines().enumerate() {{\n        \
             if n >= limit {{\n            break;\n        }}\n        \
             *seen.entry(line).or_default() += 1;\n        \
             total += line.len() * {};\n    \
             }}\n    \
             Ok(total)\n\
             }}\n\n",
            i + 1
        ));
    }
    s
}

/// The file after the commit: three hunks (a changed line, an added line, a removed comment).
fn edited_file(f: usize, pre: &str) -> String {
    let a = f % 12;
    let b = (f + 5) % 12;
    let c = (f + 9) % 12;
    pre.replace(&format!("total += line.len() * {};", a + 1), &format!("total += line.len() * {} + 1;", a + 1))
        .replace(
            &format!("pub fn measure_{f}_{b}(input: &str, limit: usize) -> Result<usize, Error> {{\n"),
            &format!("pub fn measure_{f}_{b}(input: &str, limit: usize) -> Result<usize, Error> {{\n    debug_assert!(limit > 0);\n"),
        )
        .replace(&format!("/// Sums the lengths of the first lines of the input, step {c} of module {f}.\n"), "")
}

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "core.autocrlf=false", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.com")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.com")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The pre-image folder's files and the `git diff` of the 500-file commit, made once in a scratch repo.
struct Commit {
    _scratch: tempfile::TempDir,
    pre: BTreeMap<String, String>,
    patch: PathBuf,
    post: BTreeMap<String, String>,
}

fn commit() -> &'static Commit {
    static COMMIT: OnceLock<Commit> = OnceLock::new();
    COMMIT.get_or_init(|| {
        let scratch = tempfile::tempdir().unwrap();
        let repo = scratch.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let pre: BTreeMap<String, String> = (0..FILES)
            .map(|f| (format!("src/m{}/file_{f}.rs", f % 20), source_file(f)))
            .collect();
        let post: BTreeMap<String, String> = (0..FILES)
            .map(|f| {
                (
                    format!("src/m{}/file_{f}.rs", f % 20),
                    edited_file(f, &source_file(f)),
                )
            })
            .collect();
        git(&repo, &["init", "-q", "-b", "main"]);
        write_files(&repo, &pre);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "pre"]);
        write_files(&repo, &post);
        git(&repo, &["commit", "-q", "-a", "-m", "post"]);
        let diff = git(&repo, &["diff", "HEAD~1", "HEAD"]);
        let hunks = diff
            .split(|&b| b == b'\n')
            .filter(|l| l.starts_with(b"@@ -"))
            .count();
        let patch = scratch.path().join("commit.diff");
        std::fs::write(&patch, &diff).unwrap();
        let bytes: usize = pre.values().map(String::len).sum();
        eprintln!(
            "cli benches: a {FILES}-file commit, {hunks} hunks, {} KB of source, a {} KB diff",
            bytes / 1024,
            diff.len() / 1024
        );
        Commit {
            _scratch: scratch,
            pre,
            patch,
            post,
        }
    })
}

fn write_files(dir: &Path, files: &BTreeMap<String, String>) {
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// A fresh copy of the pre-image, outside any repository.
fn fresh() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &commit().pre);
    dir
}

/// Whether the tool gave the commit's post-image.
fn check_post(dir: &Path, tool: &str) {
    for (rel, want) in &commit().post {
        let got = std::fs::read_to_string(dir.join(rel)).unwrap();
        assert!(&got == want, "{tool}: {rel} is not the commit's post-image");
    }
}

fn run_tool(dir: &Path, tool: &str) {
    run_tool_on(dir, &commit().patch, tool);
}

/// The binary measured: `MULTIEDIT_BENCH_BINARY`, else the one cargo built for the bench.
fn multiedit() -> PathBuf {
    std::env::var_os("MULTIEDIT_BENCH_BINARY").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_multiedit")),
        PathBuf::from,
    )
}

/// `tool` (multiedit, multiedit-dry-run, git, git-check or, on the median commit, durable-floor) applies `patch` in `dir`, a new process.
fn run_tool_on(dir: &Path, patch: &Path, tool: &str) {
    let status = match tool {
        "multiedit" | "multiedit-dry-run" => Command::new(multiedit())
            .args(["apply", "--format", "diff", "--root"])
            .arg(dir)
            .args(if tool == "multiedit-dry-run" {
                &["--dry-run"][..]
            } else {
                &[][..]
            })
            .arg(patch)
            .stdout(Stdio::null())
            .status(),
        "durable-floor" => {
            let m = median_commit().expect("the floor runs on the median commit only");
            let floor = durable_floor().expect("the floor was built");
            let mut args = Vec::new();
            for (rel, source) in &m.post {
                args.push(dir.join(rel).into_os_string());
                args.push(
                    source
                        .as_ref()
                        .map_or_else(|| "-".into(), |s| s.clone().into_os_string()),
                );
            }
            Command::new(floor).args(args).status()
        }
        _ => Command::new("git")
            .current_dir(dir)
            .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .arg("apply")
            .args(if tool == "git-check" {
                &["--check"][..]
            } else {
                &[][..]
            })
            .arg(patch)
            .status(),
    }
    .expect("run the tool");
    assert!(status.success(), "{tool} apply failed");
}

/// `multiedit-dry-run`: the same run with `--dry-run` (read, parse, place, diff; nothing written), to
/// tell the engine's share from the writing's (staging, journal, fsync).
#[divan::bench(sample_count = 10, args = ["multiedit", "multiedit-dry-run", "git"])]
fn cli_files500(b: divan::Bencher, tool: &str) {
    // Once, outside the timing: the tool gives the commit's post-image.
    let d = fresh();
    run_tool(d.path(), tool);
    if tool != "multiedit-dry-run" {
        check_post(d.path(), tool);
    }
    b.with_inputs(fresh).bench_values(|d| {
        run_tool(d.path(), tool);
        d
    });
}

/// The median commit of this repository's history, by lines changed: its text diff and the
/// pre-image of the files it changes. `None` without the history (a shallow clone, a crate).
struct Median {
    _scratch: tempfile::TempDir,
    id: String,
    pre: BTreeMap<String, Vec<u8>>,
    patch: PathBuf,
    /// Each file the commit changes, with a file holding its new text (`None`: deleted).
    post: Vec<(String, Option<PathBuf>)>,
}

fn median_commit() -> Option<&'static Median> {
    static MEDIAN: OnceLock<Option<Median>> = OnceLock::new();
    MEDIAN
        .get_or_init(|| {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.to_path_buf();
            let log = Command::new("git").arg("-C").arg(&repo).args(["log", "--no-merges", "--format=commit %H %P", "--numstat", "HEAD"]).output().ok()?;
            // Commits with only text files (numstat shows `-` for a binary one), by lines changed.
            let mut commits: Vec<(usize, String)> = Vec::new();
            for block in String::from_utf8_lossy(&log.stdout).split("commit ").skip(1) {
                let mut lines = block.lines();
                let header: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
                // The root commit has no parent to diff against.
                let [id, _parent] = header[..] else { continue };
                let id = id.to_string();
                let counts: Option<Vec<usize>> = lines
                    .filter(|l| !l.is_empty())
                    .map(|l| {
                        let mut f = l.split('\t');
                        Some(f.next()?.parse::<usize>().ok()? + f.next()?.parse::<usize>().ok()?)
                    })
                    .collect();
                if let Some(c) = counts.filter(|c| !c.is_empty()) {
                    commits.push((c.iter().sum(), id));
                }
            }
            if commits.len() < 20 {
                eprintln!("history_median_commit: no usable history in {} (a shallow clone?): skipped", repo.display());
                return None;
            }
            commits.sort();
            let (lines, id) = commits[commits.len() / 2].clone();
            let parent = format!("{id}~1");
            let diff = git(&repo, &["diff", "--no-color", "--no-ext-diff", &parent, &id]);
            let scratch = tempfile::tempdir().ok()?;
            let patch = scratch.path().join("median.diff");
            std::fs::write(&patch, &diff).ok()?;
            // Each file the commit touches: its old text if it had one (the pre-image), and a file
            // holding its new text unless it is deleted (for the floor and the post-image check).
            let status = String::from_utf8(git(&repo, &["diff", "--name-status", "--no-renames", &parent, &id])).ok()?;
            let mut pre = BTreeMap::new();
            let mut post = Vec::new();
            for (i, line) in status.lines().enumerate() {
                let (kind, name) = line.split_once('\t')?;
                // As `--diff-filter=MD`: what the pre-image holds.
                if matches!(kind, "M" | "D") {
                    pre.insert(name.to_string(), git(&repo, &["show", &format!("{parent}:{name}")]));
                }
                let source = (kind != "D").then(|| scratch.path().join(format!("post-{i}")));
                if let Some(source) = &source {
                    std::fs::write(source, git(&repo, &["show", &format!("{id}:{name}")])).ok()?;
                }
                post.push((name.to_string(), source));
            }
            eprintln!(
                "history_median_commit: {} of {} commits, {lines} lines changed, {} files, a {} byte diff",
                &id[..10],
                commits.len(),
                post.len(),
                diff.len()
            );
            Some(Median { _scratch: scratch, id, pre, patch, post })
        })
        .as_ref()
}

/// `support/durable_floor.rs`, compiled once: statically linked where the toolchain can (as the
/// release binary is on Linux), else as rustc links by default.
fn durable_floor() -> Option<&'static Path> {
    // The folder is kept for the binary's sake.
    static FLOOR: OnceLock<Option<(tempfile::TempDir, PathBuf)>> = OnceLock::new();
    let floor = FLOOR.get_or_init(|| {
        let dir = tempfile::tempdir().ok()?;
        let binary = dir.path().join("durable-floor");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/support/durable_floor.rs");
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let build = |extra: &[&str]| {
            Command::new(&rustc)
                .args(["--edition", "2021", "-C", "opt-level=3", "-o"])
                .arg(&binary)
                .args(extra)
                .arg(&source)
                .status()
                .is_ok_and(|s| s.success())
        };
        (build(&["-C", "target-feature=+crt-static"]) || build(&[])).then_some((dir, binary))
    });
    floor.as_ref().map(|(_, binary)| binary.as_path())
}

/// The median commit's pre-image, outside any repository.
fn fresh_median(m: &Median) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in &m.pre {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    dir
}

/// Whole process, as a user runs it: the median real commit applied durably by each tool, and
/// checked only (`--dry-run`, `--check`).
#[divan::bench(sample_count = 40, args = ["multiedit", "git", "multiedit-dry-run", "git-check", "durable-floor"])]
fn history_median_commit(b: divan::Bencher, tool: &str) {
    let Some(m) = median_commit() else { return };
    if tool == "durable-floor" && durable_floor().is_none() {
        eprintln!("history_median_commit: durable-floor: rustc could not build benches/support/durable_floor.rs: skipped");
        return;
    }
    let d = fresh_median(m);
    run_tool_on(d.path(), &m.patch, tool);
    if tool != "multiedit-dry-run" && tool != "git-check" {
        for (rel, source) in &m.post {
            let got = std::fs::read(d.path().join(rel)).ok();
            assert!(
                got == source.as_ref().map(|s| std::fs::read(s).unwrap()),
                "{tool}: {rel} is not the commit's post-image"
            );
        }
    }
    assert!(!m.id.is_empty());
    b.with_inputs(|| fresh_median(m)).bench_values(|d| {
        run_tool_on(d.path(), &m.patch, tool);
        d
    });
}
