//! Edits addressed by symbol, and renames, through the editor's language servers (`multiedit/symbols`,
//! `multiedit/rename`), as the scripted editor answers them: one WorkspaceEdit, results that count what
//! changed, and refusals with their exact words that change nothing.

use crate::support::disk as disk_support;
use crate::support::lsp as lsp_support;

use std::fs;
use std::path::{Path, PathBuf};

use lsp_support::{position, uri, Editor, Enc, Options};
use serde_json::{json, Value};

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap().join("ws");
    fs::create_dir(&ws).unwrap();
    (dir, ws)
}

fn editor(ws: &Path) -> Editor {
    let mut o = Options::new(ws);
    o.symbols = true;
    o.rename = true;
    Editor::start(o)
}

/// A DocumentSymbol as a language server gives it: `whole` (unique in `text`) is its range, the first
/// `name` in it its selection range.
fn symbol(text: &str, name: &str, kind: u32, whole: &str, children: Vec<Value>) -> Value {
    let start = text
        .find(whole)
        .unwrap_or_else(|| panic!("{whole:?} not in the text"));
    assert_eq!(text.matches(whole).count(), 1, "{whole:?} is not unique");
    let sel = start + whole.find(name).unwrap();
    let range = |a: usize, b: usize| json!({"start": position(text, a, Enc::Utf16), "end": position(text, b, Enc::Utf16)});
    json!({"name": name, "kind": kind, "range": range(start, start + whole.len()), "selectionRange": range(sel, sel + name.len()), "children": children})
}

const CALC: &str = "\
export class Calculator {
  total = 0;

  add(a: number, b: number): number {
    return a + b;
  }

  sub(a: number, b: number): number {
    return a - b;
  }
}

export function main() {
  return new Calculator().add(1, 2);
}
";

const ADD: &str = "add(a: number, b: number): number {\n    return a + b;\n  }";
const SUB: &str = "sub(a: number, b: number): number {\n    return a - b;\n  }";
const MAIN: &str = "export function main() {\n  return new Calculator().add(1, 2);\n}";

/// The outline of `text` (CALC, maybe with lines before it).
fn calc_symbols(text: &str) -> Value {
    let class_text =
        &text[text.find("export class").unwrap()..text.find("}\n\nexport function").unwrap() + 1];
    json!([
        symbol(
            text,
            "Calculator",
            5,
            class_text,
            vec![
                symbol(text, "total", 7, "total = 0;", vec![]),
                symbol(text, "add", 6, ADD, vec![]),
                symbol(text, "sub", 6, SUB, vec![]),
            ]
        ),
        symbol(text, "main", 12, MAIN, vec![]),
    ])
}

/// Asserts a refusal's kind and message, and returns its data.
fn refused(r: Result<Value, Value>, kind: &str, message: &str) -> Value {
    let e = r.expect_err("refused");
    assert_eq!(e["data"]["kind"], kind, "{e}");
    assert_eq!(e["data"]["message"], message, "{e}");
    e["data"].clone()
}

#[test]
fn a_method_body_and_a_function_after_another_by_symbol_in_a_buffer_with_unsaved_changes() {
    let (_d, ws) = workspace();
    let calc = ws.join("calc.ts");
    fs::write(&calc, CALC).unwrap();
    let mut ed = editor(&ws);
    // The user's unsaved line: every line number moves by one, which the symbols know and the disk does not.
    let typed = format!("// mine\n{CALC}");
    ed.open(&calc, &typed);
    ed.symbols.insert(uri(&calc), calc_symbols(&typed));
    let r = ed
        .apply(json!({"file_path": calc, "edits": [
            {"symbol": "Calculator/add", "replace": "body", "new_string": "const sum = a + b;\nreturn sum;"},
            {"symbol": "main", "insert": "after", "new_string": "\nexport function twice(x: number) {\n  return 2 * x;\n}"},
        ]}))
        .expect("applied");
    assert_eq!(
        r["message"],
        format!("Applied 2 edits to {}:\n1. Replaced the body of method Calculator/add (lines 5-7)\n2. Inserted after function main (lines 14-16)", calc.display())
    );
    assert_eq!(
        ed.text(&calc),
        typed
            .replace(
                "    return a + b;\n",
                "    const sum = a + b;\n    return sum;\n"
            )
            .replace(
                "add(1, 2);\n}\n",
                "add(1, 2);\n}\n\nexport function twice(x: number) {\n  return 2 * x;\n}\n"
            )
    );
    assert_eq!(ed.edits_seen.len(), 1, "one WorkspaceEdit");
    assert_eq!(
        ed.symbols_seen,
        [json!({"uri": uri(&calc)})],
        "asked once for the file"
    );
    assert_eq!(
        fs::read_to_string(&calc).unwrap(),
        CALC,
        "the disk is the editor's to save"
    );
    ed.assert_server_agrees(&calc);
}

