//! What the disk may hold that a plan must not be fooled by (issue 18, points 1, 2 and 5):
//! - a file in a repository named like a journal of an interrupted run, naming files elsewhere:
//!   never acted on, by `apply`, `apply --dry-run` or a preview; named in the output;
//! - a leftover journal of this user's own killed run: a dry run reports it and writes nothing, the next
//!   apply completes it;
//! - special files (a FIFO, character devices made here with mknod as copies of /dev/null and
//!   /dev/zero, a socket), directly or behind a symbolic link: refused at once, never replaced, by
//!   `multiedit apply`, `multiedit lsp` and `multiedit mcp` (which then answer the next call);
//! - permission bits: new files follow the umask (022, 027), a moved file keeps its mode, an edited file
//!   keeps its own, a mode the writer is given is set exactly.
//!
//! Every refusal is checked for its exact text and every file, link and node for being unchanged
//! (type, mode, device number, bytes). Each run has a time limit, so a hang fails the test rather than
//! blocking it.

use crate::support::disk as disk_support;
use crate::support::lsp as lsp_support;
use crate::support::mcp::Raw;

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use disk_support::{is_root, snapshot};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_multiedit");
const LIMIT: Duration = Duration::from_secs(20);

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `multiedit apply --format diff --root WORK DIFF`.
fn apply_diff(work: &Path, diff: &Path, state: &Path, umask: Option<&str>) -> Run {
    let args = [
        "apply",
        "--format",
        "diff",
        "--root",
        work.to_str().unwrap(),
        diff.to_str().unwrap(),
    ];
    run(&args, state, umask)
}

