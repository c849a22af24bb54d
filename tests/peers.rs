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
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
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
    let edits: Vec<Value> = edits
        .iter()
        .map(|(o, n)| json!({"old_string": o, "new_string": n}))
        .collect();
    let mut p = json!({"file_path": dir.join(name), "edits": edits});
    if let (Value::Object(p), Value::Object(extra)) = (&mut p, extra) {
        p.extend(extra);
    }
    p.to_string()
}

/// Runs `input` on `dir`: the text of its file `name` after it and the result, or the refusal (every
/// file then checked unchanged).
fn outcome(dir: &Path, args: &[&str], input: &str, name: &str) -> Result<(String, Value), Value> {
    let before = snapshot(dir);
    let (o, v) = run(dir, args, input);
    match o.status.code() {
        Some(0) => Ok((read(dir, name), v)),
        Some(1) => {
            assert_eq!(snapshot(dir), before, "a refusal changed a file");
            Err(v["error"].clone())
        }
        c => panic!("exit {c:?}: {v}"),
    }
}

/// One edit of `text` in a file of its own: the file's text after it, or the refusal.
fn edit(text: &str, old: &str, new: &str, extra: Value) -> Result<(String, Value), Value> {
    let dir = folder(&[("f.txt", text)]);
    outcome(
        dir.path(),
        &[],
        &plan(dir.path(), "f.txt", &[(old, new)], extra),
        "f.txt",
    )
}

fn exact(text: &str, old: &str, new: &str) -> String {
    edit(text, old, new, json!({}))
        .unwrap_or_else(|e| panic!("refused: {e}"))
        .0
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
    let (after, v) = edit(
        text,
        "north\r\nsouth",
        "north\r\nmiddle\r\nsouth",
        json!({}),
    )
    .unwrap();
    assert_eq!(after, "north\nmiddle\nsouth\neast\n");
    assert_eq!(v["files"][0]["line_breaks"], "lf", "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .ends_with("\nLine breaks written as LF (\\n), the file's line breaks."),
        "{v}"
    );
    // Only new_string in CRLF.
    assert_eq!(
        exact(text, "south\neast", "south\r\nwest"),
        "north\nsouth\nwest\n"
    );
    // Each string mixing both styles.
    assert_eq!(
        exact(text, "north\r\nsouth\neast", "north\nsouth\r\nup"),
        "north\nsouth\nup\n"
    );
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
    assert_eq!(
        exact(text, "north\r\nsouth", "north\nsouth\r\nmiddle"),
        "north\r\nsouth\r\nmiddle\r\neast\r\n"
    );
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
    assert_eq!(
        exact(text, "unix one", "unix one\r\nadded"),
        "dos one\r\ndos two\r\nunix one\nadded\nunix two\n"
    );
}

#[test]
fn replace_all_over_blocks_keeps_each_files_style() {
    assert_eq!(
        edit(
            "k = 1\nv = 2\nk = 1\nv = 2\n",
            "k = 1\r\nv = 2",
            "k = 1\r\nv = 3",
            json!({})
        )
        .map(|_| ())
        .unwrap_err()["kind"],
        "ambiguous"
    );
    let dir = folder(&[
        ("lf.txt", "k = 1\nv = 2\nk = 1\nv = 2\n"),
        ("crlf.txt", "k = 1\r\nv = 2\r\nk = 1\r\nv = 2\r\n"),
    ]);
    let files: Vec<Value> = ["lf.txt", "crlf.txt"]
        .iter()
        .zip(["k = 1\r\nv = 2", "k = 1\nv = 2"])
        .map(|(f, old)| json!({"file_path": dir.path().join(f), "edits": [{"old_string": old, "new_string": old.replace('2', "3").replace("v = 3", "v = 3\nw = 4"), "replace_all": true}]}))
        .collect();
    applied(dir.path(), &[], &json!({"files": files}).to_string());
    assert_eq!(
        read(dir.path(), "lf.txt"),
        "k = 1\nv = 3\nw = 4\nk = 1\nv = 3\nw = 4\n"
    );
    assert_eq!(
        read(dir.path(), "crlf.txt"),
        "k = 1\r\nv = 3\r\nw = 4\r\nk = 1\r\nv = 3\r\nw = 4\r\n"
    );
}

#[test]
fn a_new_file_is_written_with_the_line_breaks_the_plan_gives_it() {
    let dir = folder(&[]);
    let v = applied(
        dir.path(),
        &[],
        &plan(
            dir.path(),
            "made.txt",
            &[("", "first\r\nsecond\r\n")],
            json!({}),
        ),
    );
    assert_eq!(read(dir.path(), "made.txt"), "first\r\nsecond\r\n");
    assert_eq!(
        v["files"][0].get("line_breaks"),
        None,
        "a new file has no style to convert to: {v}"
    );
    // Later edits of the same plan take the style the file was created with.
    applied(
        dir.path(),
        &[],
        &json!({"file_path": dir.path().join("next.txt"), "edits": [
        {"old_string": "", "new_string": "a\r\nb\r\n"}, {"old_string": "b", "new_string": "b\nc"}]})
        .to_string(),
    );
    assert_eq!(read(dir.path(), "next.txt"), "a\r\nb\r\nc\r\n");
}

#[test]
fn a_diff_that_carries_carriage_returns_is_taken_byte_for_byte() {
    // git apply's meaning: a hunk whose lines end in \r changes the line breaks it shows.
    let dir = folder(&[("w.txt", "one\ntwo\n")]);
    let diff = "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n-one\n-two\n+one\r\n+two\r\n";
    let v = applied(dir.path(), &[], diff);
    assert_eq!(read(dir.path(), "w.txt"), "one\r\ntwo\r\n");
    assert_eq!(
        v["files"][0].get("line_breaks"),
        None,
        "converted as the diff says, not by multiedit: {v}"
    );
    // A diff without \r on a CRLF file keeps the file CRLF, and says so.
    let dir = folder(&[("w.txt", "one\r\ntwo\r\n")]);
    let v = applied(
        dir.path(),
        &[],
        "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n",
    );
    assert_eq!(read(dir.path(), "w.txt"), "one\r\ntwo\r\nthree\r\n");
    assert_eq!(v["files"][0]["line_breaks"], "crlf", "{v}");
}

