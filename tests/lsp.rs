//! End-to-end tests of `multiedit lsp`: the built binary, spoken to over stdio as an editor would.

use crate::support::lsp as lsp_support;
use crate::support::report as report_support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_support::{uri, Answer, Editor, Enc, Options};
use serde_json::{json, Value};

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    // Canonical, so the paths the tests compare are the paths the server resolves.
    let ws = dir.path().canonicalize().unwrap().join("ws");
    fs::create_dir(&ws).unwrap();
    (dir, ws)
}

fn start(ws: &Path) -> Editor {
    Editor::start(Options::new(ws))
}

fn plan(path: &Path, edits: Value) -> Value {
    json!({"file_path": path, "edits": edits})
}

/// The kind of each operation of an applyEdit's documentChanges (`edit` for a text edit).
fn change_kinds(apply_edit: &Value) -> Vec<String> {
    apply_edit["edit"]["documentChanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c.get("kind")
                .map_or("edit".to_string(), |k| k.as_str().unwrap().to_string())
        })
        .collect()
}

fn edit(old: &str, new: &str) -> Value {
    json!({"old_string": old, "new_string": new})
}

/// A refusal as the server must send it: the engine's message as the JSON-RPC message and the
/// structured refusal, with the same message, as data.
fn refusal(r: Result<Value, Value>) -> (String, Value) {
    let e = r.expect_err("the command should be refused");
    let data = e["data"].clone();
    assert_eq!(
        e["message"], data["message"],
        "message and data.message differ: {e}"
    );
    let kind = data["kind"]
        .as_str()
        .unwrap_or_else(|| panic!("no kind in {e}"))
        .to_string();
    let code = e["code"].as_i64().unwrap();
    if kind == "invalid_plan" {
        assert_eq!(code, -32602, "{e}");
    } else {
        assert_eq!(code, -32803, "{e}");
    }
    (kind, data)
}

#[test]
fn open_buffer_with_emoji_changed_incrementally_then_applied() {
    let (_d, ws) = workspace();
    let a = ws.join("a.rs");
    fs::write(&a, "what is on disk\n").unwrap();
    let mut ed = start(&ws);
    assert_eq!(ed.init_result["capabilities"]["positionEncoding"], "utf-16");
    let commands = &ed.init_result["capabilities"]["executeCommandProvider"]["commands"];
    assert_eq!(
        commands,
        &json!([
            "multiedit.apply",
            "multiedit.preview",
            "multiedit.read",
            "multiedit.symbols"
        ])
    );

    ed.open(&a, "let 😀 = \"🎉x\"; // 😀😀 end\nfn main() {}\n");
    // Typing after the emoji: the ranges are UTF-16, so each emoji counts two.
    let at = "let 😀 = \"🎉".len();
    ed.change(&a, at, at + 1, "y");
    let at = "let 😀 = \"🎉y\"; // 😀😀".len();
    ed.change(&a, at, at, "!");
    assert_eq!(
        ed.text(&a),
        "let 😀 = \"🎉y\"; // 😀😀! end\nfn main() {}\n"
    );

    let r = ed
        .apply(plan(
            &a,
            json!([
                edit("\"🎉y\"", "\"🎉z\""),
                edit("! end", "? fin"),
                edit("main", "start")
            ]),
        ))
        .expect("applied");
    assert_eq!(
        ed.text(&a),
        "let 😀 = \"🎉z\"; // 😀😀? fin\nfn start() {}\n"
    );
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        "what is on disk\n",
        "the disk is the editor's business"
    );
    assert_eq!(r["ok"], true);
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Applied 3 edits to {}:", a.display())),
        "{r}"
    );
    assert_eq!(r["files"][0]["edits_applied"], 3);
    assert_eq!(
        r["files"][0]["version"], 3,
        "the version the edit was checked against"
    );
    // One applyEdit, one TextDocumentEdit, carrying the version the client had.
    assert_eq!(ed.edits_seen.len(), 1);
    let changes = &ed.edits_seen[0]["edit"]["documentChanges"];
    assert_eq!(changes.as_array().unwrap().len(), 1);
    assert_eq!(
        changes[0]["textDocument"],
        json!({"uri": uri(&a), "version": 3})
    );
    // Minimal edits: the unchanged emoji are not resent.
    for e in changes[0]["edits"].as_array().unwrap() {
        assert!(!e["newText"].as_str().unwrap().contains('😀'), "{e}");
    }
    // The server took the didChange that followed: it agrees with the buffer.
    ed.assert_server_agrees(&a);
    assert!(ed.shutdown().success());
}

#[test]
fn closed_file_is_read_from_disk_and_edited_without_version() {
    let (_d, ws) = workspace();
    let b = ws.join("b.txt");
    fs::write(&b, "alpha\nbeta\ngamma\n").unwrap();
    let mut ed = start(&ws);
    ed.apply(plan(&b, json!([edit("beta", "BETA")])))
        .expect("applied");
    assert_eq!(fs::read_to_string(&b).unwrap(), "alpha\nBETA\ngamma\n");
    let change = &ed.edits_seen[0]["edit"]["documentChanges"][0];
    assert_eq!(
        change["textDocument"],
        json!({"uri": uri(&b), "version": null})
    );
    assert_eq!(
        change["edits"][0]["range"],
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}})
    );
}

#[test]
fn a_new_file_is_created_then_filled() {
    let (_d, ws) = workspace();
    let n = ws.join("new.txt");
    let mut ed = start(&ws);
    let r = ed
        .apply(plan(
            &n,
            json!([edit("", "hello\n"), edit("hello", "hello world")]),
        ))
        .expect("applied");
    assert_eq!(fs::read_to_string(&n).unwrap(), "hello world\n");
    assert_eq!(r["files"][0]["created"], true);
    let changes = ed.edits_seen[0]["edit"]["documentChanges"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0], json!({"kind": "create", "uri": uri(&n)}));
    assert_eq!(changes[1]["textDocument"]["version"], Value::Null);
}

#[test]
fn a_multi_file_plan_is_one_workspace_edit() {
    let (_d, ws) = workspace();
    let (a, b, c) = (ws.join("a.txt"), ws.join("b.txt"), ws.join("c.txt"));
    fs::write(&a, "saved a\n").unwrap();
    fs::write(&b, "one two\n").unwrap();
    let mut ed = start(&ws);
    ed.open(&a, "unsaved a\n");
    let r = ed
        .apply(json!({"files": [
            {"file_path": a, "edits": [edit("unsaved", "edited")]},
            {"file_path": uri(&b), "edits": [edit("two", "2"), edit("one", "1")]},
            {"file_path": c, "edits": [edit("", "brand new\n")]},
        ]}))
        .expect("applied");
    assert_eq!(ed.text(&a), "edited a\n");
    assert_eq!(fs::read_to_string(&a).unwrap(), "saved a\n");
    assert_eq!(fs::read_to_string(&b).unwrap(), "1 2\n");
    assert_eq!(fs::read_to_string(&c).unwrap(), "brand new\n");
    assert_eq!(ed.edits_seen.len(), 1, "all files in one applyEdit");
    let kinds = change_kinds(&ed.edits_seen[0]);
    assert_eq!(kinds, ["edit", "edit", "create", "edit"]);
    assert_eq!(r["files"].as_array().unwrap().len(), 3);
    let msg = r["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("Applied 2 edits to {}", uri(&b))),
        "{msg}"
    );
}

