//! `multiedit/diagnostics` end to end over stdio: a scripted editor that announces the request answers
//! it with the diagnostics its "language server" would publish, and `multiedit.apply`'s result carries
//! the delta; an editor that does not announce it is never asked.

use crate::support::lsp as lsp_support;

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use lsp_support::{Editor, Options};
use serde_json::{json, Value};

const CALC: &str = "export function add(a: number, b: number) { return a + b; }\nconst s: number = 'old';\nadd(1, 2);\n";

fn diag(line: u64, start: u64, end: u64, severity: u64, code: u64, message: &str) -> Value {
    json!({"range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}},
           "severity": severity, "source": "ts", "code": code, "message": message})
}

fn old_error(line: u64) -> Value {
    diag(
        line,
        6,
        7,
        1,
        2322,
        "Type 'string' is not assignable to type 'number'.",
    )
}

const ARGUMENT: &str = "Argument of type 'string' is not assignable to parameter of type 'number'.";

struct Scripted {
    /// What the editor reports per phase, for every URI asked about.
    before: Vec<Value>,
    after: Vec<Value>,
    /// Answer the "after" phase with this many URIs pending, or never (None: silent).
    answer_after: bool,
    pending: bool,
    /// The user types at the top of the file before the "after" answer.
    typed: bool,
    /// The language servers take longer than a short look: an "after" asked to settle within 100 ms
    /// is answered with every URI pending, a longer one settled.
    slow: bool,
}

/// Runs one `workspace/executeCommand` as the editor, answering applyEdit and multiedit/diagnostics;
/// returns the result and the methods of the server's requests in order.
fn execute(ed: &mut Editor, args: Value, script: &Scripted) -> (Result<Value, Value>, Vec<String>) {
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "multiedit.apply", "arguments": args}),
    );
    let mut asked = Vec::new();
    loop {
        let msg = ed
            .recv(Duration::from_secs(20))
            .expect("an answer from the server");
        match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
            (Some("workspace/applyEdit"), Some(rid)) => {
                asked.push("workspace/applyEdit".to_string());
                ed.apply_workspace_edit(&msg["params"]["edit"]).unwrap();
                ed.send(&json!({"jsonrpc": "2.0", "id": rid, "result": {"applied": true}}));
            }
            (Some("multiedit/diagnostics"), Some(rid)) => {
                let phase = msg["params"]["phase"].as_str().unwrap().to_string();
                asked.push(format!("multiedit/diagnostics {phase}"));
                let uris: Vec<String> = msg["params"]["uris"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| u.as_str().unwrap().to_string())
                    .collect();
                let list = if phase == "before" {
                    &script.before
                } else {
                    &script.after
                };
                let diagnostics: serde_json::Map<String, Value> =
                    uris.iter().map(|u| (u.clone(), json!(list))).collect();
                let short = msg["params"]["settleMs"]
                    .as_u64()
                    .is_some_and(|ms| ms <= 100);
                let pending = if script.pending || (script.slow && short) {
                    json!(uris)
                } else {
                    json!([])
                };
                if phase == "after" && script.typed {
                    ed.change(&lsp_support::path_of(&uris[0]), 0, 0, "// typed\n");
                }
                if phase == "before" || script.answer_after {
                    ed.send(&json!({"jsonrpc": "2.0", "id": rid, "result": {"diagnostics": diagnostics, "pending": pending, "waitedMs": 5}}));
                }
            }
            (Some(_), Some(rid)) => {
                ed.send(&json!({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not handled"}}));
            }
            (Some(_), None) => ed.received.push(msg),
            (None, _) if msg["id"] == json!(id) => {
                return (
                    msg.get("error")
                        .map_or_else(|| Ok(msg["result"].clone()), |e| Err(e.clone())),
                    asked,
                );
            }
            _ => {}
        }
    }
}

fn setup(init: Value) -> (tempfile::TempDir, PathBuf, Editor) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let file = ws.join("calc.ts");
    fs::write(&file, CALC).unwrap();
    let mut options = Options::new(&ws);
    options.init_options = init;
    let mut ed = Editor::start(options);
    ed.open(&file, CALC);
    (dir, file, ed)
}

fn break_the_call(file: &std::path::Path) -> Value {
    json!({"file_path": file, "edits": [{"old_string": "add(1, 2);", "new_string": "// the call\nadd(1, 'two');"}]})
}

