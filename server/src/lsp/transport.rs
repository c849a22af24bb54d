//! A check in front of the framework's reader: tower-lsp-server's framed reader stops for good at the
//! first frame it cannot decode, which would end the session over one bad message. Frames are checked
//! here first; those that are not JSON-RPC messages are dropped and logged, and the rest pass through
//! byte for byte.

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

const MAX_HEADER_LINE: usize = 8 * 1024;

pub fn checked_input<R>(input: R, client: Client) -> DuplexStream
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let (server_side, mut feed) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let mut r = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            let mut length: Option<usize> = None;
            let mut bad_header = None;
            loop {
                line.clear();
                match (&mut r).take(MAX_HEADER_LINE as u64).read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if line == b"\r\n" || line == b"\n" {
                    break;
                }
                let text = String::from_utf8_lossy(&line);
                let (name, value) = text.split_once(':').unwrap_or((&text, ""));
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().ok();
                } else if !name.trim().eq_ignore_ascii_case("content-type") {
                    bad_header.get_or_insert_with(|| text.trim().to_string());
                }
            }
            let Some(n) = length else {
                let why = bad_header.unwrap_or_default();
                warn(&client, format!("Dropped input without a valid Content-Length header ({why})"));
                continue;
            };
            let mut body = vec![0; n];
            if r.read_exact(&mut body).await.is_err() {
                return;
            }
            match is_message(&body) {
                Ok(()) => {
                    let header = format!("Content-Length: {n}\r\n\r\n");
                    if feed.write_all(header.as_bytes()).await.is_err() || feed.write_all(&body).await.is_err() {
                        return;
                    }
                }
                Err(why) => warn(&client, format!("Dropped a message that is {why}")),
            }
        }
    });
    server_side
}

fn warn(client: &Client, message: String) {
    let client = client.clone();
    tokio::spawn(async move { super::log(&client, MessageType::WARNING, message).await });
}

#[cfg(test)]
mod tests {
    use super::is_message;

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
