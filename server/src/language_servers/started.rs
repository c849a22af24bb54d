//! One language server multiedit started, as an editor starts one: spawned over stdio in the
//! project's folder (in a process group of its own, so that what it starts ends with it), initialized
//! with the project as its workspace folder, then told of the documents multiedit asks about
//! (`didOpen`, then `didChange` with the whole text when the disk's text moved on). Its
//! `publishDiagnostics` are kept per document, with when they came (`Published`). Every wait is
//! bounded: the start by the program's start bound, each request by its answer bound.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;
use tower_lsp_server::ls_types::{
    DocumentSymbol, DocumentSymbolResponse, Position, SymbolInformation, WorkspaceEdit,
};

use super::options;
use super::rpc::{Connection, Handler, OnNotify, RpcError};
use super::table::Program;
use crate::protocol::ext::{Lenient, RenameAnswer, ReportedDiagnostic, ReportedSymbol};
use crate::protocol::positions as convert;

/// What went wrong with a server, for the caller's refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// It could not be spawned.
    Spawn(String),
    /// It exited (or closed its output) during `during`; `said`: the end of its standard error;
    /// `again`: also once started anew.
    Exited {
        during: String,
        said: String,
        again: bool,
    },
    /// It did not answer `during` within `after`.
    TimedOut { during: String, after: Duration },
    /// It answered `during` with an error, or with what is not LSP's: its words.
    Answered { during: String, message: String },
}

/// A document's diagnostics as the server last published them.
#[derive(Debug, Clone)]
pub(crate) struct Publish {
    /// The document version the server says they are for, if it says.
    pub(crate) version: Option<i32>,
    pub(crate) at: Instant,
    pub(crate) diagnostics: Vec<Lenient<ReportedDiagnostic>>,
}

/// Every document's last diagnostics, and a counter bumped at each publish to wait on.
#[derive(Debug)]
pub(crate) struct Published {
    map: Mutex<HashMap<String, Publish>>,
    pub(crate) changes: watch::Sender<u64>,
}

impl Published {
    pub(crate) fn get(&self, uri: &str) -> Option<Publish> {
        lock(&self.map).get(&convert::uri_key(uri)).cloned()
    }

    fn take(&self, params: Value) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return;
        };
        let diagnostics = params
            .get("diagnostics")
            .cloned()
            .and_then(|d| serde_json::from_value(d).ok())
            .unwrap_or_default();
        let version = params
            .get("version")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok());
        lock(&self.map).insert(
            convert::uri_key(uri),
            Publish {
                version,
                at: Instant::now(),
                diagnostics,
            },
        );
        self.changes.send_modify(|n| *n += 1);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The last bytes a server wrote to its standard error, for a refusal that says why it failed.
const STDERR_TAIL: usize = 2000;

/// What the server said it can do.
#[derive(Debug, Clone, Copy, Default)]
struct Caps {
    symbols: bool,
    rename: bool,
    prepare_rename: bool,
}

/// A document as the server holds it.
struct Doc {
    version: i32,
    text: String,
    /// When the server was told of this version.
    synced_at: Instant,
    /// This version's diagnostics are known to be the last ones published (it was checked, and the
    /// server had nothing new to say after the edit that made it: `quiet`).
    unchanged_at: Option<i32>,
}

/// A document as the server holds it, for the caller.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub(crate) version: i32,
    pub(crate) text: String,
    pub(crate) synced_at: Instant,
    /// The last publish is known to be for this version (`Started::unchanged`).
    pub(crate) unchanged: bool,
}

/// A started, initialized server.
pub(crate) struct Started {
    pub(crate) program: Program,
    conn: Connection,
    child: Mutex<Option<tokio::process::Child>>,
    pub(crate) pid: Option<u32>,
    caps: Caps,
    docs: Mutex<HashMap<String, Doc>>,
    pub(crate) published: Arc<Published>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// How long it took to publish after an edit of a document it had checked (`settle::idle_time`).
    pub(crate) latencies: Mutex<Vec<Duration>>,
    pub(crate) last_used: Mutex<Instant>,
    /// How long starting took, for the log and the figures.
    pub(crate) started_in: Duration,
}

