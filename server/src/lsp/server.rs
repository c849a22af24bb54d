//! The `LanguageServer` implementation: capabilities, lifecycle, commands, workspace folders.
//! Document notifications never reach it (see `sync.rs`).

use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    DidChangeWorkspaceFoldersParams, ExecuteCommandParams, InitializeParams, InitializeResult, InitializedParams,
    MessageType,
};
use tower_lsp_server::{Client, LanguageServer};

use super::commands::{self, Failure, APPLY, PREVIEW};
use super::{capabilities, log, notifications};
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
        Ok(capabilities::initialize_result(&self.session.config()))
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
        match self.session.bridge.start(&self.session, &self.client) {
            Ok(said) => log(&self.client, MessageType::INFO, said).await,
            Err(said) if !config.bridge => log(&self.client, MessageType::INFO, said).await,
            Err(said) => log(&self.client, MessageType::WARNING, said).await,
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.session.mark_shutdown();
        self.session.bridge.stop();
        Ok(())
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let preview = match params.command.as_str() {
            APPLY => false,
            PREVIEW => true,
            other => {
                return Err(Error::invalid_params(format!(
                    "Unknown command {other:?}: this server provides {}",
                    commands::ALL.join(" and ")
                )))
            }
        };
        self.session.bridge.touch();
        commands::run(&self.session, &self.client, preview, &params.arguments).await.map(Some).map_err(Failure::into_rpc)
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let warnings = notifications::did_change_workspace_folders::run(&self.session, &params);
        self.session.bridge.refresh(&self.session.config());
        for w in warnings {
            log(&self.client, MessageType::WARNING, w).await;
        }
    }
}