#[test]
fn blocks_written_with_crlf_edit_an_lf_file_in_its_own_style() {
    let dir = folder(&[("s.py", "def f():\n    return 1\n")]);
    let blocks = "s.py\r\n<<<<<<< SEARCH\r\n    return 1\r\n=======\r\n    x = 2\r\n    return x\r\n>>>>>>> REPLACE\r\n";
    let v = applied(dir.path(), &[], blocks);
    assert_eq!(
        read(dir.path(), "s.py"),
        "def f():\n    x = 2\n    return x\n"
    );
    assert_eq!(v["files"][0]["line_breaks"], "lf", "{v}");
}

#[test]
fn line_breaks_of_either_style_still_only_match_what_the_file_has() {
    let dir = folder(&[("f.txt", "north\nsouth\n")]);
    let e = refused(
        dir.path(),
        &[],
        &plan(dir.path(), "f.txt", &[("north\r\nwest", "x")], json!({})),
    );
    assert_eq!(e["kind"], "not_found");
    assert_eq!(e["hint"], "The closest text is at lines 1-2 and differs in its words: line 2 has \"south\" where old_string has \"west\". The file has there:\nnorth\nsouth");
    // Tolerant tiers see the breaks the same way: trailing blanks before a CRLF break are trailing
    // whitespace, and the kept line is the file's own.
    let (after, v) = tolerant(
        "north  \nsouth\n",
        "north\r\nsouth",
        "north\r\nsouth\r\neast",
    )
    .unwrap();
    assert_eq!(after, "north  \nsouth\neast\n");
    assert_eq!(
        v["files"][0]["tiers"],
        json!([{"edit_index": 0, "tier": "line_trimmed"}])
    );
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
    let (after, v) = tolerant(
        "    if (ready) {\n        go();\n    }\n",
        "if (ready) {\n    go();\n}",
        "if (ready) {\n    stop();\n}",
    )
    .unwrap();
    assert_eq!(after, "    if (ready) {\n        stop();\n    }\n");
    assert_eq!(
        v["files"][0]["tiers"],
        json!([{"edit_index": 0, "tier": "indentation"}])
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .ends_with("(matched ignoring indentation)"),
        "{v}"
    );
    // Two lines at one depth: the depth is given back to each, and the line after is untouched.
    assert_eq!(
        tolerant(
            "  first\n  second\n  third\n",
            "first\nsecond",
            "first-b\nsecond-b"
        )
        .unwrap()
        .0,
        "  first-b\n  second-b\n  third\n"
    );
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
    let hint = unsure(
        text,
        "class Box {\n        open() {\n            this.lid = 1;\n        }",
        "class Box {\n        open() {\n            this.lid = 2;\n        }",
    );
    assert!(
        hint.contains("the file's lines do not keep the depths"),
        "{hint}"
    );
}

#[test]
fn tabs_for_spaces_need_the_files_own_unit_for_a_depth_old_string_does_not_show() {
    // The file rises by two spaces; the plan's tab stands for four (lines 3-4): a line one tab deeper
    // is 6 spaces in the file's unit or 8 in the plan's.
    assert_eq!(
        unsure("x\n  y\n    a\n    b\n", "\ta\n\tb", "\ta\n\t\tc"),
        "Matching ignoring indentation, old_string is at lines 3-4, but new_string writes a depth old_string does not show, in tabs where the file has spaces, and the file's lines rise by 2, so how many spaces make a level (4 by old_string's lines) cannot be known. Write old_string exactly as the file has it there, and new_string as it is to be written."
    );
    // A file that rises by four: one tab more is four spaces more.
    assert_eq!(
        tolerant("x\n    y\n    a\n    b\n", "\ta\n\tb", "\ta\n\tb\n\tc")
            .unwrap()
            .0,
        "x\n    y\n    a\n    b\n    c\n"
    );
    // At the depths old_string shows, the unit is not needed.
    assert_eq!(
        tolerant("    a\n    b\n", "\ta\n\tb", "\ta\n\tc")
            .unwrap()
            .0,
        "    a\n    c\n"
    );
}

#[test]
fn a_file_mixing_tabs_and_spaces_is_refused_where_copilot_guesses() {
    let text = "function f() {\n  \tlog(\"a\");\n\treturn 1;\n\n}\n";
    let hint = unsure(text, "log(\"a\");\nreturn 1;\n", "log(\"b\");\nreturn 2;\n");
    assert!(
        hint.contains(
            "the file indents with tabs and with spaces alike, so which to write cannot be known"
        ),
        "{hint}"
    );
}

#[test]
fn trailing_blanks_are_matched_and_the_kept_lines_are_the_files() {
    // Copilot Chat: lines equal but for trailing blanks.
    assert_eq!(
        tolerant(
            "if (ok) {\n\treturn 1; \n}\n",
            "if (ok) {\n\treturn 1;\n}",
            "if (ok) {\n\treturn 0;\n}"
        )
        .unwrap()
        .0,
        "if (ok) {\n\treturn 0;\n}\n"
    );
    assert_eq!(
        tolerant("alpha   \nbeta\ngamma\n", "alpha\nbeta", "one\ntwo")
            .unwrap()
            .0,
        "one\ntwo\ngamma\n"
    );
}

#[test]
fn a_word_that_differs_is_refused_with_the_word_named_not_matched_by_similarity() {
    // Gemini CLI, Roo Code and Copilot Chat apply an old_string that is 90% like the file's text; which
    // of the file's words the edit meant to keep cannot be known.
    let e = tolerant(
        "const results = fetch();\nreturn results.length;\n",
        "const result = fetch();\nreturn results.length;",
        "const data = fetch();\nreturn data.length;",
    )
    .unwrap_err();
    assert_eq!(e["kind"], "not_found");
    assert_eq!(e["hint"], "The closest text is at lines 1-2 and differs in its words: line 1 has \"results\" where old_string has \"result\". The file has there:\nconst results = fetch();\nreturn results.length;");
    // Spacing inside a line is a difference too: the edit's own lines could depend on it.
    let e = tolerant(
        "  let  total = a +  b;\n",
        "let total = a + b;",
        "let total = a + b + c;",
    )
    .unwrap_err();
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("differs in spacing inside a line"),
        "{e}"
    );
}