/// The client capabilities multiedit announces: UTF-16 positions (every server's default, the one
/// multiedit converts with), hierarchical symbols, prepare rename, versioned diagnostics.
fn capabilities() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "applyEdit": false,
            "workspaceEdit": {"documentChanges": true},
            "didChangeConfiguration": {"dynamicRegistration": false},
        },
        "textDocument": {
            "synchronization": {"dynamicRegistration": false, "didSave": false, "willSave": false},
            "documentSymbol": {
                "hierarchicalDocumentSymbolSupport": true,
                "symbolKind": {"valueSet": (1..=26).collect::<Vec<u32>>()},
            },
            "rename": {"prepareSupport": true},
            "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
        },
        "window": {"workDoneProgress": false},
    })
}

/// `program` spawned in `root` with its environment (`opts`), in a process group of its own, and its
/// standard streams.
fn spawn(
    program: &Program,
    root: &Path,
    opts: &options::Options,
) -> Result<(Child, ChildStdin, ChildStdout, ChildStderr), Failure> {
    let mut cmd = tokio::process::Command::new(&program.path);
    cmd.args(&program.args)
        .current_dir(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Failure::Spawn(format!("{} ({e})", program.path.display())))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(Failure::Spawn(format!(
            "{} (its standard streams could not be opened)",
            program.path.display()
        )));
    };
    Ok((child, stdin, stdout, stderr))
}

/// The last `STDERR_TAIL` bytes the server wrote on its standard error, kept as it writes them.
fn keep_tail(mut stderr: ChildStderr) -> Arc<Mutex<VecDeque<u8>>> {
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let keep = tail.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut t = lock(&keep);
            t.extend(&buf[..n]);
            let over = t.len().saturating_sub(STDERR_TAIL);
            t.drain(..over);
        }
    });
    tail
}

