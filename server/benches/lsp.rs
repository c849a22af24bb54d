//! Language server cost: `cargo bench --bench lsp`.
//!
//! - `apply_handler`: what the server does for `multiedit.apply` with a 10-edit plan on a 1 MB open
//!   document, in process: snapshot, engine, positions, the WorkspaceEdit built and serialized, the
//!   result object. The editor's own work is excluded.
//! - `apply_round_trip`: the same command through the whole server (framing, JSON-RPC, the
//!   framework's scheduling, DocSync) over an in-process pipe, with a scripted client answering
//!   `workspace/applyEdit` at once, after a didChange that gives the document a new version but leaves
//!   its text, so the plan stays valid from one iteration to the next.
//! - `bridge_round_trip`: the same plan handed over through the bridge (`multiedit::bridge::route`:
//!   registry, Unix socket, one request line and one answer line) to such a server; the difference
//!   from `apply_round_trip` is the bridge's overhead.
//! - `keystroke`: one didChange inserting one character in the middle of a 10 KB and a 10 MB open
//!   document, from the notification's JSON to the updated rope (what `DocSync` runs per keystroke);
//!   `keystroke_rope_only` the rope part alone.
//! - `rename_files`, `rename_occurrences`: a plan-level `rename` through the whole server, as
//!   `apply_round_trip`, with the scripted client answering `multiedit/rename` with a language server's
//!   WorkspaceEdit: over 700 and 2,800 files on disk (5 occurrences each), and over 20,000 and
//!   100,000 occurrences in one file. The cost is linear: 4 times the files, or 5 times the
//!   occurrences, cost 4 to 5 times the time (docs/performance.md).

use std::sync::Arc;

use multiedit::lsp::commands::{self, APPLY};
use multiedit::lsp::config::Config;
use multiedit::lsp::notifications::{self, DID_CHANGE, DID_OPEN};
use multiedit::lsp::prepare::prepare_command;
use multiedit::lsp::session::Session;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

fn main() {
    // The bridge's registry, private to this run (set before any thread starts).
    let runtime_dir = tempfile::tempdir().unwrap();
    std::env::set_var("XDG_RUNTIME_DIR", runtime_dir.path());
    divan::main();
}

const URI: &str = "file:///bench/ws/big.rs";
const PATH: &str = "/bench/ws/big.rs";

/// A code-like text of about `bytes` bytes whose every line is unique, with some astral characters so
/// UTF-16 columns differ from char columns.
fn source(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 100);
    let mut i = 0u64;
    while s.len() < bytes {
        s.push_str(&format!(
            "    let value_{i} = compute({i}, \"😀{:x}\"); // step {i}\n",
            i.wrapping_mul(0x9e3779b97f4a7c15)
        ));
        i += 1;
    }
    s
}

/// A plan of `n` edits of lines spread evenly through the text.
fn plan(text: &str, n: usize) -> Value {
    let lines: Vec<&str> = text.lines().collect();
    let step = lines.len() / n;
    let edits: Vec<Value> = (0..n)
        .map(|k| {
            let line = lines[k * step + step / 2];
            json!({"old_string": line, "new_string": line.replace("compute(", "compute_fast(")})
        })
        .collect();
    json!({"file_path": PATH, "edits": edits})
}

fn initialize_params() -> Value {
    json!({
        "processId": null,
        "rootUri": "file:///bench/ws",
        "capabilities": {"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}}},
    })
}

fn session_with(text: &str) -> (Session, Config) {
    let session = Session::default();
    let (config, _) = Config::from_initialize(&initialize_params());
    session.set_config(config.clone());
    let open =
        json!({"textDocument": {"uri": URI, "languageId": "rust", "version": 1, "text": text}});
    notifications::handle(&session, DID_OPEN, Some(&open)).unwrap();
    (session, config)
}

#[divan::bench]
fn apply_handler(bencher: divan::Bencher) {
    let text = source(1 << 20);
    let (session, config) = session_with(&text);
    let args = vec![plan(&text, 10)];
    bencher.bench_local(|| {
        let prepared = prepare_command(&session, &config, APPLY, &args).expect("plan applies");
        let wire = serde_json::to_vec(&prepared.edit).unwrap();
        let result = commands::result_json(&prepared).to_value();
        (wire.len(), result)
    });
}

async fn write_frame<W: AsyncWriteExt + Unpin>(w: &mut W, msg: &Value) {
    let body = serde_json::to_vec(msg).unwrap();
    w.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
        .await
        .unwrap();
    w.write_all(&body).await.unwrap();
    w.flush().await.unwrap();
}

async fn read_frame<R: AsyncBufReadExt + Unpin>(r: &mut R) -> Value {
    serde_json::from_slice(&read_body(r).await).unwrap()
}

type ClientRead = BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>;
type ClientWrite = tokio::io::WriteHalf<tokio::io::DuplexStream>;

/// A whole server on an in-process pipe, initialized with `params`: the client's ends.
fn initialized(runtime: &tokio::runtime::Runtime, params: Value) -> (ClientRead, ClientWrite) {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    runtime.spawn(multiedit::lsp::serve(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client_end);
    let mut client_read = BufReader::new(client_read);
    runtime.block_on(async {
        write_frame(
            &mut client_write,
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}),
        )
        .await;
        while read_frame(&mut client_read).await.get("id") != Some(&json!("init")) {}
        write_frame(
            &mut client_write,
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        )
        .await;
    });
    (client_read, client_write)
}

