//! Every experiment of seed 000 (Claude Code's observed MultiEdit), in both dialects where they differ,
//! the usage patterns of seed 001, seed 002's partial success and seed 003's expected_replacements.

use multiedit::engine::{apply_plan, parse_plan, Kind, Outcome, Refusal};
use serde_json::{json, Value};

const MATILDA: &str = include_str!("fixtures/matilda.txt");
const PATH: &str = "/work/sample/file1.txt";

fn run_on(text: Option<&str>, plan: Value) -> Result<Outcome, Refusal> {
    let plan = parse_plan(&plan.to_string())?;
    let texts = vec![text; plan.files.len()];
    apply_plan(&plan, &texts)
}

fn plan(dialect: &str, edits: Value) -> Value {
    json!({"file_path": PATH, "edits": edits, "dialect": dialect})
}

/// Runs the edits on the fixture in both dialects and checks both give `expected`.
fn both(edits: Value) -> [Result<Outcome, Refusal>; 2] {
    [
        run_on(Some(MATILDA), plan("sequential", edits.clone())),
        run_on(Some(MATILDA), plan("claude-code", edits)),
    ]
}

fn ok_text(r: &Result<Outcome, Refusal>) -> (String, String) {
    let o = r.as_ref().unwrap_or_else(|e| panic!("refused: {e}"));
    (o.message(), o.files[0].text.clone())
}

fn refusal(r: Result<Outcome, Refusal>) -> Refusal {
    match r {
        Ok(o) => panic!("expected a refusal, got: {}", o.message()),
        Err(e) => e,
    }
}

#[test]
fn basic_single_edit() {
    for r in both(json!([{"old_string": "jolly", "new_string": "happy"}])) {
        let (msg, text) = ok_text(&r);
        assert_eq!(
            msg,
            format!("Applied 1 edit to {PATH}:\n1. Replaced \"jolly\" with \"happy\"")
        );
        assert_eq!(text, MATILDA.replace("jolly", "happy"));
        assert_eq!(r.unwrap().files[0].replacements.len(), 1);
    }
}

#[test]
fn one_ambiguous_edit_refuses_the_whole_plan() {
    for r in both(json!([
        {"old_string": "jolly", "new_string": "happy"},
        {"old_string": "swagman", "new_string": "traveler"},
        {"old_string": "billabong", "new_string": "waterhole"}]))
    {
        let e = refusal(r);
        assert_eq!(
            e.message,
            "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set \
             replace_all to true. To replace only one occurrence, please provide more context to uniquely identify \
             the instance.\nString: swagman"
        );
        assert_eq!((e.kind, e.edit_index), (Kind::Ambiguous, Some(1)));
        assert_eq!(e.hint.as_deref(), Some("Matches are at lines 6 and 18."));
    }
}

#[test]
fn several_edits_with_replace_all() {
    for r in both(json!([
        {"old_string": "jolly", "new_string": "happy"},
        {"old_string": "swagman", "new_string": "traveler", "replace_all": true},
        {"old_string": "billabong", "new_string": "waterhole", "replace_all": true}]))
    {
        let (msg, text) = ok_text(&r);
        assert_eq!(
            msg,
            format!(
                "Applied 3 edits to {PATH}:\n1. Replaced \"jolly\" with \"happy\"\n2. Replaced \"swagman\" with \
                 \"traveler\"\n3. Replaced \"billabong\" with \"waterhole\""
            )
        );
        assert_eq!(
            text,
            MATILDA
                .replace("jolly", "happy")
                .replace("swagman", "traveler")
                .replace("billabong", "waterhole")
        );
        let f = &r.unwrap().files[0];
        assert_eq!(f.replacement_count(), 5);
        assert_eq!(f.replacements.len(), 5);
    }
}

#[test]
fn identical_strings_are_refused() {
    for edits in [
        json!([{"old_string": "jolly", "new_string": "jolly"}]),
        json!([{"old_string": "", "new_string": ""}]),
    ] {
        for r in both(edits.clone()) {
            let e = refusal(r);
            assert_eq!(
                e.message,
                "No changes to make: old_string and new_string are exactly the same."
            );
            assert_eq!((e.kind, e.edit_index), (Kind::NoOp, Some(0)));
        }
    }
}

#[test]
fn empty_old_string_on_an_existing_file() {
    for r in both(json!([{"old_string": "", "new_string": "hello"}])) {
        let e = refusal(r);
        assert_eq!(e.message, "Cannot create new file - file already exists.");
        assert_eq!((e.kind, e.edit_index), (Kind::FileExists, Some(0)));
    }
}