/// The answers to the server's requests: its `settings` by section, the workspace's one `folder`,
/// no edit applied, nothing to do for the rest that LSP lets a client accept, and no method for the
/// others.
fn requests(settings: Value, folder: Value) -> Handler {
    Arc::new(move |method, params| match method {
        "workspace/configuration" => Ok(Value::Array(
            params
                .get("items")
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .map(|i| {
                            options::section(&settings, i.get("section").and_then(Value::as_str))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        )),
        "workspace/workspaceFolders" => Ok(folder.clone()),
        "workspace/applyEdit" => Ok(
            json!({"applied": false, "failureReason": "multiedit applies only the edits of its own plans"}),
        ),
        "client/registerCapability"
        | "client/unregisterCapability"
        | "window/workDoneProgress/create"
        | "window/showMessageRequest"
        | "window/showDocument"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/codeLens/refresh"
        | "workspace/diagnostic/refresh" => Ok(Value::Null),
        _ => Err((-32601, format!("multiedit does not answer {method}"))),
    })
}

impl Started {
    /// Spawns `program` in `root` and initializes it, within the program's start bound.
    pub(crate) async fn start(
        program: &Program,
        root: &Path,
        changes: watch::Sender<u64>,
    ) -> Result<Started, Failure> {
        let began = Instant::now();
        let opts = options::for_program(program);
        let (child, stdin, stdout, stderr) = spawn(program, root, &opts)?;
        let tail = keep_tail(stderr);
        let published = Arc::new(Published {
            map: Mutex::new(HashMap::new()),
            changes,
        });
        let root_uri = folder_uri(root);
        let folder = json!([{"uri": root_uri, "name": root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()}]);
        let handler = requests(opts.settings.clone(), folder.clone());
        let sink = published.clone();
        let on_notify: OnNotify = Arc::new(move |method, params| {
            if method == "textDocument/publishDiagnostics" {
                sink.take(params);
            }
        });
        let conn = Connection::start(stdout, stdin, handler, on_notify);
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "multiedit", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri,
            "rootPath": root.display().to_string(),
            "workspaceFolders": folder,
            "capabilities": capabilities(),
            "initializationOptions": opts.initialization,
            "trace": "off",
        });
        let pid = child.id();
        let mut started = Started {
            program: program.clone(),
            conn,
            child: Mutex::new(Some(child)),
            pid,
            caps: Caps::default(),
            docs: Mutex::new(HashMap::new()),
            published,
            stderr: tail,
            latencies: Mutex::new(Vec::new()),
            last_used: Mutex::new(Instant::now()),
            started_in: Duration::ZERO,
        };
        started.initialize(params, &opts.settings, began).await?;
        Ok(started)
    }

    /// `initialize` with `params`, within what is left of the start bound since `began` (else the
    /// server is killed), then `initialized`, and the `settings` of a server that has some.
    async fn initialize(
        &mut self,
        params: Value,
        settings: &Value,
        began: Instant,
    ) -> Result<(), Failure> {
        let left = self.program.start.saturating_sub(began.elapsed());
        let init = match self.conn.request("initialize", params, left).await {
            Ok(v) => v,
            Err(e) => {
                let failure = self.failure(e, "initialize", self.program.start).await;
                self.kill();
                return Err(failure);
            }
        };
        self.caps = caps_of(init.get("capabilities").unwrap_or(&Value::Null));
        let bound = self.program.answer;
        let _ = self.conn.notify("initialized", json!({}), bound).await;
        if !settings.is_null() {
            let _ = self
                .conn
                .notify(
                    "workspace/didChangeConfiguration",
                    json!({"settings": settings}),
                    bound,
                )
                .await;
        }
        self.started_in = began.elapsed();
        Ok(())
    }

    /// Notes that the server is asked now, for the pool's idle shutdown (`pool::IDLE`).
    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    pub(crate) fn is_alive(&self) -> bool {
        !self.conn.is_closed()
    }

    /// The failure `e` met during `during`, in words. A closed connection is waited on briefly so that
    /// what the server said last is there to quote.
    async fn failure(&self, e: RpcError, during: &str, bound: Duration) -> Failure {
        match e {
            RpcError::TimedOut => Failure::TimedOut {
                during: during.to_string(),
                after: bound,
            },
            RpcError::Answered { code, message } => Failure::Answered {
                during: during.to_string(),
                message: format!("{message} (error {code})"),
            },
            RpcError::Closed => {
                // Its last words reach the tail a moment after its output closes.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Failure::Exited {
                    during: during.to_string(),
                    said: self.said(),
                    again: false,
                }
            }
        }
    }

    /// The end of the server's standard error, one line.
    pub(crate) fn said(&self) -> String {
        let t = lock(&self.stderr);
        let text = String::from_utf8_lossy(&t.iter().copied().collect::<Vec<u8>>()).into_owned();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let last = lines[lines.len().saturating_sub(3)..].join(" / ");
        last.chars().take(400).collect()
    }

    /// Kills the server's process group at once.
    pub(crate) fn kill(&self) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) on the process group this server was started in (`process_group(0)`:
            // its id is the server's pid), which holds only the server and what it started.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        if let Some(mut child) = lock(&self.child).take() {
            let _ = child.start_kill();
        }
    }

    /// Asks the server to shut down and exit (at most `bound` in all), then kills what is left.
    pub(crate) async fn shutdown(&self, bound: Duration) {
        if self.is_alive() {
            let half = bound / 2;
            let _ = self.conn.request("shutdown", Value::Null, half).await;
            let _ = self.conn.notify("exit", Value::Null, half).await;
            let child = lock(&self.child).take();
            if let Some(mut child) = child {
                if tokio::time::timeout(half, child.wait()).await.is_err() {
                    let _ = child.start_kill();
                }
            }
        }
        self.kill();
    }

    /// A request, its failure in words.
    async fn ask(&self, method: &str, params: Value) -> Result<Value, Failure> {
        self.touch();
        match self.conn.request(method, params, self.program.answer).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failure(e, method, self.program.answer).await),
        }
    }

    /// Tells the server of `text` as the document `uri` (opened, or changed to it when it holds
    /// another); returns the version it holds it at.
    pub(crate) async fn sync(&self, uri: &str, language: &str, text: &str) -> Result<i32, Failure> {
        self.touch();
        let (method, params, version) = {
            let mut docs = lock(&self.docs);
            match docs.get_mut(uri) {
                Some(doc) if doc.text == text => return Ok(doc.version),
                Some(doc) => {
                    doc.version += 1;
                    doc.text = text.to_string();
                    doc.synced_at = Instant::now();
                    (
                        "textDocument/didChange",
                        json!({"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": [{"text": text}]}),
                        doc.version,
                    )
                }
                None => {
                    docs.insert(
                        uri.to_string(),
                        Doc {
                            version: 1,
                            text: text.to_string(),
                            synced_at: Instant::now(),
                            unchanged_at: None,
                        },
                    );
                    (
                        "textDocument/didOpen",
                        json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
                        1,
                    )
                }
            }
        };
        match self.conn.notify(method, params, self.program.answer).await {
            Ok(()) => Ok(version),
            Err(e) => {
                lock(&self.docs).remove(uri);
                Err(self.failure(e, method, self.program.answer).await)
            }
        }
    }

    /// The document `uri` as the server holds it, if it holds it.
    pub(crate) fn held(&self, uri: &str) -> Option<Held> {
        lock(&self.docs).get(uri).map(|d| Held {
            version: d.version,
            text: d.text.clone(),
            synced_at: d.synced_at,
            unchanged: d.unchanged_at == Some(d.version),
        })
    }

    /// Notes that the server published nothing new for `uri` at `version` after an edit: its last
    /// diagnostics stand for that version.
    pub(crate) fn unchanged(&self, uri: &str, version: i32) {
        if let Some(d) = lock(&self.docs).get_mut(uri) {
            if d.version == version {
                d.unchanged_at = Some(version);
            }
        }
    }

    /// The document's symbols (`None`: the server gives none), as multiedit's wire type reads them.
    pub(crate) async fn symbols(&self, uri: &str) -> Result<Option<Vec<ReportedSymbol>>, Failure> {
        if !self.caps.symbols {
            return Ok(None);
        }
        let v = self
            .ask(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await?;
        if v.is_null() {
            return Ok(Some(Vec::new()));
        }
        let response: DocumentSymbolResponse =
            serde_json::from_value(v).map_err(|e| Failure::Answered {
                during: "textDocument/documentSymbol".into(),
                message: format!("its answer is not LSP's: {e}"),
            })?;
        Ok(Some(match response {
            DocumentSymbolResponse::Nested(list) => list.iter().map(reported).collect(),
            DocumentSymbolResponse::Flat(list) => nest(&list),
        }))
    }

    /// Prepare rename, then the rename's WorkspaceEdit, unapplied: what an editor's client answers to
    /// `multiedit/rename`.
    pub(crate) async fn rename(
        &self,
        uri: &str,
        position: Position,
        new_name: &str,
    ) -> Result<RenameAnswer, Failure> {
        if !self.caps.rename {
            return Ok(RenameAnswer {
                no_provider: true,
                ..RenameAnswer::default()
            });
        }
        let at = json!({"textDocument": {"uri": uri}, "position": position});
        let placeholder = match self.prepare_rename(uri, &at).await? {
            Ok(placeholder) => placeholder,
            Err(refused) => return Ok(refused),
        };
        let mut params = at;
        params["newName"] = json!(new_name);
        let edit =
            match self
                .conn
                .request("textDocument/rename", params, self.program.answer)
                .await
            {
                Err(RpcError::Answered { message, .. }) => return Ok(refused(message)),
                Err(e) => {
                    return Err(self
                        .failure(e, "textDocument/rename", self.program.answer)
                        .await)
                }
                Ok(Value::Null) => None,
                Ok(v) => Some(serde_json::from_value::<WorkspaceEdit>(v).map_err(|e| {
                    Failure::Answered {
                        during: "textDocument/rename".into(),
                        message: format!("its answer is not a WorkspaceEdit: {e}"),
                    }
                })?),
            };
        let docs = lock(&self.docs);
        let versions = docs.iter().map(|(u, d)| (u.clone(), d.version)).collect();
        Ok(RenameAnswer {
            edit,
            versions,
            placeholder,
            refused: None,
            no_provider: false,
        })
    }

    /// Prepare rename at `at` (of the document `uri`), where the server offers it: `Ok(Ok(name))`, the
    /// name there as it gives it (its placeholder, else the text of its range); `Ok(Err(answer))`, the
    /// server refused to rename there.
    async fn prepare_rename(
        &self,
        uri: &str,
        at: &Value,
    ) -> Result<Result<Option<String>, RenameAnswer>, Failure> {
        if !self.caps.prepare_rename {
            return Ok(Ok(None));
        }
        match self
            .conn
            .request(
                "textDocument/prepareRename",
                at.clone(),
                self.program.answer,
            )
            .await
        {
            Err(RpcError::Answered { message, .. }) => Ok(Err(refused(message))),
            Err(e) => Err(self
                .failure(e, "textDocument/prepareRename", self.program.answer)
                .await),
            Ok(Value::Null) => Ok(Err(refused(
                "there is nothing it can rename at this place".into(),
            ))),
            Ok(v) => {
                let mut placeholder = v
                    .get("placeholder")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let range = v.get("range").or(v.get("start").map(|_| &v));
                if let (None, Some(range)) = (&placeholder, range) {
                    placeholder = self.text_of(uri, range);
                }
                Ok(Ok(placeholder))
            }
        }
    }

    /// The text of an LSP range of a document the server holds.
    fn text_of(&self, uri: &str, range: &Value) -> Option<String> {
        let range: tower_lsp_server::ls_types::Range =
            serde_json::from_value(range.clone()).ok()?;
        let docs = lock(&self.docs);
        let rope = ropey::Rope::from_str(&docs.get(uri)?.text);
        let enc = convert::Encoding::Utf16;
        let a = crate::symbols::outline::byte_of(&rope, range.start, enc)?;
        let b = crate::symbols::outline::byte_of(&rope, range.end, enc)?;
        (a < b && range.start.line == range.end.line).then(|| rope.byte_slice(a..b).to_string())
    }

    /// Records how long the server took to publish after an edit (the last 20).
    pub(crate) fn learned(&self, latency: Duration) {
        let mut l = lock(&self.latencies);
        l.push(latency);
        let over = l.len().saturating_sub(20);
        l.drain(..over);
    }
}