/// Runs `multiedit` with `args` (through `sh` when a `umask` is given), the private folder `state`,
/// killed and failed after `LIMIT`.
fn run(args: &[&str], state: &Path, umask: Option<&str>) -> Run {
    let mut cmd = match umask {
        Some(mask) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("umask {mask}; exec \"$0\" \"$@\""))
                .arg(BIN);
            c
        }
        None => Command::new(BIN),
    };
    cmd.args(args)
        .env("XDG_STATE_HOME", state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > LIMIT {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("multiedit {args:?} hung for {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn write_plan(dir: &Path, name: &str, plan: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, plan.to_string()).unwrap();
    p
}

fn apply(plan: &Path, state: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["apply"];
    args.extend_from_slice(extra);
    args.push(plan.to_str().unwrap());
    run(&args, state, None)
}

fn edit(path: &Path, old: &str, new: &str) -> Value {
    json!({"file_path": path, "edits": [{"old_string": old, "new_string": new}]})
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o7777
}

// ---- 1. Journals: only this user's own are acted on ----

/// A journal as versions before the private folder wrote them, committed, naming a file outside the
/// repository to delete and another to overwrite with a temporary file planted beside the journal.
fn plant_journal(repo: &Path, elsewhere: &Path) -> PathBuf {
    let journal = repo.join(".multiedit-journal-4242-feed.json");
    let temp = repo.join(".multiedit-4242-feed-AbCdEf.tmp");
    std::fs::write(&temp, "owned\n").unwrap();
    let record = json!({
        "multiedit_journal": 2, "plan": "4242-feed", "pid": 4242, "started": null, "time": 0, "committed": true,
        "primary": journal, "folders": [repo, elsewhere],
        "files": [
            {"target": elsewhere.join("victim.txt"), "temp": null, "new": false, "len": null, "hash": null, "delete": true},
            {"target": elsewhere.join("config.txt"), "temp": temp, "new": false, "len": 6, "hash": "0000000000000000"},
        ],
    });
    std::fs::write(&journal, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    journal
}

/// A repository (`repo/a.txt` and the planted journal) and, outside it, the files the journal names.
fn planted() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let (repo, elsewhere) = (base.join("repo"), base.join("elsewhere"));
    std::fs::create_dir(&repo).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("victim.txt"), "keep me\n").unwrap();
    std::fs::write(elsewhere.join("config.txt"), "mine\n").unwrap();
    std::fs::write(repo.join("a.txt"), "alpha\n").unwrap();
    let journal = plant_journal(&repo, &elsewhere);
    (root, base, journal)
}

fn ignored_line(journal: &Path) -> String {
    format!(
        "multiedit: ignored {}: multiedit keeps its journals in a private folder, never beside the files, so this is \
         not a journal of this user's multiedit; nothing in it was used, and it was left as it is\n",
        journal.display()
    )
}

#[test]
fn a_planted_journal_is_ignored_and_named_by_apply_and_dry_run() {
    let (_root, base, journal) = planted();
    let (repo, state) = (base.join("repo"), base.join("state"));
    std::fs::create_dir(&state).unwrap();
    let (a, b) = (repo.join("a.txt"), repo.join("b.txt"));
    std::fs::write(&b, "beta\n").unwrap();
    let plans = base.join("plans");
    std::fs::create_dir(&plans).unwrap();
    let plan = write_plan(
        &plans,
        "two.json",
        &json!({"files": [edit(&a, "alpha", "ALPHA"), edit(&b, "beta", "BETA")]}),
    );
    let single = write_plan(&plans, "one.json", &edit(&a, "alpha", "ALPHA"));
    let before = snapshot(&base);

    // Dry runs (one file and two): nothing anywhere changes, the journal is named.
    for p in [&single, &plan] {
        let r = apply(p, &state, &["--dry-run"]);
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (0, ignored_line(&journal).as_str()),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains("Dry run, nothing written."),
            "{}",
            r.stdout
        );
        assert_eq!(snapshot(&base), before, "a dry run changed something");
    }
    // --json names it too.
    let r = apply(&plan, &state, &["--dry-run", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["recovered"][0]["action"], "ignored");
    assert_eq!(v["recovered"][0]["journal"], json!(journal));
    assert_eq!(snapshot(&base), before);

    // The apply: the plan's two files change, and nothing else.
    let r = apply(&plan, &state, &[]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (0, ignored_line(&journal).as_str()),
        "{}",
        r.stdout
    );
    let mut expected = before.clone();
    for (f, text) in [(&a, "ALPHA\n"), (&b, "BETA\n")] {
        expected.get_mut(f.strip_prefix(&base).unwrap()).unwrap().3 = text.as_bytes().to_vec();
    }
    let mut after = snapshot(&base);
    // The private folder the apply made for its own journal (mode 0700), empty again.
    let private = after
        .remove(Path::new("state/multiedit"))
        .expect("the private folder");
    assert_eq!(private.0, 0o040700);
    assert_eq!(after, expected);
}

#[test]
fn a_planted_journal_is_ignored_by_the_language_servers_preview_and_apply() {
    let (_root, base, journal) = planted();
    let repo = base.join("repo");
    let a = repo.join("a.txt");
    let before = snapshot(&base);
    let mut ed = lsp_support::Editor::start(lsp_support::Options::new(&repo));
    let result = ed.preview(edit(&a, "alpha", "ALPHA")).expect("preview");
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(snapshot(&base), before, "the preview changed something");
    let result = ed.apply(edit(&a, "alpha", "ALPHA")).expect("apply");
    assert_eq!(result["ok"], json!(true), "{result}");
    ed.drain(Duration::from_millis(300));
    let logged: Vec<String> = ed
        .received
        .iter()
        .filter(|m| m["method"] == "window/logMessage")
        .filter_map(|m| m["params"]["message"].as_str().map(str::to_string))
        .filter(|l| l.contains(".multiedit-journal-"))
        .collect();
    let line = ignored_line(&journal);
    let line = line.trim_end().strip_prefix("multiedit: ").unwrap();
    assert_eq!(
        logged,
        [
            format!("multiedit.preview: {line}"),
            format!("multiedit.apply: {line}")
        ]
    );
    // The editor (this test's, which saves what it is sent) changed a.txt; nothing else changed.
    let mut expected = before.clone();
    expected.get_mut(Path::new("repo/a.txt")).unwrap().3 = b"ALPHA\n".to_vec();
    assert_eq!(snapshot(&base), expected);
    ed.shutdown();
}

#[test]
fn a_dry_run_reports_this_users_interrupted_plan_and_the_next_apply_completes_it() {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let (one, two, state) = (base.join("one"), base.join("two"), base.join("state"));
    for d in [&one, &two, &state] {
        std::fs::create_dir(d).unwrap();
    }
    let (a, b, other) = (one.join("a.txt"), two.join("b.txt"), one.join("other.txt"));
    std::fs::write(&a, "a old\n").unwrap();
    std::fs::write(&b, "b old\n").unwrap();
    std::fs::write(&other, "other old\n").unwrap();
    let killed = write_plan(
        &base,
        "killed.json",
        &json!({"files": [edit(&a, "old", "new"), edit(&b, "old", "new")]}),
    );
    let out = Command::new(BIN)
        .arg("apply")
        .arg(&killed)
        .env("XDG_STATE_HOME", &state)
        .env("MULTIEDIT_TEST_CRASH_AT", "commit:1")
        .output()
        .unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(9),
        "not killed"
    );
    let records: Vec<PathBuf> = std::fs::read_dir(state.join("multiedit"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let pid = records[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .strip_prefix("journal-")
        .unwrap()
        .split('-')
        .next()
        .unwrap()
        .to_string();
    let unrelated = write_plan(&base, "other.json", &edit(&other, "old", "new"));
    let before = snapshot(&base);

    let r = apply(&unrelated, &state, &["--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let prefix = format!("multiedit: left an interrupted plan of process {pid} from ");
    let suffix = format!(
        " UTC (2 files: {}, {}) as it is, since a dry run or preview writes nothing: the next multiedit apply in its \
         folders will complete it, and until then its files are read as that plan left them\n",
        a.display(),
        b.display()
    );
    assert!(
        r.stderr.starts_with(&prefix) && r.stderr.ends_with(&suffix),
        "{:?}",
        r.stderr
    );
    assert_eq!(snapshot(&base), before, "the dry run changed something");

    let r = apply(&unrelated, &state, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let prefix = format!("multiedit: completed an interrupted plan of process {pid} from ");
    let suffix = format!(
        " UTC (2 files: {}, {}) before applying this one\n",
        a.display(),
        b.display()
    );
    assert!(
        r.stderr.starts_with(&prefix) && r.stderr.ends_with(&suffix),
        "{:?}",
        r.stderr
    );
    for (f, text) in [(&a, "a new\n"), (&b, "b new\n"), (&other, "other new\n")] {
        assert_eq!(std::fs::read_to_string(f).unwrap(), text);
    }
    let left: Vec<_> = [&one, &two]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".multiedit-"))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        std::fs::read_dir(state.join("multiedit")).unwrap().count(),
        0,
        "the journal stayed"
    );
}

#[test]
fn a_journal_others_could_have_written_is_named_and_never_used() {
    // A well-formed, committed journal of a dead writer that deletes two files of a folder: used from
    // the user's private folder (0700, the journal 0600: the control), named and ignored when the folder
    // or the journal lets other users in.
    let record = |repo: &Path| {
        json!({
            "multiedit_journal": 3, "plan": "999999-beef", "pid": 999999, "started": null, "time": 0, "committed": true,
            "folders": [repo],
            "files": [
                {"target": repo.join("v1.txt"), "temp": null, "new": false, "len": null, "hash": null, "delete": true},
                {"target": repo.join("v2.txt"), "temp": null, "new": false, "len": null, "hash": null, "delete": true},
            ],
        })
        .to_string()
    };
    for (folder_mode, file_mode) in [(0o700, 0o600), (0o755, 0o600), (0o700, 0o644)] {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let (repo, state) = (base.join("repo"), base.join("state"));
        let private = state.join("multiedit");
        std::fs::create_dir(&repo).unwrap();
        std::fs::create_dir_all(&private).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(folder_mode)).unwrap();
        let journal = private.join("journal-999999-beef.json");
        std::fs::write(&journal, record(&repo)).unwrap();
        std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(file_mode)).unwrap();
        for v in ["v1.txt", "v2.txt", "a.txt"] {
            std::fs::write(repo.join(v), "keep\n").unwrap();
        }
        let plan = write_plan(
            &base,
            "plan.json",
            &edit(&repo.join("a.txt"), "keep", "kept"),
        );
        let before = snapshot(&base);
        let r = apply(&plan, &state, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut expected = before.clone();
        expected.get_mut(Path::new("repo/a.txt")).unwrap().3 = b"kept\n".to_vec();
        if (folder_mode, file_mode) == (0o700, 0o600) {
            let said = format!(
                "multiedit: completed an interrupted plan of process 999999 from 1970-01-01 00:00:00 UTC (2 files: {}, {}) before applying this one\n",
                repo.join("v1.txt").display(),
                repo.join("v2.txt").display()
            );
            assert_eq!(r.stderr, said);
            for gone in [
                "repo/v1.txt",
                "repo/v2.txt",
                "state/multiedit/journal-999999-beef.json",
            ] {
                expected.remove(Path::new(gone));
            }
        } else {
            let (what, bits, required) = if folder_mode == 0o755 {
                (&private, "0755", "0700")
            } else {
                (&journal, "0644", "0600")
            };
            let so = if folder_mode == 0o755 {
                "so a journal there cannot be trusted"
            } else {
                "so it cannot be trusted"
            };
            let said = format!(
                "multiedit: ignored {}: {} has mode {bits}, which lets other users in ({required} is required), {so}; nothing \
                 in it was used, and it was left as it is\n",
                journal.display(),
                what.display()
            );
            assert_eq!(
                r.stderr, said,
                "folder {folder_mode:o}, journal {file_mode:o}"
            );
        }
        assert_eq!(
            snapshot(&base),
            expected,
            "folder {folder_mode:o}, journal {file_mode:o}"
        );
    }
}

// ---- 2. Only regular files are read or written ----

/// The special files of this test: name, what the refusal calls it, and how to make it (None where
/// this user cannot). The listener keeps the socket's name bound.
fn make_special(
    dir: &Path,
    name: &str,
) -> Option<(&'static str, Option<std::os::unix::net::UnixListener>)> {
    let p = dir.join(name);
    let mknod = |kind: &str, major: &str, minor: &str| {
        Command::new("mknod")
            .arg(&p)
            .args([kind, major, minor])
            .status()
            .is_ok_and(|s| s.success())
    };
    match name {
        "fifo" => Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap()
            .success()
            .then_some(("a named pipe (FIFO)", None)),
        // Copies of /dev/null and /dev/zero (an endless device), made here: /dev is never touched.
        "null" => (is_root() && mknod("c", "1", "3")).then_some(("a character device", None)),
        "zero" => (is_root() && mknod("c", "1", "5")).then_some(("a character device", None)),
        "socket" => Some((
            "a socket",
            Some(std::os::unix::net::UnixListener::bind(&p).unwrap()),
        )),
        _ => unreachable!(),
    }
}

fn special_refusal(path: &Path, is: &str) -> String {
    format!("Cannot edit {}: it is {is}, not a regular file. multiedit reads and writes only regular files; nothing was changed.\n", path.display())
}

#[test]
fn special_files_are_refused_at_once_and_never_replaced() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let (work, state) = (dir.join("work"), outside.path().join("state"));
    std::fs::create_dir(&work).unwrap();
    let ok = work.join("ok.txt");
    std::fs::write(&ok, "one\n").unwrap();
    let mut listeners = Vec::new();
    let mut tried = Vec::new();
    for name in ["fifo", "null", "zero", "socket"] {
        let Some((what, listener)) = make_special(&work, name) else {
            eprintln!("skipped {name}: mknod needs root");
            continue;
        };
        listeners.extend(listener);
        let node = work.join(name);
        let link = work.join(format!("link-to-{name}"));
        std::os::unix::fs::symlink(name, &link).unwrap();
        let before = snapshot(&dir);
        for (path, is) in [
            (&node, what.to_string()),
            (&link, format!("a symbolic link to {name}, which is {what}")),
        ] {
            let expected = special_refusal(path, &is);
            let plans = [
                ("edit", edit(path, "a", "b")),
                ("create", edit(path, "", "new text\n")),
                (
                    "second file of a plan",
                    json!({"files": [edit(&ok, "one", "two"), edit(path, "a", "b")]}),
                ),
            ];
            for (case, plan) in plans {
                let p = write_plan(outside.path(), "plan.json", &plan);
                for extra in [&[][..], &["--dry-run"][..]] {
                    let r = apply(&p, &state, extra);
                    assert_eq!(
                        (r.code, r.stderr.as_str()),
                        (2, expected.as_str()),
                        "{name}, {case} {extra:?}: {}",
                        r.stdout
                    );
                    assert_eq!(
                        snapshot(&dir),
                        before,
                        "{name}, {case} {extra:?}: something changed"
                    );
                }
            }
            // A patch that moves a file onto it.
            let rel = path.file_name().unwrap().to_str().unwrap();
            let diff = format!("diff --git a/ok.txt b/{rel}\nsimilarity index 100%\nrename from ok.txt\nrename to {rel}\n");
            let p = outside.path().join("move.diff");
            std::fs::write(&p, &diff).unwrap();
            let r = apply_diff(&work, &p, &state, None);
            assert_eq!(
                (r.code, r.stderr.as_str()),
                (2, expected.as_str()),
                "{name}: a move onto it: {}",
                r.stdout
            );
            assert_eq!(
                snapshot(&dir),
                before,
                "{name}: a move onto it changed something"
            );
        }
        tried.push(name);
    }
    eprintln!("refused, nothing changed: {tried:?}, each directly and through a symbolic link");
    assert!(tried.contains(&"fifo") && tried.contains(&"socket"));
}

#[test]
fn the_writer_never_replaces_a_special_file() {
    // What the reader refuses, the writer refuses too, should one appear after the read.
    let root = tempfile::tempdir().unwrap();
    let fifo = root.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for before in [Some(b"old\n".to_vec()), None] {
        let w = multiedit::disk::Write1 {
            path: fifo.clone(),
            before,
            after: Some(b"new\n".to_vec()),
            mode: None,
        };
        let refusal = multiedit::disk::commit(vec![w]).unwrap_err();
        assert_eq!(
            refusal.full_text(),
            special_refusal(&fifo, "a named pipe (FIFO)").trim_end()
        );
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }
}

#[test]
fn the_language_server_refuses_a_fifo_and_keeps_answering() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().canonicalize().unwrap();
    let (fifo, ok) = (ws.join("fifo"), ws.join("ok.txt"));
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    std::fs::write(&ok, "one\n").unwrap();
    let before = snapshot(&ws);
    let mut ed = lsp_support::Editor::start(lsp_support::Options::new(&ws));
    let started = Instant::now();
    for result in [
        ed.preview(edit(&fifo, "a", "b")),
        ed.apply(edit(&fifo, "a", "b")),
    ] {
        let error = result.expect_err("refused");
        let text = error.to_string();
        assert!(
            text.contains(special_refusal(&fifo, "a named pipe (FIFO)").trim_end()),
            "{text}"
        );
    }
    let result = ed
        .preview(edit(&ok, "one", "two"))
        .expect("the next preview");
    assert_eq!(result["ok"], json!(true));
    assert!(started.elapsed() < LIMIT);
    assert!(ed.shutdown().success());
    assert_eq!(snapshot(&ws), before);
}