#[test]
fn empty_new_string_deletes() {
    for r in both(json!([{"old_string": "jolly", "new_string": ""}])) {
        let (msg, text) = ok_text(&r);
        assert_eq!(
            msg,
            format!("Applied 1 edit to {PATH}:\n1. Replaced \"jolly\" with \"\"")
        );
        assert_eq!(text, MATILDA.replace("jolly", ""));
    }
}

#[test]
fn newline_as_old_string() {
    for r in both(json!([{"old_string": "\n", "new_string": " "}])) {
        let e = refusal(r);
        assert!(
            e.message
                .starts_with("Found 32 matches of the string to replace"),
            "{}",
            e.message
        );
        assert!(e.message.ends_with("instance.\nString: \n"));
    }
    for r in both(json!([{"old_string": "\n", "new_string": " ", "replace_all": true}])) {
        let (msg, text) = ok_text(&r);
        assert_eq!(
            msg,
            format!("Applied 1 edit to {PATH}:\n1. Replaced \"\n\" with \" \"")
        );
        assert_eq!(text, MATILDA.replace('\n', " "));
        assert!(!text.contains('\n'));
    }
}

#[test]
fn multiline_old_string() {
    for r in both(
        json!([{"old_string": "once\na jolly\nswagman", "new_string": "once upon a time\na happy\ntraveler"}]),
    ) {
        let (msg, text) = ok_text(&r);
        assert_eq!(
            msg,
            format!("Applied 1 edit to {PATH}:\n1. Replaced \"once\na jolly\nswagman\" with \"once upon a time\na happy\ntraveler\"")
        );
        assert_eq!(
            text,
            MATILDA.replace(
                "once\na jolly\nswagman",
                "once upon a time\na happy\ntraveler"
            )
        );
    }
}

#[test]
fn empty_edits_and_wrong_types_name_the_field() {
    let e = refusal(run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": []}),
    ));
    assert_eq!(e.kind, Kind::InvalidPlan);
    assert_eq!(e.message, "InputValidationError: MultiEdit failed due to the following issue:\nAt least one edit is required in `edits`");
    let e = refusal(run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": 42}),
    ));
    assert_eq!(
        e.message,
        "InputValidationError: MultiEdit failed due to the following issue:\nThe parameter `edits` type is expected as `array` but provided as `number`"
    );
}

#[test]
fn atomicity_a_missing_string_anywhere_refuses_everything() {
    let mix = json!([
        {"old_string": "jolly", "new_string": "happy"},
        {"old_string": "DOESNOTEXIST", "new_string": "xyz"},
        {"old_string": "swagman", "new_string": "traveler", "replace_all": true}]);
    let first = json!([
        {"old_string": "DOESNOTEXIST", "new_string": "xyz"},
        {"old_string": "jolly", "new_string": "happy"},
        {"old_string": "swagman", "new_string": "traveler", "replace_all": true}]);
    for (edits, at) in [(mix, 1), (first, 0)] {
        for r in both(edits.clone()) {
            let e = refusal(r);
            assert_eq!(
                e.message,
                "String to replace not found in file.\nString: DOESNOTEXIST"
            );
            assert_eq!((e.kind, e.edit_index), (Kind::NotFound, Some(at)));
        }
    }
}

/// Seed 000's "overlapping" experiments: Claude Code validates against the original, the documented
/// sequential contract lets an edit work on the previous one's result.
#[test]
fn an_edit_that_needs_the_previous_edits_output() {
    let cases = [
        (
            json!([{"old_string": "jolly", "new_string": "jolly jolly"}, {"old_string": "jolly jolly", "new_string": "very happy"}]),
            "jolly jolly",
            "very happy",
        ),
        (
            json!([{"old_string": "jolly", "new_string": "happy"}, {"old_string": "happy", "new_string": "very happy"}]),
            "happy",
            "very happy",
        ),
        (
            json!([{"old_string": " waited ", "new_string": ""}, {"old_string": "andtill", "new_string": "foobar"}]),
            "andtill",
            "and waited till",
        ),
    ];
    for (edits, missing, _) in &cases {
        let e = refusal(run_on(Some(MATILDA), plan("claude-code", edits.clone())));
        assert_eq!(
            e.message,
            format!("String to replace not found in file.\nString: {missing}")
        );
        assert_eq!((e.kind, e.edit_index), (Kind::NotFound, Some(1)));
    }
    let (_, t) = ok_text(&run_on(
        Some(MATILDA),
        plan("sequential", cases[0].0.clone()),
    ));
    assert_eq!(t, MATILDA.replace("jolly", "very happy"));
    let (_, t) = ok_text(&run_on(
        Some(MATILDA),
        plan("sequential", cases[1].0.clone()),
    ));
    assert_eq!(t, MATILDA.replace("jolly", "very happy"));
    let (_, t) = ok_text(&run_on(
        Some(MATILDA),
        plan("sequential", cases[2].0.clone()),
    ));
    assert_eq!(t, MATILDA.replace("and waited till", "foobar"));
}

