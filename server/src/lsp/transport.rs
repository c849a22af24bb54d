//! A check in front of the framework's reader: tower-lsp-server's framed reader stops for good at the
//! first frame it cannot decode, which would end the session over one bad message. Frames are checked
//! here first; those that are not JSON-RPC messages are dropped and logged, and the rest pass through
//! byte for byte. A wrong Content-Length costs the frames it overlaps, not the session: the reader
//! finds the next header wherever it lies. A dropped frame that is still a request, with a method and
//! an integer or string id (its method not a string, another `jsonrpc` version), gets its Invalid
//! Request error: its sender waits for that id, and silence would hang it (`invalid_request`). A frame
//! nested deeper than `MAX_DEPTH` is dropped before the framework's parser (which ends the session past
//! its own limit) sees it.

use std::sync::Arc;

use serde::de::IgnoredAny;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tower_lsp_server::ls_types::MessageType;
use tower_lsp_server::Client;

/// Whether a member is present, whatever its value: `"result": null` is a valid response, which an
/// `Option` would read as absent.
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// A member present with any value, `null` included (serde would read a `null` as an absent
/// `Option`); only `method` and `id` are kept, being small.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

/// What a frame must look like for the framework to accept it; the params are skipped, not built.
/// The framework reads a frame as a response, else as a request, and ends the session at one it can
/// read as neither: a `method` that is not a string (`null` included), or an `id` that is not an
/// integer, a string or `null` (`7.5`, `true`, 2^63).
#[derive(Deserialize)]
struct Probe {
    jsonrpc: String,
    #[serde(default, deserialize_with = "present")]
    method: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<serde_json::Value>,
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
}

/// Whether the framework reads `id` as a request id (`jsonrpc::Id`: an integer, a string or null).
fn readable_id(id: &serde_json::Value) -> bool {
    serde_json::from_value::<tower_lsp_server::jsonrpc::Id>(id.clone()).is_ok()
}

/// The internal request a dropped frame with a usable id becomes; `DocSync` answers it with Invalid
/// Request and never passes it on. Its params are `{"why": ...}`.
pub(crate) const INVALID_REQUEST: &str = "multiedit/invalidRequest";

/// For a frame that is not a message: the internal request that gets its sender an error, if the
/// frame is a request, an object with a `method` and an `id` that is an integer or a string (as
/// `multiedit mcp` judges one). Anything else may be a notification or a response, which are never
/// answered (two programs could end up answering each other); and without a usable id (JSON that does
/// not parse, an id of another type) JSON-RPC would have the error sent with a null id, which LSP
/// clients take for a broken server.
fn invalid_request(body: &[u8], why: &str) -> Option<Vec<u8>> {
    let serde_json::Value::Object(frame) = serde_json::from_slice(body).ok()? else {
        return None;
    };
    if !frame.contains_key("method") || frame.contains_key("result") || frame.contains_key("error")
    {
        return None;
    }
    let id = frame
        .get("id")
        .filter(|id| !id.is_null() && readable_id(id))?;
    let request = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": INVALID_REQUEST, "params": {"why": why}});
    serde_json::to_vec(&request).ok()
}

/// How deep a frame may nest arrays and objects. The framework parses with serde_json, which gives up
/// past 128 levels and then ends the session; no LSP message nests near this deep.
pub(crate) const MAX_DEPTH: usize = 100;