// ---- 5. Permission bits ----

#[test]
fn new_files_follow_the_umask_and_moved_and_edited_files_keep_their_mode() {
    for (mask, created) in [("022", 0o644), ("027", 0o640)] {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().canonicalize().unwrap();
        let state = dir.join("state");
        let work = dir.join("work");
        std::fs::create_dir(&work).unwrap();
        let (script, secret, moved) = (
            work.join("run.sh"),
            work.join("secret.txt"),
            work.join("bin/run.sh"),
        );
        std::fs::write(&script, "#!/bin/sh\necho old\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(&secret, "token old\n").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        let umask = Some(mask);

        // A plan that creates a file (in a new folder) and edits one.
        let plan = write_plan(
            &dir,
            "plan.json",
            &json!({"files": [
                edit(&work.join("new/made.txt"), "", "made\n"),
                edit(&secret, "old", "new"),
            ]}),
        );
        let r = run(&["apply", plan.to_str().unwrap()], &state, umask);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            mode(&work.join("new/made.txt")),
            created,
            "umask {mask}: a file the plan created"
        );
        assert_eq!(mode(&secret), 0o600, "umask {mask}: an edited file");

        // A diff that creates a file (no mode stated), edits the script, then one that moves it.
        let diff = "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+added\n\
                    --- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo old\n+echo new\n";
        let p = dir.join("one.diff");
        std::fs::write(&p, diff).unwrap();
        let r = apply_diff(&work, &p, &state, umask);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            mode(&work.join("added.txt")),
            created,
            "umask {mask}: a file the diff created"
        );
        assert_eq!(mode(&script), 0o755, "umask {mask}: an edited script");
        let diff = "diff --git a/run.sh b/bin/run.sh\nsimilarity index 100%\nrename from run.sh\nrename to bin/run.sh\n";
        std::fs::write(&p, diff).unwrap();
        let r = apply_diff(&work, &p, &state, umask);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(!script.exists());
        assert_eq!(
            std::fs::read_to_string(&moved).unwrap(),
            "#!/bin/sh\necho new\n"
        );
        assert_eq!(mode(&moved), 0o755, "umask {mask}: a moved script");
        // The private folder for journals is private whatever the umask.
        assert_eq!(mode(&state.join("multiedit")), 0o700);
    }
}

