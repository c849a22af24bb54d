//! A scripted editor for the language server tests: it spawns `multiedit lsp`, speaks JSON-RPC with
//! Content-Length framing, keeps its own buffers, and answers `workspace/applyEdit` the way an editor
//! does: it checks the versions, applies the edits with the negotiated position encoding, and sends
//! the didChange that follows.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// How the scripted editor answers the next `workspace/applyEdit`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// Check versions, apply, reply `{applied: true}`, send didChange (the normal editor).
    Apply,
    /// Reply `{applied: false}` without touching anything.
    Refuse,
    /// Never reply.
    Ignore,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Enc {
    Utf16,
    Utf8,
}

pub struct Buffer {
    pub text: String,
    pub version: i32,
}

pub struct Options {
    pub folders: Vec<PathBuf>,
    pub init_options: Value,
    pub apply_edit: bool,
    pub document_changes: bool,
    pub offer_utf8: bool,
    /// Arguments after `lsp` (editors' client libraries add some, e.g. `--stdio`).
    pub args: Vec<String>,
    /// Offer `workspace.workspaceEdit.changeAnnotationSupport`.
    pub change_annotations: bool,
    /// Announce `experimental.multiedit.save`: answer `multiedit/save` as an editor saves.
    pub save_support: bool,
    /// Environment variables the server is started with (its private folders: `HOME`, `XDG_*`).
    pub env: Vec<(String, PathBuf)>,
    /// Announce `experimental.multiedit.approve` and answer `multiedit/approve` so: `Some("apply")`,
    /// `Some("discard")`, or `Some("never")` (never answer, as a user who does not decide).
    pub approve: Option<&'static str>,
    /// Announce `experimental.multiedit.symbols` and `rename`: answer them from `Editor::symbols` and
    /// `Editor::renames`.
    pub symbols: bool,
    pub rename: bool,
}

impl Options {
    pub fn new(folder: &Path) -> Self {
        Options {
            folders: vec![folder.to_path_buf()],
            init_options: Value::Null,
            apply_edit: true,
            document_changes: true,
            offer_utf8: false,
            args: Vec::new(),
            change_annotations: false,
            save_support: false,
            env: Vec::new(),
            approve: None,
            symbols: false,
            rename: false,
        }
    }
}

/// How the scripted editor's language server renames: from the request's params, the answer's
/// `edit`, `placeholder` or `refused` (the editor adds the versions of the documents it holds).
pub type RenameServer = Box<dyn FnMut(&Value) -> Value>;

pub struct Editor {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Result<Value, String>>,
    next_id: i64,
    pub enc: Enc,
    pub buffers: HashMap<String, Buffer>,
    /// Notifications and requests from the server other than the answers awaited.
    pub received: Vec<Value>,
    /// What `workspace/applyEdit` requests carried, in order.
    pub edits_seen: Vec<Value>,
    /// The user's typing, one change per arriving `workspace/applyEdit` (file, byte range, new text),
    /// made before the editor looks at the edit: the document has moved on when the edit is checked.
    pub types_first: Vec<(PathBuf, usize, usize, String)>,
    /// The editor's formatter, run on every open buffer an applied edit changed: its didChange goes
    /// out after the edit's and before the answer to `workspace/applyEdit`.
    pub formats: Option<fn(&str) -> String>,
    /// What `multiedit/save` requests carried, in order.
    pub saves_seen: Vec<Value>,
    /// What `multiedit/approve` requests carried, in order.
    pub approvals_seen: Vec<Value>,
    approve: Option<&'static str>,
    /// The user's typing when the server asks to save (after the edit, before the save).
    pub types_before_save: Vec<(PathBuf, usize, usize, String)>,
    /// The editor's format on save: run on each buffer it saves, its didChange before the answer.
    pub formats_on_save: Option<fn(&str) -> String>,
    pub stderr: Arc<Mutex<String>>,
    pub init_result: Value,
    document_changes: bool,
    /// The document symbols its language server gives, per URI (`null`: none for that document). A
    /// document the editor does not hold is opened from disk to answer, as VS Code does.
    pub symbols: HashMap<String, Value>,
    pub renames: Option<RenameServer>,
    /// What `multiedit/symbols` and `multiedit/rename` requests carried, in order.
    pub symbols_seen: Vec<Value>,
    pub renames_seen: Vec<Value>,
    /// The user's typing, one change per arriving `multiedit/symbols`, made after the editor answered.
    pub types_after_symbols: Vec<(PathBuf, usize, usize, String)>,
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

pub fn path_of(uri: &str) -> PathBuf {
    let path = uri.strip_prefix("file://").expect("file uri");
    PathBuf::from(
        percent_encoding::percent_decode_str(path)
            .decode_utf8()
            .unwrap()
            .into_owned(),
    )
}

/// Reads Content-Length frames; anything else on stdout is a protocol violation and is reported.
fn read_frames(stdout: impl Read, tx: mpsc::Sender<Result<Value, String>>) {
    let mut r = BufReader::new(stdout);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match r.read_line(&mut line) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(Err(format!("reading stdout: {e}")));
                    return;
                }
            }
            if line == "\r\n" {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.trim().parse::<usize>().ok();
            } else if !line.starts_with("Content-Type: ") {
                let _ = tx.send(Err(format!("not a protocol header on stdout: {line:?}")));
                return;
            }
        }
        let Some(n) = length else {
            let _ = tx.send(Err("a frame without Content-Length".into()));
            return;
        };
        let mut body = vec![0; n];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        let msg =
            serde_json::from_slice(&body).map_err(|e| format!("a frame that is not JSON: {e}"));
        if tx.send(msg).is_err() {
            return;
        }
    }
}