#[test]
fn every_refusal_kind_reaches_the_client_and_changes_nothing() {
    let (d, ws) = workspace();
    let f = ws.join("f.txt");
    let text = "one two two three\n";
    fs::write(&f, text).unwrap();
    let bin = ws.join("bin.dat");
    fs::write(&bin, [b'a', 0xff, 0xfe, b'\n']).unwrap();
    let outside = d.path().canonicalize().unwrap().join("outside.txt");
    fs::write(&outside, "secret\n").unwrap();
    let link = ws.join("link.txt");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let sub = ws.join("sub");
    fs::create_dir(&sub).unwrap();

    let mut ed = start(&ws);
    ed.open(&f, text);
    let cases: Vec<(&str, Value)> = vec![
        ("not_found", plan(&f, json!([edit("four", "4")]))),
        ("ambiguous", plan(&f, json!([edit("two", "2")]))),
        ("no_op", plan(&f, json!([edit("one", "one")]))),
        ("file_exists", plan(&f, json!([edit("", "new content")]))),
        (
            "file_not_found",
            plan(&ws.join("missing.txt"), json!([edit("a", "b")])),
        ),
        (
            "chained",
            json!({"file_path": f, "dialect": "claude-code", "edits": [edit("one", "uno three"), edit("three", "3")]}),
        ),
        (
            "apply_failed",
            json!({"file_path": f, "dialect": "claude-code", "edits": [edit("one two", "1"), edit("one", "uno")]}),
        ),
        (
            "count_mismatch",
            plan(
                &f,
                json!([{"old_string": "two", "new_string": "2", "expected_replacements": 3}]),
            ),
        ),
        (
            "unchanged",
            plan(&f, json!([edit("one", "ONE"), edit("ONE", "one")])),
        ),
        ("invalid_plan", json!({"file_path": f})),
        (
            "invalid_plan",
            plan(Path::new("relative.txt"), json!([edit("a", "b")])),
        ),
        ("not_utf8", plan(&bin, json!([edit("a", "b")]))),
        (
            "outside_workspace",
            plan(&outside, json!([edit("secret", "leaked")])),
        ),
        (
            "outside_workspace",
            plan(&link, json!([edit("secret", "leaked")])),
        ),
        ("io", plan(&sub, json!([edit("a", "b")]))),
    ];
    for (expected, p) in cases {
        for command in ["multiedit.apply", "multiedit.preview"] {
            let (kind, data) = refusal(ed.execute(command, json!([p]), Answer::Apply));
            assert_eq!(kind, expected, "{command} {p}: {data}");
        }
    }
    assert!(ed.edits_seen.is_empty(), "a refused plan sends no edit");
    assert_eq!(ed.text(&f), text);
    assert_eq!(fs::read_to_string(&f).unwrap(), text);
    assert_eq!(fs::read_to_string(&outside).unwrap(), "secret\n");

    // The editor refusing the edit.
    let (kind, data) = refusal(ed.execute(
        "multiedit.apply",
        json!([plan(&f, json!([edit("one", "1")]))]),
        Answer::Refuse,
    ));
    assert_eq!(kind, "not_applied");
    let msg = data["message"].as_str().unwrap();
    assert!(
        msg.contains("did not apply the change") && msg.contains("Nothing was changed"),
        "{msg}"
    );
    assert_eq!(ed.text(&f), text);
    ed.assert_server_agrees(&f);
}

#[test]
fn refusal_messages_carry_the_engine_text_and_hint() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "fn main() {\n    println!(\"hi\");\n}\n");
    let (_, data) = refusal(ed.apply(plan(&f, json!([edit("println!(\"hello\")", "x")]))));
    assert_eq!(
        data["message"],
        "String to replace not found in file.\nString: println!(\"hello\")"
    );
    assert_eq!(data["edit_index"], 0);
    assert_eq!(data["file_path"], json!(f));
    assert!(
        data["hint"].as_str().is_some_and(|h| !h.is_empty()),
        "the hint travels in data: {data}"
    );
}

#[test]
fn a_version_mismatch_is_not_applied_and_nothing_changes() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "abc\n");
    // The user types while the command is on its way: the editor's buffer is ahead of the server's.
    ed.buffers.get_mut(&uri(&f)).unwrap().version += 1;
    let (kind, data) = refusal(ed.apply(plan(&f, json!([edit("abc", "xyz")]))));
    assert_eq!(kind, "not_applied");
    let msg = data["message"].as_str().unwrap();
    assert!(
        msg.contains("the editor said:") && msg.contains("version"),
        "{msg}"
    );
    assert_eq!(ed.text(&f), "abc\n");
}

#[test]
fn a_did_change_just_before_the_command_is_always_seen() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "v0\n");
    for i in 0..30 {
        // The change and the command leave in one write; the plan only matches the changed text.
        let change = ed.change_msg(&f, 0, format!("v{i}").len(), &format!("v{}", i + 1));
        let (id, cmd) = ed.request_msg(
            "workspace/executeCommand",
            json!({"command": "multiedit.apply", "arguments": [plan(&f, json!([edit(&format!("v{}\n", i + 1), &format!("w{}\n", i + 1))]))]}),
        );
        ed.send_batch(&[change, cmd]);
        ed.response(id, Answer::Apply)
            .unwrap_or_else(|e| panic!("round {i}: {e}"));
        assert_eq!(ed.text(&f), format!("w{}\n", i + 1));
        // Back to the v form for the next round.
        let change = ed.change_msg(&f, 0, 1, "v");
        ed.send(&change);
    }
    ed.assert_server_agrees(&f);
}

#[test]
fn preview_returns_the_diff_and_the_edit_and_applies_nothing() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    fs::write(&f, "disk\n").unwrap();
    let mut ed = start(&ws);
    ed.open(&f, "keep\nold line\nkeep\n");
    let r = ed
        .preview(plan(&f, json!([edit("old line", "new line")])))
        .expect("previewed");
    assert_eq!(r["ok"], true);
    let diff = r["diff"].as_str().unwrap();
    assert!(diff.contains("-old line\n+new line\n"), "{diff}");
    assert!(diff.contains(&format!("a{}", f.display())), "{diff}");
    let change = &r["edit"]["documentChanges"][0];
    assert_eq!(
        change["textDocument"],
        json!({"uri": uri(&f), "version": 1})
    );
    assert_eq!(change["edits"][0]["newText"], "new");
    assert!(ed.edits_seen.is_empty());
    assert_eq!(ed.text(&f), "keep\nold line\nkeep\n");
    // The previewed edit is exactly what an apply sends.
    ed.apply(plan(&f, json!([edit("old line", "new line")])))
        .expect("applied");
    assert_eq!(ed.edits_seen[0]["edit"], r["edit"]);
    assert_eq!(ed.text(&f), "keep\nnew line\nkeep\n");
}

#[test]
fn outside_the_workspace_is_refused_with_the_reason_unless_allowed() {
    let (d, ws) = workspace();
    let root = d.path().canonicalize().unwrap();
    let outside = root.join("outside.txt");
    fs::write(&outside, "secret\n").unwrap();
    let link_dir = ws.join("linked");
    std::os::unix::fs::symlink(&root, &link_dir).unwrap();
    let mut ed = start(&ws);
    let via_link = link_dir.join("outside.txt");
    let (kind, data) = refusal(ed.apply(plan(&via_link, json!([edit("secret", "x")]))));
    assert_eq!(kind, "outside_workspace");
    let msg = data["message"].as_str().unwrap();
    assert!(
        msg.contains(&via_link.display().to_string()),
        "names the file: {msg}"
    );
    assert!(
        msg.contains(&ws.display().to_string()),
        "names the workspace: {msg}"
    );
    assert!(
        msg.contains(&format!("resolves to {}", outside.display())),
        "says where the link leads: {msg}"
    );
    assert!(
        msg.contains("\"allowOutsideWorkspace\": true"),
        "says how to opt out: {msg}"
    );
    // Creating a file through a linked folder is refused as well.
    let (kind, _) = refusal(ed.apply(plan(&link_dir.join("planted.txt"), json!([edit("", "x")]))));
    assert_eq!(kind, "outside_workspace");
    assert!(!root.join("planted.txt").exists());
    // `..` does not escape either.
    let (kind, _) = refusal(ed.apply(plan(
        &ws.join("../outside.txt"),
        json!([edit("secret", "x")]),
    )));
    assert_eq!(kind, "outside_workspace");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "secret\n");

    let mut opts = Options::new(&ws);
    opts.init_options = json!({"allowOutsideWorkspace": true});
    let mut ed = Editor::start(opts);
    ed.apply(plan(&outside, json!([edit("secret", "shared")])))
        .expect("allowed by the option");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "shared\n");
}