#[test]
fn a_mode_given_to_the_writer_is_set_exactly() {
    // What a patch that states a mode (`new file mode 100755`) hands the writer: those bits, not
    // narrowed by the umask (0777 would come out 0755 under the usual 022), on a new file and on an
    // existing one.
    let root = tempfile::tempdir().unwrap();
    let (new, old) = (root.path().join("new.sh"), root.path().join("old.txt"));
    std::fs::write(&old, "old\n").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    let writes = vec![
        multiedit::disk::Write1 {
            path: new.clone(),
            before: None,
            after: Some(b"#!/bin/sh\n".to_vec()),
            mode: Some(0o777),
        },
        multiedit::disk::Write1 {
            path: old.clone(),
            before: Some(b"old\n".to_vec()),
            after: Some(b"new\n".to_vec()),
            mode: Some(0o600),
        },
    ];
    multiedit::disk::commit(writes).expect("written");
    assert_eq!((mode(&new), mode(&old)), (0o777, 0o600));
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "new\n");
}

#[test]
fn the_mcp_server_refuses_a_fifo_and_keeps_answering() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let (fifo, ok) = (ws.join("fifo"), ws.join("ok.txt"));
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    std::fs::write(&ok, "one\n").unwrap();
    let before = snapshot(&ws);
    // With no editor to hand plans to: its runtime and state folders are elsewhere.
    let mut mcp = Raw::start(
        &ws,
        &[],
        &[
            ("XDG_RUNTIME_DIR", outside.path()),
            ("XDG_STATE_HOME", outside.path()),
        ],
    );
    let expected = special_refusal(&fifo, "a named pipe (FIFO)");
    for (id, tool) in [(1, "multiedit_preview"), (2, "multiedit")] {
        let (is_error, text) = mcp.call(id, tool, edit(&fifo, "a", "b"));
        assert!(is_error, "{tool}: {text}");
        assert_eq!(text, expected.trim_end(), "{tool}");
        assert_eq!(snapshot(&ws), before, "{tool}");
    }
    let (is_error, text) = mcp.call(3, "multiedit", edit(&ok, "one", "two"));
    assert!(!is_error, "{text}");
    assert_eq!(std::fs::read_to_string(&ok).unwrap(), "two\n");
}

