//! The `LanguageServer` implementation: capabilities, lifecycle, commands, workspace folders.
//! Document notifications never reach it (see `sync.rs`).

use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    DidChangeWorkspaceFoldersParams, ExecuteCommandOptions, ExecuteCommandParams, InitializeParams,
    InitializeResult, InitializedParams, MessageType, OneOf, PositionEncodingKind, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, WorkspaceFoldersServerCapabilities,
    WorkspaceServerCapabilities,
};
use tower_lsp_server::{Client, LanguageServer};

use super::commands::{self, APPLY, PREVIEW};
use super::convert::Encoding;
use super::log;
use super::session::Session;

pub struct Backend {
    client: Client,
    session: Arc<Session>,
}

impl Backend {
    pub fn new(client: Client, session: Arc<Session>) -> Self {
        Backend { client, session }
    }

    pub fn client(&self) -> Client {
        self.client.clone()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        // The params were already read, from the raw JSON, by `DocSync`.
        let config = self.session.config();
        let encoding = match config.encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        };
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..TextDocumentSyncOptions::default()
                })),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
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
            server_info: Some(ServerInfo { name: "multiedit".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let config = self.session.config();
        for warning in self.session.take_warnings() {
            log(&self.client, MessageType::WARNING, warning).await;
        }
        let folders: Vec<String> = config.workspace.folders().iter().map(|f| f.display().to_string()).collect();
        log(
            &self.client,
            MessageType::INFO,
            format!(
                "multiedit {} ready: positions in {}, workspace folders [{}], applyEdit {}, edit timeout {} ms",
                env!("CARGO_PKG_VERSION"),
                config.encoding.as_str(),
                folders.join(", "),
                if config.apply_edit { "supported" } else { "NOT supported (multiedit.apply will refuse)" },
                config.apply_edit_timeout.as_millis()
            ),
        )
        .await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.session.mark_shutdown();
        Ok(())
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        match params.command.as_str() {
            APPLY => commands::apply::run(&self.session, &self.client, &params.arguments).await,
            PREVIEW => commands::preview::run(&self.session, &params.arguments),
            other => Err(Error::invalid_params(format!(
                "Unknown command {other:?}: this server provides {}",
                commands::ALL.join(" and ")
            ))),
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let mut warnings = Vec::new();
        self.session.update_config(|c| {
            for f in &params.event.removed {
                c.workspace.remove(f.uri.as_str());
            }
            for f in &params.event.added {
                if let Err(w) = c.workspace.add(f.uri.as_str()) {
                    warnings.push(w);
                }
            }
        });
        for w in warnings {
            log(&self.client, MessageType::WARNING, w).await;
        }
    }
}