#[test]
fn without_workspace_folders_only_open_documents_can_be_edited() {
    let (_d, ws) = workspace();
    let (open, closed) = (ws.join("open.txt"), ws.join("closed.txt"));
    fs::write(&closed, "x\n").unwrap();
    let mut opts = Options::new(&ws);
    opts.folders.clear();
    let mut ed = Editor::start(opts);
    ed.open(&open, "x\n");
    ed.apply(plan(&open, json!([edit("x", "y")])))
        .expect("an open document may be edited");
    assert_eq!(ed.text(&open), "y\n");
    let (kind, data) = refusal(ed.apply(plan(&closed, json!([edit("x", "y")]))));
    assert_eq!(kind, "outside_workspace");
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("no workspace folder"),
        "{data}"
    );
}

#[test]
fn malformed_arguments_are_answered_and_the_server_stays_up() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "abc\n");
    let bad_args = [
        json!([]),
        json!([1]),
        json!(["not a plan"]),
        json!([{"file_path": f, "edits": [{"old_string": 5, "new_string": "x"}]}]),
        json!([{"file_path": f, "edits": []}]),
        json!([{"file_path": f, "edits": [edit("a", "b")], "bogus": true}]),
        json!([
            plan(&f, json!([edit("a", "b")])),
            plan(&f, json!([edit("a", "b")]))
        ]),
        json!([{"files": [{"file_path": f, "edits": [edit("a", "b")]}, {"file_path": uri(&f), "edits": [edit("c", "d")]}]}]),
    ];
    for args in bad_args {
        let (kind, data) = refusal(ed.execute("multiedit.apply", args.clone(), Answer::Apply));
        assert_eq!(kind, "invalid_plan", "{args}");
        assert!(
            data["message"]
                .as_str()
                .unwrap()
                .contains("InputValidationError"),
            "{data}"
        );
    }
    let (_, data) = refusal(ed.execute(
        "multiedit.apply",
        json!([{"file_path": f, "edits": [{"old_string": 5, "new_string": "x"}]}]),
        Answer::Apply,
    ));
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("edits[0].old_string"),
        "names the field: {data}"
    );

    // Not even an ExecuteCommandParams: the framework's own "invalid params".
    let (kind, data) = refusal(ed.execute(
        "multiedit.apply",
        json!({"file_path": f, "edits": []}),
        Answer::Apply,
    ));
    assert_eq!(kind, "invalid_plan");
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("send [plan], not the plan itself"),
        "{data}"
    );
    let id = ed.request("workspace/executeCommand", json!({"command": 5}));
    let e = ed.response(id, Answer::Apply).expect_err("refused");
    assert_eq!(e["code"], -32602);
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "multiedit.nope", "arguments": []}),
    );
    let e = ed.response(id, Answer::Apply).expect_err("refused");
    assert!(
        e["message"].as_str().unwrap().contains("multiedit.apply"),
        "{e}"
    );
    // Garbage notifications are ignored.
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": 7}}),
    );
    ed.notify("textDocument/didChange", json!({"textDocument": {"uri": uri(&ws.join("never-opened")), "version": 2}, "contentChanges": []}));
    ed.notify("textDocument/didOpen", json!(null));
    // A frame that is not JSON at all.
    ed.send_raw(b"Content-Length: 9\r\n\r\n{not json");

    ed.apply(plan(&f, json!([edit("abc", "xyz")])))
        .expect("still working");
    assert_eq!(ed.text(&f), "xyz\n");
    assert!(ed.shutdown().success());
}

#[test]
fn frames_the_framework_cannot_read_leave_the_server_up_and_named_requests_get_an_error() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "abc\n");
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes();
    // The framework ends the session at a frame it reads neither as a request nor as a response:
    // each of these did. Their ids cannot be answered (no JSON-RPC id is 7.5, true or 2^63).
    for body in [
        r#"{"jsonrpc":"2.0","id":7.5,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","method":null}"#,
        // No method: perhaps a broken response, and responses are never answered (as `multiedit mcp`).
        r#"{"jsonrpc":"2.0","id":9000,"params":{}}"#,
    ] {
        ed.send_raw(&frame(body));
    }
    // A request that is not a valid one but names its id gets Invalid Request, rather than a wait
    // forever (a response to 9000 would have failed the first of these waits).
    for (id, body, why) in [
        (
            9001,
            r#"{"jsonrpc":"2.0","id":9001,"method":5}"#,
            "its method is not a string (5)",
        ),
        (
            9002,
            r#"{"id":9002,"method":"shutdown"}"#,
            "it is not JSON-RPC (missing field `jsonrpc` at line 1 column 31)",
        ),
        (
            9003,
            r#"{"jsonrpc":"1.0","id":9003,"method":"shutdown"}"#,
            r#"its jsonrpc is "1.0", not "2.0""#,
        ),
    ] {
        ed.send_raw(&frame(body));
        let e = ed.response(id, Answer::Apply).expect_err("refused");
        assert_eq!(
            e,
            json!({"code": -32600, "message": format!("Invalid request: {why}")})
        );
    }
    ed.apply(plan(&f, json!([edit("abc", "xyz")])))
        .expect("still working");
    assert_eq!(ed.text(&f), "xyz\n");
    let logged: Vec<&str> = ed
        .received
        .iter()
        .filter(|m| m["method"] == "window/logMessage")
        .filter_map(|m| m["params"]["message"].as_str())
        .collect();
    for why in [
        "its id is neither an integer nor a string (7.5)",
        "its method is not a string (null)",
    ] {
        assert!(
            logged.contains(&format!("Dropped a message: {why}").as_str()),
            "{why} not in {logged:?}"
        );
    }
    assert!(ed.shutdown().success());
}

#[test]
fn a_client_without_apply_edit_gets_a_clear_error_and_preview_still_works() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut opts = Options::new(&ws);
    opts.apply_edit = false;
    let mut ed = Editor::start(opts);
    ed.open(&f, "abc\n");
    let (kind, data) = refusal(ed.apply(plan(&f, json!([edit("abc", "x")]))));
    assert_eq!(kind, "not_applied");
    let msg = data["message"].as_str().unwrap();
    assert!(
        msg.contains("workspace/applyEdit") && msg.contains("multiedit.preview"),
        "{msg}"
    );
    let r = ed
        .preview(plan(&f, json!([edit("abc", "x")])))
        .expect("preview works");
    assert!(r["diff"].as_str().unwrap().contains("+x"));
    assert!(ed.edits_seen.is_empty());
}

#[test]
fn a_client_without_document_changes_gets_plain_changes() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut opts = Options::new(&ws);
    opts.document_changes = false;
    let mut ed = Editor::start(opts);
    ed.open(&f, "abc\n");
    ed.apply(plan(&f, json!([edit("b", "B")])))
        .expect("applied");
    assert_eq!(ed.text(&f), "aBc\n");
    assert!(
        ed.edits_seen[0]["edit"]["changes"][uri(&f)].is_array(),
        "{}",
        ed.edits_seen[0]
    );
    // Such a client cannot create files: said before anything is sent.
    let (kind, data) = refusal(ed.apply(plan(&ws.join("new.txt"), json!([edit("", "x")]))));
    assert_eq!(kind, "not_applied");
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("cannot create files"),
        "{data}"
    );
    assert_eq!(ed.edits_seen.len(), 1);
}

#[test]
fn utf8_positions_when_the_client_offers_them() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut opts = Options::new(&ws);
    opts.offer_utf8 = true;
    let mut ed = Editor::start(opts);
    assert_eq!(ed.init_result["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(ed.enc, Enc::Utf8);
    ed.open(&f, "é😀 a😀b c\n");
    let at = "é😀 a😀".len();
    ed.change(&f, at, at + 1, "B");
    ed.apply(plan(&f, json!([edit("B c", "b C")])))
        .expect("applied");
    assert_eq!(ed.text(&f), "é😀 a😀b C\n");
    let range = &ed.edits_seen[0]["edit"]["documentChanges"][0]["edits"][0]["range"];
    assert_eq!(
        range["start"]["character"].as_u64(),
        Some("é😀 a😀".len() as u64),
        "a byte column: {range}"
    );
    ed.assert_server_agrees(&f);
}

#[test]
fn a_client_that_never_answers_times_out_and_the_next_command_works() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut opts = Options::new(&ws);
    opts.init_options = json!({"applyEditTimeoutMs": 300});
    let mut ed = Editor::start(opts);
    ed.open(&f, "abc\n");
    let started = std::time::Instant::now();
    let (kind, data) = refusal(ed.execute(
        "multiedit.apply",
        json!([plan(&f, json!([edit("b", "B")]))]),
        Answer::Ignore,
    ));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(kind, "not_applied");
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("did not answer workspace/applyEdit within 300 ms"),
        "{data}"
    );
    ed.apply(plan(&f, json!([edit("c", "C")])))
        .expect("the server is not stuck");
    assert_eq!(ed.text(&f), "abC\n");
}

