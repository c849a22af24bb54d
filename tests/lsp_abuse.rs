//! The language server under abuse. Every test ends by checking that the server still answers
//! correctly: a preview or an apply whose result is verified, not just any reply.
//!
//! Framing and protocol: invalid JSON, frames that are not JSON-RPC messages, missing and wrong
//! Content-Length headers, unknown methods, requests before initialize. Documents: didChange for
//! unknown documents and with out-of-range or reversed ranges, a 50 MB document, a file of a terabyte
//! on disk, a plan of 10,000 edits. The editor misbehaving: never answering workspace/applyEdit,
//! answering after the timeout, disconnecting mid-command or during a huge rename, `$/cancelRequest`
//! in every shape. Races: thousands of incremental
//! didChange notifications interleaved with multiedit.apply, each applyEdit checked against the exact
//! text of the version it names. Load: sustained commands for a bounded time (throughput, p99
//! latency, peak memory) and open/close cycles whose memory must not grow (no leak).

use crate::support::disk::snapshot;
use crate::support::lsp as lsp_support;
use crate::support::reference;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lsp_support::{apply_text_edits, uri, Answer, Editor, Options};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_multiedit");
const WAIT: Duration = Duration::from_secs(20);

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir(&ws).unwrap();
    (dir, ws)
}

fn edit(old: &str, new: &str) -> Value {
    json!({"old_string": old, "new_string": new})
}

// ---- process bookkeeping: which server belongs to which test, and its memory ----

/// Servers are started one at a time so each test can tell its own server's pid among the children
/// of this process (the scripted editor keeps its process handle to itself).
static START: Mutex<()> = Mutex::new(());

fn server_children() -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let comm = &stat[stat.find('(').unwrap() + 1..close];
        let ppid: u32 = stat[close + 2..]
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == me && comm == "multiedit" {
            out.push(pid);
        }
    }
    out
}

/// An editor; every test starts its servers through here or `Raw::start`, one at a time.
fn start(opts: Options) -> Editor {
    let _guard = START.lock().unwrap_or_else(|e| e.into_inner());
    Editor::start(opts)
}

/// An editor and its server's pid.
fn start_tracked(opts: Options) -> (Editor, u32) {
    let _guard = START.lock().unwrap_or_else(|e| e.into_inner());
    let before = server_children();
    let ed = Editor::start(opts);
    let new: Vec<u32> = server_children()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(new.len(), 1, "cannot tell the new server among {new:?}");
    (ed, new[0])
}

/// A field of /proc/PID/status in kB (VmRSS, VmHWM).
fn status_kb(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

// ---- a raw connection, for what the scripted editor will not do: bad bytes, no initialize ----

struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    /// What the server logged (`window/logMessage`), as it arrives.
    logged: Arc<Mutex<Vec<String>>>,
}