#[test]
fn the_last_line_of_a_file_without_a_final_newline_takes_the_tolerant_tiers_too() {
    // Roo Code: a SEARCH lacking the file's leading tab, on the file's last lines (no newline after).
    let dir = folder(&[("t.js", "\tfunction test() {\n\t\treturn true;\n\t}")]);
    let blocks = "t.js\n<<<<<<< SEARCH\nfunction test() {\n\treturn true;\n}\n=======\nfunction test() {\n\t// note\n\treturn false;\n}\n>>>>>>> REPLACE\n";
    let v = applied(dir.path(), &["--match", "tolerant"], blocks);
    assert_eq!(
        read(dir.path(), "t.js"),
        "\tfunction test() {\n\t\t// note\n\t\treturn false;\n\t}"
    );
    assert_eq!(
        v["files"][0]["tiers"],
        json!([{"edit_index": 0, "tier": "indentation"}])
    );
    // Indented deeper than the file, last line without newline.
    let dir = folder(&[("p.py", "def f():\n    return 1")]);
    applied(
        dir.path(),
        &["--match", "tolerant"],
        "p.py\n<<<<<<< SEARCH\n        return 1\n=======\n        return 2\n>>>>>>> REPLACE\n",
    );
    assert_eq!(read(dir.path(), "p.py"), "def f():\n    return 2");
    // Exact mode refuses the same blocks, the file unchanged.
    let dir = folder(&[("p.py", "def f():\n    return 1")]);
    let e = refused(
        dir.path(),
        &[],
        "p.py\n<<<<<<< SEARCH\n        return 1\n=======\n        return 2\n>>>>>>> REPLACE\n",
    );
    assert_eq!(e["kind"], "not_found");
}

// Roo Code's SEARCH/REPLACE blocks, as its apply_diff prompt defines them: the path beside the blocks
// (`--file-path` here, `file_path` beside the patch in the MCP tool), `:start_line:` (and `:end_line:`)
// then `-------` after `<<<<<<< SEARCH`, marker lines in content escaped with a backslash.

/// Blocks for one file named by `--file-path`: the file's text after them.
fn roo(text: &str, blocks: &str, args: &[&str]) -> Result<(String, Value), Value> {
    let dir = folder(&[("src/view.ts", text)]);
    outcome(
        dir.path(),
        &[&["--file-path", "src/view.ts"], args].concat(),
        blocks,
        "src/view.ts",
    )
}

/// A Roo Code block: its start line, the lines to find and their replacement.
fn block(start: usize, search: &str, replace: &str) -> String {
    format!(
        "<<<<<<< SEARCH\n:start_line:{start}\n-------\n{search}=======\n{replace}>>>>>>> REPLACE\n"
    )
}

const SHAPES: &str =
    "function area(r) {\n    return 3 * r * r;\n}\n\nfunction side(a) {\n    return a;\n}\n";

#[test]
fn roo_blocks_with_start_lines_apply_and_their_headers_are_not_text() {
    let blocks = block(
        2,
        "    return 3 * r * r;\n",
        "    return Math.PI * r * r;\n",
    ) + &block(5, "function side(a) {\n", "function side(a, b) {\n");
    let (after, v) = roo(SHAPES, &blocks, &[]).unwrap();
    assert_eq!(after, "function area(r) {\n    return Math.PI * r * r;\n}\n\nfunction side(a, b) {\n    return a;\n}\n");
    assert_eq!(v["files"][0]["edits_applied"], 2);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("1. Applied SEARCH/REPLACE block 1 (src/view.ts, start line 2)"),
        "{v}"
    );
    // `:end_line:` may follow the start line; `<<<<<<< SEARCH>` (a stray angle Roo Code accepts) too.
    let blocks = "<<<<<<< SEARCH>\n:start_line:1\n:end_line:1\n-------\nfunction area(r) {\n=======\nfunction area(radius) {\n>>>>>>> REPLACE\n";
    assert_eq!(
        roo(SHAPES, blocks, &[]).unwrap().0,
        SHAPES.replacen("area(r)", "area(radius)", 1)
    );
}

#[test]
fn roo_blocks_are_detected_apart_from_aiders_and_clines() {
    // No path line, no fence: only the request names the file, and detection still finds blocks.
    let blocks = block(6, "    return a;\n", "    return a + b;\n");
    assert_eq!(
        multiedit::formats::flavor(&blocks),
        Some(multiedit::formats::Flavor::Roo)
    );
    assert_eq!(
        roo(SHAPES, &blocks, &[]).unwrap().0,
        SHAPES.replace("return a;", "return a + b;")
    );
    // The same change as Aider and Cline write it.
    let aider =
        "src/view.ts\n<<<<<<< SEARCH\n    return a;\n=======\n    return a + b;\n>>>>>>> REPLACE\n";
    let cline =
        "src/view.ts\n------- SEARCH\n    return a;\n=======\n    return a + b;\n+++++++ REPLACE\n";
    assert_eq!(
        multiedit::formats::flavor(aider),
        Some(multiedit::formats::Flavor::Aider)
    );
    assert_eq!(
        multiedit::formats::flavor(cline),
        Some(multiedit::formats::Flavor::Cline)
    );
    for text in [aider, cline] {
        let dir = folder(&[("src/view.ts", SHAPES)]);
        applied(dir.path(), &[], text);
        assert_eq!(
            read(dir.path(), "src/view.ts"),
            SHAPES.replace("return a;", "return a + b;")
        );
    }
}

#[test]
fn of_several_equal_places_the_one_nearest_the_start_line_wins_and_a_tie_is_refused() {
    let text =
        "fn one() {\n    go();\n}\n\nfn two() {\n    go();\n}\n\nfn three() {\n    go();\n}\n";
    // Lines 2, 6 and 10 hold the same line; a start line of 9 picks line 10.
    let (after, v) = roo(text, &block(9, "    go();\n", "    stop();\n"), &[]).unwrap();
    assert_eq!(
        after,
        "fn one() {\n    go();\n}\n\nfn two() {\n    go();\n}\n\nfn three() {\n    stop();\n}\n"
    );
    assert_eq!(
        v["files"][0]["offsets"],
        json!([{"edit_index": 0, "hunk": "SEARCH/REPLACE block 1 (src/view.ts, start line 9)", "line": 10, "offset": 1}])
    );
    // A start line of 4 is two lines from line 2 and from line 6: refused, both named.
    let e = roo(text, &block(4, "    go();\n", "    stop();\n"), &[]).unwrap_err();
    assert_eq!(e["kind"], "ambiguous");
    assert_eq!(e["message"], "SEARCH/REPLACE block 1 (src/view.ts, start line 4) matches lines 2 and 6, both 2 lines from line 4 where it is expected: add context lines to the hunk so that it matches one place.\nLines:\n    go();\n");
    // Without a start line (Roo Code searches from the middle out), several places are refused.
    let e = roo(
        text,
        "<<<<<<< SEARCH\n    go();\n=======\n    stop();\n>>>>>>> REPLACE\n",
        &[],
    )
    .unwrap_err();
    assert_eq!(e["message"], "SEARCH/REPLACE block 1 (src/view.ts) matches 3 places (lines 2, 6, 10): add lines around the change so that it matches one place.\nLines:\n    go();\n");
}

