//! didOpen, didChange and didClose, applied to the document store the moment they arrive (see
//! `sync.rs` for why they do not go through the framework's handlers).

use serde::Deserialize;
use serde_json::Value;
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
};

use super::session::Session;

pub const DID_OPEN: &str = "textDocument/didOpen";
pub const DID_CHANGE: &str = "textDocument/didChange";
pub const DID_CLOSE: &str = "textDocument/didClose";

pub fn is_document_sync(method: &str) -> bool {
    matches!(method, DID_OPEN | DID_CHANGE | DID_CLOSE)
}

fn params<'a, T: Deserialize<'a>>(method: &str, params: Option<&'a Value>) -> Result<T, String> {
    let value = params.ok_or_else(|| format!("Ignoring {method} without params"))?;
    T::deserialize(value).map_err(|e| format!("Ignoring a malformed {method}: {e}"))
}

/// Applies one document notification. An `Err` is a warning for the log: the notification was ignored.
pub fn handle(session: &Session, method: &str, raw: Option<&Value>) -> Result<(), String> {
    match method {
        DID_OPEN => {
            let p: DidOpenTextDocumentParams = params(method, raw)?;
            let d = p.text_document;
            session.documents.open(d.uri.as_str(), &d.text, d.version);
            Ok(())
        }
        DID_CHANGE => {
            let p: DidChangeTextDocumentParams = params(method, raw)?;
            let d = p.text_document;
            if session.documents.change(d.uri.as_str(), d.version, &p.content_changes, session.encoding()) {
                Ok(())
            } else {
                Err(format!("Ignoring {method} for {}, which is not open", d.uri.as_str()))
            }
        }
        DID_CLOSE => {
            let p: DidCloseTextDocumentParams = params(method, raw)?;
            if session.documents.close(p.text_document.uri.as_str()) {
                Ok(())
            } else {
                Err(format!("Ignoring {method} for {}, which is not open", p.text_document.uri.as_str()))
            }
        }
        _ => Ok(()),
    }
}