fn frame(v: &Value) -> Vec<u8> {
    let body = v.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

impl Raw {
    fn start() -> Raw {
        let _guard = START.lock().unwrap_or_else(|e| e.into_inner());
        let mut child = Command::new(BIN)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            sink.lock().unwrap().push_str(&s);
        });
        let (tx, rx) = mpsc::channel();
        let logged = Arc::new(Mutex::new(Vec::new()));
        let log = logged.clone();
        std::thread::spawn(move || {
            // The server's own output must always be well framed.
            let mut r = BufReader::new(stdout);
            loop {
                let mut n = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    n = Some(
                        line.strip_prefix("Content-Length: ")
                            .expect("a server header")
                            .trim()
                            .parse()
                            .unwrap(),
                    );
                }
                let mut body = vec![0; n.expect("Content-Length from the server")];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let msg: Value = serde_json::from_slice(&body).expect("the server sends JSON");
                if msg["method"] == "window/logMessage" {
                    log.lock().unwrap().push(
                        msg["params"]["message"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                    );
                }
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        Raw {
            child,
            stdin,
            rx,
            stderr,
            logged,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let s = self.stdin.as_mut().unwrap();
        s.write_all(bytes).unwrap();
        s.flush().unwrap();
    }

    fn request(&mut self, id: i64, method: &str, params: Value) {
        self.send(&frame(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        ));
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&frame(
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        ));
    }

    /// The response to `id`, skipping notifications; None after `timeout`.
    fn response(&mut self, id: i64, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let msg = self.rx.recv_timeout(left).ok()?;
            if msg.get("method").is_none() && msg["id"] == json!(id) {
                return Some(msg);
            }
        }
    }

    fn initialize(&mut self, id: i64, ws: &Path) -> Value {
        self.request(id, "initialize", json!({"processId": null, "rootUri": uri(ws),
            "capabilities": {"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}}}}));
        let r = self.response(id, WAIT).expect("initialize answered");
        self.notify("initialized", json!({}));
        r
    }

    /// A preview whose result proves the server works: `f.txt` in `ws` holds "alpha\n".
    fn check(&mut self, id: i64, ws: &Path) {
        let f = ws.join("f.txt");
        self.request(
            id,
            "workspace/executeCommand",
            json!({"command": "multiedit.preview", "arguments": [{"file_path": f, "edits": [edit("alpha", "beta")]}]}),
        );
        let r = self
            .response(id, WAIT)
            .unwrap_or_else(|| panic!("no answer to the check\nstderr: {}", self.stderr()));
        assert_eq!(r["result"]["ok"], true, "{r}");
        let diff = r["result"]["diff"].as_str().unwrap();
        assert!(
            diff.contains("-alpha\n") && diff.contains("+beta\n"),
            "{diff}"
        );
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn raw_workspace() -> (tempfile::TempDir, PathBuf, Raw) {
    let (d, ws) = workspace();
    std::fs::write(ws.join("f.txt"), "alpha\n").unwrap();
    (d, ws, Raw::start())
}

fn no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked"),
        "the server panicked:\n{stderr}"
    );
}

// ---- framing and protocol ----

#[test]
fn invalid_json_and_frames_that_are_not_messages_are_dropped() {
    let (_d, ws, mut raw) = raw_workspace();
    raw.initialize(1, &ws);
    for body in [
        &b"{bad}"[..],
        b"",
        b"null",
        b"[]",
        b"[{\"jsonrpc\": \"2.0\", \"id\": 50, \"method\": \"shutdown\"}]",
        b"{\"jsonrpc\": \"1.0\", \"id\": 51, \"method\": \"shutdown\"}",
        b"{\"jsonrpc\": \"2.0\"}",
        b"{\"jsonrpc\": \"2.0\", \"id\": 52}",
        b"\xff\xfe\x00garbage",
        b"{\"jsonrpc\": \"2.0\", \"id\": 53, \"method\": \"workspace/executeCommand\", \"params\": ",
        &[b'['; 100_000][..],
    ] {
        let mut f = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        f.extend_from_slice(body);
        raw.send(&f);
    }
    // Well framed and JSON-RPC, but with params of the wrong shape: an error answer, not a crash.
    raw.request(60, "workspace/executeCommand", json!("not an object"));
    let r = raw.response(60, WAIT).expect("answered");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    raw.request(
        61,
        "workspace/executeCommand",
        json!({"command": "multiedit.apply", "arguments": [1, 2]}),
    );
    assert_eq!(
        raw.response(61, WAIT).expect("answered")["error"]["code"],
        -32602
    );
    raw.check(62, &ws);
    assert!(raw.alive());
    no_panic(&raw.stderr());
}

#[test]
fn input_without_a_content_length_is_skipped() {
    let (_d, ws, mut raw) = raw_workspace();
    raw.initialize(1, &ws);
    raw.send(b"{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \"shutdown\"}\r\n\r\n");
    raw.send(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n");
    raw.send(b"X-Whatever: 1\r\n\r\n");
    raw.send(&[b'x'; 20_000]);
    raw.send(b"\r\n\r\n");
    raw.check(2, &ws);
    // Lower-case header names and a Content-Type are accepted.
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
        "params": {"command": "multiedit.preview", "arguments": [{"file_path": ws.join("f.txt"), "edits": [edit("alpha", "beta")]}]}})
    .to_string();
    raw.send(format!("content-length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{body}", body.len()).as_bytes());
    assert_eq!(
        raw.response(3, WAIT).expect("answered")["result"]["ok"],
        true
    );
    no_panic(&raw.stderr());
}

/// After a wrong Content-Length the stream is out of step; the server must find the next frame again.
/// At most the frame with the wrong length and the one it overlaps may be lost. (It used to drop every
/// later frame.)
#[test]
fn a_wrong_content_length_loses_at_most_the_frames_it_overlaps() {
    for (name, delta) in [
        ("too short", -7i64),
        ("too long", 25),
        ("not a number", i64::MIN),
    ] {
        let (_d, ws, mut raw) = raw_workspace();
        raw.initialize(1, &ws);
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": "shutdown"}).to_string();
        let header = if delta == i64::MIN {
            "Content-Length: twelve\r\n\r\n".to_string()
        } else {
            format!("Content-Length: {}\r\n\r\n", body.len() as i64 + delta)
        };
        raw.send(format!("{header}{body}").as_bytes());
        // Keep asking until answered: the first request or two may be swallowed.
        let mut answered = None;
        for id in 10..14 {
            raw.request(
                id,
                "workspace/executeCommand",
                json!({"command": "nope", "arguments": []}),
            );
            if raw.response(id, Duration::from_secs(2)).is_some() {
                answered = Some(id);
                break;
            }
        }
        assert!(
            answered.is_some_and(|id| id <= 11),
            "{name}: the server lost its footing\nstderr: {}",
            raw.stderr()
        );
        raw.check(20, &ws);
        no_panic(&raw.stderr());
    }
}

#[test]
fn an_absurd_content_length_does_not_kill_the_server() {
    let (_d, ws, mut raw) = raw_workspace();
    raw.initialize(1, &ws);
    raw.send(b"Content-Length: 999999999999\r\n\r\n{}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(raw.alive(), "the server died\nstderr: {}", raw.stderr());
    no_panic(&raw.stderr());
}

/// Any message nested deeper than serde_json's limit of 128 levels ended the session (exit 1). Now a
/// frame nested past 100 levels is dropped with a warning in the log, and the next command answers.
#[test]
fn a_frame_nested_past_the_parsers_limit_is_dropped_and_the_server_lives() {
    let (_d, ws, mut raw) = raw_workspace();
    raw.initialize(1, &ws);
    for (k, depth) in [101usize, 127, 128, 5_000].into_iter().enumerate() {
        let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let notification = format!(
            r#"{{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{{"settings":{nested}}}}}"#
        );
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"workspace/executeCommand","params":{{"command":"multiedit.preview","arguments":{nested}}}}}"#,
            100 + k
        );
        for body in [notification, request] {
            raw.send(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        }
    }
    raw.check(2, &ws);
    // The warnings are sent as they are met, but may reach the editor after that answer.
    let dropped = || {
        raw.logged
            .lock()
            .unwrap()
            .iter()
            .filter(|m| {
                m.as_str()
                    == "Dropped a message: it nests arrays and objects more than 100 levels deep"
            })
            .count()
    };
    let deadline = Instant::now() + WAIT;
    while dropped() < 8 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        dropped(),
        8,
        "a warning for each frame: {:?}",
        raw.logged.lock().unwrap()
    );
    assert!(raw.alive(), "the server died\nstderr: {}", raw.stderr());
    raw.request(3, "shutdown", Value::Null);
    assert!(raw.response(3, WAIT).is_some(), "shutdown answered");
    no_panic(&raw.stderr());
}

#[test]
fn unknown_methods_are_answered_or_ignored() {
    let (_d, ws, mut raw) = raw_workspace();
    raw.initialize(1, &ws);
    raw.request(2, "foo/bar", json!({}));
    assert_eq!(
        raw.response(2, WAIT).expect("answered")["error"]["code"],
        -32601
    );
    raw.request(4, "textDocument/hover", json!({"textDocument": {"uri": uri(&ws.join("f.txt"))}, "position": {"line": 0, "character": 0}}));
    assert!(raw
        .response(4, WAIT)
        .expect("answered")
        .get("error")
        .is_some());
    raw.notify("foo/baz", json!({"x": 1}));
    raw.notify("$/setTrace", json!({"value": "verbose"}));
    raw.notify("$/progress", json!({"token": 1, "value": {}}));
    // A response to a request the server never sent.
    raw.send(&frame(
        &json!({"jsonrpc": "2.0", "id": 777, "result": {"applied": true}}),
    ));
    raw.send(&frame(
        &json!({"jsonrpc": "2.0", "id": "abc", "error": {"code": 1, "message": "x"}}),
    ));
    raw.request(
        5,
        "workspace/executeCommand",
        json!({"command": "multiedit.nope", "arguments": []}),
    );
    let r = raw.response(5, WAIT).expect("answered");
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("multiedit.apply"),
        "{r}"
    );
    raw.check(6, &ws);
    no_panic(&raw.stderr());
}

/// The specification: a request whose method starts with `$/` must be answered with MethodNotFound.
#[test]
fn dollar_requests_are_answered_method_not_found() {
    let (_d, ws, mut raw) = raw_workspace();
    raw.initialize(1, &ws);
    raw.request(2, "$/somethingPrivate", json!(null));
    let r = raw
        .response(2, Duration::from_secs(5))
        .expect("a request is always answered");
    assert_eq!(r["error"]["code"], -32601, "{r}");
    raw.check(3, &ws);
}

#[test]
fn requests_before_initialize_are_refused_and_initialize_still_works() {
    let (_d, ws, mut raw) = raw_workspace();
    let f = ws.join("f.txt");
    raw.request(1, "workspace/executeCommand", json!({"command": "multiedit.apply", "arguments": [{"file_path": f, "edits": [edit("alpha", "beta")]}]}));
    assert_eq!(
        raw.response(1, WAIT).expect("answered")["error"]["code"],
        -32002
    );
    raw.request(2, "shutdown", json!(null));
    assert_eq!(
        raw.response(2, WAIT).expect("answered")["error"]["code"],
        -32002
    );
    raw.notify("initialized", json!({}));
    let init = raw.initialize(3, &ws);
    assert!(
        init["result"]["capabilities"]["executeCommandProvider"].is_object(),
        "{init}"
    );
    // A second initialize is refused; the session goes on.
    raw.request(
        4,
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert!(raw
        .response(4, WAIT)
        .expect("answered")
        .get("error")
        .is_some());
    raw.check(5, &ws);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "alpha\n");
    no_panic(&raw.stderr());
}

/// The specification: a notification before initialize is dropped (exit excepted).
#[test]
fn notifications_before_initialize_are_dropped() {
    let (_d, ws, mut raw) = raw_workspace();
    let f = ws.join("f.txt");
    raw.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri(&f), "languageId": "text", "version": 1, "text": "gamma\n"}}));
    raw.initialize(1, &ws);
    // The didOpen must not shadow the file on disk.
    raw.check(2, &ws);
}

