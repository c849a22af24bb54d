//! What travels on a bridge socket: one request line from the caller, one answer line from the
//! server, then the connection is closed. Each line is one JSON object (serde_json never writes a raw
//! line break inside one) ending with `\n`.
//!
//! ```text
//! → {"token": "…", "plan": {…}, "intent": "apply", "agent": "Claude Code"}   intent: apply, preview or read
//! ← {"ok": true, "result": {…}}                      the result multiedit.apply / .preview / .read answers
//! ← {"ok": false, "refusal": {"kind", "message", …}}  the refusal multiedit.apply answers (its error data)
//! ← {"ok": false, "error": "…"}                       the request was not taken: wrong token, malformed, …
//! ```
//!
//! The server acts only on a complete line: a request cut short (the caller died, a write failed) is
//! never carried out.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

pub(crate) use super::routed::Intent;

/// The largest request the server reads: plans are text an agent wrote, far smaller than this.
pub(crate) const MAX_REQUEST: usize = 64 << 20;
/// The largest answer a caller reads (a preview carries a diff and the WorkspaceEdit).
pub(crate) const MAX_ANSWER: usize = 256 << 20;
/// How long the server waits for a whole request once a caller has connected.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a caller waits for the server to take the connection and the request.
pub(crate) const SEND_TIMEOUT: Duration = Duration::from_secs(30);
/// Added to the server's applyEdit timeout for validating the plan and carrying the answer.
pub(crate) const ANSWER_MARGIN: Duration = Duration::from_secs(30);
/// The longest a caller waits for an editor's answer, whatever that editor's applyEdit timeout: under
/// the minute MCP clients commonly give a tool call. The server bounds each step of an agent's plan
/// to answer within it (`lsp::commands::apply::AGENT_*`, `lsp::save::SAVE_BOUND`).
pub(crate) const AGENT_ANSWER: Duration = Duration::from_secs(55);
/// Requests a server serves at once; more are answered "busy" at once.
pub(crate) const MAX_CONNECTIONS: usize = 8;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Request {
    pub(crate) token: String,
    pub(crate) plan: Value,
    #[serde(default)]
    pub(crate) intent: Intent,
    /// Who sent the plan (the MCP client's name), for the edit's label in the editor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
    /// What the sender (`multiedit mcp`) lets agents do beyond the gate's default, by its user's flags.
    #[serde(default, skip_serializing_if = "crate::gate::Allow::is_none")]
    pub(crate) allow: crate::gate::Allow,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Answer {
    Result(Value),
    Refusal(Value),
    Error(String),
}

impl Answer {
    pub(crate) fn to_line(&self) -> Vec<u8> {
        let v = match self {
            Answer::Result(r) => json!({"ok": true, "result": r}),
            Answer::Refusal(r) => json!({"ok": false, "refusal": r}),
            Answer::Error(e) => json!({"ok": false, "error": e}),
        };
        line(&v)
    }

    pub(crate) fn from_line(line: &[u8]) -> Result<Answer, String> {
        let v: Value = serde_json::from_slice(line)
            .map_err(|e| format!("an answer that is not JSON ({e})"))?;
        match (
            v.get("ok").and_then(Value::as_bool),
            v.get("result"),
            v.get("refusal"),
            v.get("error"),
        ) {
            (Some(true), Some(r), None, None) => Ok(Answer::Result(r.clone())),
            (Some(false), None, Some(r), None) => Ok(Answer::Refusal(r.clone())),
            (Some(false), None, None, Some(Value::String(e))) => Ok(Answer::Error(e.clone())),
            _ => Err("an answer of an unknown shape".into()),
        }
    }
}

/// A JSON value as one line.
pub(crate) fn line(v: &impl Serialize) -> Vec<u8> {
    let mut out = serde_json::to_vec(v)
        .unwrap_or_else(|e| format!("{{\"ok\":false,\"error\":{:?}}}", e.to_string()).into_bytes());
    out.push(b'\n');
    out
}

/// Why a line could not be read whole.
#[derive(Debug)]
pub(crate) enum LineError {
    /// The connection failed under the read.
    Io(std::io::Error),
    /// More than `max` bytes before a line break.
    TooLong { max: usize },
    /// The end of input came before a line break.
    CutShort,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::Io(e) => write!(f, "{e}"),
            LineError::TooLong { max } => write!(f, "a line longer than {max} bytes"),
            LineError::CutShort => {
                f.write_str("a line cut short (no line break before the end of input)")
            }
        }
    }
}

/// Reads one line of at most `max` bytes. `Ok(None)` at the end of input before any byte. Memory
/// grows with the bytes that arrive, never with a claim.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
) -> Result<Option<Vec<u8>>, LineError> {
    let mut buf = Vec::new();
    let n = r
        .take(max as u64 + 1)
        .read_until(b'\n', &mut buf)
        .await
        .map_err(LineError::Io)?;
    if n == 0 {
        Ok(None)
    } else if buf.last() != Some(&b'\n') {
        Err(if buf.len() > max {
            LineError::TooLong { max }
        } else {
            LineError::CutShort
        })
    } else {
        buf.pop();
        Ok(Some(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &[u8], max: usize) -> Result<Option<Vec<u8>>, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(read_line(&mut tokio::io::BufReader::new(input), max))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn lines_are_bounded_and_whole() {
        assert_eq!(read(b"{}\nmore", 10), Ok(Some(b"{}".to_vec())));
        assert_eq!(read(b"", 10), Ok(None));
        assert!(read(b"{}", 10).unwrap_err().contains("cut short"));
        assert!(read(b"0123456789ab\n", 10)
            .unwrap_err()
            .contains("longer than 10"));
        assert_eq!(read(b"0123456789\n", 10), Ok(Some(b"0123456789".to_vec())));
    }

    #[test]
    fn answers_round_trip() {
        for a in [
            Answer::Result(json!({"ok": true})),
            Answer::Refusal(json!({"kind": "io"})),
            Answer::Error("x\ny".into()),
        ] {
            let l = a.to_line();
            assert_eq!(l.iter().filter(|&&b| b == b'\n').count(), 1);
            assert_eq!(Answer::from_line(&l[..l.len() - 1]), Ok(a));
        }
        assert!(Answer::from_line(br#"{"ok": true}"#).is_err());
    }
}