/// Whether `body` nests arrays and objects deeper than `limit`, found by one pass over its bytes
/// (brackets inside strings skipped), before any parser recurses into it.
fn nested_deeper_than(body: &[u8], limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn is_message(body: &[u8]) -> Result<(), String> {
    if nested_deeper_than(body, MAX_DEPTH) {
        return Err(format!(
            "it nests arrays and objects more than {MAX_DEPTH} levels deep"
        ));
    }
    let p: Probe = serde_json::from_slice(body).map_err(|e| format!("it is not JSON-RPC ({e})"))?;
    if p.jsonrpc != "2.0" {
        return Err(format!("its jsonrpc is {:?}, not \"2.0\"", p.jsonrpc));
    }
    if let Some(method) = p.method.as_ref().filter(|m| !m.is_string()) {
        return Err(format!("its method is not a string ({method})"));
    }
    if let Some(id) = p.id.as_ref().filter(|id| !readable_id(id)) {
        return Err(format!("its id is neither an integer nor a string ({id})"));
    }
    if p.method.is_some() || (p.id.is_some() && (p.result.0 || p.error.0)) {
        Ok(())
    } else {
        Err("it is neither a request, a notification nor a response".into())
    }
}

/// Larger frames are refused unread: a length is only a claim, and allocating it up front would let
/// one bad header abort the process.
const MAX_FRAME: usize = 1 << 30;
/// Header lines are read in pieces of at most this size, so a missing line break costs no memory.
const MAX_HEADER_PIECE: usize = 8 * 1024;
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// Where `Content-Length:` starts in `line`, in any case and anywhere in it: after a frame whose
/// announced length was wrong, the next header follows the leftover bytes on the same line, and
/// finding it there is how the reader gets back in step, losing only the frames the wrong length
/// overlapped.
fn find_content_length(line: &[u8]) -> Option<usize> {
    line.windows(CONTENT_LENGTH.len())
        .position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// One frame's header block: the announced length if there was a usable one, else why not; and any
/// bytes skipped on the way. `None` at the end of the input.
type Header = (Result<usize, String>, Option<String>);

async fn read_header<R: AsyncBufReadExt + Unpin>(r: &mut R) -> std::io::Result<Option<Header>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut junk: Option<String> = None;
    // The end of the previous piece of an over-long line, so a header split between two pieces is
    // still found.
    let mut carry: Vec<u8> = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        line.extend_from_slice(&carry);
        let carried = carry.len();
        let n = (&mut *r)
            .take(MAX_HEADER_PIECE as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        let whole_line = line.ends_with(b"\n");
        if carried == 0 && (line == b"\r\n" || line == b"\n") {
            if length.is_some() {
                break;
            }
            // A blank line with no length before it: keep looking for the next header.
            continue;
        }
        carry.clear();
        if let Some(at) = find_content_length(&line) {
            let value = String::from_utf8_lossy(&line[at + CONTENT_LENGTH.len()..])
                .trim()
                .to_string();
            length = Some(match value.parse::<usize>() {
                Ok(n) if n <= MAX_FRAME => Ok(n),
                Ok(n) => Err(format!(
                    "a Content-Length of {n} bytes, more than the {MAX_FRAME} accepted"
                )),
                Err(_) => Err(format!("a Content-Length that is not a number ({value:?})")),
            });
            if at > 0 {
                junk.get_or_insert_with(|| format!("{at} bytes before a header"));
            }
        } else if whole_line {
            let text = String::from_utf8_lossy(&line);
            if !text
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("content-type:")
            {
                junk.get_or_insert_with(|| text.chars().take(80).collect());
            }
        } else {
            let keep = line.len().min(CONTENT_LENGTH.len() - 1);
            carry.extend_from_slice(&line[line.len() - keep..]);
            junk.get_or_insert_with(|| "a line longer than a header".into());
        }
    }
    let length = length.unwrap_or_else(|| Err("no Content-Length".into()));
    Ok(Some((length, junk)))
}

/// Where checked frames go on to the framework. Shared, so that `sync::Arrivals` can put a marker in
/// line behind the frames already read; each writer writes whole frames under the lock.
pub(crate) type Feed = Arc<tokio::sync::Mutex<DuplexStream>>;

pub(crate) fn checked_input<R>(input: R, client: Client) -> (DuplexStream, Feed)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let (server_side, feed) = tokio::io::duplex(256 * 1024);
    let feed: Feed = Arc::new(tokio::sync::Mutex::new(feed));
    let shared = feed.clone();
    tokio::spawn(async move {
        forward(input, &feed, &client).await;
        // The end of the input must reach the framework (so that the session ends), though the
        // feed itself lives on in `Arrivals`.
        let _ = feed.lock().await.shutdown().await;
    });
    (server_side, shared)
}