// ---- documents ----

#[test]
fn did_change_for_unknown_documents_and_out_of_range_positions() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(Options::new(&ws));
    let ghost = uri(&ws.join("never-opened.txt"));
    for params in [
        json!({"textDocument": {"uri": ghost, "version": 2}, "contentChanges": [{"text": "x"}]}),
        json!({"textDocument": {"uri": "file:///nowhere/x.txt", "version": 1}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}),
        json!({"textDocument": {"uri": "not a uri at all", "version": 1}, "contentChanges": []}),
        json!({"textDocument": {"uri": ghost}, "contentChanges": "wrong type"}),
    ] {
        ed.notify("textDocument/didChange", params);
    }
    ed.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": ghost}}),
    );
    assert!(!ws.join("never-opened.txt").exists());

    ed.open(&f, "one\ntwo\n");
    let u = uri(&f);
    let change = |ed: &mut Editor, range: Value, text: &str, expected: &str| {
        let buf = ed.buffers.get_mut(&u).unwrap();
        buf.version += 1;
        buf.text = expected.to_string();
        let v = buf.version;
        ed.notify("textDocument/didChange", json!({"textDocument": {"uri": u, "version": v}, "contentChanges": [{"range": range, "text": text}]}));
        ed.assert_server_agrees(&f);
    };
    let pos = |l: u64, c: u64| json!({"line": l, "character": c});
    // A line past the end means the end of the text; a column past the line's end means the line end.
    change(
        &mut ed,
        json!({"start": pos(1000, 0), "end": pos(1000, 5)}),
        "END",
        "one\ntwo\nEND",
    );
    change(
        &mut ed,
        json!({"start": pos(0, 4_000_000_000), "end": pos(0, 4_000_000_000)}),
        "!",
        "one!\ntwo\nEND",
    );
    change(
        &mut ed,
        json!({"start": pos(1, 1), "end": pos(99, 99)}),
        "",
        "one!\nt",
    );
    // A reversed range, and positions that are not numbers: the server survives; a full-text change
    // then puts both copies back in step.
    let buf_version = ed.buffers[&u].version;
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": buf_version + 1},
        "contentChanges": [{"range": {"start": pos(1, 1), "end": pos(0, 0)}, "text": "R"}]}),
    );
    ed.notify("textDocument/didChange", json!({"textDocument": {"uri": u, "version": buf_version + 2},
        "contentChanges": [{"range": {"start": {"line": -1, "character": "x"}, "end": pos(0, 0)}, "text": "R"}]}));
    let buf = ed.buffers.get_mut(&u).unwrap();
    buf.version = buf_version + 3;
    buf.text = "fresh\ntext\n".into();
    ed.notify("textDocument/didChange", json!({"textDocument": {"uri": u, "version": buf_version + 3}, "contentChanges": [{"text": "fresh\ntext\n"}]}));
    ed.assert_server_agrees(&f);
    ed.apply(json!({"file_path": f, "edits": [edit("fresh", "FRESH")]}))
        .expect("works after the abuse");
    assert_eq!(ed.text(&f), "FRESH\ntext\n");
    no_panic(&ed.stderr_text());
}

