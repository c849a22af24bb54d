//! The server's side of the bridge (`crate::bridge`): a Unix domain socket on which programs outside
//! the editor hand over plans, and the registry entry that lets them find it.
//!
//! This side only takes plans in: a plan whose caller proved the token is handed over as a `Handoff`
//! on a channel, with a one-shot channel for its answer. The server's side of that channel
//! (`server::run_handoffs`) runs it as the editor's own `multiedit.apply` or `multiedit.preview` once
//! every message the editor had sent when it arrived has been taken in (`sync::Arrivals`), so a plan
//! is validated against the open buffers, confined to the workspace and sent to the editor as one
//! versioned WorkspaceEdit exactly as the editor's command would be. Only the caller differs.

#[cfg(unix)]
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::Client;

use super::config::Config;
use crate::bridge::wire::Answer;
use crate::bridge::Intent;

#[cfg(unix)]
pub(crate) use unix::Running;

/// A plan from outside the editor, for the server to run as the editor's own command.
pub(crate) struct Handoff {
    pub(crate) intent: Intent,
    /// The command's arguments: the plan, and the sender's name as the `agent` option.
    pub(crate) arguments: Vec<Value>,
    /// What the sender's server lets agents do (its `--allow-*` flags), for the gate.
    pub(crate) allow: crate::gate::Allow,
    /// Who sent it, for the log ("process 1234").
    pub(crate) peer: String,
    pub(crate) reply: oneshot::Sender<Answer>,
}

/// Where handed-over plans go; `server::run_handoffs` takes them.
pub(crate) type Handoffs = mpsc::Sender<Handoff>;

/// The bridge of one server: off until `start`, off again after `stop`.
pub(crate) struct Host {
    #[cfg_attr(not(unix), allow(dead_code))]
    handoffs: Handoffs,
    #[cfg(unix)]
    running: Mutex<Option<Running>>,
}

impl Host {
    pub(crate) fn new(handoffs: Handoffs) -> Host {
        Host {
            handoffs,
            #[cfg(unix)]
            running: Mutex::default(),
        }
    }

    /// Starts listening (after `initialized`). `Ok` and `Err` are lines for the log: where it listens,
    /// or why it does not.
    pub(crate) fn start(&self, config: &Config, client: &Client) -> Result<String, String> {
        if !config.bridge {
            return Err("bridge off: the initialization option bridge is false".into());
        }
        if !config.apply_edit {
            return Err(
                "bridge off: the editor cannot apply workspace edits (no workspace.applyEdit)"
                    .into(),
            );
        }
        #[cfg(unix)]
        {
            let running = Running::start(config, self.handoffs.clone(), client.clone())?;
            let said = format!("bridge on: listening at {}", running.socket().display());
            *self.lock() = Some(running);
            Ok(said)
        }
        #[cfg(not(unix))]
        {
            let _ = client;
            Err(format!("bridge off: {}", crate::bridge::UNSUPPORTED))
        }
    }

    #[cfg(unix)]
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The editor did something (opened, changed or saved a document, ran a command): the entry's
    /// last-active time follows, rewritten at most once a second.
    pub(crate) fn touch(&self) {
        #[cfg(unix)]
        if let Some(r) = self.lock().as_mut() {
            r.touch();
        }
    }

    /// The workspace folders changed: the entry follows.
    pub(crate) fn refresh(&self, config: &Config) {
        #[cfg(unix)]
        if let Some(r) = self.lock().as_mut() {
            r.refresh(config);
        }
        #[cfg(not(unix))]
        let _ = config;
    }

    /// Stops listening and removes the socket and the entry (at shutdown, exit or end of input).
    pub(crate) fn stop(&self) {
        #[cfg(unix)]
        drop(self.lock().take());
    }
}

#[cfg(unix)]
mod unix {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use tokio::io::{AsyncWriteExt, BufReader};
    use tokio::net::{UnixListener, UnixStream};
    use tokio::sync::{oneshot, Semaphore};
    use tokio::task::JoinHandle;
    use tokio::time::timeout;
    use tower_lsp_server::ls_types::MessageType;
    use tower_lsp_server::Client;

    use super::{Handoff, Handoffs};
    use crate::bridge::registry::{self, Entry};
    use crate::bridge::wire::{self, Answer, Request};
    use crate::lsp::config::Config;
    use crate::lsp::logging::log;
    use crate::refusal::{Kind, Refusal};

    /// How often at most the entry is rewritten for activity.
    const TOUCH_EVERY: Duration = Duration::from_secs(1);