#[test]
fn a_start_line_a_little_off_still_finds_the_one_place_and_one_far_off_is_refused() {
    let mut text = String::new();
    for i in 1..=120 {
        text.push_str(&format!("line {i}\n"));
    }
    // Three lines off, and past the end of a short file.
    assert!(roo(&text, &block(47, "line 50\n", "line fifty\n"), &[])
        .unwrap()
        .0
        .contains("line 49\nline fifty\nline 51\n"));
    assert_eq!(
        roo("a\nb\nc\n", &block(5, "c\n", "C\n"), &[]).unwrap().0,
        "a\nb\nC\n"
    );
    // Roo Code looks no further than 40 lines from the start line.
    let e = roo(&text, &block(10, "line 100\n", "line hundred\n"), &[]).unwrap_err();
    assert_eq!(e["kind"], "not_found");
    assert_eq!(e["message"], "SEARCH/REPLACE block 1 (src/view.ts, start line 10) does not apply: its lines are at line 100, 90 lines from line 10 where its start line puts them, and a block is looked for within 40 lines of its start line: correct the start line.\nLines:\nline 100\n");
    assert_eq!(
        roo("a\nb\nc\n", &block(1000, "c\n", "C\n"), &[]).unwrap_err()["kind"],
        "not_found"
    );
}

#[test]
fn start_lines_count_in_the_file_as_the_model_read_it() {
    // The first block adds two lines above the second block's text: its start line still counts in
    // the file as it was, as Roo Code counts it.
    let text = "a\nb\nc\nd\ne\nx\ny\nx\n";
    let blocks = block(1, "a\n", "a\na1\na2\n") + &block(8, "x\n", "X\n");
    assert_eq!(
        roo(text, &blocks, &[]).unwrap().0,
        "a\na1\na2\nb\nc\nd\ne\nx\ny\nX\n"
    );
}

#[test]
fn roo_escaped_markers_find_and_write_conflict_markers() {
    let text = "keep\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> feature\nend\n";
    let blocks = "<<<<<<< SEARCH\n:start_line:2\n-------\n\\<<<<<<< HEAD\nmine\n\\=======\ntheirs\n\\>>>>>>> feature\n=======\nmine and theirs\n>>>>>>> REPLACE\n";
    assert_eq!(
        roo(text, blocks, &[]).unwrap().0,
        "keep\nmine and theirs\nend\n"
    );
    // And written into the file: the escaped lines are content, unescaped.
    let blocks = "<<<<<<< SEARCH\n:start_line:1\n-------\nkeep\n=======\nkeep\n\\-------\n\\:start_line:7\n>>>>>>> REPLACE\n";
    assert!(roo(text, blocks, &[])
        .unwrap()
        .0
        .starts_with("keep\n-------\n:start_line:7\n<<<<<<< HEAD\n"));
}

#[test]
fn roo_line_numbers_in_search_are_taken_off_and_give_the_start_line() {
    // As Roo Code's read_file shows lines; the replacement numbered too, or not at all.
    let text = "class Counter {\n    constructor() {\n        this.n = 0;\n    }\n}";
    let blocks = "<<<<<<< SEARCH\n1 | class Counter {\n2 |     constructor() {\n3 |         this.n = 0;\n=======\nclass Counter {\n    constructor() {\n        this.n = 1;\n>>>>>>> REPLACE\n";
    assert_eq!(
        roo(text, blocks, &[]).unwrap().0,
        "class Counter {\n    constructor() {\n        this.n = 1;\n    }\n}"
    );
    let blocks = "<<<<<<< SEARCH\n 2 |     constructor() {\n 3 |         this.n = 0;\n=======\n 2 |     constructor() {\n 3 |         this.n = 2;\n>>>>>>> REPLACE\n";
    assert_eq!(
        roo(text, blocks, &[]).unwrap().0,
        "class Counter {\n    constructor() {\n        this.n = 2;\n    }\n}"
    );
    // A table's own bars are kept.
    assert_eq!(
        roo(
            "|a|b|\n|1|2|\n",
            "<<<<<<< SEARCH\n2 | |1|2|\n=======\n2 | |1|3|\n>>>>>>> REPLACE\n",
            &[]
        )
        .unwrap()
        .0,
        "|a|b|\n|1|3|\n"
    );
    // The numbers choose between two equal places.
    let text = "fn f() {\n    ok\n}\n\nfn f() {\n    ok\n}\n";
    assert_eq!(roo(text, "<<<<<<< SEARCH\n5 | fn f() {\n6 |     ok\n=======\n5 | fn g() {\n6 |     ok\n>>>>>>> REPLACE\n", &[]).unwrap().0, "fn f() {\n    ok\n}\n\nfn g() {\n    ok\n}\n");
    // The last line of a file without a newline, numbered.
    assert_eq!(roo("one\ntwo\nthree", "<<<<<<< SEARCH\n1 | one\n2 | two\n3 | three\n=======\none\n2\nthree\n>>>>>>> REPLACE\n", &[]).unwrap().0, "one\n2\nthree");
}

#[test]
fn numbers_that_do_not_count_up_are_the_files_text_and_refused_when_it_is_not() {
    // Roo Code then strips whatever looks like a number or a bar (its "aggressive" fallback): which lines
    // were the model's numbers and which the file's text cannot be known.
    let text = "function t() {\n    return 1;\n}\n";
    let e = roo(text, "<<<<<<< SEARCH\n:start_line:1\n-------\n1 | function t() {\n    return 1;\n3 | }\n=======\nfunction t() {\n    return 2;\n}\n>>>>>>> REPLACE\n", &[]).unwrap_err();
    assert_eq!(e["kind"], "not_found");
    let e = roo(text, "<<<<<<< SEARCH\n| function t() {\n|     return 1;\n=======\nfunction t() {\n    return 2;\n>>>>>>> REPLACE\n", &[]).unwrap_err();
    assert_eq!(e["kind"], "not_found");
}

