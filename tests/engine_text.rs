//! What the engine does to bytes: line endings, BOM, literal replacement text, non-ASCII, plan
//! validation, several files, hints after a miss, and tolerant matching.

use multiedit::engine::{apply_plan, decode, parse_plan, Kind, Outcome, Refusal, Tier};
use serde_json::{json, Value};

fn run(text: &str, edits: Value) -> Result<Outcome, Refusal> {
    run_plan(Some(text), json!({"file_path": "/t/f.txt", "edits": edits}))
}

fn run_plan(text: Option<&str>, plan: Value) -> Result<Outcome, Refusal> {
    let plan = parse_plan(&plan.to_string())?;
    let texts = vec![text; plan.files.len()];
    apply_plan(&plan, &texts)
}

fn text_of(r: Result<Outcome, Refusal>) -> String {
    r.unwrap_or_else(|e| panic!("refused: {e}")).files[0]
        .text
        .clone()
}

fn refused(r: Result<Outcome, Refusal>) -> Refusal {
    r.expect_err("expected a refusal")
}

#[test]
fn lf_in_old_string_matches_crlf_and_new_lines_follow_the_file() {
    let t = "a\r\nb\r\nc\r\n";
    assert_eq!(
        text_of(run(
            t,
            json!([{"old_string": "a\nb", "new_string": "x\ny\nz"}])
        )),
        "x\r\ny\r\nz\r\nc\r\n"
    );
    // An old_string written with CRLF matches too.
    assert_eq!(
        text_of(run(
            t,
            json!([{"old_string": "b\r\nc", "new_string": "B\nC"}])
        )),
        "a\r\nB\r\nC\r\n"
    );
    // Counting newlines counts line breaks, not bytes.
    let e = refused(run(t, json!([{"old_string": "\n", "new_string": " "}])));
    assert!(e.message.starts_with("Found 3 matches"));
    assert_eq!(
        text_of(run(
            t,
            json!([{"old_string": "\n", "new_string": " ", "replace_all": true}])
        )),
        "a b c "
    );
}

#[test]
fn mixed_line_endings_keep_their_mix() {
    let t = "one\r\ntwo\nthree\r\nfour\n";
    let out = text_of(run(
        t,
        json!([{"old_string": "two", "new_string": "2a\n2b"}, {"old_string": "four", "new_string": "4a\n4b"}]),
    ));
    assert_eq!(out, "one\r\n2a\n2b\nthree\r\n4a\n4b\n");
    let out = text_of(run(
        t,
        json!([{"old_string": "one", "new_string": "1a\n1b"}]),
    ));
    assert_eq!(out, "1a\r\n1b\r\ntwo\nthree\r\nfour\n");
}

#[test]
fn lf_files_are_never_touched_outside_the_edit() {
    let t = "keep  \n\tindent\nno final newline";
    let out = text_of(run(t, json!([{"old_string": "indent", "new_string": "x"}])));
    assert_eq!(out, "keep  \n\tx\nno final newline");
}

#[test]
fn bom_is_kept_and_never_matched() {
    let t = "\u{feff}first\nsecond\n";
    assert_eq!(
        text_of(run(
            t,
            json!([{"old_string": "first", "new_string": "1st"}])
        )),
        "\u{feff}1st\nsecond\n"
    );
    let o = run(t, json!([{"old_string": "first", "new_string": "1st"}])).unwrap();
    assert_eq!(o.files[0].replacements[0].start, 3);
    let crlf_bom = "\u{feff}a\r\nb\r\n";
    assert_eq!(
        text_of(run(
            crlf_bom,
            json!([{"old_string": "a\nb", "new_string": "c"}])
        )),
        "\u{feff}c\r\n"
    );
}

#[test]
fn replacement_text_is_literal() {
    let t = "price = 5\n";
    let out = text_of(run(
        t,
        json!([{"old_string": "5", "new_string": "$& $1 $$ \\1 \\n ${x}"}]),
    ));
    assert_eq!(out, "price = $& $1 $$ \\1 \\n ${x}\n");
}

#[test]
fn non_ascii_and_astral_text() {
    let t = "naïve 😀 café\nこんにちは 😀\n";
    let out = text_of(run(
        t,
        json!([{"old_string": "café", "new_string": "tea 🍵"}, {"old_string": "😀", "new_string": "🙂", "replace_all": true}]),
    ));
    assert_eq!(out, "naïve 🙂 tea 🍵\nこんにちは 🙂\n");
}

