//! The server's log: `window/logMessage` to the editor, with a level, filtered by `--log-level`.
//!
//! The editor shows each message at its level (VS Code's output channel prints `[info]`, `[warning]`,
//! ...). Standard error is kept for what really is an error and cannot reach the editor (a bad
//! argument, a runtime that cannot start, a panic): client libraries show everything written there
//! as an error (vscode-languageclient prints each stderr line as `[error]`), so no log line goes there,
//! and an error logged here is not printed twice.

use std::fmt::Display;
use std::sync::atomic::{AtomicU8, Ordering};

use tower_lsp_server::ls_types::MessageType;
use tower_lsp_server::Client;

/// The most detailed level logged, as `MessageType`'s number: 1 error, 2 warning, 3 info, 4 debug
/// (`MessageType::LOG`). Default: debug, i.e. everything goes to the editor, whose log view filters by
/// its own level setting; `--log-level` keeps the rest off the wire.
static MAX_LEVEL: AtomicU8 = AtomicU8::new(4);

pub(crate) fn set_max_level(level: u8) {
    MAX_LEVEL.store(level.clamp(1, 4), Ordering::Relaxed);
}

fn rank(typ: MessageType) -> u8 {
    match typ {
        MessageType::ERROR => 1,
        MessageType::WARNING => 2,
        MessageType::INFO => 3,
        _ => 4,
    }
}

/// Whether a message of this type passes the level set with `--log-level`.
pub(crate) fn enabled(typ: MessageType) -> bool {
    rank(typ) <= MAX_LEVEL.load(Ordering::Relaxed)
}

/// Logs to the editor (`window/logMessage` with the message's level). stdout carries nothing but
/// the protocol, stderr nothing but failures that cannot reach the editor.
pub(crate) async fn log(client: &Client, typ: MessageType, message: impl Display) {
    if enabled(typ) {
        client.log_message(typ, message.to_string()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_filter_by_rank() {
        // One test touches the global level, so that parallel tests do not race on it.
        set_max_level(2);
        assert!(enabled(MessageType::ERROR) && enabled(MessageType::WARNING));
        assert!(!enabled(MessageType::INFO) && !enabled(MessageType::LOG));
        set_max_level(4);
        assert!(enabled(MessageType::LOG));
        set_max_level(3);
        assert!(enabled(MessageType::INFO) && !enabled(MessageType::LOG));
        set_max_level(4);
    }
}