#[test]
fn crlf_documents_keep_their_line_breaks() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "one\r\ntwo\r\nthree\r\n");
    ed.apply(plan(&f, json!([edit("one\ntwo\n", "uno\ndos\nextra\n")])))
        .expect("applied");
    assert_eq!(ed.text(&f), "uno\r\ndos\r\nextra\r\nthree\r\n");
    ed.assert_server_agrees(&f);
}

#[test]
fn a_plan_path_finds_the_buffer_however_the_editor_spelled_its_uri() {
    let (_d, ws) = workspace();
    let f = ws.join("with space é.txt");
    fs::write(&f, "disk\n").unwrap();
    let encoded = format!("file://{}", ws.display()) + "/with%20space%20%C3%A9.txt";
    let mut ed = start(&ws);
    ed.open_uri(&encoded, "buffer\n");
    ed.apply(plan(&f, json!([edit("buffer", "edited buffer")])))
        .expect("applied");
    assert_eq!(ed.buffers[&encoded].text, "edited buffer\n");
    let doc = &ed.edits_seen[0]["edit"]["documentChanges"][0]["textDocument"];
    assert_eq!(
        doc["uri"],
        json!(encoded),
        "addressed with the editor's own URI"
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "disk\n");
    // After didClose the disk is what counts again.
    ed.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": encoded}}),
    );
    ed.buffers.remove(&encoded);
    ed.apply(plan(&f, json!([edit("disk", "DISK")])))
        .expect("applied");
    assert_eq!(fs::read_to_string(&f).unwrap(), "DISK\n");
    // A plan's URI with unescaped characters still names the file.
    let loose = format!("file://{}", f.display());
    ed.apply(plan(Path::new(&loose), json!([edit("DISK", "Disk")])))
        .expect("applied");
    assert_eq!(fs::read_to_string(&f).unwrap(), "Disk\n");
}

#[test]
fn partial_mode_reports_failed_edits() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "a b c\n");
    let r = ed
        .apply(json!({"file_path": f, "mode": "partial", "edits": [edit("a", "A"), edit("zzz", "y"), edit("c", "C")]}))
        .expect("applied");
    assert_eq!(ed.text(&f), "A b C\n");
    assert_eq!(r["edits_failed"][0]["kind"], "not_found");
    assert_eq!(r["edits_failed"][0]["edit_index"], 1);
}

#[test]
fn logs_go_to_the_editor_and_stderr_never_stdout() {
    let (_d, ws) = workspace();
    let mut opts = Options::new(&ws);
    opts.init_options = json!({"bogusOption": 1});
    let mut ed = Editor::start(opts);
    let f = ws.join("f.txt");
    ed.open(&f, "x\n");
    ed.apply(plan(&f, json!([edit("x", "y")])))
        .expect("applied");
    // A notification may trail the response it was sent before; give it time.
    let wanted = format!("multiedit.apply: applied 1 edit(s) to {}", f.display());
    let logs = |ed: &Editor| -> Vec<String> {
        ed.received
            .iter()
            .filter(|m| m["method"] == "window/logMessage")
            .map(|m| m["params"]["message"].as_str().unwrap().to_string())
            .collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !logs(&ed).iter().any(|l| l.contains(&wanted)) && std::time::Instant::now() < deadline {
        ed.drain(Duration::from_millis(100));
    }
    let logs = logs(&ed);
    assert!(logs.iter().any(|l| l.contains("bogusOption")), "{logs:?}");
    assert!(logs.iter().any(|l| l.contains(&wanted)), "{logs:?}");
    // Each at its level: the ignored option is a warning, the apply a debug line.
    let level = |needle: &str| {
        ed.received
            .iter()
            .find(|m| {
                m["method"] == "window/logMessage"
                    && m["params"]["message"].as_str().unwrap().contains(needle)
            })
            .map(|m| m["params"]["type"].as_i64().unwrap())
    };
    assert_eq!(level("bogusOption"), Some(2), "a warning");
    assert_eq!(level(&wanted), Some(4), "a log (debug) line");
    assert_eq!(level("ready"), Some(3), "info");
    // Standard error is for errors only: editors show whatever arrives there as an error.
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !ed.stderr_text().contains("bogusOption"),
        "a warning on stderr: {}",
        ed.stderr_text()
    );
    assert!(
        !ed.stderr_text().contains("applied"),
        "a routine line on stderr: {}",
        ed.stderr_text()
    );
    // Every byte on stdout was a well-formed frame (the reader fails the test otherwise).
    assert!(ed.shutdown().success());
}

