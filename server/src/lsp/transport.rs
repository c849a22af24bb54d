//! A check in front of the framework's reader: tower-lsp-server's framed reader stops for good at the
//! first frame it cannot decode, which would end the session over one bad message. Frames are checked
//! here first; those that are not JSON-RPC messages are dropped and logged, and the rest pass through
//! byte for byte. A wrong Content-Length costs the frames it overlaps, not the session: the reader
//! finds the next header wherever it lies.

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

/// What a frame must look like for the framework to accept it; the params are skipped, not built.
#[derive(Deserialize)]
struct Probe {
    jsonrpc: String,
    #[serde(default)]
    method: Present,
    #[serde(default)]
    id: Present,
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
}

fn is_message(body: &[u8]) -> Result<(), String> {
    let p: Probe = serde_json::from_slice(body).map_err(|e| format!("not a JSON-RPC message ({e})"))?;
    if p.jsonrpc != "2.0" {
        return Err(format!("jsonrpc is {:?}, not \"2.0\"", p.jsonrpc));
    }
    if p.method.0 || (p.id.0 && (p.result.0 || p.error.0)) {
        Ok(())
    } else {
        Err("neither a request, a notification nor a response".into())
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
    line.windows(CONTENT_LENGTH.len()).position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
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
        let n = (&mut *r).take(MAX_HEADER_PIECE as u64).read_until(b'\n', &mut line).await?;
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
            let value = String::from_utf8_lossy(&line[at + CONTENT_LENGTH.len()..]).trim().to_string();
            length = Some(match value.parse::<usize>() {
                Ok(n) if n <= MAX_FRAME => Ok(n),
                Ok(n) => Err(format!("a Content-Length of {n} bytes, more than the {MAX_FRAME} accepted")),
                Err(_) => Err(format!("a Content-Length that is not a number ({value:?})")),
            });
            if at > 0 {
                junk.get_or_insert_with(|| format!("{at} bytes before a header"));
            }
        } else if whole_line {
            let text = String::from_utf8_lossy(&line);
            if !text.trim_start().to_ascii_lowercase().starts_with("content-type:") {
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
pub type Feed = Arc<tokio::sync::Mutex<DuplexStream>>;

pub fn checked_input<R>(input: R, client: Client) -> (DuplexStream, Feed)
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
            warn(client, format!("Skipped input that was not a frame ({junk})"));
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
        match is_message(&body) {
            Ok(()) => {
                if write_frame(feed, &body).await.is_err() {
                    return;
                }
            }
            Err(why) => warn(client, format!("Dropped a message that is {why}")),
        }
    }
}

/// Writes one frame whole to the framework's input.
pub async fn write_frame(feed: &Feed, body: &[u8]) -> std::io::Result<()> {
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
    use super::{is_message, read_header, MAX_HEADER_PIECE};

    /// The lengths `read_header` finds in `input`, in order, and whether each was usable.
    fn headers(input: &[u8]) -> Vec<Result<usize, String>> {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
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
        assert_eq!(headers(b"Content-Length: 12\r\nContent-Type: x\r\n\r\n"), vec![Ok(12)]);
        assert_eq!(headers(b"content-length:3\n\n"), vec![Ok(3)], "any case, bare line feeds");
        assert_eq!(headers(b"leftover}Content-Length: 7\r\n\r\n"), vec![Ok(7)]);
        let h = headers(b"Content-Length: twelve\r\n\r\nbody{}Content-Length: 4\r\n\r\n");
        assert!(h[0].is_err() && h[1] == Ok(4), "{h:?}");
        let h = headers(b"Content-Length: 999999999999\r\n\r\n");
        assert!(h[0].as_ref().is_err_and(|e| e.contains("more than")), "{h:?}");
        // A header split between two pieces of an over-long line is still found.
        let mut long = vec![b'x'; MAX_HEADER_PIECE - 5];
        long.extend_from_slice(b"Content-Length: 9\r\n\r\n");
        assert_eq!(headers(&long), vec![Ok(9)]);
    }

    #[test]
    fn what_passes() {
        assert!(is_message(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#).is_ok());
        assert!(is_message(br#"{"jsonrpc":"2.0","id":3,"result":null}"#).is_ok(), "a null result is a result");
        assert!(is_message(br#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}"#).is_ok());
        assert!(is_message(br#"{"jsonrpc":"2.0","id":3}"#).is_err());
        assert!(is_message(br#"{"jsonrpc":"1.0","method":"x"}"#).is_err());
        assert!(is_message(b"{not json").is_err());
        assert!(is_message(b"[1,2]").is_err());
    }
}
