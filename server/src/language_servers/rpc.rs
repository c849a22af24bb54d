//! JSON-RPC 2.0 with LSP's `Content-Length` framing, the client's side, over a language server's
//! standard input and output. Written here, small, rather than taken from crates.io: `async-lsp` (the
//! maintained one) brings its own LSP types (`lsp-types` 0.95) beside the `ls_types` this crate
//! already speaks through tower-lsp-server, and a tower service stack where multiedit needs a few
//! requests and one notification; `lsp-client` is a single 0.1 release. What is needed is a frame
//! reader, a writer, answers matched to requests by id, and every wait bounded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};
use tokio::sync::{oneshot, watch};

/// The largest message read: a server that sends more is taken as broken.
const MAX_MESSAGE: usize = 64 << 20;
/// The longest header line.
const MAX_HEADER: u64 = 8192;

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RpcError {
    /// The server answered with an error.
    Answered { code: i64, message: String },
    /// The connection closed (the server exited, or sent what is not JSON-RPC) before the answer.
    Closed,
    /// No answer within the bound.
    TimedOut,
}

/// Answers the server's own requests (`workspace/configuration`, ...): a result, or an error's code
/// and message.
pub(crate) type Handler = Arc<dyn Fn(&str, &Value) -> Result<Value, (i64, String)> + Send + Sync>;
/// Takes the server's notifications (`textDocument/publishDiagnostics`, ...).
pub(crate) type OnNotify = Arc<dyn Fn(&str, Value) + Send + Sync>;

type Pending = Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>;

struct Inner {
    writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>,
    pending: Pending,
    /// `true` once the connection closed.
    closed: watch::Sender<bool>,
}

/// One connection to a server.
pub(crate) struct Connection {
    inner: Arc<Inner>,
    next: AtomicI64,
}

/// A message as framed on the wire.
pub(crate) fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Reads one framed message; `None` at the end of the stream. Headers other than `Content-Length`
/// are skipped, as LSP allows.
pub(crate) async fn read_message<R: AsyncBufRead + Unpin>(
    r: &mut R,
) -> std::io::Result<Option<Vec<u8>>> {
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let mut length = None;
    loop {
        let mut line = Vec::new();
        let n = (&mut *r)
            .take(MAX_HEADER)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        if line.last() != Some(&b'\n') {
            return Err(bad("a header line too long, or cut off"));
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| bad("a Content-Length that is not a number"))?,
                );
            }
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_MESSAGE {
        return Err(bad("a message over 64 MiB"));
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).await?;
    Ok(Some(body))
}

impl Connection {
    /// Starts reading `read` (the server's standard output) in a task of its own; writes go to
    /// `write` (its standard input).
    pub(crate) fn start(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
        handler: Handler,
        on_notify: OnNotify,
    ) -> Connection {
        let inner = Arc::new(Inner {
            writer: tokio::sync::Mutex::new(Box::new(write)),
            pending: Mutex::new(HashMap::new()),
            closed: watch::channel(false).0,
        });
        let reader = inner.clone();
        tokio::spawn(async move {
            let mut read = tokio::io::BufReader::new(read);
            while let Ok(Some(body)) = read_message(&mut read).await {
                let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                    break;
                };
                reader.take(message, &handler, &on_notify).await;
            }
            reader.close();
        });
        Connection {
            inner,
            next: AtomicI64::new(1),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        *self.inner.closed.borrow()
    }

