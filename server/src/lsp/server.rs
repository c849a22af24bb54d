//! The `LanguageServer` implementation (capabilities, lifecycle, commands, workspace folders), and
//! `run_handoffs`, which runs the plans the bridge hands over. Document notifications never reach
//! `Backend` (see `sync.rs`); the table in `mod.rs` says where each message is handled.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    DidChangeWorkspaceFoldersParams, ExecuteCommandParams, InitializeParams, InitializeResult,
    InitializedParams, MessageType,
};
use tower_lsp_server::{Client, LanguageServer};

use super::bridge::{Handoff, Host};
use super::commands::{self, Failure, Origin};
use super::logging::log;
use super::session::Session;
use super::sync::Arrivals;
use super::{capabilities, notifications};
use crate::bridge::wire::Answer;

pub(crate) struct Backend {
    client: Client,
    session: Arc<Session>,
    bridge: Arc<Host>,
}

impl Backend {
    pub(crate) fn new(client: Client, session: Arc<Session>, bridge: Arc<Host>) -> Self {
        Backend {
            client,
            session,
            bridge,
        }
    }

    pub(crate) fn client(&self) -> Client {
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
        log(
            &self.client,
            MessageType::INFO,
            format!(
                "multiedit {} ready: positions in {}, workspace folders [{}], applyEdit {}, edit timeout {} ms",
                env!("CARGO_PKG_VERSION"),
                config.encoding.as_str(),
                config.workspace.listed(),
                if config.apply_edit { "supported" } else { "NOT supported (multiedit.apply will refuse)" },
                config.apply_edit_timeout.as_millis()
            ),
        )
        .await;
        match self.bridge.start(&config, &self.client) {
            Ok(said) => log(&self.client, MessageType::INFO, said).await,
            Err(said) if !config.bridge => log(&self.client, MessageType::INFO, said).await,
            Err(said) => log(&self.client, MessageType::WARNING, said).await,
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.session.mark_shutdown();
        self.bridge.stop();
        Ok(())
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let Some(intent) = commands::intent(&params.command) else {
            return Err(Error::invalid_params(format!(
                "Unknown command {:?}: this server provides {}",
                params.command,
                commands::ALL.join(", ")
            )));
        };
        self.bridge.touch();
        let caller = commands::editor_caller(&params.arguments);
        commands::run(
            &self.session,
            &self.client,
            intent,
            Origin::Editor,
            caller.as_deref(),
            &params.arguments,
        )
        .await
        .map(Some)
        .map_err(Failure::into_rpc)
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let warnings = notifications::did_change_workspace_folders::run(&self.session, &params);
        self.bridge.refresh(&self.session.config());
        for w in warnings {
            log(&self.client, MessageType::WARNING, w).await;
        }
    }
}

/// Runs each plan the bridge hands over as the editor's own command, once every message the editor
/// had sent when it arrived has been taken in (`Arrivals`), and answers it. Plans run side by side,
/// as the editor's commands do (applies then take turns on `Session::plans`); this ends when the
/// bridge is gone.
pub(crate) async fn run_handoffs(
    mut handoffs: mpsc::Receiver<Handoff>,
    session: Arc<Session>,
    arrivals: Arc<Arrivals>,
    client: Client,
) {
    while let Some(handoff) = handoffs.recv().await {
        let (session, arrivals, client) = (session.clone(), arrivals.clone(), client.clone());
        tokio::spawn(async move {
            let Handoff {
                intent,
                arguments,
                allow,
                peer,
                reply,
            } = handoff;
            // In line behind what the editor had sent when the plan arrived, like a command arriving now.
            arrivals.wait_turn().await;
            let outcome = commands::run(
                &session,
                &client,
                intent,
                Origin::Bridge(allow),
                Some(&format!("bridge:{peer}")),
                &arguments,
            )
            .await;
            let command = commands::command(intent);
            let (said, answer) = match outcome {
                Ok(result) => ("done".to_string(), Answer::Result(result)),
                Err(Failure::Refused(r)) => (
                    format!("refused ({})", r.kind.as_str()),
                    Answer::Refusal(serde_json::to_value(&r).unwrap_or_default()),
                ),
                Err(Failure::Internal(message)) => (message.clone(), Answer::Error(message)),
            };
            log(
                &client,
                MessageType::INFO,
                format!("bridge: {command} from {peer}: {said}"),
            )
            .await;
            let _ = reply.send(answer);
        });
    }
}