#[test]
fn the_result_carries_the_errors_the_plan_introduced_and_not_the_ones_already_there() {
    let (_dir, file, mut ed) = setup(json!({"diagnostics": {"settleMs": 500}}));
    let script = Scripted {
        before: vec![old_error(1)],
        after: vec![
            old_error(1),
            diag(3, 7, 12, 1, 2345, ARGUMENT),
            diag(0, 0, 3, 2, 6133, "unused"),
        ],
        answer_after: true,
        pending: false,
        typed: false,
        slow: false,
    };
    let (result, asked) = execute(&mut ed, json!([break_the_call(&file)]), &script);
    let result = result.expect("applied");
    assert_eq!(
        asked,
        [
            "multiedit/diagnostics before",
            "workspace/applyEdit",
            "multiedit/diagnostics after"
        ]
    );
    assert_eq!(
        result["diagnostics_text"],
        format!("New errors: calc.ts:4:8 {ARGUMENT} (ts 2345)"),
        "the error already in the file and the warning are not reported"
    );
    let d = &result["diagnostics"];
    assert_eq!(d["introduced"].as_array().unwrap().len(), 1);
    assert_eq!(d["introduced"][0]["file_path"], file.to_str().unwrap());
    assert_eq!(
        (
            d["introduced"][0]["line"].as_u64(),
            d["introduced"][0]["column"].as_u64()
        ),
        (Some(4), Some(8))
    );
    assert_eq!(d["introduced"][0]["code"], "2345");
    assert_eq!(d["resolved"], json!([]));
    assert_eq!(d["pending"], json!([]));
    assert_eq!(
        ed.text(&file),
        CALC.replace("add(1, 2);", "// the call\nadd(1, 'two');")
    );

    // Warnings on request (the call's option), and the fix reported as resolved.
    let fix = json!({"file_path": file, "edits": [{"old_string": "add(1, 'two');", "new_string": "add(1, 2);"}]});
    let script = Scripted {
        before: script.after.clone(),
        after: vec![old_error(1), diag(0, 0, 3, 2, 6133, "unused")],
        answer_after: true,
        pending: false,
        typed: false,
        slow: false,
    };
    let (result, _) = execute(&mut ed, json!([fix, {"diagnostics": "warnings"}]), &script);
    let result = result.expect("applied");
    assert_eq!(
        result["diagnostics_text"],
        format!("No new errors or warnings.\nResolved: calc.ts:4:8 {ARGUMENT} (ts 2345)")
    );
    assert_eq!(result["diagnostics"]["report"], "warnings");

    // The plan's own field asks for warnings too (as an MCP agent's plan does through the bridge).
    let mut plan = break_the_call(&file);
    plan["edits"][0]["old_string"] = json!("add(1, 2);");
    plan["diagnostics"] = json!("warnings");
    let mut warning = diag(4, 0, 3, 2, 6133, "'s' is declared but never read.");
    warning["source"] = json!("ts");
    let script = Scripted {
        before: vec![old_error(1)],
        after: vec![old_error(1), warning],
        answer_after: true,
        pending: false,
        typed: false,
        slow: false,
    };
    let (result, _) = execute(&mut ed, json!([plan]), &script);
    assert_eq!(
        result.expect("applied")["diagnostics_text"],
        "New errors and warnings: calc.ts:5:1 warning: 's' is declared but never read. (ts 6133)"
    );
}

#[test]
fn files_still_pending_at_the_bound_are_named_and_a_silent_editor_costs_only_the_bound() {
    let (_dir, file, mut ed) = setup(json!({"diagnostics": {"settleMs": 200}}));
    let script = Scripted {
        before: vec![],
        after: vec![diag(3, 7, 12, 1, 2345, ARGUMENT)],
        answer_after: true,
        pending: true,
        typed: false,
        slow: false,
    };
    let (result, _) = execute(&mut ed, json!([break_the_call(&file)]), &script);
    let result = result.expect("applied");
    assert_eq!(
        result["diagnostics_text"],
        "Diagnostics still pending after 200 ms (not checked): calc.ts."
    );
    assert_eq!(
        result["diagnostics"]["introduced"],
        json!([]),
        "stale data is not reported"
    );
    assert_eq!(
        result["diagnostics"]["pending"],
        json!([file.to_str().unwrap()])
    );

    let again =
        json!({"file_path": file, "edits": [{"old_string": "'two'", "new_string": "'three'"}]});
    let script = Scripted {
        before: vec![],
        after: vec![],
        answer_after: false,
        pending: false,
        typed: false,
        slow: false,
    };
    let started = std::time::Instant::now();
    let (result, _) = execute(&mut ed, json!([again]), &script);
    let result = result.expect("the plan was applied; only the diagnostics are missing");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded: {:?}",
        started.elapsed()
    );
    assert_eq!(
        result["diagnostics_text"],
        "The editor did not report diagnostics for this change."
    );
    assert_eq!(result["diagnostics"], json!({"available": false}));
}

