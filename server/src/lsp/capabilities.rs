//! What the server tells the client in answer to `initialize`, and the names of the commands it
//! advertises there.

use tower_lsp_server::ls_types::{
    ExecuteCommandOptions, InitializeResult, OneOf, PositionEncodingKind, ServerCapabilities,
    ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, WorkspaceFoldersServerCapabilities, WorkspaceServerCapabilities,
};

use super::config::Config;
use super::convert::Encoding;

pub const APPLY: &str = "multiedit.apply";
pub(crate) const PREVIEW: &str = "multiedit.preview";
pub(crate) const READ: &str = "multiedit.read";
pub(crate) const SYMBOLS: &str = "multiedit.symbols";
pub(crate) const ALL: &[&str] = &[APPLY, PREVIEW, READ, SYMBOLS];

pub(crate) fn initialize_result(config: &Config) -> InitializeResult {
    // Always stated, even for UTF-16: it is the answer to the client's offer.
    let encoding = match config.encoding {
        Encoding::Utf8 => PositionEncodingKind::UTF8,
        Encoding::Utf16 => PositionEncodingKind::UTF16,
    };
    InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(encoding),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    // Saves tell the bridge which editor the user works in; their text is not needed.
                    save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: ALL.iter().map(|c| c.to_string()).collect(),
                ..ExecuteCommandOptions::default()
            }),
            workspace: Some(WorkspaceServerCapabilities {
                workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                    supported: Some(true),
                    change_notifications: Some(OneOf::Left(true)),
                }),
                file_operations: None,
            }),
            ..ServerCapabilities::default()
        },
        server_info: Some(ServerInfo {
            name: "multiedit".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        offset_encoding: None,
    }
}