// ---- Issue 19: a file and a folder trading names ----

/// A git diff section deleting (`None` after) or creating (`None` before) the one-line file `path`.
fn whole_file(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    match (before, after) {
        (Some(old), None) => format!("diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-{old}\n"),
        (None, Some(new)) => format!("diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{new}\n"),
        _ => unreachable!("a whole file is deleted or created"),
    }
}

#[test]
fn a_file_and_a_folder_trade_names_only_when_the_plan_empties_what_it_replaces() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().canonicalize().unwrap();
    let (state, work) = (dir.join("state"), dir.join("work"));
    std::fs::create_dir_all(work.join("x/empty")).unwrap();
    std::fs::write(work.join("x/gone.txt"), "gone\n").unwrap();
    std::fs::write(work.join("x/keep.txt"), "keep\n").unwrap();
    std::fs::write(work.join("f"), "f\n").unwrap();
    let patch = dir.join("p.diff");
    let run_diff = |sections: &[String], dry: bool| {
        std::fs::write(&patch, sections.concat()).unwrap();
        let mut args = vec![
            "apply",
            "--format",
            "diff",
            "--root",
            work.to_str().unwrap(),
        ];
        if dry {
            args.push("--dry-run");
        }
        args.push(patch.to_str().unwrap());
        run(&args, &state, Some("022"))
    };
    let refusals = [
        // The folder x holds keep.txt, which the diff does not delete.
        (
            vec![whole_file("x", None, Some("x new")), whole_file("x/gone.txt", Some("gone"), None)],
            format!(
                "Cannot create the file {}: it is a folder, and {} in it is a file that the plan does not delete. A file replaces a \
                 folder only when the same plan deletes every file in it. Nothing was changed.",
                work.join("x").display(),
                work.join("x/keep.txt").display()
            ),
        ),
        // Every file in x is deleted, but its empty folder is not the diff's to remove.
        (
            vec![
                whole_file("x", None, Some("x new")),
                whole_file("x/gone.txt", Some("gone"), None),
                whole_file("x/keep.txt", Some("keep"), None),
            ],
            format!(
                "Cannot create the file {}: it is a folder, and {} in it is an empty folder that the plan does not delete. A file \
                 replaces a folder only when the same plan deletes every file in it. Nothing was changed.",
                work.join("x").display(),
                work.join("x/empty").display()
            ),
        ),
        // A new file under the file f, which the diff keeps.
        (
            vec![whole_file("f/inside", None, Some("inside"))],
            format!(
                "Cannot create {}: {} is a file, not a folder, and the plan does not delete it. Nothing was changed.",
                work.join("f/inside").display(),
                work.join("f").display()
            ),
        ),
        // Two new files, one where the other needs its folder.
        (
            vec![whole_file("g", None, Some("g")), whole_file("g/inside", None, Some("inside"))],
            format!(
                "Cannot create both {} and {}: {} would be a file and a folder at once. Nothing was changed.",
                work.join("g").display(),
                work.join("g/inside").display(),
                work.join("g").display()
            ),
        ),
    ];
    let before = snapshot(&work);
    for (sections, want) in &refusals {
        for dry in [true, false] {
            let r = run_diff(sections, dry);
            assert_eq!(
                (r.code, r.stderr.as_str()),
                (1, format!("{want}\n").as_str()),
                "dry run: {dry}"
            );
            assert_eq!(snapshot(&work), before, "{want}: something changed");
        }
    }
    // Emptied, both ways: a dry run writes nothing, the run trades the names.
    std::fs::remove_dir(work.join("x/empty")).unwrap();
    let trade = [
        whole_file("x", None, Some("x new")),
        whole_file("x/gone.txt", Some("gone"), None),
        whole_file("x/keep.txt", Some("keep"), None),
        whole_file("f", Some("f"), None),
        whole_file("f/inside", None, Some("inside")),
    ];
    let before = snapshot(&work);
    let r = run_diff(&trade, true);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(snapshot(&work), before, "a dry run wrote");
    let r = run_diff(&trade, false);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(work.join("x")).unwrap(), "x new\n");
    assert_eq!(
        std::fs::read_to_string(work.join("f/inside")).unwrap(),
        "inside\n"
    );
    let names: Vec<String> = snapshot(&work)
        .keys()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(names, ["f", "f/inside", "x"]);
    assert_eq!(
        (mode(&work.join("x")), mode(&work.join("f/inside"))),
        (0o644, 0o644)
    );
}