#[test]
fn a_plan_is_resolved_on_the_text_the_symbols_were_computed_on_when_the_user_types_meanwhile() {
    let (_d, ws) = workspace();
    let calc = ws.join("calc.ts");
    fs::write(&calc, CALC).unwrap();
    let mut ed = editor(&ws);
    ed.open(&calc, CALC);
    ed.symbols.insert(uri(&calc), calc_symbols(CALC));
    // Right after the editor answers, the user types a line at the top: the answer is stale, so the
    // server asks again (its second answer is computed on the new text).
    ed.types_after_symbols
        .push((calc.clone(), 0, 0, "// typed\n".into()));
    let typed = format!("// typed\n{CALC}");
    let second = calc_symbols(&typed);
    let id = ed.request("workspace/executeCommand", json!({"command": "multiedit.apply", "arguments": [
        {"file_path": calc, "edits": [{"symbol": "sub", "replace": "whole", "new_string": "mul(a: number, b: number): number {\n  return a * b;\n}"}]}
    ]}));
    // The first answer goes out with the old symbols; the typing follows it; then the second answer.
    ed.serve_until(lsp_support::Answer::Apply, |e| {
        if e.symbols_seen.len() == 1 {
            Some(())
        } else {
            None
        }
    });
    ed.symbols.insert(uri(&calc), second);
    let r = ed
        .response(id, lsp_support::Answer::Apply)
        .expect("applied");
    assert_eq!(ed.symbols_seen.len(), 2, "asked again after the user typed");
    assert_eq!(
        r["message"],
        format!(
            "Applied 1 edit to {}:\n1. Replaced method Calculator/sub (lines 9-11)",
            calc.display()
        )
    );
    assert_eq!(
        ed.text(&calc),
        typed.replace(
            SUB,
            "mul(a: number, b: number): number {\n    return a * b;\n  }"
        )
    );
}