#[test]
fn a_fifty_megabyte_document() {
    let (_d, ws) = workspace();
    let f = ws.join("big.txt");
    let line = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n";
    let mut text = line.repeat(50 * 1024 * 1024 / line.len());
    text.push_str("THE END\n");
    let (mut ed, pid) = start_tracked(Options::new(&ws));
    let started = Instant::now();
    let mut phases = Vec::new();
    let mut lap = Instant::now();
    let mut mark = |name: &'static str| {
        phases.push(format!("{name} {:.1?}", lap.elapsed()));
        lap = Instant::now();
    };
    ed.open(&f, &text);
    let r = ed
        .apply(json!({"file_path": f, "edits": [edit("THE END", "the end"), edit("fox", "cat")]}));
    mark("open + ambiguous plan");
    let err = r.expect_err("fox is everywhere");
    assert_eq!(err["data"]["kind"], "ambiguous");
    let n = text.matches("fox").count();
    assert!(
        err["data"]["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Found {n} matches")),
        "{}",
        &err["data"]["message"].as_str().unwrap()[..100]
    );
    let error_size = err.to_string().len();
    ed.apply(json!({"file_path": f, "edits": [edit("THE END", "the end")]}))
        .expect("one edit at the end");
    mark("one-edit plan applied");
    assert!(ed.text(&f).ends_with("the end\n"));
    // The server's copy took the change: the next plan finds the new text on the last line. (Not a
    // preview: its unified diff of 50 MB is slow in a debug build.)
    let lines = text.lines().count() - 1;
    ed.apply(json!({"file_path": f, "edits": [edit("the end\n", "fin\n")]}))
        .expect("the server sees the change");
    mark("second plan applied");
    let sent = &ed.edits_seen.last().unwrap()["edit"]["documentChanges"][0]["edits"][0];
    assert_eq!(sent["range"]["start"]["line"], lines, "{sent}");
    assert!(ed.text(&f).ends_with("fin\n"));
    let elapsed = started.elapsed();
    let hwm = status_kb(pid, "VmHWM");
    eprintln!(
        "50 MB document: {elapsed:.1?} in all ({}); the ambiguity refusal is {error_size} bytes; server peak memory {} MB",
        phases.join(", "),
        hwm / 1024
    );
    ed.close(&f);
    ed.apply(json!({"file_path": ws.join("small.txt"), "edits": [edit("", "x")]}))
        .expect("still answers");
    assert!(elapsed < Duration::from_secs(120), "{elapsed:?}");
    no_panic(&ed.stderr_text());
}

/// A sparse file of a terabyte in the workspace (it costs no disk): reading it for a plan, a preview
/// or `multiedit.read` allocated its size first and aborted the server (SIGABRT, "memory allocation
/// of 1099511627776 bytes failed"). Each command refuses it from its size; the server answers the next
/// request, and nothing changed.
#[test]
fn a_terabyte_file_is_refused_from_its_size_and_the_server_lives() {
    let (_d, ws) = workspace();
    let big = ws.join("big.log");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let f = ws.join("f.txt");
    std::fs::write(&f, "alpha\n").unwrap();
    let before = snapshot(&ws);
    let mut ed = start(Options::new(&ws));
    let message = format!(
        "Cannot read {}: it is 1.0 TiB (1099511627776 bytes), more than the 256 MiB multiedit reads. Nothing was changed.",
        big.display()
    );
    let plan = json!({"files": [
        {"file_path": f, "edits": [edit("alpha", "beta")]},
        {"file_path": big, "edits": [edit("x", "y")]},
    ]});
    for (command, arguments) in [
        ("multiedit.apply", json!([plan])),
        ("multiedit.preview", json!([plan])),
        ("multiedit.read", json!([{"file_path": big}])),
    ] {
        let e = ed
            .execute(command, arguments, Answer::Apply)
            .expect_err(command);
        assert_eq!(
            (e["data"]["kind"].as_str(), e["data"]["message"].as_str()),
            (Some("too_large"), Some(message.as_str())),
            "{command}: {e}"
        );
    }
    assert!(ed.edits_seen.is_empty(), "no edit sent");
    assert_eq!(snapshot(&ws), before, "nothing changed");
    ed.apply(json!({"file_path": f, "edits": [edit("alpha", "beta")]}))
        .expect("the next plan applies");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "beta\n");
    no_panic(&ed.stderr_text());
}