#[test]
fn matches_are_counted_without_overlap() {
    let e = refused(run(
        "aaa",
        json!([{"old_string": "aa", "new_string": "b", "expected_replacements": 2}]),
    ));
    assert_eq!(e.kind, Kind::CountMismatch);
    assert!(e.message.starts_with("Found 1 matches"));
    assert_eq!(
        text_of(run("aaa", json!([{"old_string": "aa", "new_string": "b"}]))),
        "ba"
    );
    assert_eq!(
        text_of(run(
            "aaaa",
            json!([{"old_string": "aa", "new_string": "b", "replace_all": true}])
        )),
        "bb"
    );
}

#[test]
fn replacements_are_minimal_and_in_original_coordinates() {
    let t = "fn alpha() {}\nfn beta() {}\nfn gamma() {}\n";
    let o = run(
        t,
        json!([
        {"old_string": "fn beta() {}", "new_string": "fn beta(x: u8) {}"},
        {"old_string": "fn alpha() {}", "new_string": "fn alpha2() {}"}]),
    )
    .unwrap();
    let reps: Vec<(usize, usize, &str)> = o.files[0]
        .replacements
        .iter()
        .map(|r| (r.start, r.end, r.text.as_str()))
        .collect();
    assert_eq!(reps, vec![(8, 8, "2"), (22, 22, "x: u8")]);
}

#[test]
fn not_utf8_is_refused_with_the_offset() {
    let e = decode("/t/latin1.txt", b"caf\xe9\n").unwrap_err();
    assert_eq!(e.kind, Kind::NotUtf8);
    assert_eq!(e.message, "Cannot edit /t/latin1.txt: it is not valid UTF-8 text (invalid byte at offset 3). The file was left unchanged.");
}

#[test]
fn plan_validation_names_the_field() {
    let cases: Vec<(Value, &str)> = vec![
        (json!({"file_path": "/a", "edits": [{"old_string": "a", "new_string": "b", "replace": true}]}),
         "`edits[0].replace` goes with `edits[0].symbol`, not with `edits[0].old_string`: leave it out (to replace every occurrence of old_string, set `edits[0].replace_all`: true)"),
        (json!({"file_path": "/a", "edits": [{"old_string": "a", "new_string": "b", "all": true}]}),
         "An unexpected parameter `edits[0].all` was provided (allowed here: old_string, new_string, replace_all, expected_replacements, symbol, replace, insert)"),
        (json!({"file_path": "rel/a.txt", "edits": [{"old_string": "a", "new_string": "b"}]}),
         "`file_path` must be an absolute path (starting with /) or a file:// URI, but is \"rel/a.txt\""),
        (json!({"file_path": "/n.ipynb", "edits": [{"old_string": "a", "new_string": "b"}]}),
         "`file_path` is a Jupyter Notebook (/n.ipynb); notebooks are JSON cells, edit them with a notebook tool"),
        (json!({"file_path": "/a", "edits": [{"old_string": 1, "new_string": "b"}]}),
         "The parameter `edits[0].old_string` type is expected as `string` but provided as `number`"),
        (json!({"file_path": "/a", "edits": [{"new_string": "b"}]}),
         "The required parameter `edits[0].old_string` is missing"),
        (json!({"edits": [{"old_string": "a", "new_string": "b"}]}), "The required parameter `file_path` is missing"),
        (json!({"file_path": "/a", "edits": [{"old_string": "a", "new_string": "b", "expected_replacements": 0}]}),
         "The parameter `edits[0].expected_replacements` must be a whole number of at least 1, but is 0"),
        (json!({"file_path": "/a", "edits": [{"old_string": "a", "new_string": "b"}], "mode": "best"}),
         "The parameter `mode` must be one of \"atomic\", \"partial\" but is \"best\""),
        (json!({"files": [{"file_path": "/a", "edits": [{"old_string": "a", "new_string": "b"}]}, {"file_path": "/a", "edits": [{"old_string": "c", "new_string": "d"}]}]}),
         "`files[1].file_path` names /a a second time: put all edits of one file in one entry"),
        (json!([1, 2]), "The parameter `plan` type is expected as `object` but provided as `array`"),
    ];
    for (plan, expected) in cases {
        let e = refused(run_plan(Some("a"), plan.clone()));
        assert_eq!(e.kind, Kind::InvalidPlan, "{plan}");
        assert_eq!(
            e.message,
            format!(
                "InputValidationError: MultiEdit failed due to the following issue:\n{expected}"
            ),
            "{plan}"
        );
    }
    let e = parse_plan("{not json").unwrap_err();
    assert_eq!(e.message, "InputValidationError: the plan is not valid JSON: line 1, column 2: the key `not` is not in double quotes (JSON keys are strings: \"not\").");
    let e = parse_plan("not json").unwrap_err();
    assert_eq!(e.message, "InputValidationError: the plan is not valid JSON: line 1, column 1: `not` is not a JSON value (a value is a string in double quotes, a number, true, false, null, an object or an array). Send one JSON object such as {\"file_path\": \"/abs/path\", \"edits\": [{\"old_string\": \"a\", \"new_string\": \"b\"}]}.");
}