#[test]
fn symbol_refusals_say_what_to_fix_and_change_nothing() {
    let (_d, ws) = workspace();
    let calc = ws.join("calc.ts");
    let script = ws.join("tool.py");
    let notes = ws.join("notes.txt");
    fs::write(&calc, CALC).unwrap();
    fs::write(&script, "def add(a, b):\n    return a + b\n").unwrap();
    fs::write(&notes, "plain\n").unwrap();
    let before = disk_support::snapshot(&ws);
    let mut ed = editor(&ws);
    ed.symbols.insert(uri(&calc), calc_symbols(CALC));
    let py = "def add(a, b):\n    return a + b\n";
    ed.symbols.insert(
        uri(&script),
        json!([symbol(
            py,
            "add",
            12,
            "def add(a, b):\n    return a + b",
            vec![]
        )]),
    );
    ed.symbols.insert(uri(&notes), Value::Null);
    let one = |path: &Path, e: Value| json!({"file_path": path, "edits": [e]});

    let data = refused(
        ed.apply(one(
            &calc,
            json!({"symbol": "Calculator/ad", "replace": "body", "new_string": "return 0;"}),
        )),
        "symbol_not_found",
        "Symbol not found in file.\nSymbol: Calculator/ad",
    );
    assert_eq!(
        data["hint"],
        "The closest: method Calculator/add (lines 4-6).\nThe file's outline (name paths to use):\n\
         class Calculator  (lines 1-11)\n  property Calculator/total  (line 2)\n  method Calculator/add  (lines 4-6)\n  method Calculator/sub  (lines 8-10)\n\
         function main  (lines 13-15)\n"
    );
    assert_eq!(
        (data["edit_index"].as_u64(), data["file_path"].as_str()),
        (Some(0), calc.to_str())
    );

    refused(
        ed.apply(one(&script, json!({"symbol": "add", "replace": "body", "new_string": "return 0"}))),
        "no_body",
        "Cannot find the body of function add (lines 1-2): multiedit finds a body by the file's braces, in C, C++, Objective-C, \
         C#, Java, JavaScript, TypeScript, Go, Rust, Kotlin, Swift, Scala, Dart and PHP files; .py files are not among them. \
         Nothing was changed.",
    );
    refused(
        ed.apply(one(&notes, json!({"symbol": "plain", "replace": "whole", "new_string": "x"}))),
        "no_language_server",
        &format!(
            "No language server in multiedit test editor gives the symbols of {}: none runs for its language there (or none \
             that can). Nothing was changed. Start one for it in the editor, or address the text with old_string.",
            notes.display()
        ),
    );
    // An edit of the plan before the symbol edit changed the text where the symbol begins.
    refused(
        ed.apply(json!({"file_path": calc, "edits": [
            {"old_string": "}\n\n  sub(a", "new_string": "}\n\n  diff(a"},
            {"symbol": "sub", "replace": "whole", "new_string": "sub() {}"},
        ]})),
        "overlaps",
        "Method Calculator/sub (lines 8-10) begins or ends inside text that an earlier edit of this plan changed, so the place \
         its language server gave no longer holds. Nothing was changed. Put this edit before the one that changes that text, or \
         address it with old_string.",
    );
    assert!(ed.edits_seen.is_empty(), "nothing was sent to the editor");
    // The documents the editor opened to answer are untouched, like the disk.
    assert_eq!(ed.text(&calc), CALC);
    assert_eq!(disk_support::snapshot(&ws), before);

    // An editor that does not answer multiedit/symbols.
    let mut plain = Editor::start(Options::new(&ws));
    refused(
        plain.apply(one(&calc, json!({"symbol": "add", "replace": "body", "new_string": "return 0;"}))),
        "needs_editor",
        "A symbol edit is resolved by the editor's language servers, and multiedit test editor does not offer them to \
         multiedit (it does not announce the client capability experimental.multiedit.symbols). Nothing was changed. Use VS \
         Code with the MultiEdit extension, or Neovim with multiedit's symbols handler (editors/nvim), or address the text \
         with old_string.",
    );
    assert_eq!(disk_support::snapshot(&ws), before);
}