/// Byte offset of an LSP position in `text`, clamped like a tolerant editor.
pub fn offset(text: &str, line: u64, character: u64, enc: Enc) -> usize {
    let mut start = 0;
    let bytes = text.as_bytes();
    for _ in 0..line {
        let mut i = start;
        while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
            i += 1;
        }
        if i >= bytes.len() {
            return text.len();
        }
        start = if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        };
    }
    let mut col = 0u64;
    for (i, c) in text[start..].char_indices() {
        if col >= character || c == '\n' || c == '\r' {
            return start + i;
        }
        col += match enc {
            Enc::Utf16 => c.len_utf16() as u64,
            Enc::Utf8 => c.len_utf8() as u64,
        };
    }
    text.len()
}

/// The LSP position of a byte offset.
pub fn position(text: &str, byte: usize, enc: Enc) -> Value {
    let b = text.as_bytes();
    let (mut line, mut line_start) = (0, 0);
    for (i, &c) in b[..byte].iter().enumerate() {
        if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
            line += 1;
            line_start = i + 1;
        }
    }
    let col: usize = match enc {
        Enc::Utf16 => text[line_start..byte].chars().map(char::len_utf16).sum(),
        Enc::Utf8 => byte - line_start,
    };
    json!({"line": line, "character": col})
}

/// Applies LSP text edits (all against the original text, non-overlapping) and returns the new
/// text. Panics on overlapping edits: the server must never send them.
pub fn apply_text_edits(text: &str, edits: &[Value], enc: Enc) -> String {
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            let r = &e["range"];
            let s = offset(
                text,
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
                enc,
            );
            let t = offset(
                text,
                r["end"]["line"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
                enc,
            );
            (s, t, e["newText"].as_str().unwrap().to_string())
        })
        .collect();
    spans.sort_by_key(|s| (s.0, s.1));
    for w in spans.windows(2) {
        assert!(
            w[0].1 <= w[1].0,
            "overlapping edits from the server: {edits:?}"
        );
    }
    let mut out = text.to_string();
    for (s, t, new) in spans.iter().rev() {
        out.replace_range(*s..*t, new);
    }
    out
}

/// A formatter as an editor runs one on an edit: `a=b` spaced as `a = b`, and two statements on one
/// line (`a; b`) split onto two at the line's indentation. It formats the whole text, as a formatter on
/// save would: what it changes away from the edit is not the edit's.
pub fn format_statements(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let indent = &line[..line.len() - line.trim_start().len()];
            let chars: Vec<char> = line.chars().collect();
            let tight = |i: usize| {
                i > 0
                    && !chars[i - 1].is_whitespace()
                    && chars.get(i + 1).is_some_and(|c| !c.is_whitespace())
            };
            let spaced: String = chars
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    if c == '=' && tight(i) {
                        " = ".to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            spaced.replace("; ", &format!(";\n{indent}"))
        })
        .collect()
}