    /// One request, answered within `bound` (the write included); a request that times out is
    /// cancelled (`$/cancelRequest`).
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        bound: Duration,
    ) -> Result<Value, RpcError> {
        if self.is_closed() {
            return Err(RpcError::Closed);
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.pending).insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let asked = async {
            self.inner.send(&message).await?;
            rx.await.unwrap_or(Err(RpcError::Closed))
        };
        match tokio::time::timeout(bound, asked).await {
            Ok(answer) => answer,
            Err(_) => {
                lock(&self.inner.pending).remove(&id);
                let cancel =
                    json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}});
                let _ = tokio::time::timeout(Duration::from_millis(100), self.inner.send(&cancel))
                    .await;
                Err(RpcError::TimedOut)
            }
        }
    }

    /// One notification, written within `bound`.
    pub(crate) async fn notify(
        &self,
        method: &str,
        params: Value,
        bound: Duration,
    ) -> Result<(), RpcError> {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        tokio::time::timeout(bound, self.inner.send(&message))
            .await
            .unwrap_or(Err(RpcError::TimedOut))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    async fn send(&self, message: &Value) -> Result<(), RpcError> {
        let bytes = frame(message.to_string().as_bytes());
        let mut w = self.writer.lock().await;
        let written = async {
            w.write_all(&bytes).await?;
            w.flush().await
        };
        written.await.map_err(|_| {
            self.close();
            RpcError::Closed
        })
    }

    /// Every waiting request is answered `Closed`.
    fn close(&self) {
        self.closed.send_replace(true);
        for (_, tx) in lock(&self.pending).drain() {
            let _ = tx.send(Err(RpcError::Closed));
        }
    }

    async fn take(&self, message: Value, handler: &Handler, on_notify: &OnNotify) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|i| !i.is_null());
        match (method, id) {
            // The server's own request: answered at once.
            (Some(method), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                let answer = match handler(method, &params) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, text)) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
                    }
                };
                let _ = self.send(&answer).await;
            }
            (Some(method), None) => on_notify(
                method,
                message.get("params").cloned().unwrap_or(Value::Null),
            ),
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { return };
                let Some(tx) = lock(&self.pending).remove(&id) else {
                    return;
                };
                let answer = match message.get("error") {
                    Some(e) => Err(RpcError::Answered {
                        code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: e
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    }),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(answer);
            }
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_are_read_back_whatever_their_headers() {
        let mut wire = frame(br#"{"a":1}"#);
        wire.extend_from_slice(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 2\r\n\r\n{}");
        let mut r = tokio::io::BufReader::new(&wire[..]);
        assert_eq!(
            read_message(&mut r).await.unwrap().as_deref(),
            Some(&br#"{"a":1}"#[..])
        );
        assert_eq!(
            read_message(&mut r).await.unwrap().as_deref(),
            Some(&b"{}"[..])
        );
        assert_eq!(read_message(&mut r).await.unwrap(), None);
        let mut bad = tokio::io::BufReader::new(&b"Content-Length: x\r\n\r\n"[..]);
        assert!(read_message(&mut bad).await.is_err());
    }

    #[tokio::test]
    async fn answers_meet_their_requests_and_a_silent_server_times_out() {
        // The "server": answers request 1, then says nothing.
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (from_server, to_client) = tokio::io::split(client_end);
        let (mut server_reads, mut server_writes) = tokio::io::split(server_end);
        let handler: Handler = Arc::new(|_, _| Ok(Value::Null));
        let notes: OnNotify = Arc::new(|_, _| {});
        let c = Connection::start(from_server, to_client, handler, notes);
        tokio::spawn(async move {
            let mut r = tokio::io::BufReader::new(&mut server_reads);
            let first = read_message(&mut r).await.unwrap().unwrap();
            let v: Value = serde_json::from_slice(&first).unwrap();
            let answer = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"ok": v["method"]}});
            server_writes
                .write_all(&frame(answer.to_string().as_bytes()))
                .await
                .unwrap();
            // Read on, answer nothing.
            while read_message(&mut r).await.unwrap().is_some() {}
        });
        let one = c
            .request("initialize", json!({}), Duration::from_secs(5))
            .await;
        assert_eq!(one, Ok(json!({"ok": "initialize"})));
        let two = c
            .request("shutdown", Value::Null, Duration::from_millis(50))
            .await;
        assert_eq!(two, Err(RpcError::TimedOut));
    }
}