/// Every name an ambiguity refusal offers, sent back, names one symbol: a top-level `add` beside
/// `Calculator/add` is `/add`, never `add` (which names both and would be refused again).
#[test]
fn each_name_an_ambiguity_refusal_offers_names_one_symbol() {
    let (_d, ws) = workspace();
    let file = ws.join("calc.ts");
    let text = "export class Calculator {\n  add(a: number, b: number): number {\n    return a + b;\n  }\n}\n\n\
                export function add(a: number, b: number): number {\n  return a + b;\n}\n";
    fs::write(&file, text).unwrap();
    let method = "add(a: number, b: number): number {\n    return a + b;\n  }";
    let function = "export function add(a: number, b: number): number {\n  return a + b;\n}";
    let mut ed = editor(&ws);
    ed.symbols.insert(
        uri(&file),
        json!([
            symbol(
                text,
                "Calculator",
                5,
                &text[..text.find("}\n\n").unwrap() + 1],
                vec![symbol(text, "add", 6, method, vec![])]
            ),
            symbol(text, "add", 12, function, vec![]),
        ]),
    );
    let body = |name: &str| json!({"file_path": file, "edits": [{"symbol": name, "replace": "body", "new_string": "return 0;"}]});
    let data = refused(
        ed.preview(body("add")),
        "symbol_ambiguous",
        &format!(
            "Found 2 symbols named add in {}, but a symbol edit must name one: name it by its place among them (add[0] is the first \
             in the file) or by its path (Calculator/add, /add).\nSymbol: add",
            file.display()
        ),
    );
    assert_eq!(
        data["hint"],
        "The symbols it names:\nadd[0]: method Calculator/add (lines 2-4)\nadd[1]: function /add (lines 7-9)"
    );
    // Each name the refusal offers, taken from its words, and the symbol it offers it for.
    let message = data["message"].as_str().unwrap();
    let mut offered: Vec<(String, &str)> = Vec::new();
    let paths = message
        .split_once(" or by its path (")
        .unwrap()
        .1
        .split_once(").")
        .unwrap()
        .0;
    for (path, what) in paths.split(", ").zip(["method", "function"]) {
        offered.push((path.to_string(), what));
    }
    for line in data["hint"].as_str().unwrap().lines().skip(1) {
        let (place, described) = line.split_once(": ").unwrap();
        let (what, rest) = described.split_once(' ').unwrap();
        let address = rest.split_once(" (").unwrap().0;
        offered.push((place.to_string(), what));
        offered.push((address.to_string(), what));
    }
    assert_eq!(offered.len(), 6);
    for (name, what) in offered {
        let lines = if what == "method" {
            "method Calculator/add (lines 2-4)"
        } else {
            "function /add (lines 7-9)"
        };
        let r = ed
            .preview(body(&name))
            .unwrap_or_else(|e| panic!("{name} is refused: {e}"));
        assert_eq!(
            r["message"],
            format!(
                "Applied 1 edit to {}:\n1. Replaced the body of {lines}",
                file.display()
            ),
            "{name}"
        );
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn ambiguous_overloads_are_listed_and_one_is_chosen_by_its_place() {
    let (_d, ws) = workspace();
    let file = ws.join("calc.cpp");
    let text = "int add(int a) { return a; }\ndouble add(double a) { return a; }\n";
    fs::write(&file, text).unwrap();
    let mut ed = editor(&ws);
    ed.symbols.insert(
        uri(&file),
        json!([
            symbol(text, "add", 12, "int add(int a) { return a; }", vec![]),
            symbol(
                text,
                "add",
                12,
                "double add(double a) { return a; }",
                vec![]
            ),
        ]),
    );
    let data = refused(
        ed.apply(json!({"file_path": file, "edits": [{"symbol": "add", "replace": "body", "new_string": "return -a;"}]})),
        "symbol_ambiguous",
        &format!(
            "Found 2 symbols named add in {}, but a symbol edit must name one: name it by its place among them (add[0] is the first \
             in the file).\nSymbol: add",
            file.display()
        ),
    );
    assert_eq!(
        data["hint"],
        "The symbols it names:\nadd[0]: function (line 1)\nadd[1]: function (line 2)"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
    let r = ed.apply(json!({"file_path": file, "edits": [{"symbol": "add[1]", "replace": "body", "new_string": "return -a;"}]})).expect("applied");
    assert_eq!(
        r["message"],
        format!(
            "Applied 1 edit to {}:\n1. Replaced the body of function add[1] (line 2)",
            file.display()
        )
    );
    assert_eq!(
        ed.text(&file),
        "int add(int a) { return a; }\ndouble add(double a) { return -a; }\n"
    );
}

/// A rename provider that renames every `total` of the texts it was given (the buffers and disk files
/// as the test set them), as a language server's WorkspaceEdit.
fn renamer(texts: Vec<(PathBuf, String)>) -> lsp_support::RenameServer {
    Box::new(move |params: &Value| {
        let new_name = params["newName"].as_str().unwrap();
        let mut changes = serde_json::Map::new();
        for (path, text) in &texts {
            let edits: Vec<Value> = text
                .match_indices("total")
                .map(|(at, _)| json!({"range": {"start": position(text, at, Enc::Utf16), "end": position(text, at + 5, Enc::Utf16)}, "newText": new_name}))
                .collect();
            changes.insert(uri(path), json!(edits));
        }
        json!({"edit": {"changes": changes}, "placeholder": "total"})
    })
}

#[test]
fn a_rename_across_three_files_one_unsaved_joins_the_plans_one_edit_and_is_counted() {
    let (_d, ws) = workspace();
    let (a, b, c) = (ws.join("a.ts"), ws.join("b.ts"), ws.join("c.ts"));
    let a_disk = "export let total = 0;\n";
    let a_typed = "export let total = 0;\nexport function bump() { total += 1; }\n";
    let b_text = "import { total } from './a';\nconsole.log(total);\n";
    let c_text = "import { total } from './a';\nexport const twice = total * 2;\n";
    fs::write(&a, a_disk).unwrap();
    fs::write(&b, b_text).unwrap();
    fs::write(&c, c_text).unwrap();
    let mut ed = editor(&ws);
    ed.open(&a, a_typed);
    ed.renames = Some(renamer(vec![
        (a.clone(), a_typed.into()),
        (b.clone(), b_text.into()),
        (c.clone(), c_text.into()),
    ]));
    let r = ed
        .apply(json!({
            "rename": {"file_path": a, "line": 1, "column": 12, "new_name": "sum"},
            "file_path": a,
            "edits": [{"old_string": "sum += 1;", "new_string": "sum += 2;"}],
        }))
        .expect("applied");
    assert_eq!(
        ed.renames_seen,
        [json!({"uri": uri(&a), "position": {"line": 0, "character": 11}, "newName": "sum"})]
    );
    assert_eq!(
        ed.edits_seen.len(),
        1,
        "the rename and the edit are one WorkspaceEdit"
    );
    assert_eq!(
        ed.text(&a),
        "export let sum = 0;\nexport function bump() { sum += 2; }\n"
    );
    assert_eq!(
        fs::read_to_string(&b).unwrap(),
        b_text.replace("total", "sum")
    );
    assert_eq!(
        fs::read_to_string(&c).unwrap(),
        c_text.replace("total", "sum")
    );
    assert_eq!(
        r["message"],
        format!(
            "Renamed total to sum: 6 occurrences in 3 files.\n\nApplied 2 edits to {}:\n- Renamed total to sum (2 occurrences)\n1. \
             Replaced \"sum += 1;\" with \"sum += 2;\"\n\nApplied 1 edit to {}:\n- Renamed total to sum (2 occurrences)\n\nApplied 1 \
             edit to {}:\n- Renamed total to sum (2 occurrences)",
            a.display(),
            b.display(),
            c.display()
        )
    );
    assert_eq!(
        r["rename"],
        json!({"old_name": "total", "new_name": "sum", "occurrences": 6, "files": [
            {"file_path": a, "occurrences": 2}, {"file_path": b, "occurrences": 2}, {"file_path": c, "occurrences": 2}
        ]})
    );
    assert_eq!(
        r["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["replacements"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [3, 2, 2]
    );
}

#[test]
fn rename_refusals_say_why_and_change_nothing() {
    let (_d, ws) = workspace();
    let outside_dir = ws.parent().unwrap().join("elsewhere");
    fs::create_dir(&outside_dir).unwrap();
    let (a, outside) = (ws.join("a.ts"), outside_dir.join("lib.ts"));
    let a_text = "export let total = 0;\n";
    fs::write(&a, a_text).unwrap();
    fs::write(&outside, "import { total } from '../ws/a';\n").unwrap();
    let before = (
        disk_support::snapshot(&ws),
        fs::read_to_string(&outside).unwrap(),
    );
    let mut ed = editor(&ws);
    ed.symbols.insert(
        uri(&a),
        json!([symbol(a_text, "total", 13, "total = 0", vec![])]),
    );
    let rename = |new_name: &str| json!({"rename": {"file_path": a, "symbol": "total", "new_name": new_name}});

    ed.renames = Some(Box::new(
        |_: &Value| json!({"refused": "You cannot rename this element."}),
    ));
    refused(ed.apply(rename("sum")), "rename_refused", "The language server refused the rename of total to sum (it said: You cannot rename this element.). Nothing was changed.");
    ed.renames = Some(Box::new(
        |_: &Value| json!({"edit": {"changes": {}}, "placeholder": "total"}),
    ));
    refused(ed.apply(rename("sum")), "unchanged", "The rename of total to sum changes nothing: the language server's rename edits no file. Nothing was changed.");
    ed.renames = Some(renamer(vec![(a.clone(), a_text.into())]));
    refused(ed.apply(rename("total")), "unchanged", "The rename of total to total changes nothing: the new name is the name it has. Nothing was changed.");
    ed.renames = Some(renamer(vec![
        (a.clone(), a_text.into()),
        (outside.clone(), "import { total } from '../ws/a';\n".into()),
    ]));
    let data = refused(
        ed.apply(rename("sum")),
        "outside_workspace",
        &format!(
            "The rename to sum also edits {} outside the workspace folders ({}), which multiedit may not edit. Nothing was \
             changed. Rename it in the editor, or open a workspace that holds it.",
            outside.display(),
            ws.display()
        ),
    );
    assert_eq!(data["file_path"], outside.display().to_string());
    ed.renames = None;
    refused(
        ed.apply(rename("sum")),
        "no_language_server",
        &format!(
            "No language server in multiedit test editor renames in {}: none runs for its language there (or none that can). \
             Nothing was changed. Start one for it in the editor, or address the text with old_string.",
            a.display()
        ),
    );
    assert!(ed.edits_seen.is_empty());
    assert_eq!(ed.text(&a), a_text);
    assert_eq!(
        (
            disk_support::snapshot(&ws),
            fs::read_to_string(&outside).unwrap()
        ),
        before
    );

    // The rename comes first; a symbol edit after it replaces the renamed text it holds.
    ed.renames = Some(renamer(vec![(a.clone(), a_text.into())]));
    let r = ed
        .apply(json!({"rename": {"file_path": a, "symbol": "total", "new_name": "sum"}, "file_path": a, "edits": [{"symbol": "total", "replace": "whole", "new_string": "sum = 10"}]}))
        .expect("applied");
    assert_eq!(ed.text(&a), "export let sum = 10;\n");
    assert_eq!(
        r["message"],
        format!("Renamed total to sum: 1 occurrence in 1 file.\n\nApplied 2 edits to {}:\n- Renamed total to sum (1 occurrence)\n1. Replaced variable total (line 1)", a.display())
    );
}

/// A rename past the caps (more than 200,000 occurrences, or more than 10,000 files) is refused with
/// its counts before any file is read: a million occurrences kept the server busy for minutes at 5 GB.
#[test]
fn a_rename_past_the_caps_is_refused_with_its_counts_and_changes_nothing() {
    let (_d, ws) = workspace();
    let (a, b) = (ws.join("a.ts"), ws.join("b.ts"));
    let a_text = "export let total = 0;\n";
    fs::write(&a, a_text).unwrap();
    fs::write(&b, "total;\n".repeat(10)).unwrap();
    let before = disk_support::snapshot(&ws);
    let mut ed = editor(&ws);
    let rename = json!({"rename": {"file_path": a, "line": 1, "column": 12, "new_name": "sum"}});
    // Written as text: 200,001 edits built as JSON values take long in a debug build.
    let edit = |line: usize| {
        format!("{{\"range\":{{\"start\":{{\"line\":{line},\"character\":0}},\"end\":{{\"line\":{line},\"character\":5}}}},\"newText\":\"sum\"}}")
    };
    let many: Vec<String> = (0..200_000).map(|i| edit(i % 10)).collect();
    let answer = format!(
        "{{\"edit\":{{\"changes\":{{{}:[{}],{}:[{}]}}}},\"placeholder\":\"total\"}}",
        Value::from(uri(&a)),
        "{\"range\":{\"start\":{\"line\":0,\"character\":11},\"end\":{\"line\":0,\"character\":16}},\"newText\":\"sum\"}",
        Value::from(uri(&b)),
        many.join(",")
    );
    let answer: Value = serde_json::from_str(&answer).unwrap();
    ed.renames = Some(Box::new(move |_: &Value| answer.clone()));
    refused(
        ed.apply(rename.clone()),
        "too_large",
        "The rename of total to sum reaches 200,001 occurrences in 2 files, more than the 200,000 occurrences multiedit \
         applies in one plan. Nothing was changed. Rename it with the editor's own rename.",
    );
    // 10,001 files, which need not exist: nothing is read.
    let files: Vec<String> = (0..10_001)
        .map(|k| {
            format!(
                "{}:[{}]",
                Value::from(uri(&ws.join(format!("m/{k}.ts")))),
                edit(0)
            )
        })
        .collect();
    let answer: Value = serde_json::from_str(&format!(
        "{{\"edit\":{{\"changes\":{{{}}}}},\"placeholder\":\"total\"}}",
        files.join(",")
    ))
    .unwrap();
    ed.renames = Some(Box::new(move |_: &Value| answer.clone()));
    let data = refused(
        ed.apply(rename.clone()),
        "too_large",
        "The rename of total to sum reaches 10,001 occurrences in 10,001 files, more than the 10,000 files multiedit \
         applies in one plan. Nothing was changed. Rename it with the editor's own rename.",
    );
    assert_eq!(data["file_path"], a.display().to_string());
    assert!(ed.edits_seen.is_empty(), "no edit sent");
    assert_eq!(ed.text(&a), a_text);
    assert_eq!(disk_support::snapshot(&ws), before, "nothing changed");
    // Within the caps, the rename applies.
    ed.renames = Some(renamer(vec![(a.clone(), a_text.into())]));
    ed.apply(rename).expect("applied");
    assert_eq!(ed.text(&a), "export let sum = 0;\n");
}

#[test]
fn without_an_editor_symbol_plans_and_renames_are_refused_for_what_would_serve_them() {
    let (_d, ws) = workspace();
    let calc = ws.join("calc.ts");
    fs::write(&calc, CALC).unwrap();
    let plan = ws.join("plan.json");
    // Where no editor holds the files, multiedit starts a language server only for a project the user
    // allowed (tests/language_servers.rs); this one is not, in a state folder of its own.
    let state = ws.join("state");
    let refused = |what: &str| {
        format!(
            "{what} is resolved by the language servers of an editor running multiedit lsp, or by one multiedit starts \
             itself, which it does only for a project whose user allowed it (a language server can run the project's own \
             code), and {ws} is not allowed. Nothing was changed. To allow it, run `multiedit setup --language-servers` in \
             {ws}; or open the project in an editor with multiedit (VS Code with the MultiEdit extension, Neovim with \
             multiedit lsp and its symbols handler) and send the plan through it; or address the text with old_string.",
            ws = ws.display()
        )
    };
    for (p, message) in [
        (
            json!({"file_path": calc, "edits": [{"old_string": "total = 0", "new_string": "total = 1"}, {"symbol": "Calculator/add", "replace": "body", "new_string": "return 0;"}]}),
            refused("Edit 2 names the symbol Calculator/add, which"),
        ),
        (
            json!({"rename": {"file_path": calc, "symbol": "total", "new_name": "sum"}}),
            refused("The rename to sum"),
        ),
    ] {
        fs::write(&plan, p.to_string()).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_multiedit"))
            .args(["apply", "--json"])
            .arg(&plan)
            .current_dir(&ws)
            .env("XDG_STATE_HOME", &state)
            .output()
            .unwrap();
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (
                out.status.code(),
                result["error"]["kind"].as_str(),
                result["error"]["message"].as_str()
            ),
            (Some(1), Some("needs_editor"), Some(message.as_str()))
        );
        assert_eq!(fs::read_to_string(&calc).unwrap(), CALC);
    }
}

#[test]
fn the_outline_names_each_symbol_by_the_path_a_plan_uses() {
    let (_d, ws) = workspace();
    let calc = ws.join("calc.ts");
    fs::write(&calc, CALC).unwrap();
    let mut ed = editor(&ws);
    ed.symbols.insert(uri(&calc), calc_symbols(CALC));
    let r = ed
        .execute(
            "multiedit.symbols",
            json!([{"file_path": calc}]),
            lsp_support::Answer::Apply,
        )
        .expect("an outline");
    assert_eq!(
        r["text"],
        format!(
            "{}: 5 symbols, as the editor's language servers give them (kind, name path for a plan's \"symbol\", lines):\n\
             class Calculator  (lines 1-11)\n  property Calculator/total  (line 2)\n  method Calculator/add  (lines 4-6)\n  \
             method Calculator/sub  (lines 8-10)\nfunction main  (lines 13-15)\n",
            calc.display()
        )
    );
    assert_eq!(
        r["symbols"][0]["children"][1],
        json!({"name": "add", "path": "Calculator/add", "kind": "method", "line": 4, "end_line": 6})
    );
    assert_eq!(r["symbols"][1]["path"], "main");
    // A file no language server serves.
    let notes = ws.join("notes.txt");
    fs::write(&notes, "plain\n").unwrap();
    refused(
        ed.execute("multiedit.symbols", json!([{"file_path": notes}]), lsp_support::Answer::Apply),
        "no_language_server",
        &format!(
            "No language server in multiedit test editor gives the symbols of {}: none runs for its language there (or none that \
             can). Nothing was changed. Start one for it in the editor, or address the text with old_string.",
            notes.display()
        ),
    );
}