#[test]
fn sequential_edits_on_different_parts() {
    for r in both(json!([
        {"old_string": "once", "new_string": "Once"},
        {"old_string": "a jolly", "new_string": "a happy"},
        {"old_string": "swagman", "new_string": "traveler", "replace_all": true}]))
    {
        let (msg, text) = ok_text(&r);
        assert_eq!(
            msg,
            format!("Applied 3 edits to {PATH}:\n1. Replaced \"once\" with \"Once\"\n2. Replaced \"a jolly\" with \"a happy\"\n3. Replaced \"swagman\" with \"traveler\"")
        );
        assert_eq!(
            text,
            MATILDA
                .replace("once", "Once")
                .replace("a jolly", "a happy")
                .replace("swagman", "traveler")
        );
    }
}

#[test]
fn conflicting_regions() {
    let edits = json!([
        {"old_string": "a jolly\nswagman", "new_string": "a happy\ntraveler"},
        {"old_string": "jolly\nswagman\ncamped", "new_string": "merry\nvagabond\nrested"}]);
    let e = refusal(run_on(Some(MATILDA), plan("claude-code", edits.clone())));
    assert_eq!(e.message, "String not found in file. Failed to apply edit.");
    assert_eq!((e.kind, e.edit_index), (Kind::ApplyFailed, Some(1)));
    let e = refusal(run_on(Some(MATILDA), plan("sequential", edits)));
    assert_eq!(
        e.message,
        "String to replace not found in file.\nString: jolly\nswagman\ncamped"
    );
    assert_eq!((e.kind, e.edit_index), (Kind::NotFound, Some(1)));
}

#[test]
fn replace_all_false_omitted_and_true() {
    let ambiguous = "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set \
         replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the \
         instance.\nString: billabong";
    for edits in [
        json!([{"old_string": "billabong", "new_string": "waterhole", "replace_all": false}]),
        json!([{"old_string": "billabong", "new_string": "waterhole"}]),
    ] {
        for r in both(edits.clone()) {
            assert_eq!(refusal(r).message, ambiguous);
        }
    }
    for r in
        both(json!([{"old_string": "billabong", "new_string": "waterhole", "replace_all": true}]))
    {
        let (msg, text) = ok_text(&r);
        assert_eq!(
            msg,
            format!("Applied 1 edit to {PATH}:\n1. Replaced \"billabong\" with \"waterhole\"")
        );
        assert_eq!(text.matches("waterhole").count(), 2);
    }
}

#[test]
fn string_absent_from_the_file() {
    for r in both(json!([{"old_string": "DEFINITELY_NOT_IN_FILE", "new_string": "something else"}]))
    {
        let e = refusal(r);
        assert_eq!(
            e.message,
            "String to replace not found in file.\nString: DEFINITELY_NOT_IN_FILE"
        );
        assert_eq!(e.kind, Kind::NotFound);
    }
}

#[test]
fn the_same_edit_twice() {
    let edits = json!([{"old_string": "jolly", "new_string": "happy"}, {"old_string": "jolly", "new_string": "happy"}]);
    let e = refusal(run_on(Some(MATILDA), plan("claude-code", edits.clone())));
    assert_eq!(e.message, "String not found in file. Failed to apply edit.");
    let e = refusal(run_on(Some(MATILDA), plan("sequential", edits)));
    assert_eq!(
        e.message,
        "String to replace not found in file.\nString: jolly"
    );
    assert_eq!(e.edit_index, Some(1));
    // The second edit looks applied already: the hint says so.
    assert_eq!(
        e.hint.as_deref(),
        Some("new_string is already present at line 5: this edit looks already applied.")
    );
}

#[test]
fn old_string_inside_an_earlier_new_string() {
    let chained =
        "Cannot edit file: old_string is a substring of a new_string from a previous edit.";
    let exact = json!([{"old_string": "till", "new_string": "the", "replace_all": true}, {"old_string": "the", "new_string": "some", "replace_all": true}]);
    let sub = json!([{"old_string": "till", "new_string": "the"}, {"old_string": "he", "new_string": "we", "replace_all": true}]);
    for edits in [&exact, &sub] {
        let e = refusal(run_on(Some(MATILDA), plan("claude-code", edits.clone())));
        assert_eq!(
            (e.message.as_str(), e.kind, e.edit_index),
            (chained, Kind::Chained, Some(1))
        );
    }
    let (_, t) = ok_text(&run_on(Some(MATILDA), plan("sequential", exact)));
    assert_eq!(t, MATILDA.replace("till", "the").replace("the", "some"));
    let (_, t) = ok_text(&run_on(Some(MATILDA), plan("sequential", sub)));
    assert_eq!(t, MATILDA.replace("till", "the").replace("he", "we"));
}

