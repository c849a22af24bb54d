//! `multiedit apply` as a user runs it: exit codes, printed texts, files on disk.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::support::apply::{apply_text, bin};

fn apply(args: &[&str], plan: &Value) -> Output {
    apply_text(Path::new("."), args, &plan.to_string())
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_names(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".multiedit-"))
        .collect()
}

#[test]
fn applies_and_prints_the_seed_message() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("song.txt");
    fs::write(&f, "a jolly swagman\nthe swagman\n").unwrap();
    let p = f.to_str().unwrap();
    let o = apply(
        &[],
        &json!({"file_path": p, "edits": [
        {"old_string": "jolly", "new_string": "happy"},
        {"old_string": "swagman", "new_string": "traveler", "replace_all": true}]}),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), format!("Applied 2 edits to {p}:\n1. Replaced \"jolly\" with \"happy\"\n2. Replaced \"swagman\" with \"traveler\"\n"));
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "a happy traveler\nthe traveler\n"
    );
    assert!(temp_names(dir.path()).is_empty());
}

#[test]
fn a_refusal_exits_1_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    fs::write(&a, "alpha\n").unwrap();
    fs::write(&b, "beta\nbeta beta\n").unwrap();
    let o = apply(
        &[],
        &json!({"files": [
        {"file_path": a, "edits": [{"old_string": "alpha", "new_string": "ALPHA"}]},
        {"file_path": b, "edits": [{"old_string": "beta", "new_string": "BETA"}]}]}),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(out(&o), "");
    // Three matches on two lines: counted as matches, each line named once.
    assert_eq!(err(&o), "Found 3 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: beta\nMatches are at lines 1 and 2 (3 matches: 2 on line 2).\n");
    assert_eq!(fs::read_to_string(&a).unwrap(), "alpha\n");
    assert_eq!(fs::read_to_string(&b).unwrap(), "beta\nbeta beta\n");
    assert!(temp_names(dir.path()).is_empty());
}

#[test]
fn json_output_has_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.txt");
    fs::write(&f, "one two two\n").unwrap();
    let o = apply(
        &["--json"],
        &json!({"file_path": f, "mode": "partial", "edits": [
        {"old_string": "one", "new_string": "1"}, {"old_string": "two", "new_string": "2"}]}),
    );
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["files"][0]["edits_applied"], 1);
    assert_eq!(v["files"][0]["replacements"], 1);
    assert_eq!(v["files"][0]["created"], false);
    assert_eq!(v["edits_failed"][0]["kind"], "ambiguous");
    assert_eq!(v["edits_failed"][0]["edit_index"], 1);
    assert_eq!(fs::read_to_string(&f).unwrap(), "1 two two\n");
    // The sha256 of the text written, as multiedit_read shows it and multiedit_write takes it.
    let sha = |text: &str| {
        use sha2::Digest;
        sha2::Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert_eq!(v["files"][0]["sha256"], sha("1 two two\n"));
    // A dry run writes nothing: no hash.
    let o = apply(
        &["--json", "--dry-run"],
        &json!({"file_path": f, "edits": [{"old_string": "1", "new_string": "one"}]}),
    );
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["files"][0].get("sha256"), None, "{v}");

    let o = apply(
        &["--json"],
        &json!({"file_path": f, "edits": [{"old_string": "zzz", "new_string": "y"}]}),
    );
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["kind"], "not_found");
    assert_eq!(v["error"]["edit_index"], 0);
    assert_eq!(
        v["error"]["message"],
        "String to replace not found in file.\nString: zzz"
    );
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("d.txt");
    fs::write(&f, "l1\nl2\nl3\n").unwrap();
    let o = apply(
        &["--dry-run"],
        &json!({"file_path": f, "edits": [{"old_string": "l2", "new_string": "L2"}]}),
    );
    assert_eq!(o.status.code(), Some(0));
    let p = f.display();
    assert_eq!(out(&o), format!("--- a{p}\n+++ b{p}\n@@ -1,3 +1,3 @@\n l1\n-l2\n+L2\n l3\nDry run, nothing written. Applied 1 edit to {p}:\n1. Replaced \"l2\" with \"L2\"\n"));
    assert_eq!(fs::read_to_string(&f).unwrap(), "l1\nl2\nl3\n");
}