/// The one change that takes `old` to `new`: the byte span of `old` between what they share at
/// either end, and the text that replaces it.
pub fn span_edit<'a>(old: &str, new: &'a str) -> (usize, usize, &'a str) {
    let mut head = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(head) || !new.is_char_boundary(head) {
        head -= 1;
    }
    let room = old.len().min(new.len()) - head;
    let mut tail = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - tail) || !new.is_char_boundary(new.len() - tail) {
        tail -= 1;
    }
    (head, old.len() - tail, &new[head..new.len() - tail])
}

impl Editor {
    pub fn start(opts: Options) -> Editor {
        let mut child = Command::new(env!("CARGO_BIN_EXE_multiedit"))
            .arg("lsp")
            .args(&opts.args)
            .envs(opts.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn multiedit lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_frames(stdout, tx));
        let mut ed = Editor {
            child,
            stdin,
            rx,
            next_id: 1,
            enc: Enc::Utf16,
            buffers: HashMap::new(),
            received: Vec::new(),
            edits_seen: Vec::new(),
            types_first: Vec::new(),
            formats: None,
            saves_seen: Vec::new(),
            approvals_seen: Vec::new(),
            approve: opts.approve,
            types_before_save: Vec::new(),
            formats_on_save: None,
            stderr,
            init_result: Value::Null,
            document_changes: opts.document_changes,
            symbols: HashMap::new(),
            renames: None,
            symbols_seen: Vec::new(),
            renames_seen: Vec::new(),
            types_after_symbols: Vec::new(),
        };
        let folders: Vec<Value> = opts
            .folders
            .iter()
            .map(|f| json!({"uri": uri(f), "name": f.file_name().map(|n| n.to_string_lossy().to_string())}))
            .collect();
        let mut workspace = json!({
            "workspaceFolders": true,
            "workspaceEdit": {"documentChanges": opts.document_changes, "resourceOperations": ["create", "rename", "delete"]},
        });
        if opts.apply_edit {
            workspace["applyEdit"] = json!(true);
        }
        if opts.change_annotations {
            workspace["workspaceEdit"]["changeAnnotationSupport"] = json!({"groupsOnLabel": true});
        }
        let encodings = if opts.offer_utf8 {
            json!(["utf-8", "utf-16"])
        } else {
            json!(["utf-16"])
        };
        let experimental = json!({"multiedit": {"save": opts.save_support, "approve": opts.approve.is_some(), "symbols": opts.symbols, "rename": opts.rename}});
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "multiedit test editor", "version": "1"},
            "rootUri": opts.folders.first().map(|f| uri(f)),
            "workspaceFolders": if folders.is_empty() { Value::Null } else { json!(folders) },
            "initializationOptions": opts.init_options,
            "capabilities": {"workspace": workspace, "general": {"positionEncodings": encodings}, "experimental": experimental},
        });
        let id = ed.request("initialize", params);
        let result = ed.response(id, Answer::Apply).expect("initialize succeeds");
        ed.enc = match result["capabilities"]["positionEncoding"].as_str() {
            Some("utf-8") => Enc::Utf8,
            Some("utf-16") | None => Enc::Utf16,
            Some(other) => panic!("the server chose an encoding it was not offered: {other}"),
        };
        ed.init_result = result;
        ed.notify("initialized", json!({}));
        ed
    }

    pub fn send(&mut self, msg: &Value) {
        let body = serde_json::to_string(msg).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{}", body.len(), body).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends several messages in one write, as a fast editor can.
    pub fn send_batch(&mut self, msgs: &[Value]) {
        let mut out = String::new();
        for m in msgs {
            let body = serde_json::to_string(m).unwrap();
            out.push_str(&format!("Content-Length: {}\r\n\r\n{}", body.len(), body));
        }
        self.stdin.write_all(out.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn request_msg(&mut self, method: &str, params: Value) -> (i64, Value) {
        let id = self.next_id;
        self.next_id += 1;
        (
            id,
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
    }

    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let (id, msg) = self.request_msg(method, params);
        self.send(&msg);
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn recv(&mut self, timeout: Duration) -> Option<Value> {
        match self.rx.recv_timeout(timeout) {
            Ok(Ok(v)) => Some(v),
            Ok(Err(e)) => panic!("{e}\nserver stderr:\n{}", self.stderr.lock().unwrap()),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                panic!(
                    "the server closed its output\nserver stderr:\n{}",
                    self.stderr.lock().unwrap()
                )
            }
        }
    }

    /// Waits for the response to request `id`, answering server requests on the way.
    /// `Ok(result)` or `Err(error object)`.
    pub fn response(&mut self, id: i64, answer: Answer) -> Result<Value, Value> {
        loop {
            let msg = self.recv(TIMEOUT).unwrap_or_else(|| {
                panic!(
                    "no response to request {id}\nstderr:\n{}",
                    self.stderr.lock().unwrap()
                )
            });
            if msg.get("method").is_some() {
                if msg.get("id").is_some() {
                    self.answer_server_request(&msg, answer);
                } else {
                    self.received.push(msg);
                }
                continue;
            }
            if msg["id"].is_null() {
                // An error about a message that had no id (a frame the server could not parse).
                self.received.push(msg);
                continue;
            }
            if msg["id"] == json!(id) {
                if let Some(e) = msg.get("error") {
                    return Err(e.clone());
                }
                return Ok(msg["result"].clone());
            }
            panic!("a response to an unknown request: {msg}");
        }
    }

    fn answer_server_request(&mut self, msg: &Value, answer: Answer) {
        let id = msg["id"].clone();
        match msg["method"].as_str().unwrap() {
            "workspace/applyEdit" => {
                self.edits_seen.push(msg["params"].clone());
                match answer {
                    Answer::Ignore => {}
                    Answer::Refuse => {
                        self.send(
                            &json!({"jsonrpc": "2.0", "id": id, "result": {"applied": false}}),
                        );
                    }
                    Answer::Apply => {
                        if !self.types_first.is_empty() {
                            let (path, start, end, text) = self.types_first.remove(0);
                            self.change(&path, start, end, &text);
                        }
                        let result = match self.apply_workspace_edit(&msg["params"]["edit"]) {
                            Ok(()) => json!({"applied": true}),
                            Err(reason) => json!({"applied": false, "failureReason": reason}),
                        };
                        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
                    }
                }
            }
            "multiedit/approve" => {
                self.approvals_seen.push(msg["params"].clone());
                match self.approve {
                    Some("never") | None => {}
                    Some(decision) => self.send(
                        &json!({"jsonrpc": "2.0", "id": id, "result": {"decision": decision}}),
                    ),
                }
            }
            "multiedit/symbols" => {
                self.symbols_seen.push(msg["params"].clone());
                let u = msg["params"]["uri"].as_str().unwrap().to_string();
                self.hold(&u);
                let answer = json!({"version": self.buffers[&u].version, "symbols": self.symbols.get(&u).cloned().unwrap_or(Value::Null)});
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": answer}));
                if !self.types_after_symbols.is_empty() {
                    let (path, start, end, text) = self.types_after_symbols.remove(0);
                    self.change(&path, start, end, &text);
                }
            }
            "multiedit/rename" => {
                self.renames_seen.push(msg["params"].clone());
                let u = msg["params"]["uri"].as_str().unwrap().to_string();
                self.hold(&u);
                let mut answer = match self.renames.as_mut() {
                    Some(rename) => rename(&msg["params"]),
                    None => json!({"noProvider": true}),
                };
                let touched: Vec<String> = answer["edit"]["changes"]
                    .as_object()
                    .map(|c| c.keys().cloned().collect())
                    .unwrap_or_default();
                let versions: serde_json::Map<String, Value> = touched
                    .into_iter()
                    .filter_map(|t| Some((t.clone(), json!(self.buffers.get(&t)?.version))))
                    .collect();
                answer["versions"] = Value::Object(versions);
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": answer}));
            }
            "multiedit/save" => {
                self.saves_seen.push(msg["params"].clone());
                let result = self.save_answer(&msg["params"]);
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            other => {
                self.received.push(msg.clone());
                self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("{other} not handled")}}));
            }
        }
    }

    /// `multiedit/save` as an editor answers it: a buffer has unsaved changes when its text is not the
    /// file's; a buffer is saved only at the version asked for, its format on save run first; a file no
    /// buffer holds is on disk already (this editor edits closed files there).
    fn save_answer(&mut self, params: &Value) -> Value {
        if params["phase"] == "before" {
            let unsaved: Vec<&str> = params["uris"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .filter(|u| {
                    self.buffers.get(*u).is_some_and(|b| {
                        std::fs::read_to_string(path_of(u)).ok().as_deref() != Some(b.text.as_str())
                    })
                })
                .collect();
            return json!({"unsaved": unsaved});
        }
        for (path, start, end, text) in std::mem::take(&mut self.types_before_save) {
            self.change(&path, start, end, &text);
        }
        let mut files = Vec::new();
        for f in params["files"].as_array().unwrap() {
            let u = f["uri"].as_str().unwrap().to_string();
            let Some(version) = self.buffers.get(&u).map(|b| b.version) else {
                files.push(json!({"uri": u, "status": if path_of(&u).exists() { "saved" } else { "closed" }}));
                continue;
            };
            if f["version"].as_i64().is_some_and(|v| v != version as i64) {
                files.push(json!({"uri": u, "status": "changed"}));
                continue;
            }
            if let Some(format) = self.formats_on_save {
                let text = self.buffers[&u].text.clone();
                let formatted = format(&text);
                if formatted != text {
                    let (start, end, new) = span_edit(&text, &formatted);
                    self.change(&path_of(&u), start, end, new);
                }
            }
            let buf = &self.buffers[&u];
            // As an editor judges it, from the file's mode: root could write it anyway.
            let read_only =
                std::fs::metadata(path_of(&u)).is_ok_and(|m| m.permissions().readonly());
            match if read_only {
                Err(std::io::ErrorKind::PermissionDenied.into())
            } else {
                std::fs::write(path_of(&u), &buf.text)
            } {
                Ok(()) => files.push(json!({"uri": u, "status": "saved", "version": buf.version})),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    files.push(json!({"uri": u, "status": "readOnly"}))
                }
                Err(e) => {
                    files.push(json!({"uri": u, "status": "failed", "message": e.to_string()}))
                }
            }
        }
        json!({"files": files})
    }

    /// Applies a WorkspaceEdit as an editor would: all versions checked first, then every change;
    /// open buffers change in memory (followed by didChange), closed files on disk.
    pub fn apply_workspace_edit(&mut self, edit: &Value) -> Result<(), String> {
        let edited = self.apply_edit_steps(edit)?;
        if let Some(format) = self.formats {
            for u in edited {
                let text = self.buffers[&u].text.clone();
                let formatted = format(&text);
                if formatted != text {
                    let (start, end, new) = span_edit(&text, &formatted);
                    self.change(&path_of(&u), start, end, new);
                }
            }
        }
        Ok(())
    }

    /// The steps of `apply_workspace_edit`; returns the open buffers the edit changed.
    fn apply_edit_steps(&mut self, edit: &Value) -> Result<Vec<String>, String> {
        // (resource operation, uri, version, text edits)
        type Step = (Option<String>, String, Option<i64>, Vec<Value>);
        let mut steps: Vec<Step> = Vec::new();
        if let Some(changes) = edit.get("documentChanges") {
            assert!(
                self.document_changes,
                "documentChanges sent to a client that does not support them"
            );
            for c in changes.as_array().unwrap() {
                match c.get("kind").and_then(Value::as_str) {
                    Some("create") => steps.push((
                        Some("create".into()),
                        c["uri"].as_str().unwrap().into(),
                        None,
                        vec![],
                    )),
                    Some("delete") => steps.push((
                        Some("delete".into()),
                        c["uri"].as_str().unwrap().into(),
                        None,
                        vec![],
                    )),
                    // The new URI travels as the step's only "edit".
                    Some("rename") => steps.push((
                        Some("rename".into()),
                        c["oldUri"].as_str().unwrap().into(),
                        None,
                        vec![c["newUri"].clone()],
                    )),
                    Some(k) => return Err(format!("unexpected resource operation {k}")),
                    None => steps.push((
                        None,
                        c["textDocument"]["uri"].as_str().unwrap().into(),
                        c["textDocument"]["version"].as_i64(),
                        c["edits"].as_array().unwrap().clone(),
                    )),
                }
            }
        } else if let Some(changes) = edit.get("changes").and_then(Value::as_object) {
            for (u, edits) in changes {
                steps.push((None, u.clone(), None, edits.as_array().unwrap().clone()));
            }
        } else {
            return Err("an empty WorkspaceEdit".into());
        }
        for (op, u, version, extra) in &steps {
            match op.as_deref() {
                Some("create") if path_of(u).exists() => return Err(format!("{u} already exists")),
                Some("rename") if path_of(extra[0].as_str().unwrap()).exists() => {
                    return Err(format!("{} already exists", extra[0]))
                }
                Some(_) => continue,
                None => {}
            }
            if let Some(buf) = self.buffers.get(u) {
                match version {
                    Some(v) if *v != buf.version as i64 => {
                        return Err(format!(
                            "{u} is at version {}, the edit is for {v}",
                            buf.version
                        ))
                    }
                    None if self.document_changes => {
                        return Err(format!("{u} is open but the edit carries no version"))
                    }
                    _ => {}
                }
            } else if version.is_some() {
                return Err(format!("{u} is not open but the edit carries a version"));
            }
        }
        let mut edited = Vec::new();
        for (op, u, _, edits) in steps {
            match op.as_deref() {
                Some("create") => {
                    std::fs::write(path_of(&u), "").unwrap();
                    continue;
                }
                // As VS Code does: the file goes, and so does its buffer (closed).
                Some("delete") => {
                    std::fs::remove_file(path_of(&u)).map_err(|e| format!("{u}: {e}"))?;
                    if self.buffers.remove(&u).is_some() {
                        self.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
                    }
                    continue;
                }
                // The file is renamed on disk; an open buffer, unsaved text included, moves with it.
                Some(_) => {
                    let to = edits[0].as_str().unwrap().to_string();
                    std::fs::rename(path_of(&u), path_of(&to)).map_err(|e| format!("{u}: {e}"))?;
                    if let Some(buf) = self.buffers.remove(&u) {
                        self.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
                        self.open_uri(&to, &buf.text.clone());
                    }
                    continue;
                }
                None => {}
            }
            let enc = self.enc;
            if self.buffers.contains_key(&u) {
                let old = self.buffers[&u].text.clone();
                let new = apply_text_edits(&old, &edits, enc);
                // Sent back as incremental changes, last first, so each range holds as the server
                // applies them in order.
                let mut sorted = edits.clone();
                sorted.sort_by_key(|e| {
                    let s = &e["range"]["start"];
                    std::cmp::Reverse((
                        s["line"].as_u64().unwrap(),
                        s["character"].as_u64().unwrap(),
                    ))
                });
                let buf = self.buffers.get_mut(&u).unwrap();
                buf.text = new;
                buf.version += 1;
                let version = buf.version;
                let changes: Vec<Value> = sorted
                    .iter()
                    .map(|e| json!({"range": e["range"], "text": e["newText"]}))
                    .collect();
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": u, "version": version}, "contentChanges": changes}),
                );
                edited.push(u);
            } else {
                let path = path_of(&u);
                let old = std::fs::read_to_string(&path).map_err(|e| format!("{u}: {e}"))?;
                std::fs::write(&path, apply_text_edits(&old, &edits, enc)).unwrap();
            }
        }
        Ok(edited)
    }

    /// Holds the document of `u`, opened from disk when it is not held yet (as VS Code loads a
    /// document a command names).
    fn hold(&mut self, u: &str) {
        if !self.buffers.contains_key(u) {
            let text = std::fs::read_to_string(path_of(u)).unwrap_or_default();
            self.open_uri(u, &text);
        }
    }

    pub fn open(&mut self, path: &Path, text: &str) {
        let u = uri(path);
        self.open_uri(&u, text);
    }

    pub fn open_uri(&mut self, u: &str, text: &str) {
        self.buffers.insert(
            u.to_string(),
            Buffer {
                text: text.to_string(),
                version: 1,
            },
        );
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "plaintext", "version": 1, "text": text}}),
        );
    }

    pub fn close(&mut self, path: &Path) {
        let u = uri(path);
        self.buffers.remove(&u);
        self.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
    }

    /// The didChange that replaces `[start, end)` (byte offsets of the buffer) with `text`.
    pub fn change_msg(&mut self, path: &Path, start: usize, end: usize, text: &str) -> Value {
        let u = uri(path);
        let enc = self.enc;
        let buf = self.buffers.get_mut(&u).expect("open buffer");
        let range =
            json!({"start": position(&buf.text, start, enc), "end": position(&buf.text, end, enc)});
        buf.text.replace_range(start..end, text);
        buf.version += 1;
        json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": u, "version": buf.version},
            "contentChanges": [{"range": range, "text": text}],
        }})
    }

    pub fn change(&mut self, path: &Path, start: usize, end: usize, text: &str) {
        let msg = self.change_msg(path, start, end, text);
        self.send(&msg);
    }

    pub fn text(&self, path: &Path) -> &str {
        &self.buffers[&uri(path)].text
    }

    pub fn execute(&mut self, command: &str, args: Value, answer: Answer) -> Result<Value, Value> {
        let id = self.request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": args}),
        );
        self.response(id, answer)
    }

    pub fn apply(&mut self, plan: Value) -> Result<Value, Value> {
        self.execute("multiedit.apply", json!([plan]), Answer::Apply)
    }

    pub fn preview(&mut self, plan: Value) -> Result<Value, Value> {
        self.execute("multiedit.preview", json!([plan]), Answer::Apply)
    }

    /// The server's copy of an open document, byte for byte: read back from the diff of a preview
    /// that replaces the whole text (every line of it appears as a removed line, endings included).
    pub fn server_text(&mut self, path: &Path) -> String {
        let text = self.text(path).to_string();
        assert!(!text.is_empty(), "use on a non-empty buffer");
        let r = self.preview(
            json!({"file_path": path, "edits": [{"old_string": text, "new_string": "\u{1}"}]}),
        );
        let r = r.unwrap_or_else(|e| {
            panic!(
                "the server's copy of {} differs from {text:?}: {e}",
                path.display()
            )
        });
        let diff = r["diff"].as_str().unwrap();
        let body = &diff[diff.find("@@").expect("a hunk")..];
        let mut out = String::new();
        let mut last_sign = ' ';
        // Unified diff lines end at \n (a lone \r is part of its line, as in GNU diff).
        let pieces: Vec<&str> = body.split_inclusive('\n').collect();
        for piece in pieces.into_iter().skip(1).filter(|p| !p.is_empty()) {
            if piece.starts_with("\\ No newline at end of file") {
                if last_sign == '-' {
                    assert_eq!(out.pop(), Some('\n'));
                }
                continue;
            }
            last_sign = piece.chars().next().unwrap();
            if last_sign == '-' {
                out.push_str(&piece[1..]);
            }
        }
        out
    }

    /// The server holds exactly the buffer's text.
    pub fn assert_server_agrees(&mut self, path: &Path) {
        let server = self.server_text(path);
        assert_eq!(
            server,
            self.text(path),
            "the server's copy of {} differs from the buffer",
            path.display()
        );
    }

    pub fn shutdown(mut self) -> std::process::ExitStatus {
        let id = self.request("shutdown", Value::Null);
        self.response(id, Answer::Apply).expect("shutdown succeeds");
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Waits (up to 10 s) for the server process to end, and returns how it ended.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Collects what the server sends for `d` (notifications may overtake or trail responses).
    pub fn drain(&mut self, d: Duration) {
        let deadline = std::time::Instant::now() + d;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.recv(left) {
                Some(m) => self.received.push(m),
                None => break,
            }
        }
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server (SIGKILL: it cleans nothing up) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Acts as the editor (answering `workspace/applyEdit` with `answer`, keeping notifications in
    /// `received`) until `done` gives a value, for work that reaches the server by another way than
    /// this editor's requests (the bridge).
    pub fn serve_until<T>(
        &mut self,
        answer: Answer,
        mut done: impl FnMut(&Editor) -> Option<T>,
    ) -> T {
        let deadline = std::time::Instant::now() + 3 * TIMEOUT;
        loop {
            if let Some(t) = done(self) {
                return t;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "nothing came within {:?}",
                3 * TIMEOUT
            );
            if let Some(msg) = self.recv(Duration::from_millis(5)) {
                if msg.get("method").is_some() && msg.get("id").is_some() {
                    self.answer_server_request(&msg, answer);
                } else {
                    self.received.push(msg);
                }
            }
        }
    }

    /// The messages the server logged (window/logMessage) so far.
    pub fn logged(&self) -> Vec<String> {
        self.received
            .iter()
            .filter(|m| m["method"] == "window/logMessage")
            .filter_map(|m| m["params"]["message"].as_str().map(String::from))
            .collect()
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