#[test]
fn a_plan_of_ten_thousand_edits() {
    let (_d, ws) = workspace();
    let f = ws.join("many.txt");
    let text: String = (0..10_000).map(|i| format!("item {i:05} old\n")).collect();
    // The scripted editor applies 10,000 text edits slowly (it is a debug build): give it time.
    let mut opts = Options::new(&ws);
    opts.init_options = json!({"applyEditTimeoutMs": 300_000});
    let mut ed = start(opts);
    ed.open(&f, &text);
    let edits: Vec<Value> = (0..10_000)
        .map(|i| edit(&format!("item {i:05} old"), &format!("item {i:05} new")))
        .collect();
    let plan = json!({"file_path": f, "edits": edits});
    // Timed on the server's side: from the command to the workspace/applyEdit it sends.
    let started = Instant::now();
    let (id, apply_edit) = command_until_apply_edit(&mut ed, plan);
    let elapsed = started.elapsed();
    let sent = apply_edit["params"]["edit"]["documentChanges"][0]["edits"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(sent, 10_000);
    ed.apply_workspace_edit(&apply_edit["params"]["edit"])
        .unwrap();
    ed.send(&json!({"jsonrpc": "2.0", "id": apply_edit["id"], "result": {"applied": true}}));
    let r = ed.response(id, Answer::Apply).expect("applied");
    assert_eq!(r["files"][0]["edits_applied"], 10_000);
    assert_eq!(ed.text(&f), text.replace(" old\n", " new\n"));
    eprintln!("10,000-edit plan on an open document: validated and sent as one WorkspaceEdit in {elapsed:?}");
    ed.assert_server_agrees(&f);
    // A closed file too, read from disk.
    let g = ws.join("closed.txt");
    std::fs::write(&g, &text).unwrap();
    let edits: Vec<Value> = (0..10_000)
        .map(|i| edit(&format!("item {i:05} old"), &format!("item {i:05} new")))
        .collect();
    ed.apply(json!({"file_path": g, "edits": edits}))
        .expect("applied on disk");
    assert_eq!(
        std::fs::read_to_string(&g).unwrap(),
        text.replace(" old\n", " new\n")
    );
    assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");
    no_panic(&ed.stderr_text());
}

// ---- the editor misbehaving ----

/// Sends a command and returns the id of the workspace/applyEdit it triggers, leaving it unanswered.
fn command_until_apply_edit(ed: &mut Editor, plan: Value) -> (i64, Value) {
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "multiedit.apply", "arguments": [plan]}),
    );
    loop {
        let msg = ed.recv(WAIT).expect("the applyEdit request");
        if msg["method"] == "workspace/applyEdit" {
            return (id, msg);
        }
        ed.received.push(msg);
    }
}

#[test]
fn an_answer_after_the_timeout_is_ignored_and_the_next_command_works() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut opts = Options::new(&ws);
    opts.init_options = json!({"applyEditTimeoutMs": 300});
    let mut ed = start(opts);
    ed.open(&f, "abc\n");
    let (id, apply_edit) =
        command_until_apply_edit(&mut ed, json!({"file_path": f, "edits": [edit("a", "A")]}));
    let e = ed.response(id, Answer::Apply).expect_err("timed out");
    assert_eq!(e["data"]["kind"], "not_applied", "{e}");
    // The editor wakes up and answers the stale request, even applying it; the server ignores the
    // answer and learns of the change through didChange like any other.
    ed.apply_workspace_edit(&apply_edit["params"]["edit"])
        .unwrap();
    ed.send(&json!({"jsonrpc": "2.0", "id": apply_edit["id"], "result": {"applied": true}}));
    ed.send(&json!({"jsonrpc": "2.0", "id": apply_edit["id"], "result": {"applied": true}}));
    assert_eq!(ed.text(&f), "Abc\n");
    ed.assert_server_agrees(&f);
    ed.apply(json!({"file_path": f, "edits": [edit("Ab", "xy")]}))
        .expect("the next command works");
    assert_eq!(ed.text(&f), "xyc\n");
    no_panic(&ed.stderr_text());
}