#[test]
fn roo_deletes_with_an_empty_replacement() {
    let text = "line 1\nline to go\nline 3";
    assert_eq!(
        roo(
            text,
            "<<<<<<< SEARCH\n:start_line:2\n-------\n2 | line to go\n=======\n>>>>>>> REPLACE\n",
            &[]
        )
        .unwrap()
        .0,
        "line 1\nline 3"
    );
    let text = "fn f() {\n    if x {\n        // a\n        log();\n    }\n}\n";
    assert_eq!(
        roo(text, &block(3, "        // a\n        log();\n", ""), &[])
            .unwrap()
            .0,
        "fn f() {\n    if x {\n    }\n}\n"
    );
}

#[test]
fn roo_blocks_malformed_or_misplaced_are_refused_with_the_file_unchanged() {
    let refuse = |blocks: &str| {
        roo(SHAPES, blocks, &[]).unwrap_err()["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // A start line in the replacement (Roo Code refuses it too); escaped, it is content.
    assert_eq!(
        refuse("<<<<<<< SEARCH\n    return a;\n=======\n:start_line:6\n    return b;\n>>>>>>> REPLACE\n"),
        "InputValidationError: SEARCH/REPLACE block 1: line 4 of the text (`:start_line:6`) is a start or end line in the replacement: they go right after `<<<<<<< SEARCH`; to write such a line into the file, escape it as `\\:start_line:6`"
    );
    // No divider, a divider first, no end: each refused.
    assert!(refuse("<<<<<<< SEARCH\n    return a;\n>>>>>>> REPLACE\n")
        .contains("without a `=======` line"));
    assert!(refuse("=======\n    return a;\n>>>>>>> REPLACE\n")
        .contains("is a SEARCH/REPLACE marker outside any block"));
    assert!(
        refuse("<<<<<<< SEARCH\n    return a;\n=======\n    return b;\n")
            .contains("has no `>>>>>>> REPLACE` line")
    );
    // Two angles after SEARCH is no marker: the text holds no block.
    assert!(
        refuse("<<<<<<< SEARCH>>\n    return a;\n=======\n    return b;\n>>>>>>> REPLACE\n")
            .contains("outside any block")
    );
    // The same lines to find and to write: nothing to do (Roo Code fails that block and applies the
    // rest; multiedit refuses the whole patch).
    let blocks = block(6, "    return a;\n", "    return a;\n")
        + &block(1, "function area(r) {\n", "function area(d) {\n");
    assert_eq!(roo(SHAPES, &blocks, &[]).unwrap_err()["kind"], "no_op");
}

#[test]
fn one_stale_block_refuses_them_all() {
    // Roo Code and Cline apply the blocks that match and report the others; partial success is refused
    // by design: the file stays as it was.
    let blocks = block(2, "    return 3 * r * r;\n", "    return 4 * r * r;\n")
        + &block(6, "    return b;\n", "    return c;\n");
    let e = roo(SHAPES, &blocks, &[]).unwrap_err();
    assert_eq!(e["kind"], "not_found");
    assert_eq!(e["edit_index"], 1);
}

#[test]
fn roo_blocks_indented_otherwise_than_the_file_apply_under_tolerant() {
    // Roo Code re-indents a SEARCH written without the file's indentation; multiedit does under
    // `--match tolerant` (and refuses in exact mode, with a hint naming the indentation).
    let text = "    function test() {\n        return true;\n    }\n";
    let blocks = "<<<<<<< SEARCH\nfunction test() {\n    return true;\n}\n=======\nfunction test() {\n    return false;\n}\n>>>>>>> REPLACE\n";
    assert_eq!(
        roo(text, blocks, &["--match", "tolerant"]).unwrap().0,
        "    function test() {\n        return false;\n    }\n"
    );
    let e = roo(text, blocks, &[]).unwrap_err();
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("differs in indentation"),
        "{e}"
    );
    // A replacement less indented than its SEARCH is written as it is (an exact match).
    let text = "class A {\n    f() {\n        if (x) {\n            a();\n            b();\n        }\n    }\n}";
    let blocks = "<<<<<<< SEARCH\n            a();\n            b();\n=======\n        a();\n        b();\n>>>>>>> REPLACE\n";
    assert_eq!(
        roo(text, blocks, &[]).unwrap().0,
        "class A {\n    f() {\n        if (x) {\n        a();\n        b();\n        }\n    }\n}"
    );
}

#[test]
fn the_file_path_option_is_never_ignored() {
    let dir = folder(&[("a.txt", "x\n"), ("b.txt", "y\n")]);
    // A block that names another file than --file-path.
    let e = refused(
        dir.path(),
        &["--file-path", "a.txt"],
        "b.txt\n<<<<<<< SEARCH\ny\n=======\nz\n>>>>>>> REPLACE\n",
    );
    assert_eq!(e["message"], "InputValidationError: SEARCH/REPLACE block 1 (line 2 of the text) names the file b.txt, and the request's file_path is a.txt: give the blocks' file in one place, or send the blocks of each file apart");
    // With a format that names its files.
    let e = refused(
        dir.path(),
        &["--file-path", "a.txt"],
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+w\n",
    );
    assert_eq!(e["message"], "InputValidationError: file_path (a.txt) names the file of SEARCH/REPLACE blocks that name none, but the text is a unified diff, which names its own files: leave file_path out");
    let e = refused(
        dir.path(),
        &["--file-path", "a.txt"],
        &plan(dir.path(), "a.txt", &[("x", "w")], json!({})),
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("but the text is a MultiEdit JSON plan, which names its own files"),
        "{e}"
    );
    // A path outside the root is refused as any patch path is.
    let e = refused(
        dir.path(),
        &["--file-path", "../elsewhere.txt"],
        "<<<<<<< SEARCH\nx\n=======\nw\n>>>>>>> REPLACE\n",
    );
    assert_eq!(e["kind"], "outside_workspace");
}

// What was adapted is reported the same way whatever the format: the tier of each edit or hunk and the
// file's line-break conversion, in the JSON result and in the text.

#[test]
fn every_format_reports_its_tier_and_line_break_conversion_alike() {
    let text = "fn main() {\r\n    let a = 1;\r\n    run(a);\r\n}\r\n";
    let want = "fn main() {\r\n    let a = 1;\r\n    check(a);\r\n    run(a);\r\n}\r\n";
    // The same change, written at column 0, as a plan, a unified diff, an envelope and blocks.
    for k in 0..4 {
        let dir = folder(&[("m.rs", text)]);
        let input = match k {
            0 => plan(dir.path(), "m.rs", &[("let a = 1;\nrun(a);", "let a = 1;\ncheck(a);\nrun(a);")], json!({})),
            1 => "--- a/m.rs\n+++ b/m.rs\n@@ -2,2 +2,3 @@\n let a = 1;\n+check(a);\n run(a);\n".to_string(),
            2 => "*** Begin Patch\n*** Update File: m.rs\n@@\n let a = 1;\n+check(a);\n run(a);\n*** End Patch\n".to_string(),
            _ => "m.rs\n<<<<<<< SEARCH\nlet a = 1;\nrun(a);\n=======\nlet a = 1;\ncheck(a);\nrun(a);\n>>>>>>> REPLACE\n".to_string(),
        };
        let v = applied(dir.path(), &["--match", "tolerant"], &input);
        assert_eq!(read(dir.path(), "m.rs"), want, "input {k}");
        assert_eq!(
            v["files"][0]["tiers"],
            json!([{"edit_index": 0, "tier": "indentation"}]),
            "input {k}: {v}"
        );
        assert_eq!(v["files"][0]["line_breaks"], "crlf", "input {k}: {v}");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.contains("(matched ignoring indentation)"),
            "input {k}: {message}"
        );
        assert!(
            message.ends_with("\nLine breaks written as CRLF (\\r\\n), the file's line breaks."),
            "input {k}: {message}"
        );
    }
}