/// A plan's JSON slip is named where it starts, in plain words (serde_json names an unclosed string
/// at the line after it, as a "control character").
#[test]
fn a_json_slip_is_named_where_it_starts() {
    let cases = [
        (
            "{\"file_path\": \"/a\",\n \"edits\": [{\"old_string\": \"one\n\", \"new_string\": \"1\"}]}",
            "line 2, column 27: a string that starts here is not closed before the line ends (a line break inside a JSON string must be written \\n)",
        ),
        (
            "{\"file_path\": \"/a\",\n \"edits\": [{\"old_string\": \"one\", \"new_string\": \"1\"},]}",
            "line 2, column 52: a comma after the last element of an array (JSON allows none before `]`: remove it)",
        ),
        (
            "{\"file_path\": \"/a\"\n \"edits\": [{\"old_string\": \"one\", \"new_string\": \"1\"}]}",
            "line 2, column 2: a comma is missing before `\"edits\"` (after the value that ends at line 1, column 18): members of an object are separated by commas",
        ),
        (
            "{'file_path': '/a', 'edits': []}",
            "line 1, column 2: a string in single quotes (JSON strings take double quotes: \"...\")",
        ),
    ];
    for (plan, said) in cases {
        assert_eq!(
            parse_plan(plan).unwrap_err().message,
            format!("InputValidationError: the plan is not valid JSON: {said}."),
            "{plan}"
        );
    }
}

#[test]
fn several_files_are_all_or_nothing() {
    let plan = parse_plan(
        &json!({"files": [
        {"file_path": "/a.txt", "edits": [{"old_string": "one", "new_string": "1"}]},
        {"file_path": "/b.txt", "edits": [{"old_string": "missing", "new_string": "2"}]}]})
        .to_string(),
    )
    .unwrap();
    let e = apply_plan(&plan, &[Some("one"), Some("two")]).unwrap_err();
    assert_eq!(
        (e.kind, e.file_path.as_deref(), e.edit_index),
        (Kind::NotFound, Some("/b.txt"), Some(0))
    );
    let plan = parse_plan(
        &json!({"files": [
        {"file_path": "/a.txt", "edits": [{"old_string": "one", "new_string": "1"}]},
        {"file_path": "/b.txt", "edits": [{"old_string": "", "new_string": "new file\n"}]}]})
        .to_string(),
    )
    .unwrap();
    let o = apply_plan(&plan, &[Some("one"), None]).unwrap();
    assert_eq!(
        (
            o.files[0].text.as_str(),
            o.files[1].text.as_str(),
            o.files[1].created
        ),
        ("1", "new file\n", true)
    );
    assert_eq!(o.message(), "Applied 1 edit to /a.txt:\n1. Replaced \"one\" with \"1\"\n\nApplied 1 edit to /b.txt:\n1. Created the file");
}

#[test]
fn an_empty_existing_file_can_be_filled() {
    let o = run("", json!([{"old_string": "", "new_string": "hello\n"}])).unwrap();
    assert_eq!(
        (o.files[0].text.as_str(), o.files[0].created),
        ("hello\n", false)
    );
}

