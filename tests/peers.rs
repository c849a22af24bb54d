//! The classes of behaviour that other agents' edit tools test in their own suites (Gemini CLI's edit
//! tool, OpenCode's edit tool, Roo Code's SEARCH/REPLACE strategy, Copilot Chat's string replacement and
//! multi-replacement tools, Cline's SEARCH/REPLACE blocks), restated here with texts of our own and run
//! through `multiedit apply` as a user runs it. The peer's result is the contract, except where multiedit
//! refuses by design (partial success, an ambiguous match, an adaptation it would have to guess); each
//! such refusal is named in docs/compatibility.md and checked here to leave every file byte for byte
//! as it was.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use crate::support::apply::apply_text;
use crate::support::disk::{folder, snapshot};

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap()
}

/// `multiedit apply --json --root DIR ARGS -` with `input` on standard input, in `dir`.
fn run(dir: &Path, args: &[&str], input: &str) -> (Output, Value) {
    let root = dir.to_str().unwrap();
    let o = apply_text(dir, &[&["--json", "--root", root], args].concat(), input);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    (o, v)
}

/// Runs `input` on a folder of `files` and expects it applied: the result object.
fn applied(dir: &Path, args: &[&str], input: &str) -> Value {
    let (o, v) = run(dir, args, input);
    assert_eq!(o.status.code(), Some(0), "refused: {v}");
    v
}

/// Runs `input` and expects it refused with every file as it was: the refusal.
fn refused(dir: &Path, args: &[&str], input: &str) -> Value {
    let before = snapshot(dir);
    let (o, v) = run(dir, args, input);
    assert_eq!(o.status.code(), Some(1), "not refused: {v}");
    assert_eq!(snapshot(dir), before, "a refusal changed a file");
    v["error"].clone()
}

/// A one-file plan for `dir/name` with `edits` (old, new) and `extra` fields on top.
fn plan(dir: &Path, name: &str, edits: &[(&str, &str)], extra: Value) -> String {
    let edits: Vec<Value> = edits.iter().map(|(o, n)| json!({"old_string": o, "new_string": n})).collect();
    let mut p = json!({"file_path": dir.join(name), "edits": edits});
    if let (Value::Object(p), Value::Object(extra)) = (&mut p, extra) {
        p.extend(extra);
    }
    p.to_string()
}

/// One edit of `text` in a file of its own: the file's text after it, or the refusal (the file then
/// checked unchanged).
fn edit(text: &str, old: &str, new: &str, extra: Value) -> Result<(String, Value), Value> {
    let dir = folder(&[("f.txt", text)]);
    let p = plan(dir.path(), "f.txt", &[(old, new)], extra);
    let before = snapshot(dir.path());
    let (o, v) = run(dir.path(), &[], &p);
    match o.status.code() {
        Some(0) => Ok((read(dir.path(), "f.txt"), v)),
        Some(1) => {
            assert_eq!(snapshot(dir.path()), before, "a refusal changed the file");
            Err(v["error"].clone())
        }
        c => panic!("exit {c:?}: {v}"),
    }
}

fn exact(text: &str, old: &str, new: &str) -> String {
    edit(text, old, new, json!({})).unwrap_or_else(|e| panic!("refused: {e}")).0
}

fn tolerant(text: &str, old: &str, new: &str) -> Result<(String, Value), Value> {
    edit(text, old, new, json!({"match": "tolerant"}))
}

// Line breaks. OpenCode and Gemini CLI write a new_string's line breaks in the file's style and match
// an old_string's whatever style it has; Copilot Chat and Roo Code keep a CRLF file CRLF. The rule is
// stated once in docs/compatibility.md ("Line breaks").

#[test]
fn an_lf_file_stays_lf_whatever_style_the_plan_writes() {
    let text = "north\nsouth\neast\n";
    // The plan's breaks as CRLF, in old_string and new_string alike.
    let (after, v) = edit(text, "north\r\nsouth", "north\r\nmiddle\r\nsouth", json!({})).unwrap();
    assert_eq!(after, "north\nmiddle\nsouth\neast\n");
    assert_eq!(v["files"][0]["line_breaks"], "lf", "{v}");
    assert!(v["message"].as_str().unwrap().ends_with("\nLine breaks written as LF (\\n), the file's line breaks."), "{v}");
    // Only new_string in CRLF.
    assert_eq!(exact(text, "south\neast", "south\r\nwest"), "north\nsouth\nwest\n");
    // Each string mixing both styles.
    assert_eq!(exact(text, "north\r\nsouth\neast", "north\nsouth\r\nup"), "north\nsouth\nup\n");
}

#[test]
fn a_crlf_file_stays_crlf_whatever_style_the_plan_writes() {
    let text = "north\r\nsouth\r\neast\r\n";
    let (after, v) = edit(text, "north\nsouth", "north\nsouth-west", json!({})).unwrap();
    assert_eq!(after, "north\r\nsouth-west\r\neast\r\n");
    // Only the changed word was replaced: no line break was written, so none was converted.
    assert_eq!(v["files"][0].get("line_breaks"), None, "{v}");
    let (after, v) = edit(text, "south", "south\nsouth-east", json!({})).unwrap();
    assert_eq!(after, "north\r\nsouth\r\nsouth-east\r\neast\r\n");
    assert_eq!(v["files"][0]["line_breaks"], "crlf", "{v}");
    assert_eq!(exact(text, "north\r\nsouth", "north\nsouth\r\nmiddle"), "north\r\nsouth\r\nmiddle\r\neast\r\n");
    // A plan already in the file's style converts nothing and says nothing about it.
    let (after, v) = edit(text, "east", "east\r\nwest", json!({})).unwrap();
    assert_eq!(after, "north\r\nsouth\r\neast\r\nwest\r\n");
    assert_eq!(v["files"][0].get("line_breaks"), None, "{v}");
}

