//! The stdio transport: one JSON-RPC message per line, as rmcp's own, but every request that cannot be
//! served gets an error answer.
//!
//! rmcp's stdio transport (`AsyncRwTransport`, 3.11) drops a line over its length limit and a line that
//! is not JSON without a word, answers params of the wrong shape with -32600 and no `id` at all, and lets
//! a `tools/call` whose `arguments` is not an object through as an unknown method (-32601). JSON-RPC 2.0
//! asks for -32700 (not JSON), -32600 (not a request) and -32602 (params that do not fit) with the
//! request's `id`, or `"id": null` when it cannot be read (the official Python SDK rejects an error
//! without one). So this transport reads the lines itself, screens each one, and answers what rmcp
//! would drop or misname; everything else is rmcp's message types and rmcp's protocol. Only the
//! framing (a line) and those error answers are written here.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, ClientRequest, ErrorData, InitializeRequestParams, JsonRpcMessage,
    JsonRpcRequest, RequestId,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest line read: the bridge's limit for a plan (`bridge::wire::MAX_REQUEST`), so that a plan
/// an editor would take is taken here too.
pub(crate) const MAX_LINE: usize = 64 << 20;
/// How much of a line over the limit is kept to find its `id`.
const KEPT: usize = 64 << 10;

pub(crate) struct Stdio<R, W> {
    read: BufReader<R>,
    /// The line read so far. Kept here, not in `receive`: rmcp polls `receive` inside a `select!` and
    /// drops it whenever something else is ready, and the bytes already read must not be lost.
    line: Vec<u8>,
    /// The rest of a line over the limit is being skipped.
    skipping: bool,
    max: usize,
    write: Arc<Mutex<W>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Stdio<R, W> {
    pub(crate) fn new(read: R, write: W, max: usize) -> Self {
        Stdio {
            read: BufReader::with_capacity(64 << 10, read),
            line: Vec::new(),
            skipping: false,
            max,
            write: Arc::new(Mutex::new(write)),
        }
    }
}

enum Read {
    /// A whole line is in `line` (at the end of input, also one without its line break).
    Line,
    /// A line passed the limit: its first bytes (the rest is skipped).
    TooLong(Vec<u8>),
    End,
    Failed(std::io::Error),
}

impl<R: AsyncRead + Unpin, W> Stdio<R, W> {
    /// Cancel-safe: what was read stays in `line`, and `consume` follows the copy with no await between.
    async fn read_line(&mut self) -> Read {
        loop {
            let buf = match self.read.fill_buf().await {
                Ok(buf) => buf,
                Err(e) => return Read::Failed(e),
            };
            if buf.is_empty() {
                return if self.line.is_empty() || self.skipping {
                    Read::End
                } else {
                    Read::Line
                };
            }
            let newline = memchr::memchr(b'\n', buf);
            let take = newline.map_or(buf.len(), |i| i + 1);
            let outcome = if self.skipping {
                self.skipping = newline.is_none();
                None
            } else if self.line.len() + take > self.max + 1 {
                let mut kept = std::mem::take(&mut self.line);
                kept.truncate(KEPT);
                let room = KEPT - kept.len();
                kept.extend_from_slice(&buf[..take.min(room)]);
                self.skipping = newline.is_none();
                Some(Read::TooLong(kept))
            } else {
                self.line.extend_from_slice(&buf[..take]);
                newline.map(|_| Read::Line)
            };
            self.read.consume(take);
            if let Some(read) = outcome {
                return read;
            }
        }
    }
}

/// What a line is.
#[derive(Debug)]
pub(crate) enum Screened {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An error answer to write.
    Answer(Vec<u8>),
    /// Nothing to do (a blank line; a notification or a response that is not understood: those are
    /// never answered).
    Nothing,
}

/// One JSON-RPC error as a line; `id` null when it cannot be read (rmcp leaves it out).
pub(crate) fn error_line(id: Option<RequestId>, error: ErrorData) -> Vec<u8> {
    let known = id.is_some();
    let mut v =
        serde_json::to_value(TxJsonRpcMessage::<RoleServer>::error(error, id)).unwrap_or_default();
    if !known {
        v["id"] = Value::Null;
    }
    let mut line = serde_json::to_vec(&v).unwrap_or_default();
    line.push(b'\n');
    line
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// rmcp takes a request for a method it knows whose params do not fit for a custom method, which it
/// answers "method not found": why they do not fit, for the methods this server serves. Asked only of
/// custom requests, off the common path.
fn custom_misfit(message: &RxJsonRpcMessage<RoleServer>) -> Option<String> {
    let JsonRpcMessage::Request(JsonRpcRequest {
        request: ClientRequest::CustomRequest(c),
        ..
    }) = message
    else {
        return None;
    };
    params_misfit(&c.method, c.params.as_ref().unwrap_or(&Value::Null))
}

/// Why the params of a method this server serves do not fit its type, in serde's words.
fn params_misfit(method: &str, params: &Value) -> Option<String> {
    use serde::Deserialize;
    match method {
        "tools/call" => CallToolRequestParams::deserialize(params)
            .err()
            .map(|e| e.to_string()),
        "initialize" => InitializeRequestParams::deserialize(params)
            .err()
            .map(|e| e.to_string()),
        _ => None,
    }
}

pub(crate) fn screen(line: &[u8]) -> Screened {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Screened::Nothing;
    }
    let answer = |id: Option<RequestId>, e: ErrorData| Screened::Answer(error_line(id, e));
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        // Its id, if its start holds one, lets the client tell which request failed.
        Err(e) => {
            return answer(
                leading_id(line),
                ErrorData::parse_error(format!("Parse error: the line is not JSON ({e})"), None),
            )
        }
    };
    let Value::Object(obj) = &value else {
        let what = kind(&value);
        return answer(None, ErrorData::invalid_request(format!("Invalid Request: a message is one JSON object, not {what} (MCP has no batches)"), None));
    };
    let (Some(method), Some(id)) = (obj.get("method"), obj.get("id")) else {
        // A notification or a response: never answered, whatever is wrong with it.
        return match serde_json::from_value(value) {
            Ok(m) => Screened::Message(Box::new(m)),
            Err(_) => Screened::Nothing,
        };
    };
    let Ok(id) = serde_json::from_value::<RequestId>(id.clone()) else {
        return answer(
            None,
            ErrorData::invalid_request(
                format!(
                    "Invalid Request: `id` must be a string or an integer, not {}",
                    kind(id)
                ),
                None,
            ),
        );
    };
    let invalid = |why: String| {
        answer(
            Some(id.clone()),
            ErrorData::invalid_request(format!("Invalid Request: {why}"), None),
        )
    };
    let Value::String(method) = method else {
        return invalid(format!("`method` must be a string, not {}", kind(method)));
    };
    if obj.get("jsonrpc") != Some(&Value::from("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"".into());
    }
    let bad_params = |why: String| {
        answer(
            Some(id.clone()),
            ErrorData::invalid_params(format!("Invalid params: {why}"), None),
        )
    };
    if let Some(why) = params_shape(method, obj.get("params").unwrap_or(&Value::Null)) {
        return bad_params(why);
    }
    let method = method.clone();
    match serde_json::from_value(value) {
        Ok(m) => match custom_misfit(&m) {
            Some(why) => bad_params(format!("the params of {method} do not fit: {why}")),
            None => Screened::Message(Box::new(m)),
        },
        Err(e) => bad_params(format!("the params of {method} do not fit: {e}")),
    }
}

/// What is wrong with the shape of a request's `params` for `method`, before its type is tried: they
/// are named (an object), and a tool's `arguments` are an object too.
fn params_shape(method: &str, params: &Value) -> Option<String> {
    if !matches!(params, Value::Object(_) | Value::Null) {
        return Some(format!(
            "the params of {method} must be an object (MCP passes parameters by name), not {}",
            kind(params)
        ));
    }
    if method == "tools/call" {
        if let Some(arguments) = params.get("arguments").filter(|a| !a.is_object()) {
            return Some(format!(
                "the `arguments` of tools/call must be an object holding the tool's input, not {}",
                kind(arguments)
            ));
        }
    }
    None
}

/// The `id` of a message cut short, if it comes before the cut (clients write it near the start).
pub(crate) fn leading_id(start: &[u8]) -> Option<RequestId> {
    struct Seed<'a>(&'a mut Option<RequestId>);
    impl<'de> DeserializeSeed<'de> for Seed<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Seed<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    *self.0 = map.next_value::<RequestId>().ok();
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut id = None;
    // The rest of the message is missing, so the parse ends in an error; the id, if seen, is kept.
    let _ = Seed(&mut id).deserialize(&mut serde_json::Deserializer::from_slice(start));
    id
}