#[test]
fn log_level_keeps_lower_levels_off_the_wire() {
    let (_d, ws) = workspace();
    let mut opts = Options::new(&ws);
    opts.init_options = json!({"bogusOption": 1});
    opts.args = vec!["--log-level".into(), "warn".into()];
    let mut ed = Editor::start(opts);
    let f = ws.join("f.txt");
    ed.open(&f, "x\n");
    ed.apply(plan(&f, json!([edit("x", "y")])))
        .expect("applied");
    let logs = |ed: &Editor| -> Vec<(i64, String)> {
        ed.received
            .iter()
            .filter(|m| m["method"] == "window/logMessage")
            .map(|m| {
                (
                    m["params"]["type"].as_i64().unwrap(),
                    m["params"]["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !logs(&ed).iter().any(|(_, l)| l.contains("bogusOption"))
        && std::time::Instant::now() < deadline
    {
        ed.drain(Duration::from_millis(100));
    }
    ed.drain(Duration::from_millis(300));
    let logs = logs(&ed);
    assert!(
        logs.iter()
            .any(|(t, l)| *t == 2 && l.contains("bogusOption")),
        "{logs:?}"
    );
    assert!(
        logs.iter().all(|(t, _)| *t <= 2),
        "only warnings and errors: {logs:?}"
    );
    assert!(ed.shutdown().success());

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_multiedit"))
        .args(["lsp", "--log-level", "loud"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--log-level takes one of error, warn, info, debug"));
}

#[test]
fn a_buffer_opened_through_a_symlink_is_found_by_its_target_and_back() {
    let (_d, ws) = workspace();
    let real = ws.join("real.txt");
    let alias = ws.join("alias.txt");
    fs::write(&real, "disk\n").unwrap();
    std::os::unix::fs::symlink(&real, &alias).unwrap();
    let mut ed = start(&ws);
    ed.open(&alias, "buffer via the link\n");
    ed.apply(plan(&real, json!([edit("buffer", "BUFFER")])))
        .expect("applied");
    assert_eq!(ed.text(&alias), "BUFFER via the link\n");
    assert_eq!(
        ed.edits_seen[0]["edit"]["documentChanges"][0]["textDocument"],
        json!({"uri": uri(&alias), "version": 1})
    );
    ed.close(&alias);
    ed.open(&real, "buffer of the target\n");
    ed.apply(plan(&alias, json!([edit("target", "TARGET")])))
        .expect("applied");
    assert_eq!(
        ed.text(&real),
        "buffer of the target\n".replace("target", "TARGET")
    );
    assert_eq!(fs::read_to_string(&real).unwrap(), "disk\n");
    // One file named twice, through the link and directly, is one file.
    let (kind, _) = refusal(ed.apply(json!({"files": [
        {"file_path": real, "edits": [edit("buffer", "a")]},
        {"file_path": alias, "edits": [edit("of", "b")]},
    ]})));
    assert_eq!(kind, "invalid_plan");
}

#[test]
fn an_open_buffer_outside_the_workspace_is_refused_too() {
    let (d, ws) = workspace();
    let outside = d.path().canonicalize().unwrap().join("outside.txt");
    let mut ed = start(&ws);
    ed.open(&outside, "open but outside\n");
    let (kind, _) = refusal(ed.apply(plan(&outside, json!([edit("open", "x")]))));
    assert_eq!(kind, "outside_workspace");
    assert_eq!(ed.text(&outside), "open but outside\n");
}

#[test]
fn two_commands_racing_on_one_buffer_both_land_in_order() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "a b\n");
    // Sent together: the second waits for the first and is checked against its result, so both land
    // and neither is refused as stale.
    let (id1, c1) = ed.request_msg(
        "workspace/executeCommand",
        json!({"command": "multiedit.apply", "arguments": [plan(&f, json!([edit("a", "A")]))]}),
    );
    let (id2, c2) = ed.request_msg("workspace/executeCommand", json!({"command": "multiedit.apply", "arguments": [plan(&f, json!([edit("a B", "a-B"), edit("b", "B")]))]}));
    ed.send_batch(&[c1, c2]);
    ed.response(id1, Answer::Apply).expect("the first lands");
    // The second plan's first edit needs the first plan's result to be refused, and its second edit
    // the text before it: checked against the first's result, it fails on "a B".
    let (kind, _) = refusal(ed.response(id2, Answer::Apply));
    assert_eq!(kind, "not_found");
    assert_eq!(ed.text(&f), "A b\n");
    let (id3, c3) = ed.request_msg(
        "workspace/executeCommand",
        json!({"command": "multiedit.apply", "arguments": [plan(&f, json!([edit("A", "A1")]))]}),
    );
    let (id4, c4) = ed.request_msg("workspace/executeCommand", json!({"command": "multiedit.apply", "arguments": [plan(&f, json!([edit("A1 b", "A1 B")]))]}));
    ed.send_batch(&[c3, c4]);
    ed.response(id3, Answer::Apply).expect("the third lands");
    ed.response(id4, Answer::Apply)
        .expect("the fourth, which needs the third's result, lands too");
    assert_eq!(ed.text(&f), "A1 B\n");
    assert_eq!(
        ed.edits_seen.len(),
        3,
        "one applyEdit per plan that landed, none for the refused one"
    );
    ed.assert_server_agrees(&f);
}

#[test]
fn a_plan_whose_buffer_changes_as_it_arrives_is_checked_again_and_applied_once() {
    let (_d, ws) = workspace();
    let f = ws.join("f.rs");
    let mut ed = start(&ws);
    ed.open(&f, "fn a() {}\nfn b() {}\n");
    // The user types a line at the top just as the edit arrives: the editor refuses the edit for
    // version 1, the server checks the plan against version 2 and sends it again.
    ed.types_first.push((f.clone(), 0, 0, "// note\n".into()));
    let result = ed
        .apply(plan(&f, json!([edit("fn b() {}", "fn b() { 1 }")])))
        .expect("applied after a second check");
    assert_eq!(ed.text(&f), "// note\nfn a() {}\nfn b() { 1 }\n");
    assert_eq!(result["rechecked"], 1, "{result}");
    assert_eq!(
        result["files"][0]["version"], 2,
        "the result names the version the edit was computed against"
    );
    assert_eq!(ed.edits_seen.len(), 2);
    assert_eq!(
        ed.edits_seen[1]["edit"]["documentChanges"][0]["textDocument"]["version"],
        2
    );
    ed.assert_server_agrees(&f);

    // The user declines (no typing): not checked again, nothing changed.
    let (kind, _) = refusal(ed.execute(
        "multiedit.apply",
        json!([plan(&f, json!([edit("fn a", "fn z")]))]),
        Answer::Refuse,
    ));
    assert_eq!(kind, "not_applied");
    assert_eq!(
        ed.edits_seen.len(),
        3,
        "a refusal without a change is final"
    );
    assert_eq!(ed.text(&f), "// note\nfn a() {}\nfn b() { 1 }\n");
}

#[test]
fn a_plan_the_users_typing_breaks_is_refused_with_what_is_there_now() {
    let (_d, ws) = workspace();
    let f = ws.join("f.rs");
    let mut ed = start(&ws);
    ed.open(&f, "fn alpha() {}\nfn beta() { 0 }\n");
    // The user renames beta to gamma as the edit arrives: the plan's old_string is gone.
    ed.types_first.push((f.clone(), 17, 21, "gamma".into()));
    let (kind, data) = refusal(ed.apply(plan(
        &f,
        json!([edit("fn beta() { 0 }", "fn beta() { 1 }")]),
    )));
    assert_eq!(kind, "not_found");
    assert_eq!(
        data["message"],
        "A document changed while the editor was applying the plan; checked again against its new text: String to replace not found in file.\nString: fn beta() { 0 }"
    );
    let hint = data["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("line 2 has \"gamma\" where old_string has \"beta\""),
        "the hint names the text there now: {data}"
    );
    assert_eq!(ed.edits_seen.len(), 1, "nothing was sent the second time");
    assert_eq!(
        ed.text(&f),
        "fn alpha() {}\nfn gamma() { 0 }\n",
        "only the user's typing"
    );
    ed.assert_server_agrees(&f);
}

#[test]
fn typing_that_leaves_nothing_like_old_string_is_named_in_the_hint() {
    let (_d, ws) = workspace();
    let f = ws.join("f.rs");
    let mut ed = start(&ws);
    ed.open(&f, "# notes\nfn beta() { 0 }\n");
    // The user types a whole new line over the one the plan edits: no line of the file resembles
    // old_string any more, so the hint names what is there now.
    ed.types_first
        .push((f.clone(), 8, 23, "const LIMIT: u8 = 7;".into()));
    let (kind, data) = refusal(ed.apply(plan(
        &f,
        json!([edit("fn beta() { 0 }", "fn beta() { 1 }")]),
    )));
    assert_eq!(kind, "not_found");
    assert_eq!(data["hint"], "The document changed at line 2 while the plan was being applied. The file has there now:\nconst LIMIT: u8 = 7;", "{data}");
    assert_eq!(
        ed.text(&f),
        "# notes\nconst LIMIT: u8 = 7;\n",
        "only the user's typing"
    );
    ed.assert_server_agrees(&f);
}

#[test]
fn a_command_cancelled_while_waiting_for_the_editor_frees_the_server() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(&ws);
    ed.open(&f, "abc\n");
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "multiedit.apply", "arguments": [plan(&f, json!([edit("a", "A")]))]}),
    );
    // Wait for the applyEdit, leave it unanswered, and cancel the command.
    let started = std::time::Instant::now();
    loop {
        let msg = ed
            .recv(Duration::from_secs(10))
            .expect("the applyEdit request");
        if msg["method"] == "workspace/applyEdit" {
            break;
        }
    }
    ed.notify("$/cancelRequest", json!({"id": id}));
    let e = ed.response(id, Answer::Apply).expect_err("cancelled");
    assert_eq!(e["code"], -32800, "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "not held until the 10 s timeout"
    );
    ed.apply(plan(&f, json!([edit("b", "B")])))
        .expect("the next command works");
    assert_eq!(ed.text(&f), "aBc\n");
}

#[test]
fn workspace_folders_follow_the_editor() {
    let (d, ws) = workspace();
    let other = d.path().canonicalize().unwrap().join("other");
    fs::create_dir(&other).unwrap();
    let f = other.join("f.txt");
    fs::write(&f, "x\n").unwrap();
    let mut ed = start(&ws);
    assert_eq!(
        refusal(ed.apply(plan(&f, json!([edit("x", "y")])))).0,
        "outside_workspace"
    );
    ed.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": uri(&other), "name": "other"}], "removed": []}}),
    );
    ed.apply(plan(&f, json!([edit("x", "y")])))
        .expect("inside the added folder");
    assert_eq!(fs::read_to_string(&f).unwrap(), "y\n");
    ed.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": uri(&other), "name": "other"}]}}),
    );
    assert_eq!(
        refusal(ed.apply(plan(&f, json!([edit("y", "z")])))).0,
        "outside_workspace"
    );
}

/// Offsets where a client can put a cursor: char boundaries, not between the \r and \n of a CRLF.
fn cursor_offsets(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    (0..=text.len())
        .filter(|&i| {
            text.is_char_boundary(i)
                && !(i > 0 && i < b.len() && b[i - 1] == b'\r' && b[i] == b'\n')
        })
        .collect()
}