/// A whole server on an in-process pipe, initialized (with the bridge on or off), with `text` open at
/// `URI`: the client's ends.
fn started_server(
    runtime: &tokio::runtime::Runtime,
    text: &str,
    bridge: bool,
) -> (ClientRead, ClientWrite) {
    let mut params = initialize_params();
    params["initializationOptions"] = json!({"bridge": bridge});
    let (mut client_read, mut client_write) = initialized(runtime, params);
    runtime.block_on(async {
        write_frame(&mut client_write, &json!({"jsonrpc": "2.0", "method": DID_OPEN,
            "params": {"textDocument": {"uri": URI, "languageId": "rust", "version": 1, "text": text}}})).await;
        // Answered only after the didOpen before it was applied: a plan from the bridge, which comes
        // another way, then finds the document open.
        let plan = json!({"file_path": PATH, "edits": [{"old_string": "x", "new_string": "x"}]});
        write_frame(&mut client_write, &json!({"jsonrpc": "2.0", "id": "sync", "method": "workspace/executeCommand",
            "params": {"command": "multiedit.preview", "arguments": [plan]}})).await;
        while read_frame(&mut client_read).await.get("id") != Some(&json!("sync")) {}
    });
    (client_read, client_write)
}

/// Answers an applyEdit as an editor does: the didChange that the edit makes, then `applied: true`.
/// The didChange carries a new version but no change, so the document, and the plan, stay valid from
/// one iteration to the next, and the server's wait for the didChange ends as it does with an editor.
async fn answer_apply_edit(msg: &Value, client_write: &mut ClientWrite) {
    static VERSION: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);
    let version = VERSION.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": URI, "version": version}, "contentChanges": []}});
    write_frame(client_write, &change).await;
    let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"applied": true}});
    write_frame(client_write, &answer).await;
}

