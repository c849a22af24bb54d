//! One patch and one plan for the front ends' same-report tests (`tests/lsp.rs`, `tests/mcp.rs`,
//! `tests/bridge.rs`): each applies them and compares its result with `multiedit apply --json`'s for
//! the same patch or plan.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Writes the files of the patch into `root` and returns the patch: a hunk found 2 lines below where
/// it says (an offset), a rename with an edit, a deletion, a mode-only change and a line added to a
/// CRLF file by an LF hunk (`line_breaks`).
pub fn fixture(root: &Path) -> String {
    fs::write(
        root.join("a.txt"),
        "new top\nnew top 2\n1\n2\n3\n4\n5\n6\n7\n",
    )
    .unwrap();
    fs::write(root.join("old.txt"), "keep\nold body\n").unwrap();
    fs::write(root.join("gone.txt"), "bye\n").unwrap();
    fs::write(root.join("run.sh"), "echo hi\n").unwrap();
    fs::write(root.join("dos.txt"), "one\r\ntwo\r\n").unwrap();
    "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -3,3 +3,3 @@\n 3\n-4\n+four\n 5\n\
     diff --git a/old.txt b/new.txt\nsimilarity index 60%\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n+++ b/new.txt\n\
     @@ -1,2 +1,2 @@\n keep\n-old body\n+new body\n\
     diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
     diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n\
     diff --git a/dos.txt b/dos.txt\n--- a/dos.txt\n+++ b/dos.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n"
        .to_string()
}

/// The `files` of `multiedit apply --json --dry-run` for `patch` on a fresh copy of the fixture in a
/// folder of `scratch`, its paths rooted at `ROOT` (see `rooted`); checked to hold what the
/// fixture is for.
pub fn cli_json(scratch: &Path, patch: &str) -> Value {
    let root = scratch.canonicalize().unwrap().join("cli");
    fs::create_dir(&root).unwrap();
    fixture(&root);
    let patch_file = scratch.join("report.diff");
    fs::write(&patch_file, patch).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_multiedit"))
        .args(["apply", "--format", "diff", "--json", "--dry-run", "--root"])
        .arg(&root)
        .arg(&patch_file)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = rooted(&v["files"], &root);
    assert_eq!(files[0]["offsets"][0]["offset"], 2, "{files}");
    assert_eq!(files[1]["moved_to"], "ROOT/new.txt", "{files}");
    assert_eq!(files[2]["deleted"], true, "{files}");
    assert_eq!(files[3]["mode"], "100755", "{files}");
    assert_eq!(files[4]["line_breaks"], "crlf", "{files}");
    files
}

/// `v` with the folder `root` written `ROOT`, so that reports from two folders compare.
pub fn rooted(v: &Value, root: &Path) -> Value {
    serde_json::from_str(&v.to_string().replace(&root.display().to_string(), "ROOT")).unwrap()
}

/// Writes the files of the plan into `root` and returns the plan: a tolerant match (a `tiers` entry)
/// adding a line to a CRLF file (`line_breaks`), an edit that fails and is skipped (`mode: partial`,
/// an `edits_failed` entry) and a created file.
pub fn plan_fixture(root: &Path) -> Value {
    fs::write(root.join("p.txt"), "alpha  \r\nbeta\r\ngamma\r\n").unwrap();
    let _ = fs::remove_file(root.join("made.txt"));
    serde_json::json!({"files": [
        {"file_path": root.join("p.txt"), "edits": [
            {"old_string": "alpha\nbeta", "new_string": "ALPHA\nbeta\nbeta 2"},
            {"old_string": "missing", "new_string": "x"},
        ]},
        {"file_path": root.join("made.txt"), "edits": [{"old_string": "", "new_string": "made\n"}]},
    ], "mode": "partial", "match": "tolerant"})
}

/// The whole result of `multiedit apply --json --dry-run` for the plan on a fresh copy of its files
/// in a folder of `scratch`, without the CLI's own `dry_run` and `diff`, paths rooted at `ROOT`;
/// checked to hold what the fixture is for.
pub fn cli_plan_json(scratch: &Path) -> Value {
    let root = scratch.canonicalize().unwrap().join("cli-plan");
    fs::create_dir(&root).unwrap();
    let plan_file = scratch.join("report.multiedit.json");
    fs::write(&plan_file, plan_fixture(&root).to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_multiedit"))
        .args(["apply", "--json", "--dry-run"])
        .arg(&plan_file)
        .output()
        .unwrap();
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["dry_run"].take(), v["diff"].take().is_string()),
        (Value::Bool(true), true),
        "{v}"
    );
    let v = without(&rooted(&v, &root), &["dry_run", "diff"], &[]);
    assert_eq!(v["files"][0]["tiers"][0]["tier"], "line_trimmed", "{v}");
    assert_eq!(v["files"][0]["line_breaks"], "crlf", "{v}");
    assert_eq!(v["files"][1]["created"], true, "{v}");
    assert_eq!(v["edits_failed"][0]["kind"], "not_found", "{v}");
    assert_eq!(v["edits_failed"][0]["file_path"], "ROOT/p.txt", "{v}");
    v
}

/// The sha256 of a text in hex, as `multiedit_read` shows it.
pub fn sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `v` (an applied plan's result, or its `files`) with each file's `sha256` checked, then taken out
/// (a dry run, the baseline, has none): a file the plan leaves has the sha256 of the text now at its
/// path (where a move took it), as `text_of` reads it; a deleted file has none.
pub fn hashes_checked(v: &Value, text_of: impl Fn(&Path) -> String) -> Value {
    let mut v = v.clone();
    let files = match v.get_mut("files") {
        Some(files) => files,
        None => &mut v,
    };
    for f in files.as_array_mut().expect("files").iter_mut() {
        let f = f.as_object_mut().expect("a file");
        let hash = f.remove("sha256");
        if f.get("deleted") == Some(&Value::Bool(true)) {
            assert_eq!(hash, None, "a deleted file has no hash: {f:?}");
            continue;
        }
        let path = f
            .get("moved_to")
            .unwrap_or(&f["file_path"])
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            hash,
            Some(Value::String(sha256(&text_of(Path::new(&path))))),
            "the sha256 of {path} as it now reads"
        );
    }
    v
}

/// `v` without the fields `keys` and, in each of its files, `file_keys`: what one front end adds.
pub fn without(v: &Value, keys: &[&str], file_keys: &[&str]) -> Value {
    let mut v = v.clone();
    let object = v.as_object_mut().expect("a result object");
    for k in keys {
        object.remove(*k);
    }
    for f in object
        .get_mut("files")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for k in file_keys {
            f.as_object_mut().expect("a file").remove(*k);
        }
    }
    v
}