/// A refused rename, in the server's own words: without the wrapper vscode-languageserver puts
/// around an error a server throws ("Request textDocument/prepareRename failed with message: ..."),
/// which an editor's client takes off too.
fn refused(words: String) -> RenameAnswer {
    let words = match words.split_once(" failed with message: ") {
        Some((request, said)) if request.starts_with("Request ") => said.to_string(),
        _ => words,
    };
    RenameAnswer {
        refused: Some(words),
        ..RenameAnswer::default()
    }
}

/// A folder's `file://` URI.
pub(crate) fn folder_uri(path: &Path) -> String {
    convert::file_uri(path, &path.display().to_string())
        .map(|u| u.as_str().to_string())
        .unwrap_or_else(|_| format!("file://{}", path.display()))
}

fn caps_of(c: &Value) -> Caps {
    let truthy =
        |v: Option<&Value>| v.is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)));
    let rename = c.get("renameProvider");
    Caps {
        symbols: truthy(c.get("documentSymbolProvider")),
        rename: truthy(rename),
        prepare_rename: rename
            .and_then(|r| r.get("prepareProvider"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

/// A `DocumentSymbol` as multiedit's wire type holds it.
fn reported(s: &DocumentSymbol) -> ReportedSymbol {
    ReportedSymbol {
        name: s.name.clone(),
        detail: s.detail.clone().filter(|d| !d.is_empty()),
        kind: kind_number(s.kind),
        range: s.range,
        selection_range: s.selection_range,
        children: s
            .children
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(reported)
            .collect(),
    }
}

fn kind_number(kind: tower_lsp_server::ls_types::SymbolKind) -> u32 {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_u64())
        .and_then(|k| u32::try_from(k).ok())
        .unwrap_or(0)
}

/// Flat `SymbolInformation`s nested by their ranges, as VS Code nests them (one inside another's range
/// is its child); a symbol's name is then its whole range.
fn nest(list: &[SymbolInformation]) -> Vec<ReportedSymbol> {
    let mut sorted: Vec<&SymbolInformation> = list.iter().collect();
    sorted.sort_by_key(|s| {
        let r = s.location.range;
        (
            r.start.line,
            r.start.character,
            std::cmp::Reverse((r.end.line, r.end.character)),
        )
    });
    fn inside(outer: &ReportedSymbol, r: tower_lsp_server::ls_types::Range) -> bool {
        let o = outer.range;
        (o.start.line, o.start.character) <= (r.start.line, r.start.character)
            && (r.end.line, r.end.character) <= (o.end.line, o.end.character)
    }
    fn add(into: &mut Vec<ReportedSymbol>, s: ReportedSymbol) {
        match into.last_mut() {
            Some(last) if inside(last, s.range) => add(&mut last.children, s),
            _ => into.push(s),
        }
    }
    let mut out = Vec::new();
    for s in sorted {
        add(
            &mut out,
            ReportedSymbol {
                name: s.name.clone(),
                detail: None,
                kind: kind_number(s.kind),
                range: s.location.range,
                selection_range: s.location.range,
                children: Vec::new(),
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_symbols_are_nested_by_their_ranges() {
        let flat: Vec<SymbolInformation> = serde_json::from_value(json!([
            {"name": "add", "kind": 6, "location": {"uri": "file:///a.c", "range": {"start": {"line": 1, "character": 2}, "end": {"line": 3, "character": 3}}}},
            {"name": "Calc", "kind": 5, "location": {"uri": "file:///a.c", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 1}}}},
            {"name": "main", "kind": 12, "location": {"uri": "file:///a.c", "range": {"start": {"line": 6, "character": 0}, "end": {"line": 8, "character": 1}}}},
        ]))
        .unwrap();
        let nested = nest(&flat);
        assert_eq!(
            nested
                .iter()
                .map(|s| (s.name.as_str(), s.children.len()))
                .collect::<Vec<_>>(),
            [("Calc", 1), ("main", 0)]
        );
        assert_eq!(nested[0].children[0].name, "add");
        assert_eq!(nested[0].kind, 5);
    }

    #[test]
    fn what_a_server_can_do_is_read_from_its_capabilities() {
        let c = caps_of(
            &json!({"documentSymbolProvider": true, "renameProvider": {"prepareProvider": true}}),
        );
        assert!(c.symbols && c.rename && c.prepare_rename);
        let c = caps_of(&json!({"documentSymbolProvider": {}, "renameProvider": true}));
        assert!(c.symbols && c.rename && !c.prepare_rename);
        let c = caps_of(&json!({"renameProvider": false}));
        assert!(!c.symbols && !c.rename);
    }
}