// Gemini CLI's and OpenCode's edit tools, and Copilot Chat's replace_string_in_file: one old_string,
// one new_string.

#[test]
fn replacement_text_is_taken_literally() {
    // Gemini CLI: `$&`, `$1`, `$'`, `$$` in new_string are no patterns.
    for (text, old, new, want) in [
        (
            "cost: $100 and ' '\n",
            "cost: $100",
            "cost: $200",
            "cost: $200 and ' '\n",
        ),
        ("one\n", "one", "a$'b", "a$'b\n"),
        ("hello world\n", "hello", "$&-x", "$&-x world\n"),
        ("pre-mid-post\n", "mid", "n$`w", "pre-n$`w-post\n"),
        ("test it\n", "test", "$1$2y", "$1$2y it\n"),
        ("price value\n", "value", "$$100", "price $$100\n"),
        (
            "| m('^[a-z]$')\n",
            "'^[a-z]$'",
            "'^[a-z]$' # new",
            "| m('^[a-z]$' # new)\n",
        ),
    ] {
        assert_eq!(exact(text, old, new), want);
    }
}

#[test]
fn the_usual_refusals_leave_the_file_as_it_was() {
    // Gemini CLI's and OpenCode's error classes: no such file, creating over one, no occurrence, more
    // than one, nothing to change; every one a refusal with the file untouched.
    let dir = folder(&[("t.txt", "one one two\n")]);
    let e = refused(
        dir.path(),
        &[],
        &plan(dir.path(), "missing.txt", &[("a", "b")], json!({})),
    );
    assert_eq!((e["kind"].as_str(), e["message"].as_str()), (Some("file_not_found"), Some(format!("File does not exist: {}. To create it, make the first edit's old_string empty.", dir.path().join("missing.txt").display()).as_str())));
    for (old, new, kind) in [
        ("", "new", "file_exists"),
        ("absent", "x", "not_found"),
        ("one", "1", "ambiguous"),
        ("two", "two", "no_op"),
        ("", "", "no_op"),
    ] {
        let e = refused(
            dir.path(),
            &[],
            &plan(dir.path(), "t.txt", &[(old, new)], json!({})),
        );
        assert_eq!(e["kind"], kind, "{old:?} -> {new:?}: {e}");
    }
    // replace_all (Gemini CLI's allow_multiple): every occurrence, at least one.
    let all = |text: &str| {
        let dir = folder(&[("t.txt", text)]);
        let p = json!({"file_path": dir.path().join("t.txt"), "edits": [{"old_string": "one", "new_string": "1", "replace_all": true}]});
        outcome(dir.path(), &[], &p.to_string(), "t.txt").map(|(t, _)| t)
    };
    assert_eq!(all("one one two\n").unwrap(), "1 1 two\n");
    assert_eq!(all("one\n").unwrap(), "1\n");
    assert_eq!(all("two\n").unwrap_err()["kind"], "not_found");
    // A directory (OpenCode): refused as no file (an I/O error, exit 2), nothing changed.
    let dir = folder(&[("d/inside.txt", "x\n")]);
    let before = snapshot(dir.path());
    let (o, v) = run(
        dir.path(),
        &[],
        &plan(dir.path(), "d", &[("a", "b")], json!({})),
    );
    assert_eq!(
        (o.status.code(), v["error"]["kind"].as_str()),
        (Some(2), Some("io"))
    );
    assert_eq!(
        v["error"]["message"],
        format!(
            "Cannot edit {}: it is a directory, not a file. Nothing was changed.",
            dir.path().join("d").display()
        )
    );
    assert_eq!(snapshot(dir.path()), before);
    // A NUL in the path: Gemini CLI takes it out and edits the file without it; multiedit refuses the
    // path (a path it would have to correct is not the path given).
    let e = refused(dir.path(), &[], &json!({"file_path": format!("{}/in\u{0}side.txt", dir.path().join("d").display()), "edits": [{"old_string": "x", "new_string": "y"}]}).to_string());
    assert_eq!(e["message"], "InputValidationError: MultiEdit failed due to the following issue:\n`file_path` contains a NUL character");
}