#[test]
fn creates_files_and_missing_folders() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("new/deep/file.txt");
    let o = apply(
        &[],
        &json!({"file_path": f, "edits": [{"old_string": "", "new_string": "fresh\n"}]}),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(fs::read_to_string(&f).unwrap(), "fresh\n");
}

#[test]
fn keeps_permissions_and_writes_through_symlinks() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.sh");
    fs::write(&real, "echo hi\n").unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o751)).unwrap();
    let link = dir.path().join("link.sh");
    symlink(&real, &link).unwrap();
    let o = apply(
        &[],
        &json!({"file_path": link, "edits": [{"old_string": "hi", "new_string": "bye"}]}),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(&real).unwrap(), "echo bye\n");
    assert_eq!(
        fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o751
    );
}

#[test]
fn not_utf8_files_are_refused_byte_for_byte_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("latin1.txt");
    let bytes = b"caf\xe9 au lait\n".to_vec();
    fs::write(&f, &bytes).unwrap();
    let o = apply(
        &[],
        &json!({"file_path": f, "edits": [{"old_string": "au", "new_string": "with"}]}),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err(&o), format!("Cannot edit {}: it is not valid UTF-8 text (invalid byte at offset 3). The file was left unchanged.\n", f.display()));
    assert_eq!(fs::read(&f).unwrap(), bytes);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let o = Command::new(bin()).args(["apply"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).starts_with("multiedit: missing PLAN (a JSON file, or - for standard input)"));
    let o = Command::new(bin())
        .args(["apply", "/nonexistent/plan.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o)
        .starts_with("Cannot read the plan /nonexistent/plan.json: No such file or directory"));
    let o = Command::new(bin()).args(["frobnicate"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_shipped_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = dir.path().join("greeting.txt");
    fs::copy(root.join("examples/greeting.txt"), &target).unwrap();
    let mut plan: Value = serde_json::from_str(
        &fs::read_to_string(root.join("examples/rename.multiedit.json")).unwrap(),
    )
    .unwrap();
    plan["file_path"] = json!(target);
    let o = apply(&[], &plan);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "const salutation = \"hello\";\nfunction greet(name, punctuation = \"!\") {\n  console.log(salutation + \", \" + name + punctuation);\n}\ngreet(\"world\");\n"
    );
}

#[test]
fn a_reader_that_goes_away_does_not_crash_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.txt");
    fs::write(&f, "x\n".repeat(50_000)).unwrap();
    let plan = dir.path().join("plan.json");
    fs::write(&plan, json!({"file_path": f, "edits": [{"old_string": "x", "new_string": "y", "replace_all": true}]}).to_string()).unwrap();
    // The diff is long; the reader closes its end before reading any of it.
    let mut child = Command::new(bin())
        .args(["apply", "--dry-run", plan.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(!err(&o).contains("panicked"), "{}", err(&o));
}

#[test]
fn help_version_errors_and_completions() {
    let o = Command::new(bin()).arg("--version").output().unwrap();
    assert_eq!(
        (o.status.code(), out(&o)),
        (
            Some(0),
            format!("multiedit {}\n", env!("CARGO_PKG_VERSION"))
        )
    );
    let o = Command::new(bin()).arg("--help").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    for sub in ["apply", "lsp", "mcp", "setup", "doctor", "completions"] {
        assert!(out(&o).contains(&format!("\n  {sub} ")), "{}", out(&o));
    }
    let o = Command::new(bin())
        .args(["apply", "--help"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out(&o).contains("Exits 0 when the plan was applied, 1 when it was refused"),
        "{}",
        out(&o)
    );
    // No command: the help, on standard error, exit 2.
    let o = Command::new(bin()).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("Usage: multiedit <COMMAND>"),
        "{}",
        err(&o)
    );
    // A mistyped flag is named, with the flag it was probably meant to be.
    let o = Command::new(bin())
        .args(["apply", "--dry-rn", "-"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).starts_with("multiedit apply: unknown argument --dry-rn\n"),
        "{}",
        err(&o)
    );
    assert!(err(&o).contains("'--dry-run'"), "{}", err(&o));
    let o = Command::new(bin())
        .args(["apply", "a.json", "b.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).starts_with("multiedit apply: unexpected argument b.json\n"),
        "{}",
        err(&o)
    );
    for shell in ["bash", "zsh", "fish"] {
        let o = Command::new(bin())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        assert!(
            out(&o).contains("multiedit") && out(&o).contains("dry-run"),
            "{shell}: {}",
            out(&o)
        );
    }
    let o = Command::new(bin())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("tcsh"), "{}", err(&o));
}

/// Every name under `dir` with its bytes (a link: where it points), to compare before and after.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = fs::symlink_metadata(&p).unwrap();
            let what = if meta.file_type().is_symlink() {
                fs::read_link(&p)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
                    .into_bytes()
            } else if meta.is_dir() {
                stack.push(p.clone());
                b"<dir>".to_vec()
            } else {
                fs::read(&p).unwrap()
            };
            out.push((p.display().to_string(), what));
        }
    }
    out.sort();
    out
}