#[test]
fn hundreds_of_random_incremental_changes_keep_the_server_in_step() {
    let (_d, ws) = workspace();
    for offer_utf8 in [false, true] {
        let f = ws.join(format!("random-{offer_utf8}.txt"));
        let mut opts = Options::new(&ws);
        opts.offer_utf8 = offer_utf8;
        let mut ed = Editor::start(opts);
        ed.open(&f, "start 😀 é\r\nline\rthird 🎉\n");
        let pieces = ["", "a", "😀", "é\n", "\r\n", "\r", "xyz🎉", "\n\n"];
        let mut rng = crate::support::rng::Rng(0x2545f4914f6cdd1d ^ offer_utf8 as u64);
        let mut next = |n: usize| rng.below(n);
        for _ in 0..300 {
            let offsets = cursor_offsets(ed.text(&f));
            // Mostly typing and small deletions, as an editor sends, so the text grows.
            let i = next(offsets.len());
            let j = (i + next(3) * next(2)).min(offsets.len() - 1);
            let (start, end) = (offsets[i], offsets[j]);
            let piece = pieces[next(pieces.len())];
            ed.change(&f, start, end, piece);
        }
        assert!(ed.text(&f).len() > 200, "the text grew: {:?}", ed.text(&f));
        ed.assert_server_agrees(&f);
    }
}