#[test]
fn a_miss_points_at_the_closest_text_and_says_what_differs() {
    let t = "fn main() {\n\tlet x = 1;\n\tprintln!(\"{x}\");\n}\n";
    let e = refused(run(
        t,
        json!([{"old_string": "    let x = 1;\n    println!(\"{x}\");", "new_string": "    let x = 2;"}]),
    ));
    assert_eq!(
        e.message,
        "String to replace not found in file.\nString:     let x = 1;\n    println!(\"{x}\");"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("The closest text is at lines 2-3 and differs in indentation (the file indents with tabs, old_string with spaces). The file has there:\n\tlet x = 1;\n\tprintln!(\"{x}\");")
    );
    let e = refused(run(
        "say “hello” now\n",
        json!([{"old_string": "say \"hello\" now", "new_string": "x"}]),
    ));
    assert_eq!(
        e.hint.as_deref(),
        Some("The closest text is at line 1 and differs in quotes or dashes (the file has typographic ones, old_string plain ones). The file has there:\nsay “hello” now")
    );
    let e = refused(run(
        "alpha  \nbeta\n",
        json!([{"old_string": "alpha\nbeta", "new_string": "x"}]),
    ));
    assert!(e.hint.unwrap().contains("differs in trailing whitespace"));
    let e = refused(run(
        "nothing alike\n",
        json!([{"old_string": "zebra", "new_string": "x"}]),
    ));
    assert_eq!(e.hint.as_deref(), Some("No line of the file resembles old_string's line \"zebra\", even ignoring whitespace, quotes and dashes. Read the file again before retrying."));
}

fn tolerant(text: &str, old: &str, new: &str) -> Result<Outcome, Refusal> {
    run_plan(
        Some(text),
        json!({"file_path": "/t/f.txt", "match": "tolerant", "edits": [{"old_string": old, "new_string": new}]}),
    )
}

#[test]
fn tolerant_tiers_in_order() {
    // Trailing whitespace only.
    let o = tolerant("a = 1   \nb = 2\n", "a = 1\nb = 2", "a = 10\nb = 20").unwrap();
    assert_eq!(o.files[0].text, "a = 10\nb = 20\n");
    assert_eq!(o.files[0].applied[0].tier, Some(Tier::LineTrimmed));
    assert!(o
        .message()
        .ends_with("(matched ignoring trailing whitespace)"));
    // Indentation: new_string is re-indented the way the file indents.
    let o = tolerant(
        "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n",
        "    if x {\n        y();\n    }",
        "    if x {\n        z();\n    }",
    )
    .unwrap();
    assert_eq!(o.files[0].text, "fn f() {\n\tif x {\n\t\tz();\n\t}\n}\n");
    assert_eq!(o.files[0].applied[0].tier, Some(Tier::Indentation));
    // Quotes: new_string is curled like the file.
    let o = tolerant(
        "She said “it’s fine” today.\n",
        "said \"it's fine\"",
        "said \"it's great\"",
    )
    .unwrap();
    assert_eq!(o.files[0].text, "She said “it’s great” today.\n");
    assert_eq!(o.files[0].applied[0].tier, Some(Tier::Quotes));
    // Still unique, or refused.
    let e = tolerant("x = 1 \nx = 1  \n", "x = 1", "x = 2").unwrap_err();
    assert_eq!(e.kind, Kind::Ambiguous);
    let e = tolerant("a  \nb\na \nb\n", "a\nb", "c").unwrap_err();
    assert_eq!(e.kind, Kind::Ambiguous);
    // Exact matching never uses the tiers.
    let e = run(
        "a = 1   \nb = 2\n",
        json!([{"old_string": "a = 1\nb = 2", "new_string": "x"}]),
    )
    .unwrap_err();
    assert_eq!(e.kind, Kind::NotFound);
}

#[test]
fn edits_whose_changes_undo_each_other_elsewhere_leave_the_file_unchanged() {
    // Found by the differential fuzzer: each replacement is minimal, together they change nothing.
    let e = refused(run(
        "😀😀😀\r\n",
        json!([{"old_string": "😀😀", "new_string": ""}, {"old_string": "\n", "new_string": "😀😀\n"}]),
    ));
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            Kind::Unchanged,
            "Original and edited file match exactly. Failed to apply edit."
        )
    );
    let e = refused(run(
        "😀😀😀\n",
        json!([{"old_string": "😀😀", "new_string": ""}, {"old_string": "\n", "new_string": "😀😀\n"}]),
    ));
    assert_eq!(e.kind, Kind::Unchanged);
}