#[test]
fn a_client_that_disconnects_mid_command() {
    let (_d, ws, mut raw) = raw_workspace();
    let f = ws.join("f.txt");
    // The server notices the missing answer only when applyEditTimeoutMs runs out: keep it short.
    raw.request(1, "initialize", json!({"processId": null, "rootUri": uri(&ws),
        "initializationOptions": {"applyEditTimeoutMs": 2000},
        "capabilities": {"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}}}}));
    raw.response(1, WAIT).expect("initialized");
    raw.notify("initialized", json!({}));
    raw.request(2, "workspace/executeCommand", json!({"command": "multiedit.apply", "arguments": [{"file_path": f, "edits": [edit("alpha", "beta")]}]}));
    let deadline = Instant::now() + WAIT;
    loop {
        let msg = raw
            .rx
            .recv_timeout(deadline - Instant::now())
            .expect("the applyEdit request");
        if msg["method"] == "workspace/applyEdit" {
            break;
        }
    }
    drop(raw.stdin.take()); // the editor is gone
    let gone = Instant::now();
    let status = raw
        .wait_exit(Duration::from_secs(10))
        .expect("the server exits when its client is gone");
    eprintln!(
        "the server exited {:?} after its client vanished mid-command: {status:?}",
        gone.elapsed()
    );
    assert!(
        status.code().is_some(),
        "ended by a signal: {status:?}\nstderr: {}",
        raw.stderr()
    );
    no_panic(&raw.stderr());
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "alpha\n",
        "the server does not write files itself"
    );

    // Disconnecting in the middle of a frame.
    let mut raw = Raw::start();
    raw.initialize(1, &ws);
    raw.send(b"Content-Length: 100\r\n\r\n{\"jsonrpc\": \"2.0\", ");
    drop(raw.stdin.take());
    let status = raw.wait_exit(Duration::from_secs(10)).expect("exits");
    assert!(status.code().is_some(), "{status:?}");
    no_panic(&raw.stderr());
}

/// The client exits (the server's input closes) right after answering `multiedit/rename` with a
/// rename of 200,000 occurrences, the most one plan may hold: the server's one runtime thread is then
/// busy preparing the plan, a synchronous step that never looks at the input, and the server kept
/// working for minutes after its client was gone (a million occurrences held 5 GB). Input is read on
/// a thread of its own, which ends the process about a second after the input ended.
#[test]
fn a_server_whose_client_exits_during_a_huge_rename_stops_within_seconds() {
    let (_d, ws, mut raw) = raw_workspace();
    let f = ws.join("names.ts");
    let n = 200_000;
    let text: String = (0..n).map(|i| format!("use(total); // {i}\n")).collect();
    std::fs::write(&f, &text).unwrap();
    raw.request(1, "initialize", json!({"processId": null, "rootUri": uri(&ws),
        "capabilities": {"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
            "experimental": {"multiedit": {"rename": true}}}}));
    raw.response(1, WAIT).expect("initialized");
    raw.notify("initialized", json!({}));
    raw.request(
        2,
        "workspace/executeCommand",
        json!({"command": "multiedit.apply", "arguments": [
        {"rename": {"file_path": f, "line": 1, "column": 6, "new_name": "sum"}}]}),
    );
    let deadline = Instant::now() + WAIT;
    let asked = loop {
        let msg = raw
            .rx
            .recv_timeout(deadline - Instant::now())
            .expect("the rename request");
        if msg["method"] == "multiedit/rename" {
            break msg["id"].clone();
        }
    };
    // The language server's edit, written as text: building it as JSON values takes long in a debug build.
    let mut edits = String::new();
    for i in 0..n {
        if i > 0 {
            edits.push(',');
        }
        edits.push_str(&format!("{{\"range\":{{\"start\":{{\"line\":{i},\"character\":4}},\"end\":{{\"line\":{i},\"character\":9}}}},\"newText\":\"sum\"}}"));
    }
    let answer = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{asked},\"result\":{{\"edit\":{{\"changes\":{{{}:[{edits}]}}}},\"placeholder\":\"total\"}}}}",
        Value::from(uri(&f))
    );
    raw.send(format!("Content-Length: {}\r\n\r\n{answer}", answer.len()).as_bytes());
    drop(raw.stdin.take()); // the editor is gone
    let gone = Instant::now();
    let status = raw.wait_exit(Duration::from_secs(5)).unwrap_or_else(|| {
        panic!(
            "the server still runs 5 s after its client exited\nstderr: {}",
            raw.stderr()
        )
    });
    eprintln!(
        "the server exited {:?} after its client vanished during a rename of {n} occurrences: {status:?}",
        gone.elapsed()
    );
    assert!(status.code().is_some(), "ended by a signal: {status:?}");
    no_panic(&raw.stderr());
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        text,
        "nothing changed"
    );
}

#[test]
fn cancel_requests_of_every_shape() {
    let (_d, ws) = workspace();
    let f = ws.join("f.txt");
    let mut ed = start(Options::new(&ws));
    ed.open(&f, "abc\n");
    for params in [
        json!({"id": 9999}),
        json!({"id": "nope"}),
        json!({}),
        json!(null),
        json!({"id": {"x": 1}}),
    ] {
        ed.notify("$/cancelRequest", params);
    }
    // Cancelling a command that already finished changes nothing.
    let id = ed.request("workspace/executeCommand", json!({"command": "multiedit.apply", "arguments": [{"file_path": f, "edits": [edit("a", "A")]}]}));
    ed.response(id, Answer::Apply).expect("applied");
    ed.notify("$/cancelRequest", json!({"id": id}));
    assert_eq!(ed.text(&f), "Abc\n");
    // Cancelled while the editor holds the applyEdit, which the editor then applies anyway: the next
    // command sees the applied text.
    let (id, apply_edit) =
        command_until_apply_edit(&mut ed, json!({"file_path": f, "edits": [edit("b", "B")]}));
    ed.notify("$/cancelRequest", json!({"id": id}));
    let e = ed.response(id, Answer::Apply).expect_err("cancelled");
    assert_eq!(e["code"], -32800, "{e}");
    ed.apply_workspace_edit(&apply_edit["params"]["edit"])
        .unwrap();
    ed.send(&json!({"jsonrpc": "2.0", "id": apply_edit["id"], "result": {"applied": true}}));
    assert_eq!(ed.text(&f), "ABc\n");
    ed.apply(json!({"file_path": f, "edits": [edit("ABc", "done")]}))
        .expect("sees the applied text");
    assert_eq!(ed.text(&f), "done\n");
    // Cancelling a preview (answered at once) and the same id twice.
    let id = ed.request("workspace/executeCommand", json!({"command": "multiedit.preview", "arguments": [{"file_path": f, "edits": [edit("done", "x")]}]}));
    ed.notify("$/cancelRequest", json!({"id": id}));
    ed.notify("$/cancelRequest", json!({"id": id}));
    let r = ed.response(id, Answer::Apply);
    assert!(
        r.is_ok() || r.as_ref().unwrap_err()["code"] == -32800,
        "{r:?}"
    );
    ed.assert_server_agrees(&f);
    no_panic(&ed.stderr_text());
}

// ---- races ----

use crate::support::rng::Rng;

/// A random small edit of `text`: an insertion, a deletion or a replacement, on char boundaries.
/// Past 3,000 bytes it only deletes, so the document stays small and the matches many.
fn random_change(rng: &mut Rng, text: &str, crlf: bool) -> (usize, usize, String) {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let ia = rng.below(bounds.len());
    let long = text.len() > 3000;
    let ib = (ia + rng.below(if long { 12 } else { 4 })).min(bounds.len() - 1);
    let pieces: &[&str] = if crlf {
        &["ab", "a", "b", "c", "\r\n", "é", "😀", "abc\r\n", ""]
    } else {
        &["ab", "a", "b", "c", "\n", "é", "😀", "abc\n", ""]
    };
    let n = if long { 0 } else { rng.below(3) };
    let new: String = (0..n).map(|_| pieces[rng.below(pieces.len())]).collect();
    // A position between the `\r` and the `\n` of a line break has no LSP position: step before it.
    let outside = |i: usize| {
        if i > 0 && text.as_bytes()[i - 1] == b'\r' && text.as_bytes().get(i) == Some(&b'\n') {
            i - 1
        } else {
            i
        }
    };
    let (a, b) = (outside(bounds[ia]), outside(bounds[ib]));
    (a, b.max(a), new)
}

/// The engine's result, for CRLF documents (where the reference only knows the view).
fn engine_result(
    plan_edits: &[(String, String, bool)],
    text: &str,
) -> Result<String, &'static str> {
    use multiedit::engine::{apply_plan, Edit, FilePlan, Options, Plan};
    let edits = plan_edits
        .iter()
        .map(|(o, n, all)| {
            if *all {
                Edit::all(o, n)
            } else {
                Edit::new(o, n)
            }
        })
        .collect();
    let plan = Plan {
        files: vec![FilePlan::edit("/f", edits)],
        options: Options::default(),
        rename: None,
    };
    apply_plan(&plan, &[Some(text)])
        .map(|mut o| o.files.remove(0).text)
        .map_err(|r| r.kind.as_str())
}