#[test]
fn a_new_file_and_its_folders_are_made_from_an_empty_old_string() {
    let dir = folder(&[]);
    applied(
        dir.path(),
        &[],
        &plan(dir.path(), "deep/er/new.txt", &[("", "made")], json!({})),
    );
    assert_eq!(read(dir.path(), "deep/er/new.txt"), "made");
    // An empty file takes it too (Copilot Chat); a file with text refuses it (Gemini CLI, Copilot Chat).
    let dir = folder(&[("empty.txt", "")]);
    applied(
        dir.path(),
        &[],
        &plan(dir.path(), "empty.txt", &[("", "now")], json!({})),
    );
    assert_eq!(read(dir.path(), "empty.txt"), "now");
}

#[test]
fn a_byte_order_mark_stays_and_the_first_visible_line_matches() {
    // OpenCode: the mark is kept and old_string matches the first line without it.
    assert_eq!(
        exact(
            "\u{feff}using System;\nclass T {}\n",
            "using System;",
            "using Up;"
        ),
        "\u{feff}using Up;\nclass T {}\n"
    );
    // OpenCode also lets an empty old_string overwrite a file that has text: refused by design (the
    // MultiEdit contract creates a file only where there is none or it is empty).
    let dir = folder(&[("m.cs", "\u{feff}using System;\n")]);
    let e = refused(
        dir.path(),
        &[],
        &plan(dir.path(), "m.cs", &[("", "using Up;\n")], json!({})),
    );
    assert_eq!(
        e["message"],
        "Cannot create new file - file already exists."
    );
}

#[test]
fn model_parameters_spelt_in_camel_case_are_read_as_the_plans() {
    // OpenCode normalises the other spelling of its parameters; multiedit reads OpenCode's own.
    let dir = folder(&[("c.txt", "old content\n")]);
    let p = json!({"filePath": dir.path().join("c.txt"), "edits": [{"oldString": "old", "newString": "new"}]});
    applied(dir.path(), &[], &p.to_string());
    assert_eq!(read(dir.path(), "c.txt"), "new content\n");
    let p = json!({"files": [{"filePath": dir.path().join("c.txt"), "edits": [{"oldString": "new", "newString": "x", "replaceAll": true}]}]});
    applied(dir.path(), &[], &p.to_string());
    assert_eq!(read(dir.path(), "c.txt"), "x content\n");
    // Both spellings of one parameter: refused.
    let p = json!({"file_path": dir.path().join("c.txt"), "edits": [{"old_string": "x", "oldString": "x", "new_string": "y"}]});
    let e = refused(dir.path(), &[], &p.to_string());
    assert_eq!(e["message"], "InputValidationError: MultiEdit failed due to the following issue:\n`edits[0].oldString` and `edits[0].old_string` are the same parameter: give it once");
}

#[test]
fn a_new_string_that_leaves_text_out_with_a_placeholder_is_refused() {
    // Gemini CLI refuses "(rest of methods ...)" in new_string when old_string has no such line: the
    // text it stands for would be lost.
    let text = "class A {\n  one() {}\n  two() {}\n}\n";
    let e = edit(
        text,
        "  one() {}\n  two() {}",
        "  one() { 1 }\n  (rest of methods ...)",
        json!({}),
    )
    .unwrap_err();
    assert_eq!(e["message"], "InputValidationError: MultiEdit failed due to the following issue:\n`edits[0].new_string` has the line \"(rest of methods ...)\", which stands for text left out, and old_string has no such line: new_string is written as it is, so the text it stands for would be lost. Write that text in full");
    assert_eq!(
        edit(
            text,
            "  two() {}",
            "  two() {}\n  // ... existing code ...",
            json!({})
        )
        .unwrap_err()["kind"],
        "invalid_plan"
    );
    // The same line in old_string is the file's own text; in a string it is no placeholder.
    let text = "x\n// ... existing code ...\ny\n";
    assert_eq!(
        exact(
            text,
            "x\n// ... existing code ...",
            "x2\n// ... existing code ..."
        ),
        "x2\n// ... existing code ...\ny\n"
    );
    assert_eq!(
        exact("msg = 'a'\n", "'a'", "'(rest of methods ...)'"),
        "msg = '(rest of methods ...)'\n"
    );
}

#[test]
fn only_what_changed_is_replaced() {
    // Copilot Chat minimises its edits; so does multiedit: bytes outside the change are never written.
    use multiedit::engine::{apply_plan, parse_plan};
    let plan = json!({"file_path": "/w/m.txt", "edits": [{"old_string": "head kept middle changed tail kept", "new_string": "head kept middle updated tail kept"}]});
    let o = apply_plan(
        &parse_plan(&plan.to_string()).unwrap(),
        &[Some("head kept middle changed tail kept\n")],
    )
    .unwrap();
    let r = &o.files[0].replacements;
    assert_eq!(
        (r.len(), r[0].start, r[0].end, r[0].text.as_str()),
        (1, 17, 22, "updat")
    );
    let plan = json!({"file_path": "/w/m.txt", "edits": [{"old_string": "start\nline to change\nend", "new_string": "start\nmodified line\nend"}]});
    let o = apply_plan(
        &parse_plan(&plan.to_string()).unwrap(),
        &[Some("start\nline to change\nend")],
    )
    .unwrap();
    let r = &o.files[0].replacements;
    assert_eq!(
        (r.len(), r[0].start, r[0].text.as_str()),
        (1, 6, "modified lin"),
        "line 2 from its first byte, up to the shared `e`"
    );
}