#[test]
fn an_editor_that_does_not_announce_it_is_never_asked() {
    for init in [
        Value::Null,
        json!({"diagnostics": false}),
        json!({"diagnostics": {"report": "off"}}),
    ] {
        let (_dir, file, mut ed) = setup(init.clone());
        let script = Scripted {
            before: vec![],
            after: vec![],
            answer_after: true,
            pending: false,
            typed: false,
            slow: false,
        };
        let (result, asked) = execute(&mut ed, json!([break_the_call(&file)]), &script);
        let result = result.expect("applied");
        assert_eq!(asked, ["workspace/applyEdit"], "{init}");
        assert!(
            result.get("diagnostics").is_none() && result.get("diagnostics_text").is_none(),
            "{result}"
        );
    }
    // And a call may turn it off.
    let (_dir, file, mut ed) = setup(json!({"diagnostics": true}));
    let script = Scripted {
        before: vec![],
        after: vec![],
        answer_after: true,
        pending: false,
        typed: false,
        slow: false,
    };
    let (_, asked) = execute(
        &mut ed,
        json!([break_the_call(&file), {"diagnostics": "off"}]),
        &script,
    );
    assert_eq!(asked, ["workspace/applyEdit"]);
    // A bad value is refused, naming the choices, and changes nothing.
    let text = ed.text(&file).to_string();
    let (refused, asked) = execute(
        &mut ed,
        json!([break_the_call(&file), {"diagnostics": "all"}]),
        &script,
    );
    let message = refused.unwrap_err()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("\"diagnostics\": \"errors\", \"warnings\" or \"off\", \"save\": \"clean\", \"all\" or \"never\", and \"agent\": \
         the name of who sent the plan; got diagnostics=\"all\""), "{message}");
    assert!(asked.is_empty());
    assert_eq!(ed.text(&file), text);
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        CALC,
        "the buffer only was edited"
    );
}

#[test]
fn a_text_typed_after_the_edit_is_not_compared() {
    let (_dir, file, mut ed) = setup(json!({"diagnostics": true}));
    let script = Scripted {
        before: vec![],
        after: vec![diag(3, 7, 12, 1, 2345, ARGUMENT)],
        answer_after: true,
        pending: false,
        typed: true,
        slow: false,
    };
    let (result, _) = execute(&mut ed, json!([break_the_call(&file)]), &script);
    let result = result.expect("applied");
    assert_eq!(
        result["diagnostics_text"],
        "Diagnostics not compared for calc.ts: the text changed after the editor applied the plan (typed since)."
    );
    assert_eq!(result["diagnostics"]["introduced"], json!([]));
    assert_eq!(
        result["diagnostics"]["not_compared"],
        json!([file.to_str().unwrap()])
    );
}

/// The editor's formatter ran on the edit before the editor answered: its text is not the plan's, but
/// the server has both, so the old diagnostics are mapped through the plan and then through what the
/// formatter changed (here a line it split above the edit, which moves every error below).
#[test]
fn a_text_the_editors_formatter_changed_is_still_compared() {
    let (_dir, file, mut ed) = setup(json!({"diagnostics": true}));
    ed.formats = Some(lsp_support::format_statements);
    let script = Scripted {
        before: vec![old_error(1)],
        after: vec![old_error(2), diag(4, 7, 12, 1, 2345, ARGUMENT)],
        answer_after: true,
        pending: false,
        typed: false,
        slow: false,
    };
    let (result, _) = execute(&mut ed, json!([break_the_call(&file)]), &script);
    let result = result.expect("applied");
    assert_eq!(
        ed.text(&file),
        "export function add(a: number, b: number) { return a + b;\n}\nconst s: number = 'old';\n// the call\nadd(1, 'two');\n"
    );
    assert_eq!(
        result["diagnostics_text"],
        format!("New errors: calc.ts:5:8 {ARGUMENT} (ts 2345)"),
        "the moved error is not new"
    );
    assert_eq!(result["diagnostics"]["not_compared"], json!([]));
    assert!(
        result.get("now_reads").is_none(),
        "the formatter left the edited lines alone: {result}"
    );
}

