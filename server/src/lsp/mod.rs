//! The language server, `multiedit lsp`: open documents kept as ropes, plans validated against what
//! the user sees and handed to the editor as one WorkspaceEdit. The protocol is described in
//! docs/protocol.md.
//!
//! Where each message is handled (and in what order: `sync.rs`):
//!
//! | message | handled in |
//! |---|---|
//! | every frame on stdin | `transport.rs` checks it is a JSON-RPC message, then passes it on byte for byte |
//! | `initialize` | `sync.rs` reads the params into `config.rs`'s `Config`; `server.rs` answers with `capabilities.rs` |
//! | `initialized` | `server.rs`: logs the warnings and the config, starts the bridge (`bridge.rs`) |
//! | `textDocument/didOpen`, `didChange`, `didClose` | `sync.rs` applies them in `call`, in wire order, through `notifications/` to `documents.rs` |
//! | `textDocument/didSave` | `sync.rs`: only marks the editor active for the bridge |
//! | `workspace/didChangeWorkspaceFolders` | `server.rs`, through `notifications/did_change_workspace_folders.rs` (`workspace.rs`) |
//! | `workspace/executeCommand` `multiedit.apply` | `server.rs` → `commands/apply.rs` (`prepare.rs`, `now_reads.rs`, `diagnostics.rs`) |
//! | `workspace/executeCommand` `multiedit.preview` | `server.rs` → `commands/preview.rs` (`prepare.rs`) |
//! | `workspace/executeCommand` whose `arguments` is not an array | `sync.rs` refuses it (`commands::arguments_shape_error`) |
//! | `$/` requests | `sync.rs` answers MethodNotFound |
//! | `multiedit/bridgeArrived` (the server's own marker) | `sync.rs` (`Arrivals`) |
//! | `shutdown` | `server.rs` marks it and stops the bridge |
//! | `exit` | the framework ends `serve` below, which stops the bridge |
//! | the end of input (the client exited) | `serve` ends as after `exit`; a request that keeps the runtime busy past `CLIENT_GONE` is abandoned: `run`'s input thread (`process::stdin_on_thread`) stops the bridge and exits |
//! | a plan on the bridge's socket | `bridge.rs` checks the token and hands it over; `server::run_handoffs` runs it with `commands::run` |
//! | the server's requests to the client (`workspace/applyEdit`, `multiedit/diagnostics`) | sent by `commands/apply.rs` and `diagnostics.rs` |
//!
//! Who imports whom, so that no module imports its caller: `session.rs` is plain state (the
//! `documents.rs` store, `config.rs`, the plans' turn) and imports only what it holds; `convert.rs`,
//! `workspace.rs`, `logging.rs`, `now_reads.rs` and `diagnostics.rs` know nothing of the session or the commands;
//! `prepare.rs` reads the session; `commands/` use `prepare.rs` and `diagnostics.rs`; `bridge.rs`
//! knows neither the session nor the commands (it hands plans over a channel); `sync.rs`, `server.rs`
//! and `serve` below wire them together.

pub(crate) mod bridge;
pub(crate) mod capabilities;
pub mod commands;
pub mod config;
pub mod convert;
pub(crate) mod diagnostics;
pub(crate) mod documents;
/// The wire types, `protocol::ext` (kept under this name for the paths that name it).
pub use crate::protocol::ext;
pub(crate) mod logging;
pub mod notifications;
pub(crate) mod now_reads;
pub mod prepare;
pub(crate) mod request;
pub(crate) mod save;
pub(crate) mod server;
pub mod session;
pub mod symbols;
pub(crate) mod sync;
pub(crate) mod transport;
#[cfg(test)]
mod typescript;
pub(crate) mod workspace;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tower_lsp_server::{LspService, Server};

use bridge::Host;
use server::Backend;
use session::Session;
use sync::{Arrivals, DocSync};

/// Runs the server on standard input/output. `log_level`: `--log-level`, as `MessageType`'s number.
pub(crate) fn run(log_level: Option<u8>) -> ExitCode {
    if let Some(level) = log_level {
        logging::set_max_level(level);
    }
    // The bridge of the server, for `gone` to take down with the process.
    let bridge: Arc<Mutex<Option<Arc<Host>>>> = Arc::default();
    let held = bridge.clone();
    let gone = move || {
        if let Some(bridge) = held.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bridge.stop();
        }
        crate::process::err("multiedit lsp: the client closed its input (it has exited) while a request was still being worked on; stopped\n");
        std::process::exit(1);
    };
    let served = crate::process::block_on("multiedit lsp", || async {
        let output = tokio::io::stdout();
        match crate::process::stdin_on_thread(CLIENT_GONE, gone) {
            Some(input) => serve_with(input, output, Some(bridge)).await,
            None => serve_with(tokio::io::stdin(), output, Some(bridge)).await,
        }
    });
    let Some(clean) = served else {
        return ExitCode::from(2);
    };
    // The protocol asks for 0 after shutdown then exit, 1 for an exit without shutdown.
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// How long the server may go on once its client closed its input (the client has exited): the
/// time to finish as usual when idle; a request still being worked on past it (a long synchronous
/// step keeps the runtime from seeing the end) is abandoned, and the process exits
/// (`process::stdin_on_thread`).
const CLIENT_GONE: std::time::Duration = std::time::Duration::from_secs(1);

/// Serves one connection until `exit` or end of input. Returns whether `shutdown` came first.
pub async fn serve<I, O>(input: I, output: O) -> bool
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite,
{
    serve_with(input, output, None).await
}

/// `serve`, handing its bridge to `bridge_out` (for the process to stop it if it must exit at once).
async fn serve_with<I, O>(
    input: I,
    output: O,
    bridge_out: Option<Arc<Mutex<Option<Arc<Host>>>>>,
) -> bool
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite,
{
    let session = Arc::new(Session::default());
    let (handoffs, handed) = mpsc::channel(crate::bridge::wire::MAX_CONNECTIONS);
    let bridge = Arc::new(Host::new(handoffs));
    if let Some(out) = bridge_out {
        *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(bridge.clone());
    }
    let (backend_session, backend_bridge) = (session.clone(), bridge.clone());
    let (service, socket) =
        LspService::new(move |client| Backend::new(client, backend_session, backend_bridge));
    let client = service.inner().client();
    let (input, feed) = transport::checked_input(input, client.clone());
    let arrivals = Arc::new(Arrivals::new(feed));
    tokio::spawn(server::run_handoffs(
        handed,
        session.clone(),
        arrivals.clone(),
        client.clone(),
    ));
    let service = DocSync::new(service, session.clone(), arrivals, bridge.clone(), client);
    let served = Server::new(input, output, socket).serve(service);
    let stopped = tokio::select! {
        _ = served => true,
        signal = terminated() => {
            eprintln!("multiedit lsp: stopped by {signal}");
            false
        }
    };
    // After exit, the end of input or a termination signal (a shutdown already did it): no plan may
    // arrive any more, and the bridge's socket and registry entry go with the server.
    bridge.stop();
    stopped && session.was_shut_down()
}

/// Resolves when the process is asked to terminate (SIGTERM, SIGINT, SIGHUP: an editor that kills its
/// server, a closed terminal), naming the signal; never elsewhere, or if the handlers cannot be set.
async fn terminated() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            Some(()) = term.recv() => "SIGTERM",
            Some(()) = int.recv() => "SIGINT",
            Some(()) = hup.recv() => "SIGHUP",
            else => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    std::future::pending().await
}