fn reference_result(
    plan_edits: &[(String, String, bool)],
    text: &str,
) -> Result<String, &'static str> {
    use reference::model::{Edit, Expect, File, Plan};
    let plan = Plan {
        files: vec![File {
            path: "/f".into(),
            edits: plan_edits
                .iter()
                .map(|(o, n, all)| Edit {
                    old: o.clone(),
                    new: n.clone(),
                    expect: if *all { Expect::All } else { Expect::One },
                })
                .collect(),
        }],
        partial: false,
        claude_code: false,
    };
    reference::model::run(&plan, &[Some(text)])
        .map(|mut r| r.remove(0).unwrap().view_after)
        .map_err(|f| f.kind)
}

#[test]
fn did_change_storms_interleaved_with_commands_never_apply_to_another_version() {
    storm_test(false);
}

/// The same with CRLF line breaks: the server's positions around `\r\n`, in UTF-16, must still put every
/// edit exactly where the engine put it in the version it names.
#[test]
fn did_change_storms_on_a_crlf_document() {
    storm_test(true);
}

fn storm_test(crlf: bool) {
    let (_d, ws) = workspace();
    let f = ws.join("race.txt");
    let mut ed = start(Options::new(&ws));
    let u = uri(&f);
    ed.open(
        &f,
        if crlf {
            "ab\r\nabc\r\nc\r\n"
        } else {
            "ab\nabc\nc\n"
        },
    );
    let expected_result = |plan: &[(String, String, bool)], text: &str| {
        if crlf {
            engine_result(plan, text)
        } else {
            reference_result(plan, text)
        }
    };
    let mut history: HashMap<i64, String> = HashMap::new();
    history.insert(1, ed.text(&f).to_string());
    let seed = std::env::var("RACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9e3779b97f4a7c15u64);
    let mut rng = Rng(seed);
    let (mut changes, mut applied, mut not_applied, mut refused) = (0usize, 0usize, 0usize, 0usize);
    let begun = Instant::now();
    let plans: [Vec<(String, String, bool)>; 3] = [
        vec![("ab".into(), "ba".into(), true)],
        vec![("c\n".into(), "C\n".into(), false)],
        vec![
            ("b".into(), "bb".into(), true),
            ("bbb".into(), "b".into(), true),
        ],
    ];
    let mut round = 0;
    while (round < 400 || changes < 2000) && begun.elapsed() < Duration::from_secs(60) {
        round += 1;
        let storm =
            |ed: &mut Editor, history: &mut HashMap<i64, String>, rng: &mut Rng, n: usize| {
                let mut msgs = Vec::new();
                for _ in 0..n {
                    let (a, b, new) = random_change(rng, ed.text(&f), crlf);
                    msgs.push(ed.change_msg(&f, a, b, &new));
                    let buf = &ed.buffers[&u];
                    history.insert(buf.version as i64, buf.text.clone());
                }
                ed.send_batch(&msgs);
                n
            };
        let n = rng.below(12);
        changes += storm(&mut ed, &mut history, &mut rng, n);
        let plan_edits = plans[rng.below(plans.len())].clone();
        let plan = json!({"file_path": f, "edits": plan_edits.iter().map(|(o, n, all)| json!({"old_string": o, "new_string": n, "replace_all": all})).collect::<Vec<_>>()});
        let version_at_request = ed.buffers[&u].version as i64;
        let id = ed.request(
            "workspace/executeCommand",
            json!({"command": "multiedit.apply", "arguments": [plan]}),
        );
        // Changes racing the command: sent after it, before its applyEdit is answered.
        if rng.below(2) == 0 {
            let n = 1 + rng.below(4);
            changes += storm(&mut ed, &mut history, &mut rng, n);
        }
        let mut validated: Option<i64> = None;
        let result = loop {
            let msg = ed.recv(WAIT).expect("an answer");
            if msg["method"] == "workspace/applyEdit" {
                let dc = &msg["params"]["edit"]["documentChanges"][0];
                let v = dc["textDocument"]["version"]
                    .as_i64()
                    .expect("a versioned edit");
                let base = history.get(&v).unwrap_or_else(|| {
                    panic!("round {round}: the edit names version {v}, never sent")
                });
                assert!(v >= version_at_request, "round {round}: validated against version {v}, older than {version_at_request} sent before the command");
                let expected = expected_result(&plan_edits, base)
                    .unwrap_or_else(|k| panic!("round {round}: server applies what the reference refuses ({k}) on version {v}"));
                let got = apply_text_edits(base, dc["edits"].as_array().unwrap(), ed.enc);
                assert_eq!(
                    got, expected,
                    "round {round}: the edit does not turn version {v} into the plan's result"
                );
                validated = Some(v);
                // Sometimes the user types before the editor handles the request: the edit then names
                // an old version and the editor must refuse it.
                if rng.below(3) == 0 {
                    changes += storm(&mut ed, &mut history, &mut rng, 1);
                }
                let answer = match ed.apply_workspace_edit(&msg["params"]["edit"]) {
                    Ok(()) => {
                        let buf = &ed.buffers[&u];
                        history.insert(buf.version as i64, buf.text.clone());
                        assert_eq!(buf.text, expected);
                        json!({"applied": true})
                    }
                    Err(reason) => json!({"applied": false, "failureReason": reason}),
                };
                ed.send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": answer}));
                continue;
            }
            if msg.get("method").is_some() {
                continue;
            }
            assert_eq!(msg["id"], json!(id));
            break msg;
        };
        if let Some(r) = result.get("result") {
            assert_eq!(
                r["files"][0]["version"].as_i64(),
                validated,
                "round {round}: {r}"
            );
            applied += 1;
        } else {
            let kind = result["error"]["data"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            match kind.as_str() {
                "not_applied" => {
                    assert!(
                        validated.is_some(),
                        "round {round}: not_applied without an applyEdit: {result}"
                    );
                    not_applied += 1;
                }
                "not_found" | "ambiguous" | "unchanged" => {
                    // Refused: the reference must refuse the same way on a version the server could have seen.
                    let latest = ed.buffers[&u].version as i64;
                    assert!(
                        (version_at_request..=latest).any(|v| history.get(&v).is_some_and(|t| expected_result(&plan_edits, t) == Err(kind.as_str()))),
                        "round {round}: refused as {kind}, which no version from {version_at_request} on explains"
                    );
                    refused += 1;
                }
                other => panic!("round {round}: unexpected refusal {other}: {result}"),
            }
        }
    }
    eprintln!(
        "{} {round} commands, {changes} didChange notifications in {:?}: {applied} applied, {not_applied} not applied \
         (document changed), {refused} refused (RACE_SEED={seed})",
        if crlf { "CRLF:" } else { "LF:" },
        begun.elapsed()
    );
    assert!(changes >= 1000, "only {changes} changes");
    assert!(
        applied > 0 && not_applied > 0,
        "the interleaving never produced both outcomes"
    );
    ed.assert_server_agrees(&f);
    no_panic(&ed.stderr_text());
}

// ---- load and memory ----

#[test]
fn sustained_load_and_no_leak_after_documents_close() {
    let (_d, ws) = workspace();
    let (mut ed, pid) = start_tracked(Options::new(&ws));
    let seconds: u64 = std::env::var("LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    // Warm up, then the baseline.
    let warm = ws.join("warm.txt");
    ed.open(&warm, "alpha\n");
    ed.apply(json!({"file_path": warm, "edits": [edit("alpha", "beta")]}))
        .unwrap();
    ed.close(&warm);
    ed.preview(json!({"file_path": warm, "edits": [edit("", "x")]}))
        .unwrap();
    let baseline = status_kb(pid, "VmRSS");

    // Sustained: 20 open documents of ~50 KB, a 3-edit plan on one of them after another.
    let docs: Vec<PathBuf> = (0..20).map(|i| ws.join(format!("load{i}.txt"))).collect();
    let body: String = (0..1000)
        .map(|i| format!("line {i:04}: alpha beta gamma\n"))
        .collect();
    for d in &docs {
        ed.open(d, &body);
    }
    let mut flipped = vec![false; docs.len()];
    let mut latencies = Vec::new();
    let begun = Instant::now();
    let mut i = 0;
    while begun.elapsed() < Duration::from_secs(seconds) {
        let k = i % docs.len();
        let (a, b) = if flipped[k] {
            ("ALPHA", "alpha")
        } else {
            ("alpha", "ALPHA")
        };
        // Three edits of unique lines, as an assistant sends them.
        let plan = json!({"file_path": docs[k], "edits": [
            edit(&format!("line 0100: {a}"), &format!("line 0100: {b}")),
            edit(&format!("line 0500: {a}"), &format!("line 0500: {b}")),
            edit(&format!("line 0900: {a}"), &format!("line 0900: {b}")),
        ]});
        let t = Instant::now();
        ed.apply(plan).expect("applied");
        latencies.push(t.elapsed());
        flipped[k] = !flipped[k];
        i += 1;
    }
    let elapsed = begun.elapsed();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    let peak = status_kb(pid, "VmHWM");
    eprintln!(
        "load: {} commands in {elapsed:.1?} = {:.0} commands/s; latency p50 {:?}, p99 {:?}, max {:?}; \
         server peak memory (VmHWM) {} MB, baseline RSS {} MB",
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        pct(0.5),
        pct(0.99),
        latencies.last().unwrap(),
        peak / 1024,
        baseline / 1024
    );
    assert!(
        latencies.len() >= 20,
        "only {} commands in {seconds} s",
        latencies.len()
    );
    for (k, d) in docs.iter().enumerate() {
        assert_eq!(ed.text(d).contains("ALPHA"), flipped[k]);
        ed.close(d);
    }

    // No leak: cycles of opening 10 MB of documents, editing each, closing them. A leak of the
    // documents would grow memory by ~10 MB a cycle; what the allocator keeps for reuse does not grow.
    let big: String = (0..4000)
        .map(|i| format!("row {i:05} the quick brown fox jumps over the lazy dog\n"))
        .collect();
    let mut after_cycle = Vec::new();
    for cycle in 0..5 {
        let paths: Vec<PathBuf> = (0..40)
            .map(|i| ws.join(format!("cycle{cycle}-{i}.txt")))
            .collect();
        for p in &paths {
            ed.open(p, &big);
        }
        for p in &paths {
            ed.apply(json!({"file_path": p, "edits": [edit("row 02000", "ROW 02000")]}))
                .unwrap();
        }
        for p in &paths {
            ed.close(p);
        }
        // A round trip so the closes are processed before measuring.
        ed.preview(json!({"file_path": warm, "edits": [edit("", "x")]}))
            .unwrap();
        after_cycle.push(status_kb(pid, "VmRSS"));
    }
    let mb = |kb: u64| kb as f64 / 1024.0;
    eprintln!(
        "memory: baseline {:.1} MB, after each open/edit/close cycle of 10 MB: {:?} MB",
        mb(baseline),
        after_cycle
            .iter()
            .map(|&k| (mb(k) * 10.0).round() / 10.0)
            .collect::<Vec<_>>()
    );
    let growth = after_cycle[4].saturating_sub(after_cycle[1]);
    assert!(
        growth < 6 * 1024,
        "memory grew by {:.1} MB over three cycles: a leak",
        mb(growth)
    );
    assert!(
        after_cycle[4] < baseline + 48 * 1024,
        "memory after closing everything ({:.1} MB) is far above the baseline ({:.1} MB)",
        mb(after_cycle[4]),
        mb(baseline)
    );
    let last = ws.join("last.txt");
    ed.open(&last, "still here\n");
    ed.apply(json!({"file_path": last, "edits": [edit("still", "STILL")]}))
        .unwrap();
    ed.assert_server_agrees(&last);
    no_panic(&ed.stderr_text());
}