/// Passes the checked frames of `input` on to `feed` until the input ends.
async fn forward<R: AsyncRead + Unpin>(input: R, feed: &Feed, client: &Client) {
    let mut r = BufReader::new(input);
    loop {
        let header = read_header(&mut r).await;
        if let Ok(Some((_, Some(junk)))) = &header {
            warn(
                client,
                format!("Skipped input that was not a frame ({junk})"),
            );
        }
        let n = match header {
            Ok(Some((Ok(n), _))) => n,
            Ok(Some((Err(why), _))) => {
                // Nothing is read past the header: the next frame's header will be found in
                // whatever follows.
                warn(client, format!("Dropped a frame with {why}"));
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        // Read as the bytes arrive rather than allocated up front.
        let mut body = Vec::new();
        match (&mut r).take(n as u64).read_to_end(&mut body).await {
            Ok(got) if got == n => {}
            _ => return,
        }
        let pass = match is_message(&body) {
            Ok(()) => body,
            Err(why) => {
                warn(client, format!("Dropped a message: {why}"));
                match invalid_request(&body, &why) {
                    Some(request) => request,
                    None => continue,
                }
            }
        };
        if write_frame(feed, &pass).await.is_err() {
            return;
        }
    }
}

/// Writes one frame whole to the framework's input.
pub(crate) async fn write_frame(feed: &Feed, body: &[u8]) -> std::io::Result<()> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    feed.lock().await.write_all(&frame).await
}

fn warn(client: &Client, message: String) {
    let client = client.clone();
    tokio::spawn(async move { super::logging::log(&client, MessageType::WARNING, message).await });
}

#[cfg(test)]
mod tests {
    use super::{invalid_request, is_message, read_header, MAX_HEADER_PIECE};

    /// The lengths `read_header` finds in `input`, in order, and whether each was usable.
    fn headers(input: &[u8]) -> Vec<Result<usize, String>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut r = tokio::io::BufReader::new(input);
            let mut out = Vec::new();
            while let Some((h, _)) = read_header(&mut r).await.unwrap() {
                out.push(h);
            }
            out
        })
    }

    #[test]
    fn headers_are_found_after_junk_and_bad_lengths() {
        assert_eq!(
            headers(b"Content-Length: 12\r\nContent-Type: x\r\n\r\n"),
            vec![Ok(12)]
        );
        assert_eq!(
            headers(b"content-length:3\n\n"),
            vec![Ok(3)],
            "any case, bare line feeds"
        );
        assert_eq!(headers(b"leftover}Content-Length: 7\r\n\r\n"), vec![Ok(7)]);
        let h = headers(b"Content-Length: twelve\r\n\r\nbody{}Content-Length: 4\r\n\r\n");
        assert!(h[0].is_err() && h[1] == Ok(4), "{h:?}");
        let h = headers(b"Content-Length: 999999999999\r\n\r\n");
        assert!(
            h[0].as_ref().is_err_and(|e| e.contains("more than")),
            "{h:?}"
        );
        // A header split between two pieces of an over-long line is still found.
        let mut long = vec![b'x'; MAX_HEADER_PIECE - 5];
        long.extend_from_slice(b"Content-Length: 9\r\n\r\n");
        assert_eq!(headers(&long), vec![Ok(9)]);
    }

    #[test]
    fn what_passes() {
        assert!(is_message(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#).is_ok());
        assert!(
            is_message(br#"{"jsonrpc":"2.0","id":3,"result":null}"#).is_ok(),
            "a null result is a result"
        );
        assert!(
            is_message(br#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}"#).is_ok()
        );
        assert!(is_message(br#"{"jsonrpc":"2.0","id":3}"#).is_err());
        assert!(is_message(br#"{"jsonrpc":"1.0","method":"x"}"#).is_err());
        assert!(is_message(b"{not json").is_err());
        assert!(is_message(b"[1,2]").is_err());
        // What the framework would read as neither a request nor a response, ending the session.
        for frame in [
            r#"{"jsonrpc":"2.0","id":7.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":[],"result":1}"#,
            r#"{"jsonrpc":"2.0","method":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":{}}"#,
        ] {
            assert!(is_message(frame.as_bytes()).is_err(), "{frame}");
        }
        assert!(
            is_message(br#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#).is_ok(),
            "any i64 is an id"
        );
        // Nested past the limit, whatever brackets its strings hold.
        let nested = |depth: usize, text: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"x","params":{}"{text}"{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        assert!(is_message(nested(99, "]]]]").as_bytes()).is_ok());
        assert!(is_message(nested(99, "[[[[\\\"[[").as_bytes()).is_ok());
        assert_eq!(
            is_message(nested(100, "").as_bytes()),
            Err("it nests arrays and objects more than 100 levels deep".into())
        );
    }

    #[test]
    fn a_dropped_request_with_an_id_is_still_answered() {
        let answered = |frame: &str| {
            invalid_request(frame.as_bytes(), "why").map(|r| String::from_utf8(r).unwrap())
        };
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","id":7,"method":5}"#).as_deref(),
            Some(
                r#"{"id":7,"jsonrpc":"2.0","method":"multiedit/invalidRequest","params":{"why":"why"}}"#
            )
        );
        assert!(
            answered(r#"{"jsonrpc":"1.0","id":"x","method":"shutdown"}"#)
                .is_some_and(|r| r.contains(r#""id":"x""#))
        );
        assert!(
            answered(r#"{"id":9,"method":"shutdown"}"#).is_some(),
            "no jsonrpc member"
        );
        // Nothing to answer: no id, an id that is no id, no method (a response, perhaps), a response,
        // not JSON.
        for frame in [
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":7,"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1}}"#,
            r#"{"jsonrpc":"2.0","id":null}"#,
            r#"{"jsonrpc":"1.0","id":3,"result":1}"#,
            r#"{"jsonrpc":"1.0","id":3,"method":"x","result":1}"#,
            "{not json",
            "[1]",
        ] {
            assert_eq!(answered(frame), None, "{frame}");
        }
    }
}
