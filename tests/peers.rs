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

// Tolerant matching (`"match": "tolerant"`, `--match tolerant`). Gemini CLI, Roo Code and Copilot Chat
// give back the indentation a SEARCH or an old_string lacks, and take lines whose trailing blanks
// differ; each adaptation multiedit cannot know the amount of is refused, with a hint that says why.

/// The hint of a tolerant refusal that says why the adaptation is not certain.
fn unsure(text: &str, old: &str, new: &str) -> String {
    let e = tolerant(text, old, new).expect_err("a guess must be refused");
    assert_eq!(e["kind"], "not_found", "{e}");
    e["hint"].as_str().unwrap().to_string()
}

#[test]
fn an_old_string_lacking_the_files_indentation_gets_it_back_when_new_string_lacks_it_too() {
    // Both strings written from column 0 for a block indented four spaces.
    let (after, v) = tolerant("    if (ready) {\n        go();\n    }\n", "if (ready) {\n    go();\n}", "if (ready) {\n    stop();\n}").unwrap();
    assert_eq!(after, "    if (ready) {\n        stop();\n    }\n");
    assert_eq!(v["files"][0]["tiers"], json!([{"edit_index": 0, "tier": "indentation"}]));
    assert!(v["message"].as_str().unwrap().ends_with("(matched ignoring indentation)"), "{v}");
    // Two lines at one depth: the depth is given back to each, and the line after is untouched.
    assert_eq!(tolerant("  first\n  second\n  third\n", "first\nsecond", "first-b\nsecond-b").unwrap().0, "  first-b\n  second-b\n  third\n");
}

#[test]
fn a_new_string_already_at_the_files_depth_while_old_string_is_not_is_refused() {
    // old_string lacks the file's two spaces, new_string has them: two spaces more, or none?
    let text = "  // header\n\n  render() {}\n";
    assert_eq!(
        unsure(text, "\nrender() {}", "\n  paint() {}"),
        "Matching ignoring indentation, old_string is at lines 2-3, but old_string's lines start at column 0 and new_string's at 2 spaces, while the file's are at 2 spaces there: whether new_string is indented as old_string is (and moves with it to the file's depth) or already as the file is cannot be known. Write old_string exactly as the file has it there, and new_string as it is to be written."
    );
    // old_string deeper than the file, new_string keeping a line at the file's depth.
    assert_eq!(
        unsure("  a();\n  b();\n", "    a();\n    b();", "  a();\n  c();"),
        "Matching ignoring indentation, old_string is at lines 1-2, but new_string has the line \"a();\" at 2 spaces where old_string has it at 4 spaces and the file at 2 spaces: whether new_string is indented as old_string is (and moves with it to the file's depth) or already as the file is cannot be known. Write old_string exactly as the file has it there, and new_string as it is to be written."
    );
}

#[test]
fn lines_whose_depths_do_not_follow_the_files_are_refused_not_flattened() {
    // The file has the two lines at different depths, old_string at one: Gemini CLI writes both
    // replacement lines at the first line's depth; which depth each was meant to have cannot be known.
    assert_eq!(
        unsure("  hello\n    world\n", "hello\nworld", "goodbye\nmoon"),
        "Matching ignoring indentation, old_string is at lines 1-2, but the file's lines do not keep the depths old_string's lines have relative to each other, so no re-indentation maps every line. Write old_string exactly as the file has it there, and new_string as it is to be written."
    );
    // Roo Code's SEARCH whose first line lost its indentation and whose other lines kept theirs.
    let text = "class Box {\n    open() {\n        this.lid = 1;\n    }\n}\n";
    let hint = unsure(text, "class Box {\n        open() {\n            this.lid = 1;\n        }", "class Box {\n        open() {\n            this.lid = 2;\n        }");
    assert!(hint.contains("the file's lines do not keep the depths"), "{hint}");
}