    pub(crate) struct Running {
        dir: PathBuf,
        entry: Entry,
        written: Instant,
        accept: Option<JoinHandle<()>>,
    }

    fn folders(config: &Config) -> Vec<PathBuf> {
        config.workspace.folders().to_vec()
    }

    impl Running {
        pub(crate) fn start(
            config: &Config,
            handoffs: Handoffs,
            client: Client,
        ) -> Result<Running, String> {
            let dir = registry::ensure_folder().map_err(|why| format!("bridge off: {why}"))?;
            // Entries of servers that died without removing theirs.
            let _ = registry::scan(&dir);
            let pid = std::process::id();
            let socket = registry::socket_path(&dir, pid);
            // Only a dead process with our pid can have left it.
            let _ = std::fs::remove_file(&socket);
            let listener = UnixListener::bind(&socket)
                .map_err(|e| format!("bridge off: cannot listen at {} ({e})", socket.display()))?;
            let entry = Entry {
                pid,
                editor: config
                    .client_name
                    .clone()
                    .unwrap_or_else(|| "an unnamed editor".into()),
                folders: folders(config),
                socket: socket.clone(),
                token: String::new(),
                last_active_ms: registry::now_ms(),
                apply_edit_timeout_ms: config.apply_edit_timeout.as_millis() as u64,
            };
            // From here on a failure must take the socket away again: `Running` does on drop.
            let mut running = Running {
                dir,
                entry,
                written: Instant::now(),
                accept: None,
            };
            registry::make_private(&socket).map_err(|e| {
                format!("bridge off: cannot make {} private ({e})", socket.display())
            })?;
            running.entry.token =
                registry::new_token().map_err(|why| format!("bridge off: {why}"))?;
            registry::write(&running.dir, &running.entry).map_err(|e| {
                format!(
                    "bridge off: cannot write the registry entry in {} ({e})",
                    running.dir.display()
                )
            })?;
            running.accept = Some(tokio::spawn(accept(
                listener,
                running.entry.token.clone(),
                handoffs,
                client,
            )));
            Ok(running)
        }

        pub(crate) fn socket(&self) -> &Path {
            &self.entry.socket
        }

        fn write(&mut self) {
            self.written = Instant::now();
            if let Err(e) = registry::write(&self.dir, &self.entry) {
                eprintln!(
                    "multiedit lsp: cannot update the bridge entry in {} ({e})",
                    self.dir.display()
                );
            }
        }

        pub(crate) fn touch(&mut self) {
            if self.written.elapsed() >= TOUCH_EVERY {
                self.entry.last_active_ms = registry::now_ms();
                self.write();
            }
        }

        pub(crate) fn refresh(&mut self, config: &Config) {
            self.entry.folders = folders(config);
            self.write();
        }
    }

    impl Drop for Running {
        fn drop(&mut self) {
            if let Some(task) = &self.accept {
                task.abort();
            }
            registry::remove(&self.dir, self.entry.pid);
        }
    }