fn too_long(start: &[u8], max: usize) -> Vec<u8> {
    let message = format!(
        "Invalid Request: the message is longer than {max} bytes, the most this server reads in one line; it was not \
         read. Split the plan into smaller ones."
    );
    error_line(leading_id(start), ErrorData::invalid_request(message, None))
}

async fn write_line<W: AsyncWrite + Unpin>(write: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut w = write.lock().await;
    w.write_all(line).await?;
    w.flush().await
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            write_line(&write, &line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let answer = match self.read_line().await {
                Read::Line => {
                    let screened = screen(&self.line);
                    self.line.clear();
                    match screened {
                        Screened::Message(m) => return Some(*m),
                        Screened::Answer(line) => line,
                        Screened::Nothing => continue,
                    }
                }
                Read::TooLong(start) => {
                    // Its buffer may have grown to the limit: give the memory back.
                    self.line = Vec::new();
                    too_long(&start, self.max)
                }
                Read::End => return None,
                Read::Failed(e) => {
                    crate::process::err(&format!(
                        "multiedit mcp: reading standard input failed ({e})\n"
                    ));
                    return None;
                }
            };
            // Written apart, so that `receive` being dropped mid-write (see `line`) cannot cut it.
            let write = self.write.clone();
            tokio::spawn(async move { write_line(&write, &answer).await });
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(line: &str) -> Value {
        match screen(line.as_bytes()) {
            Screened::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("expected an answer to {line}, got {other:?}"),
        }
    }

    #[test]
    fn malformed_requests_get_the_right_error_and_their_id() {
        for (line, id, code) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1,2]}"#,
                Value::from(7),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":"p"}"#,
                Value::from("x"),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"multiedit","arguments":[1]}}"#,
                Value::from(8),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#,
                Value::from(9),
                -32602,
            ),
            (
                r#"{"jsonrpc":"1.0","id":10,"method":"ping"}"#,
                Value::from(10),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                Value::Null,
                -32600,
            ),
            ("[]", Value::Null, -32600),
            ("not json", Value::Null, -32700),
        ] {
            let a = answered(line);
            assert_eq!(
                (&a["id"], &a["error"]["code"]),
                (&id, &Value::from(code)),
                "{line}: {a}"
            );
            assert!(a.as_object().unwrap().contains_key("id"), "{a}");
        }
        assert!(matches!(
            screen(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Screened::Message(_)
        ));
        assert!(matches!(
            screen(br#"{"jsonrpc":"2.0","method":"notifications/x","params":[1]}"#),
            Screened::Nothing | Screened::Message(_)
        ));
        assert!(matches!(screen(b"  \r"), Screened::Nothing));
    }

    #[test]
    fn the_id_of_a_message_cut_short() {
        assert_eq!(leading_id(br#"{"jsonrpc":"2.0","params":{"a":[1,{"id":5}]},"id":42,"method":"tools/call","params":{"argu"#), Some(RequestId::Number(42)));
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","id":"a\"b","#),
            Some(RequestId::String("a\"b".into()))
        );
        assert_eq!(
            leading_id(
                br#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"edits":"#
            ),
            None
        );
        assert_eq!(leading_id(b"xyz"), None);
    }
}
