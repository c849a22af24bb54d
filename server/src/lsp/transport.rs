//! A check in front of the framework's reader: tower-lsp-server's framed reader stops for good at the
//! first frame it cannot decode, which would end the session over one bad message. Frames are checked
//! here first; those that are not JSON-RPC messages are dropped and logged, and the rest pass through
//! byte for byte.

use serde::de::IgnoredAny;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tower_lsp_server::ls_types::MessageType;
use tower_lsp_server::Client;

/// What a frame must look like for the framework to accept it; the params are skipped, not built.
#[derive(Deserialize)]
struct Probe {
    jsonrpc: String,
    method: Option<IgnoredAny>,
    id: Option<IgnoredAny>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

fn is_message(body: &[u8]) -> Result<(), String> {
    let p: Probe = serde_json::from_slice(body).map_err(|e| format!("not a JSON-RPC message ({e})"))?;
    if p.jsonrpc != "2.0" {
        return Err(format!("jsonrpc is {:?}, not \"2.0\"", p.jsonrpc));
    }
    if p.method.is_some() || (p.id.is_some() && (p.result.is_some() || p.error.is_some())) {
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