#[test]
fn a_patch_stays_inside_its_root_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let proj = top.join("proj");
    fs::create_dir(&proj).unwrap();
    fs::write(proj.join("a.txt"), "alpha\n").unwrap();
    let outside = top.join("outside.txt");
    fs::write(&outside, "secret\n").unwrap();
    std::os::unix::fs::symlink(&top, proj.join("out")).unwrap();
    let (p, t, o) = (
        proj.display().to_string(),
        top.display().to_string(),
        outside.display().to_string(),
    );
    let root_args = ["--root", p.as_str()];
    let diff = |path: &str| format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-secret\n+pwned\n");
    let given = format!("the --root folder {p}");
    let opt_out = "Nothing was changed. To allow paths outside it, add --allow-outside.";
    let before = snapshot(&top);
    for (args, patch, message) in [
        // `..` out of the root.
        (&root_args[..], diff("../outside.txt"), format!("Cannot edit {o}: it lies outside {given}. {opt_out}")),
        // An absolute path elsewhere.
        (
            &root_args[..],
            format!("*** Begin Patch\n*** Update File: {o}\n@@\n-secret\n+pwned\n*** End Patch\n"),
            format!("Cannot edit {o}: it lies outside {given}. {opt_out}"),
        ),
        // A link inside the root that leads out of it.
        (
            &root_args[..],
            diff("out/outside.txt"),
            format!("Cannot edit {p}/out/outside.txt: it lies outside {given} (it resolves to {o}, symbolic links followed). {opt_out}"),
        ),
        // A file created through `..`, and behind the link in a new folder.
        (
            &root_args[..],
            "*** Begin Patch\n*** Add File: ../planted.txt\n+x\n*** End Patch\n".to_string(),
            format!("Cannot edit {t}/planted.txt: it lies outside {given}. {opt_out}"),
        ),
        (
            &root_args[..],
            "*** Begin Patch\n*** Add File: out/new/planted.txt\n+x\n*** End Patch\n".to_string(),
            format!(
                "Cannot edit {p}/out/new/planted.txt: it lies outside {given} (it resolves to {t}/new/planted.txt, symbolic \
                 links followed). {opt_out}"
            ),
        ),
        // Without --root the current folder is the root.
        (
            &[][..],
            diff("../outside.txt"),
            format!("Cannot edit {o}: it lies outside the current folder, where the patch's paths start (--root) {p}. {opt_out}"),
        ),
    ] {
        let out = apply_text(&proj, args, &patch);
        assert_eq!((out.status.code(), err(&out)), (Some(1), format!("{message}\n")), "{patch}");
        let json_args: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
        let v: Value = serde_json::from_slice(&apply_text(&proj, &json_args, &patch).stdout).unwrap();
        assert_eq!(v["error"]["kind"], "outside_workspace");
        assert_eq!(snapshot(&top), before, "nothing changed for {patch}");
    }
    // A JSON plan names its own absolute paths: without --root it goes anywhere, as before; given
    // --root, it is held to it too.
    let plan = json!({"file_path": o, "edits": [{"old_string": "secret", "new_string": "plan"}]})
        .to_string();
    let out = apply_text(&proj, &root_args, &plan);
    assert_eq!(
        err(&out),
        format!("Cannot edit {o}: it lies outside {given}. {opt_out}\n")
    );
    assert_eq!(snapshot(&top), before);
    let out = apply_text(&proj, &[], &plan);
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert_eq!(fs::read_to_string(&outside).unwrap(), "plan\n");
    // Asked for: --allow-outside.
    let out = apply_text(
        &proj,
        &["--root", &p, "--allow-outside"],
        &diff("../outside.txt").replace("secret", "plan"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert_eq!(fs::read_to_string(&outside).unwrap(), "pwned\n");
    // Inside, `..` and links that stay inside work as ever.
    let out = apply_text(
        &proj,
        &root_args,
        "--- a/x/../a.txt\n+++ b/x/../a.txt\n@@ -1 +1 @@\n-alpha\n+beta\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert_eq!(fs::read_to_string(proj.join("a.txt")).unwrap(), "beta\n");
}

/// `--match` is never ignored: a JSON plan that names no mode takes it; one whose own mode contradicts
/// it is refused, naming both, with the file unchanged.
#[test]
fn the_match_flag_applies_to_a_plan_that_names_no_mode_and_a_contradiction_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("m.py");
    fs::write(&f, "def f():\n    a = 1\n    return a\n").unwrap();
    // Written without the file's indentation: only the tolerant tiers find it.
    let edits = json!([{"old_string": "a = 1\nreturn a", "new_string": "a = 2\nreturn a"}]);
    let o = apply(
        &["--match", "tolerant"],
        &json!({"file_path": f, "edits": edits}),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), format!("Applied 1 edit to {}:\n1. Replaced \"a = 1\nreturn a\" with \"a = 2\nreturn a\" (matched ignoring indentation)\n", f.display()));
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "def f():\n    a = 2\n    return a\n"
    );
    // The plan's own mode, the same as the flag's: applied.
    let o = apply(
        &["--match", "exact"],
        &json!({"file_path": f, "match": "exact", "edits": [{"old_string": "a = 2", "new_string": "a = 3"}]}),
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // Contradicting it: refused, both named.
    let o = apply(
        &["--match", "tolerant"],
        &json!({"file_path": f, "match": "exact", "edits": [{"old_string": "a = 3", "new_string": "a = 4"}]}),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        err(&o),
        "InputValidationError: the plan's own \"match\" is \"exact\" and the request asks for \"tolerant\" (--match, or `match` beside the patch): they contradict each other, so nothing was applied. Give the matching mode once, in the plan or beside it\n"
    );
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "def f():\n    a = 3\n    return a\n"
    );
    // Without the flag, a plan naming no mode is exact.
    let o = apply(&[], &json!({"file_path": f, "edits": edits}));
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_plan_file_with_a_json_slip_is_refused_where_the_slip_starts() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    fs::write(&f, "one\n").unwrap();
    let plan = dir.path().join("plan.json");
    fs::write(
        &plan,
        format!(
            "{{\n  \"file_path\": \"{}\",\n  \"edits\": [\n    {{\"old_string\": \"one\n\", \"new_string\": \"1\"}}\n  ]\n}}\n",
            f.display()
        ),
    )
    .unwrap();
    let o = Command::new(bin())
        .arg("apply")
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err(&o), "InputValidationError: the plan is not valid JSON: line 4, column 20: a string that starts here is not closed before the line ends (a line break inside a JSON string must be written \\n).\n");
    assert_eq!(fs::read_to_string(&f).unwrap(), "one\n");
}