#[test]
fn command_line_flags_editors_add_are_accepted_and_others_refused() {
    let (_d, ws) = workspace();
    let mut opts = Options::new(&ws);
    opts.args = vec!["--stdio".into(), "--clientProcessId=4242".into()];
    let mut ed = Editor::start(opts);
    let f = ws.join("f.txt");
    ed.open(&f, "x\n");
    ed.apply(plan(&f, json!([edit("x", "y")])))
        .expect("applied");
    assert!(
        ed.shutdown().success(),
        "exit after shutdown is a clean exit"
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_multiedit"))
        .args(["lsp", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument --bogus"));
    assert!(out.stdout.is_empty());

    // Input closed without shutdown: the server ends, with the protocol's exit code 1.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_multiedit"))
        .arg("lsp")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn an_interrupted_apply_is_completed_or_rolled_back_before_the_server_reads_its_folder() {
    // `multiedit apply` killed at its commit point (every file still old, the journal committed) or
    // while staging (not committed). A preview writes nothing: it says it left the plan as it is and
    // changes no file. `multiedit.apply`, asked about a file of that plan, first finishes what the
    // killed run left, says so in the editor's log, and checks the plan against the result.
    for (step, completed, old, new) in [
        ("commit:1", true, "a new", "a newer"),
        ("staged:2", false, "a old", "a other"),
    ] {
        let (_d, ws) = workspace();
        let (one, two) = (ws.join("one"), ws.join("two"));
        fs::create_dir(&one).unwrap();
        fs::create_dir(&two).unwrap();
        let (a, b) = (one.join("a.txt"), two.join("b.txt"));
        fs::write(&a, "a old\n").unwrap();
        fs::write(&b, "b old\n").unwrap();
        let killed = ws.join("killed.json");
        let both = json!({"files": [plan(&a, json!([edit("old", "new")])), plan(&b, json!([edit("old", "new")]))]});
        fs::write(&killed, both.to_string()).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_multiedit"))
            .arg("apply")
            .arg(&killed)
            .env("MULTIEDIT_TEST_CRASH_AT", step)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{step}: the run was not killed");
        assert_eq!(fs::read_to_string(&a).unwrap(), "a old\n", "{step}");
        let leftovers = |d: &Path| -> Vec<PathBuf> {
            fs::read_dir(d)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(".multiedit-"))
                .map(|e| e.path())
                .collect()
        };
        let left_before = [leftovers(&one), leftovers(&two)];

        let mut ed = start(&ws);
        let files = format!("(2 files: {}, {})", a.display(), b.display());
        let said = |ed: &Editor, start: &str, end: &str| {
            ed.received
                .iter()
                .filter(|m| m["method"] == "window/logMessage")
                .any(|m| {
                    let l = m["params"]["message"].as_str().unwrap();
                    l.starts_with(start) && l.ends_with(end)
                })
        };
        let wait_for = |ed: &mut Editor, start: &str, end: &str| {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !said(ed, start, end) && std::time::Instant::now() < deadline {
                ed.drain(Duration::from_millis(100));
            }
            assert!(
                said(ed, start, end),
                "{step}: no log {start:?}...{end:?}; stderr: {}",
                ed.stderr_text()
            );
        };

        // The preview: nothing written, the plan reported.
        let result = ed
            .preview(plan(&a, json!([edit("old", "older")])))
            .unwrap_or_else(|e| panic!("{step}: {e}"));
        assert_eq!(result["ok"], json!(true), "{step}: {result}");
        assert_eq!(
            (
                fs::read_to_string(&a).unwrap(),
                fs::read_to_string(&b).unwrap()
            ),
            ("a old\n".into(), "b old\n".into()),
            "{step}: the preview wrote"
        );
        assert_eq!(
            [leftovers(&one), leftovers(&two)],
            left_before,
            "{step}: the preview touched the killed run's files"
        );
        let then = if completed {
            "complete it"
        } else {
            "roll it back (it had not changed any file yet)"
        };
        wait_for(&mut ed, "multiedit.preview: left an interrupted plan of process ", &format!("{files} as it is, since a dry run or preview writes nothing: the next multiedit apply in its folders will {then}, and until then its files are read as that plan left them"));

        // The apply: the killed plan finished first, then this one checked against the result.
        let result = ed
            .apply(plan(&a, json!([edit(old, new)])))
            .unwrap_or_else(|e| panic!("{step}: {e}"));
        assert_eq!(result["ok"], json!(true), "{step}: {result}");
        assert_eq!(
            fs::read_to_string(&b).unwrap(),
            if completed { "b new\n" } else { "b old\n" },
            "{step}"
        );
        for d in [&one, &two] {
            assert!(
                leftovers(d).is_empty(),
                "{step}: left in {}: {:?}",
                d.display(),
                leftovers(d)
            );
        }
        let what = if completed {
            "completed an interrupted plan"
        } else {
            "rolled back an interrupted plan (it had not changed any file yet)"
        };
        wait_for(
            &mut ed,
            &format!("multiedit.apply: {what} of process "),
            &format!("{files} before reading this plan's files"),
        );
    }
}

#[test]
fn edits_carry_change_annotations_and_review_asks_for_confirmation() {
    let (_d, ws) = workspace();
    let a = ws.join("a.txt");
    let b = ws.join("b.txt");
    fs::write(&b, "b one\n").unwrap();
    let two_files = |ws: &Path| {
        json!({"files": [
            {"file_path": ws.join("a.txt"), "edits": [edit("alpha", "ALPHA"), edit("gamma", "GAMMA")]},
            {"file_path": ws.join("b.txt"), "edits": [edit("one", "ONE")]},
        ]})
    };
    let annotations = |edit: &Value| -> Vec<(String, bool)> {
        let table = &edit["changeAnnotations"];
        let mut out: Vec<(String, bool)> = edit["documentChanges"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["edits"].as_array().cloned().unwrap_or_default())
            .map(|e| {
                let a = &table[e["annotationId"].as_str().expect("annotated")];
                (
                    a["label"].as_str().unwrap().to_string(),
                    a["needsConfirmation"].as_bool().unwrap(),
                )
            })
            .collect();
        out.sort();
        out
    };

    // A client with change annotations, review on for multi-file plans (the VS Code default).
    let mut opts = Options::new(&ws);
    opts.change_annotations = true;
    opts.init_options = json!({"review": "multiFile"});
    let mut ed = Editor::start(opts);
    ed.open(&a, "alpha beta gamma\n");
    let preview = ed.preview(two_files(&ws)).expect("preview");
    assert_eq!(
        annotations(&preview["edit"]),
        [
            ("Edit 1: \"alpha\" → \"ALPHA\"".to_string(), true),
            ("Edit 1: \"one\" → \"ONE\"".to_string(), true),
            ("Edit 2: \"gamma\" → \"GAMMA\"".to_string(), true),
        ]
    );
    // One file: no review under multiFile; the call's own option wins over the default.
    let one = json!({"file_path": a, "edits": [edit("beta", "BETA")]});
    let r = ed
        .execute("multiedit.preview", json!([one.clone()]), Answer::Apply)
        .expect("preview");
    assert_eq!(
        annotations(&r["edit"]),
        [("Edit 1: \"beta\" → \"BETA\"".to_string(), false)]
    );
    let r = ed
        .execute(
            "multiedit.preview",
            json!([one.clone(), {"review": "always"}]),
            Answer::Apply,
        )
        .expect("preview");
    assert_eq!(
        annotations(&r["edit"]),
        [("Edit 1: \"beta\" → \"BETA\"".to_string(), true)]
    );
    let r = ed
        .execute(
            "multiedit.preview",
            json!([two_files(&ws), {"review": false}]),
            Answer::Apply,
        )
        .expect("preview");
    assert!(annotations(&r["edit"]).iter().all(|(_, confirm)| !confirm));
    let e = ed
        .execute(
            "multiedit.preview",
            json!([one.clone(), {"review": "maybe"}]),
            Answer::Apply,
        )
        .unwrap_err();
    assert_eq!(e["data"]["kind"], "invalid_plan", "{e}");
    // A review the editor answers `applied: false` while no document changed: the user declined it,
    // and the refusal says so (not "a document probably changed").
    let (kind, data) = refusal(ed.execute(
        "multiedit.apply",
        json!([two_files(&ws), {"review": "always"}]),
        Answer::Refuse,
    ));
    assert_eq!(kind, "declined");
    assert_eq!(
        data["message"],
        "The user declined the change in the editor's review (MultiEdit: 3 edits to 2 files), or left every edit of it out. \
         Nothing was changed. Do not send it again unchanged: ask the user what they want instead."
    );
    assert_eq!(ed.text(&a), "alpha beta gamma\n");
    // Without a review, the editor's silence is said as it is.
    let (kind, data) = refusal(ed.execute("multiedit.apply", json!([one.clone()]), Answer::Refuse));
    assert_eq!(kind, "not_applied");
    assert_eq!(
        data["message"],
        "The editor did not apply the change and did not say why; no document changed since the plan was checked. Nothing was changed."
    );
    // The annotated edit applies like the plain one.
    ed.execute(
        "multiedit.apply",
        json!([two_files(&ws), {"review": "always"}]),
        Answer::Apply,
    )
    .expect("applied");
    assert_eq!(ed.text(&a), "ALPHA beta GAMMA\n");
    assert!(ed.shutdown().success());

    // A client without change annotation support gets the plain edit.
    let mut ed = Editor::start(Options::new(&ws));
    let r = ed
        .preview(json!({"file_path": b, "edits": [edit("b", "B")]}))
        .expect("preview");
    assert!(r["edit"].get("changeAnnotations").is_none(), "{r}");
    assert!(
        r["edit"]["documentChanges"][0]["edits"][0]
            .get("annotationId")
            .is_none(),
        "{r}"
    );
    assert!(ed.shutdown().success());
}

/// A unified diff through `multiedit.apply`: it edits an unsaved buffer, renames a file with an edit
/// and deletes another, all in ONE WorkspaceEdit (one undo in the editor); its paths are relative to
/// the one workspace folder.
#[test]
fn a_patch_edits_a_dirty_buffer_renames_and_deletes_in_one_workspace_edit() {
    let (_d, ws) = workspace();
    let (a, old, new, gone) = (
        ws.join("a.txt"),
        ws.join("old.txt"),
        ws.join("new.txt"),
        ws.join("gone.txt"),
    );
    fs::write(&a, "saved\n").unwrap();
    fs::write(&old, "keep\nold body\n").unwrap();
    fs::write(&gone, "bye\n").unwrap();
    let mut ed = start(&ws);
    ed.open(&a, "one\ntyped but unsaved\nthree\n");
    let patch = "\
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-typed but unsaved
+edited in the buffer
 three
diff --git a/old.txt b/new.txt
similarity index 60%
rename from old.txt
rename to new.txt
--- a/old.txt
+++ b/new.txt
@@ -1,2 +1,2 @@
 keep
-old body
+new body
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
";
    let r = ed.apply(json!({"patch": patch})).expect("applied");
    assert_eq!(ed.edits_seen.len(), 1, "one applyEdit for the whole patch");
    let kinds = change_kinds(&ed.edits_seen[0]);
    assert_eq!(kinds, ["edit", "edit", "rename", "delete"]);
    assert_eq!(
        ed.text(&a),
        "one\nedited in the buffer\nthree\n",
        "the unsaved buffer was edited"
    );
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        "saved\n",
        "disk untouched for an open buffer"
    );
    assert_eq!(fs::read_to_string(&new).unwrap(), "keep\nnew body\n");
    assert!(!old.exists() && !gone.exists());
    assert_eq!(r["files"][1]["moved_to"], json!(new.display().to_string()));
    assert_eq!(r["files"][2]["deleted"], true);
}

#[test]
fn a_patch_that_renames_onto_a_file_or_goes_stale_changes_nothing() {
    let (_d, ws) = workspace();
    let (a, b) = (ws.join("a.txt"), ws.join("b.txt"));
    fs::write(&a, "x\n").unwrap();
    fs::write(&b, "taken\n").unwrap();
    let mut ed = start(&ws);
    let rename =
        "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n";
    let (kind, data) = refusal(ed.apply(json!({"patch": rename})));
    assert_eq!(kind, "file_exists");
    assert_eq!(
        data["message"],
        json!(format!(
            "Cannot move {} to {}: {} already exists. Nothing was changed.",
            a.display(),
            b.display(),
            b.display()
        ))
    );
    let stale = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-y\n+z\n";
    let (kind, data) = refusal(ed.apply(json!({"patch": stale, "format": "diff"})));
    assert_eq!(kind, "not_found");
    assert!(data["message"].as_str().unwrap().starts_with("Hunk 1 of a.txt, at line 1 does not apply: its lines are not in the file.\nLines:\ny\n"), "{data}");
    let (kind, data) = refusal(ed.apply(json!({"patch": stale, "format": "unified"})));
    assert_eq!(kind, "invalid_plan");
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("`format` must be one of"),
        "{data}"
    );
    assert!(ed.edits_seen.is_empty(), "no applyEdit was sent");
    assert_eq!(
        (
            fs::read_to_string(&a).unwrap(),
            fs::read_to_string(&b).unwrap()
        ),
        ("x\n".into(), "taken\n".into())
    );
}

#[test]
fn the_undo_entry_names_the_agent_and_what_changed() {
    let (_d, ws) = workspace();
    let (a, b) = (ws.join("a.txt"), ws.join("b.txt"));
    fs::write(&a, "one two\n").unwrap();
    fs::write(&b, "three\n").unwrap();
    let mut ed = start(&ws);
    ed.open(&a, "one two\n");
    let two_files = json!({"files": [
        {"file_path": a.to_str().unwrap(), "edits": [edit("one", "1"), edit("two", "2")]},
        {"file_path": b.to_str().unwrap(), "edits": [edit("three", "3")]},
    ]});
    ed.execute(
        "multiedit.apply",
        json!([two_files, {"agent": "Claude Code"}]),
        Answer::Apply,
    )
    .expect("applied");
    assert_eq!(ed.edits_seen[0]["label"], "Claude Code: 3 edits to 2 files");
    // The log line may trail the answer.
    ed.drain(Duration::from_millis(300));
    assert!(
        ed.logged().iter().any(|l| l.contains("for Claude Code")),
        "{:?}",
        ed.logged()
    );
    ed.apply(plan(&a, json!([edit("1", "one")])))
        .expect("applied");
    assert_eq!(
        ed.edits_seen[1]["label"], "MultiEdit: 1 edit to 1 file",
        "no agent named: the tool's name"
    );
    assert_eq!(ed.text(&a), "one 2\n");

    let (kind, data) = refusal(ed.execute(
        "multiedit.apply",
        json!([plan(&a, json!([edit("one", "x")])), {"agent": 7}]),
        Answer::Apply,
    ));
    assert_eq!(kind, "invalid_plan");
    assert_eq!(
        data["message"],
        "InputValidationError: the options of multiedit.apply (its second argument) take only \"review\": \"never\", \"multiFile\", \"always\" or a boolean, \"diagnostics\": \"errors\", \"warnings\" or \"off\", \"save\": \"clean\", \"all\" or \"never\", and \"agent\": the name of who sent the plan; got agent=7"
    );
    assert_eq!(ed.edits_seen.len(), 2);
    assert_eq!(ed.text(&a), "one 2\n");
}

/// `multiedit.apply` reports each file as `multiedit apply --json` does (offsets, move, deletion,
/// mode), adding only the version; the mode it cannot set is said to be not set.
#[test]
fn a_patch_result_reports_files_as_the_command_line_json_does() {
    let (d, ws) = workspace();
    let patch = report_support::fixture(&ws);
    let cli = report_support::cli_json(d.path(), &patch);
    let mut ed = start(&ws);
    let r = ed.apply(json!({"patch": patch})).expect("applied");
    assert!(
        r["on_disk_text"]
            .as_str()
            .unwrap()
            .contains("cannot save a file on request"),
        "{r}"
    );
    let mut files = r["files"].as_array().unwrap().clone();
    for f in &mut files {
        let f = f.as_object_mut().unwrap();
        assert!(f.remove("version").is_some(), "each file has its version");
        // Whether the edit is on disk: this editor cannot save, so none is (a deleted file has none).
        let changed = f.get("deleted") != Some(&json!(true))
            && (f["edits_applied"] != 0 || f.contains_key("moved_to"));
        assert_eq!(
            f.remove("on_disk"),
            changed.then(|| json!("no_save_support")),
            "{f:?}"
        );
        if f.contains_key("mode") {
            assert_eq!(f.remove("mode_applied"), Some(json!(false)), "{f:?}");
        }
    }
    // The files are not open in the editor: it wrote them on disk.
    let files = report_support::hashes_checked(&json!(files), |p: &std::path::Path| {
        std::fs::read_to_string(p).unwrap()
    });
    assert_eq!(report_support::rooted(&files, &ws), cli);
    let message = r["message"].as_str().unwrap();
    let note = format!(
        "\n\nNot set: the mode {} 100755 (an editor's workspace edit cannot change a file's mode; run chmod, or apply the patch with `multiedit apply`).",
        ws.join("run.sh").display()
    );
    assert!(message.ends_with(&note), "{message}");
}

/// `multiedit.apply` answers a plan with the result `multiedit apply --json` gives for it (tolerant
/// tiers, a skipped edit, a created file), adding only each file's version.
#[test]
fn a_plan_result_is_the_command_line_json() {
    let (d, ws) = workspace();
    let cli = report_support::cli_plan_json(d.path());
    let mut ed = start(&ws);
    let r = ed
        .apply(report_support::plan_fixture(&ws))
        .expect("applied");
    assert_eq!(
        r["files"][0]["version"],
        Value::Null,
        "a file the editor has not opened"
    );
    assert_eq!(
        r["files"][0]["on_disk"], "no_save_support",
        "this editor cannot save"
    );
    assert_eq!(
        report_support::without(
            &report_support::rooted(
                &report_support::hashes_checked(&r, |p: &std::path::Path| std::fs::read_to_string(
                    p
                )
                .unwrap()),
                &ws
            ),
            &["on_disk_text", "edit", "label"],
            &["version", "on_disk"]
        ),
        cli
    );
    assert_eq!(ed.edits_seen.len(), 1, "one WorkspaceEdit");
    // What the editor applied comes back in the answer, for its own caller to show.
    assert_eq!(r["edit"], ed.edits_seen[0]["edit"]);
    assert_eq!(r["label"], ed.edits_seen[0]["label"]);
}

/// A file and a folder trading names needs the folder removed or made between the deletion and the
/// creation, which a workspace edit cannot order: refused with the way that can, nothing sent. A new
/// file under a file the plan keeps is refused too (the disk layer's check), never sent to fail there.
#[test]
fn a_file_and_a_folder_trading_names_is_refused_in_the_editor() {
    let (_d, ws) = workspace();
    let x = ws.join("x");
    fs::write(&x, "old\n").unwrap();
    let mut ed = start(&ws);
    let swap = "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n\
                diff --git a/x/inside b/x/inside\nnew file mode 100644\n--- /dev/null\n+++ b/x/inside\n@@ -0,0 +1 @@\n+new\n";
    let (kind, data) = refusal(ed.apply(json!({"patch": swap, "format": "diff"})));
    assert_eq!(kind, "not_applied");
    assert_eq!(
        data["message"],
        format!(
            "The plan replaces the file {} with a folder; an editor's workspace edit cannot remove a folder or order that \
             exchange. Nothing was changed. Apply the patch with `multiedit apply` instead.",
            x.display()
        )
    );
    let under = "diff --git a/x/inside b/x/inside\nnew file mode 100644\n--- /dev/null\n+++ b/x/inside\n@@ -0,0 +1 @@\n+new\n";
    let (kind, _) = refusal(ed.apply(json!({"patch": under, "format": "diff"})));
    assert_eq!(kind, "file_exists");
    assert!(ed.edits_seen.is_empty(), "nothing reached the editor");
    assert_eq!(fs::read_to_string(&x).unwrap(), "old\n");
}

/// An editor whose formatter runs on the applied edit (as the VS Code extension's `formatEdits` does)
/// before it answers: the result gives the edited lines as they now read, which the agent's next
/// old_string must match, and only those; an edit the formatter leaves alone gets no such field.
#[test]
fn the_result_gives_the_edited_lines_as_the_editors_formatter_left_them() {
    let (_d, ws) = workspace();
    let f = ws.join("calc.py");
    let mut ed = start(&ws);
    ed.formats = Some(lsp_support::format_statements);
    ed.open(&f, "def total(items):\n    return 0\n\n\nlimit=10\n");
    let r = ed
        .apply(plan(
            &f,
            json!([edit("    return 0", "    s=sum(items); return s")]),
        ))
        .expect("applied");
    assert_eq!(
        ed.text(&f),
        "def total(items):\n    s = sum(items);\n    return s\n\n\nlimit = 10\n"
    );
    assert_eq!(
        r["now_reads"],
        json!([{"file_path": f, "first_line": 2, "last_line": 3, "text": "    s = sum(items);\n    return s"}]),
        "the far line the formatter changed is not the edit's: {r}"
    );
    assert_eq!(r["message"], format!("Applied 1 edit to {}:\n1. Replaced \"    return 0\" with \"    s=sum(items); return s\"", f.display()));
    ed.assert_server_agrees(&f);
    // The sha256 is of the text the editor holds, as its formatter left it (what multiedit_read shows
    // next and multiedit_write takes), not of the plan's text.
    assert_eq!(
        r["files"][0]["sha256"],
        report_support::sha256(ed.text(&f)),
        "{r}"
    );

    // Two edits, the formatter changes one: that one only.
    let r = ed
        .apply(plan(
            &f,
            json!([
                edit("total(items)", "total(items, start)"),
                edit("return s", "return s+start; # total")
            ]),
        ))
        .expect("applied");
    assert_eq!(ed.text(&f), "def total(items, start):\n    s = sum(items);\n    return s+start;\n    # total\n\n\nlimit = 10\n");
    assert_eq!(
        r["now_reads"],
        json!([{"file_path": f, "first_line": 3, "last_line": 4, "text": "    return s+start;\n    # total"}]),
        "{r}"
    );

    // Already formatted: nothing to say.
    let r = ed
        .apply(plan(&f, json!([edit("limit = 10", "limit = 20")])))
        .expect("applied");
    assert!(r.get("now_reads").is_none(), "{r}");
    ed.formats = None;
    let r = ed
        .apply(plan(&f, json!([edit("limit = 20", "limit=30")])))
        .expect("applied");
    assert!(
        r.get("now_reads").is_none(),
        "an editor that changed nothing: {r}"
    );
    assert_eq!(ed.text(&f), "def total(items, start):\n    s = sum(items);\n    return s+start;\n    # total\n\n\nlimit=30\n");
}
