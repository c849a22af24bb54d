//! A hostile patch or plan, and a racing process, against the confinement of every front end:
//! - patch paths inside `.git` (in any case, and as Windows or macOS read it), in every format, through
//!   `multiedit apply`, `multiedit mcp` and `multiedit lsp`; an agent's plans into `.git` through
//!   `multiedit mcp` unless it was started with `--allow-dot-git`;
//! - plan and patch paths inside multiedit's own private folders (journals, the bridge);
//! - symbolic links named by a patch: moved and deleted as links, never chmodded through;
//! - a process that swaps a folder of the project with a link to a folder outside while plans run.
//!
//! Every refusal is checked for its exact text and the tree around the plan for being unchanged (every
//! name, type, mode, owner and byte: `support::disk`).

use crate::support::disk as disk_support;
use crate::support::lsp as lsp_support;
use crate::support::mcp::Raw;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use disk_support::snapshot;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_multiedit");

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `multiedit ARGS` with standard input `input`, its private folders under `state`; failed after 30 s
/// (a hang is a failure, not a stuck test).
fn run(args: &[&str], input: &str, state: &Path) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .env("XDG_STATE_HOME", state.join("state"))
        .env("XDG_RUNTIME_DIR", state.join("runtime"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    drop(child.stdin.take());
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("multiedit {args:?} hung for 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `multiedit ARGS` (split at spaces) under the shell's `limit` (`ulimit -n 64`), fed `input`.
fn limited(limit: &str, args: &str, input: &str, state: &Path) -> std::process::Output {
    let mut child = Command::new("sh")
        .args(["-c", &format!("{limit}; exec \"$0\" {args}"), BIN])
        .env("XDG_STATE_HOME", state.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// `multiedit apply --json -` on `plan` under an address-space limit of 2 GiB: its exit code, and the
/// refusal's kind and message.
fn apply_json_within_2_gib(
    plan: &Value,
    state: &Path,
) -> (Option<i32>, Option<String>, Option<String>) {
    let out = limited(
        "ulimit -v 2097152",
        "apply --json -",
        &plan.to_string(),
        state,
    );
    let result: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let text = |v: &Value| v.as_str().map(str::to_string);
    (
        out.status.code(),
        text(&result["error"]["kind"]),
        text(&result["message"]),
    )
}

/// An MCP session in the project, with the tree's private folders.
fn mcp_in(t: &Tree) -> Raw {
    Raw::start(
        &t.proj,
        &[],
        &[
            ("XDG_STATE_HOME", &t.state.join("state")),
            ("XDG_RUNTIME_DIR", &t.state.join("runtime")),
        ],
    )
}

/// A scratch folder: `proj/` (a git work tree: `.git/config`, `.git/hooks/`, `a.txt`), `outside/`,
/// and `priv/` for the private folders of the runs.
struct Tree {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    proj: PathBuf,
    state: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let (proj, state) = (top.join("proj"), top.join("priv"));
    std::fs::create_dir_all(proj.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(top.join("outside")).unwrap();
    std::fs::create_dir_all(state.join("runtime")).unwrap();
    std::fs::write(proj.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(proj.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(top.join("outside/secret.txt"), "secret\n").unwrap();
    Tree {
        _tmp: tmp,
        top,
        proj,
        state,
    }
}

/// The patches that try to reach `.git`, each with the path and component its refusal names.
fn git_patches() -> Vec<(&'static str, String, &'static str, &'static str)> {
    let hook = "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\nindex 0000000..1111111\n\
                --- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch /tmp/pwned\n";
    let config = "--- a/.git/config\n+++ b/.git/config\n@@ -1,2 +1,3 @@\n [core]\n \tbare = false\n+\tfsmonitor = \"touch /tmp/pwned\"\n";
    let envelope =
        "*** Begin Patch\n*** Add File: .GIT/hooks/pre-commit\n+#!/bin/sh\n*** End Patch\n";
    let blocks =
        ".git/config\n<<<<<<< SEARCH\n[core]\n=======\n[core]\n\tfsmonitor = x\n>>>>>>> REPLACE\n";
    let moved = "diff --git a/a.txt b/git~1/config\nsimilarity index 100%\nrename from a.txt\nrename to git~1/config\n";
    let ntfs = "*** Begin Patch\n*** Update File: .git. /config\n@@\n-[core]\n+[core]\n+\thooksPath = x\n*** End Patch\n";
    let hfs =
        "--- a/.g\u{200c}it/config\n+++ b/.g\u{200c}it/config\n@@ -1 +1 @@\n-[core]\n+[alias]\n";
    vec![
        ("diff", hook.to_string(), ".git/hooks/post-checkout", ".git"),
        ("diff", config.to_string(), ".git/config", ".git"),
        (
            "apply-patch",
            envelope.to_string(),
            ".GIT/hooks/pre-commit",
            ".GIT",
        ),
        ("search-replace", blocks.to_string(), ".git/config", ".git"),
        ("diff", moved.to_string(), "git~1/config", "git~1"),
        ("apply-patch", ntfs.to_string(), ".git. /config", ".git. "),
        (
            "diff",
            hfs.to_string(),
            ".g\u{200c}it/config",
            ".g\u{200c}it",
        ),
    ]
}

fn git_refusal(path: &str, component: &str) -> String {
    let why = if component.eq_ignore_ascii_case(".git") {
        "is .git (in any letter case)"
    } else if component.contains('\u{200c}') {
        "is what macOS reads as .git (it holds invisible characters that macOS ignores in names)"
    } else {
        "is what Windows reads as .git (.git or its short name git~1, followed by dots, spaces or a `:` stream)"
    };
    format!(
        "Cannot apply the patch: its path {path} has the component `{component}`, which {why}. Like git apply, multiedit \
         refuses a patch path inside a .git folder, where a planted file (a hook, the config) makes git run commands. \
         Nothing was changed."
    )
}

#[test]
fn a_patch_never_reaches_a_git_folder_in_any_format_or_front_end() {
    let t = tree();
    let before = snapshot(&t.top);
    let root = t.proj.to_str().unwrap();
    let mut mcp = mcp_in(&t);
    let mut ed = lsp_support::Editor::start(lsp_support::Options::new(&t.proj));
    for (k, (format, patch, path, component)) in git_patches().into_iter().enumerate() {
        let message = git_refusal(path, component);
        let cli = run(
            &["apply", "--root", root, "--format", format, "-"],
            &patch,
            &t.state,
        );
        assert_eq!(
            (cli.code, cli.stderr.trim_end(), cli.stdout.as_str()),
            (1, message.as_str(), ""),
            "multiedit apply, {format}:\n{patch}"
        );
        let json = run(
            &["apply", "--json", "--root", root, "--allow-outside", "-"],
            &patch,
            &t.state,
        );
        let result: Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(
            (result["error"]["kind"].as_str(), result["message"].as_str()),
            (Some("invalid_plan"), Some(message.as_str())),
            "--json, --allow-outside:\n{patch}"
        );
        let (is_error, text) = mcp.call(k as i64 + 1, "multiedit_patch", json!({"patch": patch}));
        assert!(is_error, "multiedit_patch:\n{text}");
        assert_eq!(text, message, "multiedit_patch");
        let e = ed
            .apply(json!({"patch": patch, "root": root}))
            .expect_err("multiedit.apply of a patch into .git");
        assert_eq!(
            (e["data"]["kind"].as_str(), e["data"]["message"].as_str()),
            (Some("invalid_plan"), Some(message.as_str())),
            "{e}"
        );
    }
    assert_eq!(snapshot(&t.top), before, "nothing changed");
    ed.shutdown();
}

#[test]
fn an_agents_plan_into_a_git_folder_is_refused_unless_the_server_allows_it() {
    let t = tree();
    std::fs::create_dir(t.proj.join("src")).unwrap();
    let before = snapshot(&t.top);
    let p = t.proj.display().to_string();
    // A link inside the project to git's config: the plan would edit its target.
    std::os::unix::fs::symlink(".git/config", t.proj.join("settings")).unwrap();
    let env = [
        ("XDG_STATE_HOME", t.state.join("state")),
        ("XDG_RUNTIME_DIR", t.state.join("runtime")),
    ];
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let mut mcp = Raw::start(&t.proj, &[], &env);
    let fsmonitor = json!([{"old_string": "[core]", "new_string": "[core]\n\tfsmonitor = \"touch /tmp/pwned\""}]);
    let opt_out = "Nothing was changed. To allow it, start the server as `multiedit mcp --allow-dot-git`, in the agent's MCP configuration.";
    let because = "An agent's plan may not change git's own files, where a planted hook or setting makes git run commands.";
    for (id, (tool, plan, message)) in [
        ("multiedit", json!({"file_path": format!("{p}/.git/config"), "edits": fsmonitor}),
         format!("Cannot edit {p}/.git/config: it lies inside a .git folder (its component `.git` is .git (in any letter case)). {because} {opt_out}")),
        ("multiedit_preview", json!({"file_path": format!("{p}/.Git/hooks/post-checkout"), "edits": [{"old_string": "", "new_string": "#!/bin/sh\n"}]}),
         format!("Cannot edit {p}/.Git/hooks/post-checkout: it lies inside a .git folder (its component `.Git` is .git (in any letter case)). {because} {opt_out}")),
        ("multiedit", json!({"file_path": format!("{p}/settings"), "edits": fsmonitor}),
         format!("Cannot edit {p}/settings: it lies inside a .git folder (its component `.git` is .git (in any letter case)). {because} {opt_out}")),
        ("multiedit", json!({"files": [{"file_path": format!("{p}/a.txt"), "edits": [{"old_string": "alpha", "new_string": "beta"}]},
                                       {"file_path": format!("{p}/src/../.git/hooks/pre-commit"), "edits": [{"old_string": "", "new_string": "#!/bin/sh\n"}]}]}),
         format!("Cannot edit {p}/src/../.git/hooks/pre-commit: it lies inside a .git folder (its component `.git` is .git (in any letter case)). {because} {opt_out}")),
    ]
    .into_iter()
    .enumerate()
    {
        let (is_error, text) = mcp.call(id as i64 + 1, tool, plan);
        assert!(is_error, "{text}");
        assert_eq!(text, message, "{tool}");
    }
    drop(mcp);
    let mut after = snapshot(&t.top);
    after.remove(Path::new("proj/settings"));
    assert_eq!(after, before, "nothing changed");
    // Allowed: the same plan applies; and a user's own JSON plan through `multiedit apply` always does.
    let mut mcp = Raw::start(&t.proj, &["--allow-dot-git"], &env);
    let (is_error, text) = mcp.call(
        1,
        "multiedit",
        json!({"file_path": format!("{p}/.git/config"), "edits": fsmonitor}),
    );
    assert!(!is_error, "{text}");
    assert_eq!(
        std::fs::read_to_string(t.proj.join(".git/config")).unwrap(),
        "[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n\tbare = false\n"
    );
    let plan = json!({"file_path": format!("{p}/.git/config"), "edits": [{"old_string": "\tfsmonitor = \"touch /tmp/pwned\"\n", "new_string": ""}]});
    let cli = run(&["apply", "-"], &plan.to_string(), &t.state);
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(
        std::fs::read_to_string(t.proj.join(".git/config")).unwrap(),
        "[core]\n\tbare = false\n"
    );
}

#[test]
fn no_plan_or_patch_reaches_multiedits_private_folders_whatever_the_root() {
    let t = tree();
    // The root is the home folder, which holds the journals' folder and, here, the bridge's.
    let home = t.top.join("home");
    let (state, runtime) = (home.join(".local/state"), home.join("run"));
    std::fs::create_dir_all(state.join("multiedit")).unwrap();
    std::fs::create_dir_all(runtime.join("multiedit")).unwrap();
    std::fs::set_permissions(
        state.join("multiedit"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    std::fs::set_permissions(
        runtime.join("multiedit"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    std::os::unix::fs::symlink(".local/state", home.join("st")).unwrap();
    let before = snapshot(&t.top);
    let h = home.display().to_string();
    let journal = serde_json::to_string(&json!({
        "multiedit_journal": 3, "plan": "4242-feed", "pid": 4242, "started": null, "time": 0, "committed": true,
        "folders": [t.top.join("outside")],
        "files": [{"target": t.top.join("outside/secret.txt"), "temp": null, "new": false, "len": null, "hash": null, "delete": true}],
    }))
    .unwrap();
    let journal_dir = format!("{h}/.local/state/multiedit");
    let refusal = |name: &str, folder: &str| {
        format!(
            "Cannot edit {name}: it lies inside {folder}, a private folder of multiedit's own (its journals and the editors' \
             bridge), which no plan or patch may touch. Nothing was changed."
        )
    };
    let env = [
        ("HOME", home.clone()),
        ("XDG_STATE_HOME", state.clone()),
        ("XDG_RUNTIME_DIR", runtime.clone()),
    ];
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let mut mcp = Raw::start(&home, &[], &env);
    let plant = |path: &str| json!({"file_path": path, "edits": [{"old_string": "", "new_string": journal}]});
    let cases = [
        (
            "multiedit",
            plant(&format!("{journal_dir}/journal-4242-feed.json")),
            refusal(
                &format!("{journal_dir}/journal-4242-feed.json"),
                &journal_dir,
            ),
        ),
        (
            "multiedit",
            plant(&format!("{h}/st/multiedit/journal-4242-feed.json")),
            refusal(
                &format!("{h}/st/multiedit/journal-4242-feed.json"),
                &journal_dir,
            ),
        ),
        (
            "multiedit_preview",
            plant(&format!("{h}/run/multiedit/1.json")),
            refusal(
                &format!("{h}/run/multiedit/1.json"),
                &format!("{h}/run/multiedit"),
            ),
        ),
        (
            "multiedit_patch",
            json!({"patch": format!("*** Begin Patch\n*** Add File: .local/state/multiedit/journal-4242-feed.json\n+{journal}\n*** End Patch\n")}),
            refusal(
                &format!("{journal_dir}/journal-4242-feed.json"),
                &journal_dir,
            ),
        ),
    ];
    for (id, (tool, plan, message)) in cases.into_iter().enumerate() {
        let (is_error, text) = mcp.call(id as i64 + 1, tool, plan);
        assert!(is_error, "{tool}: {text}");
        assert_eq!(text, message, "{tool}");
    }
    drop(mcp);
    // `multiedit apply` with the root at home: a patch, and a JSON plan the user runs.
    let patch = format!("--- /dev/null\n+++ b/.local/state/multiedit/journal-4242-feed.json\n@@ -0,0 +1 @@\n+{journal}\n");
    let mut cmd = Command::new(BIN);
    cmd.args(["apply", "--root", &h, "-"])
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), patch.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let name = format!("{journal_dir}/journal-4242-feed.json");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        ),
        (Some(1), refusal(&name, &journal_dir).as_str())
    );
    // The language server, its workspace the home folder.
    let options = lsp_support::Options {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_path_buf()))
            .collect(),
        ..lsp_support::Options::new(&home)
    };
    let mut ed = lsp_support::Editor::start(options);
    let e = ed
        .apply(plant(&format!("{h}/run/multiedit/x.json")))
        .expect_err("a plan into the bridge's folder");
    assert_eq!(
        e["data"]["message"].as_str(),
        Some(
            refusal(
                &format!("{h}/run/multiedit/x.json"),
                &format!("{h}/run/multiedit")
            )
            .as_str()
        ),
        "{e}"
    );
    ed.shutdown();
    assert_eq!(snapshot(&t.top), before, "nothing changed");
}

/// A `replace_all` of one byte by 1 MiB in a file of 1 MiB would need a terabyte: it aborted the
/// process (SIGABRT) and, through MCP, ended the session. Refused before anything is built.
#[test]
fn an_edit_whose_result_passes_the_size_limit_is_refused_before_it_is_built() {
    let t = tree();
    let big = t.proj.join("big.txt");
    std::fs::write(&big, "a".repeat(1 << 20)).unwrap();
    let before = snapshot(&t.top);
    let plan = json!({"file_path": big, "edits": [{"old_string": "a", "new_string": "b".repeat(1 << 20), "replace_all": true}]});
    let message = "The edit would make the file 1099511627776 bytes long (1048576 replacements of 1048576 bytes), more than the \
                   268435456 bytes (256 MiB) multiedit lets a file grow to. Nothing was changed.";
    // Under an address-space limit of 2 GiB, which the terabyte would pass.
    assert_eq!(
        apply_json_within_2_gib(&plan, &t.state),
        (Some(1), Some("too_large".into()), Some(message.into()))
    );
    // Through MCP: an error result, and the session goes on.
    let mut mcp = mcp_in(&t);
    let (is_error, text) = mcp.call(1, "multiedit", plan);
    assert!(is_error);
    assert_eq!(text, message);
    assert_eq!(snapshot(&t.top), before, "nothing changed");
    let (is_error, text) = mcp.call(2, "multiedit", json!({"file_path": t.proj.join("a.txt"), "edits": [{"old_string": "alpha", "new_string": "beta"}]}));
    assert!(!is_error, "{text}");
}

/// A sparse file of a terabyte in the root (it costs no disk): every read allocated the file's size
/// before looking at it, and the allocation aborted the process (SIGABRT, "memory allocation of
/// 1099511627776 bytes failed"), `multiedit apply` and the MCP session alike. Refused from its size,
/// before anything is allocated, by the CLI and by each MCP tool that reads a file; the session answers
/// the next call, and nothing changed.
#[test]
fn a_terabyte_file_is_refused_from_its_size_by_the_cli_and_every_mcp_tool() {
    let t = tree();
    let big = t.proj.join("big.log");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let a = t.proj.join("a.txt");
    let before = snapshot(&t.top);
    let message = format!(
        "Cannot read {}: it is 1.0 TiB (1099511627776 bytes), more than the 256 MiB multiedit reads. Nothing was changed.",
        big.display()
    );
    let plan = json!({"files": [
        {"file_path": a, "edits": [{"old_string": "alpha", "new_string": "beta"}]},
        {"file_path": big, "edits": [{"old_string": "x", "new_string": "y"}]},
    ]});
    // Under an address-space limit of 2 GiB, which any part of the terabyte would pass.
    assert_eq!(
        apply_json_within_2_gib(&plan, &t.state),
        (Some(1), Some("too_large".into()), Some(message.clone()))
    );
    let out = run(&["apply", "-"], &plan.to_string(), &t.state);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, format!("{message}\n").as_str())
    );
    // The terabyte as the plan itself.
    let out = run(&["apply", big.to_str().unwrap()], "", &t.state);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, format!("Cannot read the plan {}: it is 1.0 TiB (1099511627776 bytes), more than the 256 MiB multiedit reads\n", big.display()).as_str())
    );
    // Each MCP tool that reads a file, then a call that works.
    let mut mcp = mcp_in(&t);
    let patch = "--- a/big.log\n+++ b/big.log\n@@ -1 +1 @@\n-x\n+y\n";
    for (id, tool, arguments) in [
        (1, "multiedit", plan.clone()),
        (2, "multiedit_read", json!({"file_path": big})),
        (
            3,
            "multiedit_write",
            json!({"file_path": big, "content": "y\n", "sha256": "0".repeat(64)}),
        ),
        (4, "multiedit_patch", json!({"patch": patch})),
        (5, "multiedit_preview", plan.clone()),
    ] {
        let (is_error, text) = mcp.call(id, tool, arguments);
        assert!(is_error, "{tool}: {text}");
        assert_eq!(text, message, "{tool}");
    }
    assert_eq!(snapshot(&t.top), before, "nothing changed");
    let (is_error, text) = mcp.call(
        6,
        "multiedit",
        json!({"file_path": a, "edits": [{"old_string": "alpha", "new_string": "beta"}]}),
    );
    assert!(!is_error, "{text}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "beta\n");
}

/// Every staged text stayed open until its rename: a plan of more files than the open-file limit was
/// refused "Too many open files" (240 files at macOS's default of 256). Each is now closed once
/// written, and flushed a few at a time.
#[test]
fn a_plan_of_more_files_than_the_open_file_limit_applies() {
    let t = tree();
    let mut files = Vec::new();
    for k in 0..300 {
        let dir = t.proj.join(["one", "two", "three"][k % 3]);
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(format!("f{k}.txt"));
        std::fs::write(&f, format!("line {k}\n")).unwrap();
        files.push(json!({"file_path": f, "edits": [{"old_string": format!("line {k}"), "new_string": format!("edited {k}")}]}));
    }
    let plan = json!({"files": files}).to_string();
    let out = limited("ulimit -n 64", "apply -", &plan, &t.state);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for k in 0..300 {
        let f = t
            .proj
            .join(["one", "two", "three"][k % 3])
            .join(format!("f{k}.txt"));
        assert_eq!(std::fs::read_to_string(f).unwrap(), format!("edited {k}\n"));
    }
    let left: Vec<_> = ["one", "two", "three"]
        .iter()
        .flat_map(|d| std::fs::read_dir(t.proj.join(d)).unwrap())
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// A bridge folder made first by another user (a squatter in a shared temporary folder) turned the
/// bridge off, and `multiedit mcp` then wrote on disk behind an editor that may hold the files
/// unsaved. Now it refuses, naming the folder and the fix.
#[test]
fn a_bridge_folder_that_cannot_be_trusted_stops_mcp_from_writing() {
    let t = tree();
    let bridge = t.state.join("runtime/multiedit");
    std::fs::create_dir(&bridge).unwrap();
    let why = if disk_support::is_root() {
        std::os::unix::fs::chown(&bridge, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&bridge, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .unwrap();
        format!(
            "{} is owned by uid 65534, not by this user (uid 0)",
            bridge.display()
        )
    } else {
        std::fs::set_permissions(&bridge, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        format!(
            "{} has mode 0777, which lets other users in (0700 is required)",
            bridge.display()
        )
    };
    let before = snapshot(&t.top);
    let b = bridge.display();
    let message = format!(
        "Cannot apply the plan: the editors' bridge folder {b} cannot be trusted ({why}), so multiedit cannot see whether an \
         editor holds these files with unsaved changes, and it writes nothing behind one. Nothing was changed. Remove {b} if \
         it is not yours, or set XDG_RUNTIME_DIR to a private folder (mode 0700) for the editor and the agent alike."
    );
    let mut mcp = mcp_in(&t);
    let a = t.proj.join("a.txt");
    let (is_error, text) = mcp.call(
        1,
        "multiedit",
        json!({"file_path": a, "edits": [{"old_string": "alpha", "new_string": "beta"}]}),
    );
    assert!(is_error, "{text}");
    assert_eq!(text, message);
    let (is_error, text) = mcp.call(
        2,
        "multiedit_patch",
        json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+beta\n"}),
    );
    assert!(is_error, "{text}");
    assert_eq!(text, message);
    assert_eq!(snapshot(&t.top), before, "nothing changed");
}

/// A patch's symbolic links: before, deleting a link deleted its target (the link left dangling),
/// renaming one wrote its target's text to a regular file and deleted the target, a mode-only diff
/// chmodded the target, and a path through a linked folder was followed.
#[test]
fn symbolic_links_named_by_a_patch_are_acted_on_as_links_or_refused() {
    let t = tree();
    let p = t.proj.display().to_string();
    std::fs::write(t.proj.join("target.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink("target.txt", t.proj.join("link")).unwrap();
    std::fs::create_dir(t.proj.join("real")).unwrap();
    std::fs::write(t.proj.join("real/f.txt"), "f\n").unwrap();
    std::os::unix::fs::symlink("real", t.proj.join("sub")).unwrap();
    let before = snapshot(&t.top);
    let mut mcp = mcp_in(&t);
    let mut ed = lsp_support::Editor::start(lsp_support::Options::new(&t.proj));
    let refused = [
        ("diff --git a/link b/link\nold mode 100644\nnew mode 100755\n",
         format!("Cannot change the mode of {p}/link: it is a symbolic link, and a patch sets modes only on regular files (git apply refuses it as the wrong type). Nothing was changed.")),
        ("diff --git a/link b/moved\nsimilarity index 100%\nrename from link\nrename to moved\n",
         format!("Cannot move {p}/link to {p}/moved: it is a symbolic link, and multiedit writes only regular files (git apply moves the link itself). Nothing was changed. Move the link with `git mv` or `mv`.")),
        ("--- a/sub/f.txt\n+++ b/sub/f.txt\n@@ -1 +1 @@\n-f\n+g\n",
         format!("Cannot apply the patch to {p}/sub/f.txt: {p}/sub is a symbolic link, and like git apply, multiedit follows no link in a patch's path (a file beyond a link may lie anywhere). Nothing was changed.")),
        ("*** Begin Patch\n*** Add File: sub/new.txt\n+planted\n*** End Patch\n",
         format!("Cannot apply the patch to {p}/sub/new.txt: {p}/sub is a symbolic link, and like git apply, multiedit follows no link in a patch's path (a file beyond a link may lie anywhere). Nothing was changed.")),
    ];
    for (k, (patch, message)) in refused.iter().enumerate() {
        let cli = run(&["apply", "--root", &p, "-"], patch, &t.state);
        assert_eq!(
            (cli.code, cli.stderr.trim_end()),
            (
                if message.contains("mode of") || message.contains("Cannot move") {
                    2
                } else {
                    1
                },
                message.as_str()
            ),
            "{patch}"
        );
        let (is_error, text) = mcp.call(k as i64 + 1, "multiedit_patch", json!({"patch": patch}));
        assert!(is_error, "{text}");
        assert_eq!(&text, message);
        let e = ed
            .preview(json!({"patch": patch, "root": p}))
            .expect_err("refused by the language server");
        assert_eq!(e["data"]["message"].as_str(), Some(message.as_str()), "{e}");
    }
    assert_eq!(snapshot(&t.top), before, "nothing changed");
    // Deleting the link removes the link, as git does; the file it points to stays.
    let delete = "diff --git a/link b/link\ndeleted file mode 100644\n--- a/link\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
    let cli = run(&["apply", "--root", &p, "-"], delete, &t.state);
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert!(
        std::fs::symlink_metadata(t.proj.join("link")).is_err(),
        "the link is gone"
    );
    assert_eq!(
        std::fs::read_to_string(t.proj.join("target.txt")).unwrap(),
        "x\n",
        "its target stays"
    );
    ed.shutdown();
}

/// Swaps the names `a` and `b` (both in `dir`) atomically, over and over, until `stop`.
fn swapper(
    dir: PathBuf,
    a: &'static str,
    b: &'static str,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let c = |n: &str| {
            std::ffi::CString::new(dir.join(n).into_os_string().into_encoded_bytes()).unwrap()
        };
        let (a, b) = (c(a), c(b));
        let mut swaps = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            // SAFETY: two valid NUL-terminated paths; renameat2 has no other preconditions.
            let r = unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    a.as_ptr(),
                    libc::AT_FDCWD,
                    b.as_ptr(),
                    libc::RENAME_EXCHANGE,
                )
            };
            assert_eq!(r, 0, "renameat2: {}", std::io::Error::last_os_error());
            swaps += 1;
        }
        swaps
    })
}

/// A local process swaps a folder of the project with a link to a folder outside, in a loop, while
/// plans run through `multiedit apply --root` and `multiedit mcp`: edits, new files, new folders. Not
/// one byte may land outside, whatever each call answered (applied, or refused as changed, outside or
/// unreadable). Before, the paths were resolved and confined once and then used again by name: a
/// few dozen calls sufficed to write outside.
#[test]
fn a_folder_swapped_with_a_link_outside_never_carries_a_write_out() {
    let t = tree();
    let (proj, outside) = (t.proj.clone(), t.top.join("outside"));
    std::fs::create_dir(proj.join("sub")).unwrap();
    for d in [&proj.join("sub"), &outside] {
        std::fs::write(d.join("f.txt"), "0\n").unwrap();
    }
    std::os::unix::fs::symlink(&outside, proj.join("swap")).unwrap();
    let outside_before = snapshot(&outside);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapping = swapper(proj.clone(), "sub", "swap", stop.clone());
    let sub = proj.join("sub");
    let plan = |k: usize| {
        json!({"files": [
            {"file_path": sub.join("f.txt"), "edits": [{"old_string": "\n", "new_string": "+\n"}]},
            {"file_path": sub.join(format!("new-{k}.txt")), "edits": [{"old_string": "", "new_string": "planted\n"}]},
            {"file_path": sub.join(format!("d{k}/deeper/new.txt")), "edits": [{"old_string": "", "new_string": "planted\n"}]},
        ]})
    };
    let (mut applied, mut refused) = (0, 0);
    let p = proj.display().to_string();
    for k in 0..150 {
        let cli = run(
            &["apply", "--root", &p, "-"],
            &plan(k).to_string(),
            &t.state,
        );
        if cli.code == 0 {
            applied += 1
        } else {
            refused += 1
        }
        assert!(
            cli.code == 0 || cli.code == 1 || cli.code == 2,
            "{}",
            cli.stderr
        );
    }
    let mut mcp = Raw::start(
        &proj,
        &[],
        &[
            ("XDG_STATE_HOME", &t.state.join("state")),
            ("XDG_RUNTIME_DIR", &t.state.join("runtime")),
        ],
    );
    for k in 150..450 {
        let (is_error, _) = mcp.call(k as i64, "multiedit", plan(k));
        if is_error {
            refused += 1
        } else {
            applied += 1
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapping.join().unwrap();
    eprintln!("swapped {swaps} times: {applied} plans applied, {refused} refused");
    assert_eq!(
        snapshot(&outside),
        outside_before,
        "nothing was written outside the root"
    );
}

/// The commit makes the folder a new file needs; a process that puts a link to a folder outside in
/// its place first (after the checks, at the commit point) had it taken for "made meanwhile by
/// someone else: theirs" and the new file written through it. A folder that appears between two
/// steps is a change of the world: refused, and nothing outside written.
#[test]
fn a_folder_that_appears_before_its_mkdir_is_refused_not_written_through() {
    let t = tree();
    let (proj, outside) = (t.proj.clone(), t.top.join("outside"));
    let plan = json!({"files": [
        {"file_path": proj.join("a.txt"), "edits": [{"old_string": "alpha", "new_string": "beta"}]},
        {"file_path": proj.join("made/new.txt"), "edits": [{"old_string": "", "new_string": "planted\n"}]},
    ]});
    let before = snapshot(&t.top);
    let mut child = Command::new(BIN)
        .args(["apply", "--root", proj.to_str().unwrap(), "-"])
        .env("XDG_STATE_HOME", t.state.join("state"))
        .env("MULTIEDIT_TEST_CRASH_AT", "commit:1:stop")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), plan.to_string().as_bytes()).unwrap();
    drop(child.stdin.take());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        if stat[stat.rfind(')').unwrap() + 1..]
            .trim_start()
            .starts_with('T')
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the writer did not stop at its commit point"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::os::unix::fs::symlink(&outside, proj.join("made")).unwrap();
    // SAFETY: kill(2) on a child of this test.
    unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stderr).trim_end()),
        (Some(1), format!("{}/made appeared while the plan was being applied. Nothing was changed; run the plan again.", proj.display()).as_str())
    );
    let mut after = snapshot(&t.top);
    after.remove(Path::new("proj/made"));
    // The private folder is not part of the tree the plan touches.
    after.retain(|p, _| !p.starts_with("priv/state"));
    let mut before = before;
    before.retain(|p, _| !p.starts_with("priv/state"));
    assert_eq!(after, before, "nothing changed, outside least of all");
}