#[test]
fn exact_edits_of_the_copilot_suite_land_where_they_say() {
    for (text, old, new, want) in [
        ("say oldWord!", "oldWord", "newWord", "say newWord!"),
        (
            "function h() {\n\tlog(\"w\");\n}",
            "log(\"w\");",
            "log(\"h w\");",
            "function h() {\n\tlog(\"h w\");\n}",
        ),
        ("l1\nl2\nl3", "l1\nl2", "n1\nn2", "n1\nn2\nl3"),
        ("before\nto go\nafter", "to go\n", "", "before\nafter"),
        ("before to go after", "to go ", "", "before after"),
        ("Hello 世界! 🌍", "世界! 🌍", "世界! 🌎", "Hello 世界! 🌎"),
        (
            "price $10.99 (sale)",
            "$10.99 (sale)",
            "$9.99 (deal)",
            "price $9.99 (deal)",
        ),
        (
            "content\nwith\nlines\n",
            "content\nwith\n",
            "new\ncontent\n",
            "new\ncontent\nlines\n",
        ),
        (
            "line1\n\n\nline4",
            "line1\n\n\nline4",
            "line1\n\nline3\nline4",
            "line1\n\nline3\nline4",
        ),
        ("w1     w2", "w1     w2", "w1 w2", "w1 w2"),
        ("before\tafter", "\t", "    ", "before    after"),
        (
            "f() {\n\t    mixed\n}",
            "\t    mixed",
            "    proper",
            "f() {\n    proper\n}",
        ),
    ] {
        assert_eq!(exact(text, old, new), want, "{old:?}");
    }
    // Case matters; several single-character matches are refused.
    assert_eq!(
        edit("Hello World", "hello world", "x", json!({})).unwrap_err()["kind"],
        "not_found"
    );
    assert_eq!(
        edit("hello world", "l", "L", json!({})).unwrap_err()["kind"],
        "ambiguous"
    );
    // An old_string of a line break in an empty file (Copilot writes new_string): there is no line
    // break to replace, so multiedit refuses it.
    assert_eq!(
        edit("", "\n", "hello", json!({})).unwrap_err()["kind"],
        "not_found"
    );
}

// Cline's SEARCH/REPLACE blocks (`------- SEARCH` / `+++++++ REPLACE`).

fn cline(text: &str, blocks: &str) -> Result<(String, Value), Value> {
    let dir = folder(&[("c.txt", text)]);
    outcome(dir.path(), &["--file-path", "c.txt"], blocks, "c.txt")
}

#[test]
fn cline_blocks_apply_in_any_order_and_delete_with_an_empty_replacement() {
    let b = |s: &str, r: &str| format!("------- SEARCH\n{s}=======\n{r}+++++++ REPLACE\n");
    assert_eq!(
        cline("", &b("", "new content\n")).unwrap().0,
        "new content\n"
    );
    assert_eq!(
        cline("line1\nline2\nline3", &b("line2\n", "replaced\n"))
            .unwrap()
            .0,
        "line1\nreplaced\nline3"
    );
    assert_eq!(
        cline(
            "First\nSecond\nThird\nFourth",
            &(b("First\n", "1st\n") + "\n" + &b("Third\n", "3rd\n"))
        )
        .unwrap()
        .0,
        "1st\nSecond\n3rd\nFourth"
    );
    assert_eq!(
        cline(
            "line1\nline2\nline3\nline4",
            &(b("line2\n", "replaced\n") + &b("line4\n", ""))
        )
        .unwrap()
        .0,
        "line1\nreplaced\nline3\n"
    );
    assert_eq!(
        cline(
            "line1\nline2\nline3\nline4",
            &(b("line1\n", "") + &b("line3\n", "replaced\n"))
        )
        .unwrap()
        .0,
        "line2\nreplaced\nline4"
    );
    // Out of order.
    assert_eq!(
        cline(
            "one\ntwo\nthree\nfour\nfive\n",
            &(b("four\n", "4\n") + &b("two\n", "2\n") + &b("five\n", "5\n"))
        )
        .unwrap()
        .0,
        "one\n2\nthree\n4\n5\n"
    );
    assert_eq!(
        cline(
            "f() {\n\tconst a = 1;\n\tconst b = 2;\n\tconst c = 3;\n\n}",
            &(b("\tconst c = 3;\n", "\tconst c = 30;\n")
                + &b("\tconst a = 1;\n", "\tconst a = 10;\n"))
        )
        .unwrap()
        .0,
        "f() {\n\tconst a = 10;\n\tconst b = 2;\n\tconst c = 30;\n\n}"
    );
    assert_eq!(
        cline(
            "header\n\nbody\n\nfooter\n",
            &(b("footer\n", "new footer\n") + &b("\nbody\n\n", "new body\n"))
        )
        .unwrap()
        .0,
        "header\nnew body\nnew footer\n"
    );
    // A replacement whose lines end with a blank line keeps it.
    assert_eq!(
        cline(
            "line1\nline2\nline3",
            "------- SEARCH\nline2\n=======\nreplaced\n\n+++++++ REPLACE\n"
        )
        .unwrap()
        .0,
        "line1\nreplaced\n\nline3"
    );
}

#[test]
fn cline_blocks_malformed_or_unfinished_are_refused() {
    for bad in [
        "<<-- SEARCH\nline2\n=======\nr\n+++++++ REPLACE\n",
        "-- SEARCH\nline2\n=======\nr\n+++++++ REPLACE\n",
        "-------SEARCH\nline2\n=======\nr\n+++++++ REPLACE\n",
        "------- SEARCH\nline2\n+++++++ REPLACE\nr\n",
        "------- SEARCH\nline2\n+++++++ REPLACE\nfirst\n+++++++ REPLACE\n",
        "------- SEARCH\nline2\n------- =======\nr\n+++++++ REPLACE\n",
        "------- SEARCH\nnot there\n=======\nr\n+++++++ REPLACE\n",
        // Cline applies a last block whose REPLACE marker never came; the answer may have been cut
        // off mid-replacement, so multiedit refuses it.
        "------- SEARCH\nline2\n=======\nreplaced\n",
    ] {
        let e = cline("line1\nline2\nline3", bad).unwrap_err();
        assert!(
            matches!(e["kind"].as_str(), Some("invalid_plan" | "not_found")),
            "{bad:?}: {e}"
        );
    }
    // A divider with trailing blanks is one (Aider and Roo Code read it so; Cline refuses it).
    assert_eq!(
        cline(
            "line1\nline2\nline3",
            "------- SEARCH\nline2\n======= \nr\n+++++++ REPLACE\n"
        )
        .unwrap()
        .0,
        "line1\nr\nline3"
    );
}

#[test]
fn a_search_lacking_a_lines_indentation_gets_it_back_as_aider_and_gemini_give_it() {
    // Cline writes `replaced` at column 0 for a file line ` line2 `; Aider and Gemini CLI give a
    // SEARCH the indentation it lacks back. Peers disagree: multiedit follows Aider (docs/compatibility.md).
    let (after, _) = {
        let dir = folder(&[("c.txt", "line1\n line2 \nline3")]);
        outcome(
            dir.path(),
            &["--file-path", "c.txt", "--match", "tolerant"],
            "------- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE\n",
            "c.txt",
        )
        .unwrap()
    };
    assert_eq!(after, "line1\n replaced\nline3");
}