#[test]
fn a_file_the_editor_had_not_open_shows_its_errors_as_they_are_not_as_new() {
    let (_dir, file, mut ed) = setup(json!({"diagnostics": true}));
    let other = file.with_file_name("other.ts");
    fs::write(&other, "let n: number = 1;\n").unwrap();
    let plan =
        json!({"file_path": other, "edits": [{"old_string": "= 1;", "new_string": "= '1';"}]});
    // Its language server had never checked it: the editor had nothing before, and everything after.
    let script = Scripted {
        before: vec![],
        after: vec![diag(
            0,
            4,
            5,
            1,
            2322,
            "Type 'string' is not assignable to type 'number'.",
        )],
        answer_after: true,
        pending: false,
        typed: false,
        slow: false,
    };
    let (result, asked) = execute(&mut ed, json!([plan]), &script);
    assert_eq!(
        asked,
        [
            "multiedit/diagnostics before",
            "workspace/applyEdit",
            "multiedit/diagnostics after"
        ]
    );
    let result = result.expect("applied");
    assert_eq!(
        result["diagnostics_text"],
        "Now in other.ts (not open before the edit, so not compared): other.ts:1:5 Type 'string' is not assignable to type 'number'. (ts 2322)"
    );
    assert_eq!(result["diagnostics"]["introduced"], json!([]));
    assert_eq!(
        result["diagnostics"]["not_open_before"],
        json!([other.to_str().unwrap()])
    );
}

/// An agent's call (here with the `agent` option, as VS Code's language-model tool sends it; through the
/// bridge alike) is answered after a short look, without waiting for language servers that have not
/// settled: its result says, in a fixed sentence, that the delta comes with the agent's next call, and
/// that call (whichever command) carries it, computed from what the servers published for the edit.
#[test]
fn an_agents_delta_that_has_not_settled_comes_with_its_next_call() {
    let (_dir, file, mut ed) = setup(json!({"diagnostics": {"settleMs": 2000}}));
    let script = Scripted {
        before: vec![old_error(1)],
        after: vec![old_error(1), diag(3, 7, 12, 1, 2345, ARGUMENT)],
        answer_after: true,
        pending: false,
        typed: false,
        slow: true,
    };
    let agent = json!({"agent": "Claude Code"});
    let (result, _) = execute(&mut ed, json!([break_the_call(&file), agent]), &script);
    let result = result.expect("applied");
    assert_eq!(
        result["diagnostics_text"],
        "Diagnostics: the editor's language servers are still checking this change; the errors it introduced \
         and resolved come with your next multiedit call, whichever tool it is."
    );
    assert_eq!(
        result["diagnostics"],
        json!({"available": false, "deferred": true})
    );
    assert!(result.get("earlier_diagnostics").is_none());

    // The agent's next calls, previews here: the first once the delta has settled carries it, once.
    let mut carried = Vec::new();
    for _ in 0..5 {
        let id = ed.request(
            "workspace/executeCommand",
            json!({"command": "multiedit.preview", "arguments": [{"file_path": file, "edits": [{"old_string": "'two'", "new_string": "2"}]}, agent]}),
        );
        let next = loop {
            let msg = ed.recv(Duration::from_secs(20)).expect("an answer");
            if msg["method"] == "multiedit/diagnostics" {
                let uris = msg["params"]["uris"].as_array().unwrap().clone();
                let diagnostics: serde_json::Map<String, Value> = uris
                    .iter()
                    .map(|u| (u.as_str().unwrap().to_string(), json!(script.after)))
                    .collect();
                ed.send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"diagnostics": diagnostics, "pending": [], "waitedMs": 700}}));
            } else if msg["id"] == json!(id) {
                break msg["result"].clone();
            }
        };
        if next.get("earlier_diagnostics").is_some() {
            carried.push(next);
        }
    }
    assert_eq!(carried.len(), 1, "delivered once: {carried:?}");
    let next = &carried[0];
    let earlier = &next["earlier_diagnostics"];
    assert_eq!(earlier.as_array().map(Vec::len), Some(1), "{next}");
    assert_eq!(earlier[0]["label"], "Claude Code: 1 edit to 1 file");
    assert_eq!(
        earlier[0]["text"],
        format!("New errors: calc.ts:4:8 {ARGUMENT} (ts 2345)")
    );
    assert_eq!(earlier[0]["diagnostics"]["introduced"][0]["line"], 4);
    // Delivered once.
    let (again, _) = execute(
        &mut ed,
        json!([{"file_path": file, "edits": [{"old_string": "'two'", "new_string": "2"}]}, agent]),
        &Scripted {
            before: script.after.clone(),
            after: vec![old_error(1)],
            answer_after: true,
            pending: false,
            typed: false,
            slow: false,
        },
    );
    let again = again.expect("applied");
    assert!(again.get("earlier_diagnostics").is_none(), "{again}");
    assert_eq!(
        again["diagnostics_text"],
        format!("No new errors.\nResolved: calc.ts:4:8 {ARGUMENT} (ts 2345)")
    );
}