#[test]
fn edits_that_cancel_out() {
    for r in both(
        json!([{"old_string": "jolly", "new_string": "merry"}, {"old_string": "merry", "new_string": "jolly"}]),
    ) {
        // claude-code refuses earlier: "merry" is not in the original.
        let e = refusal(r);
        assert!(matches!(e.kind, Kind::Unchanged | Kind::NotFound), "{e:?}");
    }
    let e = refusal(run_on(
        Some(MATILDA),
        plan(
            "sequential",
            json!([{"old_string": "jolly", "new_string": "merry"}, {"old_string": "merry", "new_string": "jolly"}]),
        ),
    ));
    assert_eq!(
        e.message,
        "Original and edited file match exactly. Failed to apply edit."
    );
    assert_eq!((e.kind, e.edit_index), (Kind::Unchanged, None));
}

// ---- seed 001: the documented contract ----

#[test]
fn seed_001_template_expansion_creates_then_edits() {
    let p = json!({"file_path": "/templates/component.jsx", "edits": [
        {"old_string": "", "new_string": "import React from 'react';\n\nconst COMPONENT_NAME = () => {\n  return (\n    <div>\n      {/* Component content */}\n    </div>\n  );\n};\n\nexport default COMPONENT_NAME;"},
        {"old_string": "COMPONENT_NAME", "new_string": "UserProfile", "replace_all": true}]});
    let o = run_on(None, p).unwrap();
    let f = &o.files[0];
    assert!(f.created);
    assert!(
        f.text.contains("const UserProfile = () => {")
            && f.text.ends_with("export default UserProfile;")
    );
    assert!(!f.text.contains("COMPONENT_NAME"));
    assert_eq!(o.message(), "Applied 2 edits to /templates/component.jsx:\n1. Created the file\n2. Replaced \"COMPONENT_NAME\" with \"UserProfile\"");
}