#[test]
fn tabs_for_spaces_need_the_files_own_unit_for_a_depth_old_string_does_not_show() {
    // The file rises by two spaces; the plan's tab stands for four (lines 3-4): a line one tab deeper
    // is 6 spaces in the file's unit or 8 in the plan's.
    assert_eq!(
        unsure("x\n  y\n    a\n    b\n", "\ta\n\tb", "\ta\n\t\tc"),
        "Matching ignoring indentation, old_string is at lines 3-4, but new_string writes a depth old_string does not show, in tabs where the file has spaces or spaces where it has tabs, and the file's lines rise by 2, so how many spaces make a level (4 by old_string's lines) cannot be known. Write old_string exactly as the file has it there, and new_string as it is to be written."
    );
    // A file that rises by four: one tab more is four spaces more.
    assert_eq!(tolerant("x\n    y\n    a\n    b\n", "\ta\n\tb", "\ta\n\tb\n\tc").unwrap().0, "x\n    y\n    a\n    b\n    c\n");
    // At the depths old_string shows, the unit is not needed.
    assert_eq!(tolerant("    a\n    b\n", "\ta\n\tb", "\ta\n\tc").unwrap().0, "    a\n    c\n");
}

#[test]
fn a_file_mixing_tabs_and_spaces_is_refused_where_copilot_guesses() {
    let text = "function f() {\n  \tlog(\"a\");\n\treturn 1;\n\n}\n";
    let hint = unsure(text, "log(\"a\");\nreturn 1;\n", "log(\"b\");\nreturn 2;\n");
    assert!(hint.contains("the file indents with tabs and with spaces alike, so which to write cannot be known"), "{hint}");
}

#[test]
fn trailing_blanks_are_matched_and_the_kept_lines_are_the_files() {
    // Copilot Chat: lines equal but for trailing blanks.
    assert_eq!(tolerant("if (ok) {\n\treturn 1; \n}\n", "if (ok) {\n\treturn 1;\n}", "if (ok) {\n\treturn 0;\n}").unwrap().0, "if (ok) {\n\treturn 0;\n}\n");
    assert_eq!(tolerant("alpha   \nbeta\ngamma\n", "alpha\nbeta", "one\ntwo").unwrap().0, "one\ntwo\ngamma\n");
}

#[test]
fn a_word_that_differs_is_refused_with_the_word_named_not_matched_by_similarity() {
    // Gemini CLI, Roo Code and Copilot Chat apply an old_string that is 90% like the file's text; which
    // of the file's words the edit meant to keep cannot be known.
    let e = tolerant("const results = fetch();\nreturn results.length;\n", "const result = fetch();\nreturn results.length;", "const data = fetch();\nreturn data.length;").unwrap_err();
    assert_eq!(e["kind"], "not_found");
    assert_eq!(e["hint"], "The closest text is at lines 1-2 and differs in its words: line 1 has \"results\" where old_string has \"result\". The file has there:\nconst results = fetch();\nreturn results.length;");
    // Spacing inside a line is a difference too: the edit's own lines could depend on it.
    let e = tolerant("  let  total = a +  b;\n", "let total = a + b;", "let total = a + b + c;").unwrap_err();
    assert!(e["hint"].as_str().unwrap().contains("differs in spacing inside a line"), "{e}");
}

#[test]
fn the_last_line_of_a_file_without_a_final_newline_takes_the_tolerant_tiers_too() {
    // Roo Code: a SEARCH lacking the file's leading tab, on the file's last lines (no newline after).
    let dir = folder(&[("t.js", "\tfunction test() {\n\t\treturn true;\n\t}")]);
    let blocks = "t.js\n<<<<<<< SEARCH\nfunction test() {\n\treturn true;\n}\n=======\nfunction test() {\n\t// note\n\treturn false;\n}\n>>>>>>> REPLACE\n";
    let v = applied(dir.path(), &["--match", "tolerant"], blocks);
    assert_eq!(read(dir.path(), "t.js"), "\tfunction test() {\n\t\t// note\n\t\treturn false;\n\t}");
    assert_eq!(v["files"][0]["tiers"], json!([{"edit_index": 0, "tier": "indentation"}]));
    // Indented deeper than the file, last line without newline.
    let dir = folder(&[("p.py", "def f():\n    return 1")]);
    applied(dir.path(), &["--match", "tolerant"], "p.py\n<<<<<<< SEARCH\n        return 1\n=======\n        return 2\n>>>>>>> REPLACE\n");
    assert_eq!(read(dir.path(), "p.py"), "def f():\n    return 2");
    // Exact mode refuses the same blocks, the file unchanged.
    let dir = folder(&[("p.py", "def f():\n    return 1")]);
    let e = refused(dir.path(), &[], "p.py\n<<<<<<< SEARCH\n        return 1\n=======\n        return 2\n>>>>>>> REPLACE\n");
    assert_eq!(e["kind"], "not_found");
}