#[divan::bench]
fn apply_round_trip(bencher: divan::Bencher) {
    let text = source(1 << 20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (mut client_read, mut client_write) = started_server(&runtime, &text, false);
    let command = Arc::new(
        json!({"jsonrpc": "2.0", "id": 0, "method": "workspace/executeCommand",
        "params": {"command": APPLY, "arguments": [plan(&text, 10)]}}),
    );
    bencher.bench_local(|| {
        runtime.block_on(async {
            write_frame(&mut client_write, &command).await;
            loop {
                let msg = read_frame(&mut client_read).await;
                if msg["method"] == "workspace/applyEdit" {
                    answer_apply_edit(&msg, &mut client_write).await;
                } else if msg["id"] == 0 {
                    assert!(msg.get("result").is_some(), "{msg}");
                    break;
                }
            }
        })
    });
}

/// The same plan handed over by `multiedit::bridge::route`, as `multiedit mcp` does: registry read,
/// socket, request and answer lines, then the same command and applyEdit as `apply_round_trip`.
#[cfg(unix)]
#[divan::bench]
fn bridge_round_trip(bencher: divan::Bencher) {
    let text = source(1 << 20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (mut client_read, mut client_write) = started_server(&runtime, &text, true);
    // The editor, answering every applyEdit at once.
    runtime.spawn(async move {
        loop {
            let msg = read_frame(&mut client_read).await;
            if msg["method"] == "workspace/applyEdit" {
                answer_apply_edit(&msg, &mut client_write).await;
            }
        }
    });
    let plan = plan(&text, 10);
    let files = [std::path::PathBuf::from(PATH)];
    let entry = multiedit::bridge::registry::entry_path(
        &multiedit::bridge::registry::folder(),
        std::process::id(),
    );
    while !entry.exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    bencher.bench_local(|| {
        let routed = runtime.block_on(multiedit::bridge::route(
            &plan,
            &files,
            multiedit::bridge::Intent::Apply,
            None,
        ));
        assert!(
            matches!(routed, multiedit::bridge::Routed::Answered { .. }),
            "{routed:?}"
        );
    });
}

#[divan::bench(args = [10 << 10, 10 << 20], sample_count = 2000)]
fn keystroke(bencher: divan::Bencher, bytes: usize) {
    let text = source(bytes);
    let (session, _) = session_with(&text);
    let middle = text.lines().count() / 2;
    let mut version = 1;
    bencher
        .with_inputs(|| {
            version += 1;
            json!({"textDocument": {"uri": URI, "version": version},
                "contentChanges": [{"range": {"start": {"line": middle, "character": 30}, "end": {"line": middle, "character": 30}}, "text": "x"}]})
        })
        .bench_local_values(|change| notifications::handle(&session, DID_CHANGE, Some(&change)).unwrap());
}

/// The rope part of a keystroke alone (no JSON): the position conversion and the insertion.
#[divan::bench(args = [10 << 10, 10 << 20], sample_count = 2000)]
fn keystroke_rope_only(bencher: divan::Bencher, bytes: usize) {
    use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};
    let text = source(bytes);
    let (session, config) = session_with(&text);
    let middle = (text.lines().count() / 2) as u32;
    let at = Position::new(middle, 30);
    let change = [TextDocumentContentChangeEvent {
        range: Some(Range::new(at, at)),
        range_length: None,
        text: "x".into(),
    }];
    let mut version = 1;
    bencher.bench_local(|| {
        version += 1;
        session
            .documents
            .change(URI, version, &change, config.encoding)
    });
}

/// A workspace on disk for a rename: `files` files of `per_file` occurrences of `total_value` each,
/// and the language server's answer to `multiedit/rename` (to `renamed`), as JSON text.
fn rename_workspace(
    files: usize,
    per_file: usize,
) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let mut changes = serde_json::Map::new();
    let mut first = None;
    for f in 0..files {
        let path = ws.join(format!("src/m{}/file_{f}.ts", f % 40));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = format!("import {{ total_value }} from './index'; // file {f}\n");
        let mut edits = vec![
            json!({"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 20}}, "newText": "renamed"}),
        ];
        for line in 1..per_file {
            let written =
                format!("export const v{line} = total_value * {line}; // 😀 line {line}\n");
            let at = written.find("total_value").unwrap();
            text.push_str(&written);
            edits.push(json!({"range": {"start": {"line": line, "character": at}, "end": {"line": line, "character": at + 11}}, "newText": "renamed"}));
        }
        std::fs::write(&path, &text).unwrap();
        changes.insert(format!("file://{}", path.display()), Value::Array(edits));
        first.get_or_insert(path);
    }
    let answer =
        json!({"edit": {"changes": changes}, "versions": {}, "placeholder": "total_value"});
    (dir, first.unwrap(), answer.to_string())
}

/// `multiedit.apply` of a rename through a whole server on an in-process pipe; the client answers the
/// rename with `answer` and the WorkspaceEdit with `applied: true`, leaving the files as they were.
fn rename_round_trip(bencher: divan::Bencher, files: usize, per_file: usize) {
    let (dir, first, answer) = rename_workspace(files, per_file);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let params = json!({
        "processId": null,
        "rootUri": format!("file://{}", dir.path().canonicalize().unwrap().display()),
        "capabilities": {"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
            "experimental": {"multiedit": {"rename": true}}},
        "initializationOptions": {"bridge": false},
    });
    let (mut client_read, mut client_write) = initialized(&runtime, params);
    let plan =
        json!({"rename": {"file_path": first, "line": 1, "column": 12, "new_name": "renamed"}});
    let command = json!({"jsonrpc": "2.0", "id": 0, "method": "workspace/executeCommand",
        "params": {"command": APPLY, "arguments": [plan]}});
    let occurrences = files * per_file;
    bencher.bench_local(|| {
        runtime.block_on(async {
            write_frame(&mut client_write, &command).await;
            loop {
                // Only what the client needs of each message is built (the server's WorkspaceEdit is
                // read past), so that the figures are the server's.
                let body = read_body(&mut client_read).await;
                let msg: Head = serde_json::from_slice(&body).unwrap();
                match msg.method.as_deref() {
                    Some("multiedit/rename") => {
                        let body = format!(
                            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{answer}}}",
                            msg.id
                        );
                        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
                        client_write.write_all(frame.as_bytes()).await.unwrap();
                        client_write.flush().await.unwrap();
                    }
                    Some("workspace/applyEdit") => {
                        let answer =
                            json!({"jsonrpc": "2.0", "id": msg.id, "result": {"applied": true}});
                        write_frame(&mut client_write, &answer).await;
                    }
                    Some(_) => {}
                    None if msg.id == 0 => {
                        let msg: Value = serde_json::from_slice(&body).unwrap();
                        let result = msg.get("result").unwrap_or_else(|| panic!("{msg}"));
                        assert_eq!(result["rename"]["occurrences"], occurrences, "{result}");
                        break;
                    }
                    None => {}
                }
            }
        })
    });
}

/// What the bench's client reads of a message: its method and id (the rest is skipped unbuilt).
#[derive(serde::Deserialize)]
struct Head {
    method: Option<String>,
    #[serde(default)]
    id: Value,
}

/// One frame's body, unparsed.
async fn read_body<R: AsyncBufReadExt + Unpin>(r: &mut R) -> Vec<u8> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).await.unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).await.unwrap();
    body
}

#[divan::bench(args = [700, 2800], sample_count = 5, sample_size = 1)]
fn rename_files(bencher: divan::Bencher, files: usize) {
    rename_round_trip(bencher, files, 5);
}

#[divan::bench(args = [20_000, 100_000], sample_count = 5, sample_size = 1)]
fn rename_occurrences(bencher: divan::Bencher, occurrences: usize) {
    rename_round_trip(bencher, 1, occurrences);
}