#[test]
fn in_a_mixed_file_each_line_break_takes_the_style_of_the_nearest() {
    let text = "dos one\r\ndos two\r\nunix one\nunix two\n";
    let (after, v) = edit(text, "dos one", "dos one\nadded", json!({})).unwrap();
    assert_eq!(after, "dos one\r\nadded\r\ndos two\r\nunix one\nunix two\n");
    assert_eq!(v["files"][0]["line_breaks"], "nearest", "{v}");
    assert_eq!(exact(text, "unix one", "unix one\r\nadded"), "dos one\r\ndos two\r\nunix one\nadded\nunix two\n");
}

#[test]
fn replace_all_over_blocks_keeps_each_files_style() {
    assert_eq!(
        edit("k = 1\nv = 2\nk = 1\nv = 2\n", "k = 1\r\nv = 2", "k = 1\r\nv = 3", json!({})).map(|_| ()).unwrap_err()["kind"],
        "ambiguous"
    );
    let dir = folder(&[("lf.txt", "k = 1\nv = 2\nk = 1\nv = 2\n"), ("crlf.txt", "k = 1\r\nv = 2\r\nk = 1\r\nv = 2\r\n")]);
    let files: Vec<Value> = ["lf.txt", "crlf.txt"]
        .iter()
        .zip(["k = 1\r\nv = 2", "k = 1\nv = 2"])
        .map(|(f, old)| json!({"file_path": dir.path().join(f), "edits": [{"old_string": old, "new_string": old.replace('2', "3").replace("v = 3", "v = 3\nw = 4"), "replace_all": true}]}))
        .collect();
    applied(dir.path(), &[], &json!({"files": files}).to_string());
    assert_eq!(read(dir.path(), "lf.txt"), "k = 1\nv = 3\nw = 4\nk = 1\nv = 3\nw = 4\n");
    assert_eq!(read(dir.path(), "crlf.txt"), "k = 1\r\nv = 3\r\nw = 4\r\nk = 1\r\nv = 3\r\nw = 4\r\n");
}

#[test]
fn a_new_file_is_written_with_the_line_breaks_the_plan_gives_it() {
    let dir = folder(&[]);
    let v = applied(dir.path(), &[], &plan(dir.path(), "made.txt", &[("", "first\r\nsecond\r\n")], json!({})));
    assert_eq!(read(dir.path(), "made.txt"), "first\r\nsecond\r\n");
    assert_eq!(v["files"][0].get("line_breaks"), None, "a new file has no style to convert to: {v}");
    // Later edits of the same plan take the style the file was created with.
    applied(dir.path(), &[], &json!({"file_path": dir.path().join("next.txt"), "edits": [
        {"old_string": "", "new_string": "a\r\nb\r\n"}, {"old_string": "b", "new_string": "b\nc"}]}).to_string());
    assert_eq!(read(dir.path(), "next.txt"), "a\r\nb\r\nc\r\n");
}

#[test]
fn a_diff_that_carries_carriage_returns_is_taken_byte_for_byte() {
    // git apply's meaning: a hunk whose lines end in \r changes the line breaks it shows.
    let dir = folder(&[("w.txt", "one\ntwo\n")]);
    let diff = "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n-one\n-two\n+one\r\n+two\r\n";
    let v = applied(dir.path(), &[], diff);
    assert_eq!(read(dir.path(), "w.txt"), "one\r\ntwo\r\n");
    assert_eq!(v["files"][0].get("line_breaks"), None, "converted as the diff says, not by multiedit: {v}");
    // A diff without \r on a CRLF file keeps the file CRLF, and says so.
    let dir = folder(&[("w.txt", "one\r\ntwo\r\n")]);
    let v = applied(dir.path(), &[], "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n");
    assert_eq!(read(dir.path(), "w.txt"), "one\r\ntwo\r\nthree\r\n");
    assert_eq!(v["files"][0]["line_breaks"], "crlf", "{v}");
}

#[test]
fn blocks_written_with_crlf_edit_an_lf_file_in_its_own_style() {
    let dir = folder(&[("s.py", "def f():\n    return 1\n")]);
    let blocks = "s.py\r\n<<<<<<< SEARCH\r\n    return 1\r\n=======\r\n    x = 2\r\n    return x\r\n>>>>>>> REPLACE\r\n";
    let v = applied(dir.path(), &[], blocks);
    assert_eq!(read(dir.path(), "s.py"), "def f():\n    x = 2\n    return x\n");
    assert_eq!(v["files"][0]["line_breaks"], "lf", "{v}");
}

#[test]
fn line_breaks_of_either_style_still_only_match_what_the_file_has() {
    let dir = folder(&[("f.txt", "north\nsouth\n")]);
    let e = refused(dir.path(), &[], &plan(dir.path(), "f.txt", &[("north\r\nwest", "x")], json!({})));
    assert_eq!(e["kind"], "not_found");
    assert_eq!(e["hint"], "The closest text is at lines 1-2 and differs in its words: line 2 has \"south\" where old_string has \"west\". The file has there:\nnorth\nsouth");
    // Tolerant tiers see the breaks the same way: trailing blanks before a CRLF break are trailing
    // whitespace, and the kept line is the file's own.
    let (after, v) = tolerant("north  \nsouth\n", "north\r\nsouth", "north\r\nsouth\r\neast").unwrap();
    assert_eq!(after, "north  \nsouth\neast\n");
    assert_eq!(v["files"][0]["tiers"], json!([{"edit_index": 0, "tier": "line_trimmed"}]));
    assert_eq!(v["files"][0]["line_breaks"], "lf");
}