#[test]
fn seed_001_new_file_and_missing_file() {
    let o = run_on(None, json!({"file_path": "/new/file/path.js", "edits": [{"old_string": "", "new_string": "export const A = 1;\n"}]})).unwrap();
    assert_eq!(o.files[0].text, "export const A = 1;\n");
    assert!(o.files[0].created);
    let e = refusal(run_on(
        None,
        json!({"file_path": "/missing.js", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ));
    assert_eq!(e.kind, Kind::FileNotFound);
    assert_eq!(
        e.message,
        "File does not exist: /missing.js. To create it, make the first edit's old_string empty."
    );
}

#[test]
fn seed_001_usage_patterns() {
    let js = "// Simple data processing function\nfunction processData(data) {\n  return data.map(item => transform(item));\n}\nconst oldName = 'value';\nconsole.log(oldName);\n";
    let o = run_on(Some(js), json!({"file_path": "/src/utils.js", "edits": [
        {"old_string": "function processData(data) {", "new_string": "function processData(data, options = {}) {"},
        {"old_string": "  return data.map(item => transform(item));", "new_string": "  return data.map(item => transform(item, options));"},
        {"old_string": "// Simple data processing function", "new_string": "// Data processing function with configurable options"},
        {"old_string": "const oldName = 'value';", "new_string": "const newName = 'value';"},
        {"old_string": "console.log(oldName);", "new_string": "console.log(newName);"}]})).unwrap();
    assert_eq!(o.files[0].text, "// Data processing function with configurable options\nfunction processData(data, options = {}) {\n  return data.map(item => transform(item, options));\n}\nconst newName = 'value';\nconsole.log(newName);\n");

    let imports = "import React from 'react';\nimport { useState } from 'react';\nimport './styles.css';\nimport './app.css';\n";
    let o = run_on(Some(imports), json!({"file_path": "/src/app.js", "edits": [
        {"old_string": "import React from 'react';\nimport { useState } from 'react';", "new_string": "import React, { useState } from 'react';"},
        {"old_string": "import './styles.css';\nimport './app.css';", "new_string": "import './styles.css';"}]})).unwrap();
    assert_eq!(
        o.files[0].text,
        "import React, { useState } from 'react';\nimport './styles.css';\n"
    );

    // "Risky": a replace_all that changes a later edit's target makes the later edit miss.
    let src = "function oldName() {}\n// Function oldName implementation\n";
    let e = refusal(run_on(
        Some(src),
        json!({"file_path": "/c.js", "edits": [
        {"old_string": "oldName", "new_string": "newName", "replace_all": true},
        {"old_string": "// Function oldName implementation", "new_string": "// Function newName implementation"}]}),
    ));
    assert_eq!((e.kind, e.edit_index), (Kind::NotFound, Some(1)));
    assert_eq!(
        e.hint.as_deref(),
        Some("new_string is already present at line 2: this edit looks already applied.")
    );

    // Complex refactoring with no-op edits inside is refused as a whole (the documented failure scenario 3).
    let e = refusal(run_on(
        Some("  return result;\n"),
        json!({"file_path": "/l.js", "edits": [
        {"old_string": "  return result;", "new_string": "  return result;"}]}),
    ));
    assert_eq!(e.kind, Kind::NoOp);
}

// ---- seed 002: partial success ----

#[test]
fn seed_002_partial_keeps_what_applies_and_reports_the_rest() {
    let p = json!({"file_path": PATH, "mode": "partial", "edits": [
        {"old_string": "jolly", "new_string": "happy"},
        {"old_string": "DOESNOTEXIST", "new_string": "xyz"},
        {"old_string": "swagman", "new_string": "traveler"},
        {"old_string": "billabong", "new_string": "waterhole", "replace_all": true}]});
    let o = run_on(Some(MATILDA), p).unwrap();
    let f = &o.files[0];
    assert_eq!(
        f.text,
        MATILDA
            .replace("jolly", "happy")
            .replace("billabong", "waterhole")
    );
    assert_eq!(f.edits_applied(), 2);
    let failed: Vec<(Option<usize>, Kind)> =
        f.failed.iter().map(|r| (r.edit_index, r.kind)).collect();
    assert_eq!(
        failed,
        vec![(Some(1), Kind::NotFound), (Some(2), Kind::Ambiguous)]
    );
    assert!(o.message().starts_with(&format!("Applied 2 of 4 edits to {PATH}:\n1. Replaced \"jolly\" with \"happy\"\n4. Replaced \"billabong\" with \"waterhole\"\nFailed edits:\n2. String to replace not found in file.\nString: DOESNOTEXIST")), "{}", o.message());
}

#[test]
fn seed_002_partial_fails_only_when_every_edit_fails() {
    let e = refusal(run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "mode": "partial", "edits": [
        {"old_string": "NOPE", "new_string": "x"}, {"old_string": "swagman", "new_string": "y"}]}),
    ));
    assert_eq!(e.kind, Kind::NotFound);
    assert_eq!(e.message, "None of the 2 edits could be applied:\n1. String to replace not found in file.\nString: NOPE\n2. Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: swagman");
}

// ---- seed 003: expected_replacements ----

#[test]
fn seed_003_expected_replacements() {
    let (_, t) = ok_text(&run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": [{"old_string": "swagman", "new_string": "traveler", "expected_replacements": 2}]}),
    ));
    assert_eq!(t, MATILDA.replace("swagman", "traveler"));
    let e = refusal(run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": [{"old_string": "he", "new_string": "she", "expected_replacements": 3}]}),
    ));
    assert_eq!(e.kind, Kind::CountMismatch);
    assert_eq!(e.message, "Found 18 matches of the string to replace, but expected 3. The number of actual matches must equal the expected replacements. Please adjust your string to match or update the expected count.\nString: he");
    // Default 1: like replace_all false.
    let e = refusal(run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": [{"old_string": "swagman", "new_string": "x", "expected_replacements": 1}]}),
    ));
    assert_eq!(e.kind, Kind::Ambiguous);
    // Both given: they must agree.
    let e = refusal(run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": [{"old_string": "swagman", "new_string": "x", "replace_all": false, "expected_replacements": 2}]}),
    ));
    assert_eq!(e.kind, Kind::InvalidPlan);
    assert!(e
        .message
        .contains("`edits[0].replace_all` is false but `edits[0].expected_replacements` is 2"));
    let (_, t) = ok_text(&run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": [{"old_string": "billabong", "new_string": "x", "replace_all": true, "expected_replacements": 2}]}),
    ));
    assert_eq!(t.matches('x').count(), MATILDA.matches('x').count() + 2);
    let e = refusal(run_on(
        Some(MATILDA),
        json!({"file_path": PATH, "edits": [{"old_string": "billabong", "new_string": "x", "replace_all": true, "expected_replacements": 3}]}),
    ));
    assert_eq!(e.kind, Kind::CountMismatch);
}
