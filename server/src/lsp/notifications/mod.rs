//! Notifications, one file each. didOpen, didChange and didClose are applied to the document store
//! the moment they arrive (see `sync.rs` for why they do not go through the framework's handlers).

mod did_change;
pub(crate) mod did_change_workspace_folders;
mod did_close;
mod did_open;

use serde::Deserialize;
use serde_json::Value;

use super::session::Session;

pub const DID_OPEN: &str = "textDocument/didOpen";
pub const DID_CHANGE: &str = "textDocument/didChange";
pub(crate) const DID_CLOSE: &str = "textDocument/didClose";
pub(crate) const DID_SAVE: &str = "textDocument/didSave";

pub(crate) fn is_document_sync(method: &str) -> bool {
    matches!(method, DID_OPEN | DID_CHANGE | DID_CLOSE)
}

fn params<'a, T: Deserialize<'a>>(method: &str, params: Option<&'a Value>) -> Result<T, String> {
    let value = params.ok_or_else(|| format!("Ignoring {method} without params"))?;
    T::deserialize(value).map_err(|e| format!("Ignoring a malformed {method}: {e}"))
}

/// Applies one document notification. An `Err` is a warning for the log: the notification was ignored.
pub fn handle(session: &Session, method: &str, raw: Option<&Value>) -> Result<(), String> {
    match method {
        DID_OPEN => did_open::run(session, params(method, raw)?),
        DID_CHANGE => did_change::run(session, params(method, raw)?),
        DID_CLOSE => did_close::run(session, params(method, raw)?),
        _ => Ok(()),
    }
}