    async fn accept(listener: UnixListener, token: String, handoffs: Handoffs, client: Client) {
        let token: Arc<str> = token.into();
        let slots = Arc::new(Semaphore::new(wire::MAX_CONNECTIONS));
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    eprintln!("multiedit lsp: bridge: accept failed ({e})");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let (token, handoffs, client) = (token.clone(), handoffs.clone(), client.clone());
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                // A refusal of kind busy, which the caller must not take for "no editor": this
                // editor holds the files and may have unsaved changes in them.
                let refusal = Refusal::new(
                    Kind::Busy,
                    format!(
                        "The editor's server is busy with {} plans from outside the editor. Nothing was changed, in \
                         the editor or on disk. Try again in a moment.",
                        wire::MAX_CONNECTIONS
                    ),
                );
                let busy = Answer::Refusal(serde_json::to_value(&refusal).unwrap_or_default());
                tokio::spawn(async move { answer(stream, &busy).await });
                continue;
            };
            tokio::spawn(async move {
                serve(stream, &token, &handoffs, &client).await;
                drop(slot);
            });
        }
    }

    async fn answer(mut stream: UnixStream, answer: &Answer) {
        let _ = timeout(wire::SEND_TIMEOUT, stream.write_all(&answer.to_line())).await;
    }

    /// Serves one connection: reads the request, runs it, writes the answer.
    async fn serve(mut stream: UnixStream, token: &str, handoffs: &Handoffs, client: &Client) {
        let peer = stream
            .peer_cred()
            .ok()
            .and_then(|c| c.pid())
            .map(|p| format!("process {p}"));
        let peer = peer.unwrap_or_else(|| "a process".into());
        let mut reader = BufReader::new(&mut stream);
        let reply = match timeout(
            wire::REQUEST_TIMEOUT,
            wire::read_line(&mut reader, wire::MAX_REQUEST),
        )
        .await
        {
            Err(_) => Answer::Error(format!(
                "no whole request within {} s",
                wire::REQUEST_TIMEOUT.as_secs()
            )),
            // Gone before saying anything: nobody to answer.
            Ok(Err(wire::LineError::Io(_))) | Ok(Ok(None)) => return,
            Ok(Err(why)) => Answer::Error(format!("malformed request: {why}")),
            Ok(Ok(Some(line))) => handle(&line, token, handoffs, client, peer).await,
        };
        answer(stream, &reply).await;
    }

    pub(super) async fn handle(
        line: &[u8],
        token: &str,
        handoffs: &Handoffs,
        client: &Client,
        peer: String,
    ) -> Answer {
        let request: Request = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => {
                return Answer::Error(format!(
                    "malformed request ({e}): expected one line {{\"token\": string, \"plan\": object, \"intent\": \"apply\", \"preview\" or \"read\", \"agent\"?: string}}"
                ))
            }
        };
        if !registry::same_token(&request.token, token) {
            let said = format!("bridge: refused a plan from {peer}: wrong token");
            log(client, MessageType::WARNING, &said).await;
            return Answer::Error("wrong token".into());
        }
        // The sender's name travels as the command's `agent` option, as an editor's own caller would give it.
        let arguments = match request.agent {
            Some(agent) => vec![request.plan, serde_json::json!({"agent": agent})],
            None => vec![request.plan],
        };
        let (reply, answer) = oneshot::channel();
        let handoff = Handoff {
            intent: request.intent,
            arguments,
            allow: request.allow,
            peer,
            reply,
        };
        // Either end gone: the server is stopping and will run no more plans.
        let gone = || Answer::Error("the editor's server is shutting down".into());
        if handoffs.send(handoff).await.is_err() {
            return gone();
        }
        answer.await.unwrap_or_else(|_| gone())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use serde_json::json;
    use tokio::sync::mpsc;
    use tower_lsp_server::jsonrpc::Result;
    use tower_lsp_server::ls_types::{InitializeParams, InitializeResult};
    use tower_lsp_server::{Client, LanguageServer, LspService};

    use super::unix::handle;
    use crate::bridge::wire::Answer;
    use crate::bridge::Intent;

    struct Idle(Client);

    impl LanguageServer for Idle {
        async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
            Ok(InitializeResult::default())
        }
        async fn shutdown(&self) -> Result<()> {
            Ok(())
        }
    }

    fn client() -> Client {
        let (service, _socket) = LspService::new(Idle);
        service.inner().0.clone()
    }

    #[tokio::test]
    async fn a_plan_is_handed_over_with_its_sender_and_its_answer_comes_back() {
        let (handoffs, mut handed) = mpsc::channel(1);
        let line = json!({"token": "t", "plan": {"file_path": "/w/a.txt"}, "intent": "preview", "agent": "Claude Code"}).to_string();
        let client = client();
        let serving = tokio::spawn(async move {
            handle(line.as_bytes(), "t", &handoffs, &client, "process 7".into()).await
        });
        let handoff = handed.recv().await.expect("handed over");
        assert_eq!(handoff.intent, Intent::Preview);
        assert_eq!(
            handoff.arguments,
            vec![
                json!({"file_path": "/w/a.txt"}),
                json!({"agent": "Claude Code"})
            ]
        );
        assert_eq!(handoff.peer, "process 7");
        handoff
            .reply
            .send(Answer::Result(json!({"ok": true})))
            .unwrap();
        assert_eq!(serving.await.unwrap(), Answer::Result(json!({"ok": true})));
    }

    #[tokio::test]
    async fn a_server_that_stops_answers_rather_than_leaving_the_caller_waiting() {
        let line = json!({"token": "t", "plan": {}}).to_string();
        let gone = Answer::Error("the editor's server is shutting down".into());
        // Nobody takes plans any more.
        let (handoffs, handed) = mpsc::channel(1);
        drop(handed);
        assert_eq!(
            handle(line.as_bytes(), "t", &handoffs, &client(), "p".into()).await,
            gone
        );
        // Taken, then dropped unanswered (the server stopped while running it).
        let (handoffs, mut handed) = mpsc::channel(1);
        let dropper = tokio::spawn(async move { drop(handed.recv().await) });
        assert_eq!(
            handle(line.as_bytes(), "t", &handoffs, &client(), "p".into()).await,
            gone
        );
        dropper.await.unwrap();
    }
}
