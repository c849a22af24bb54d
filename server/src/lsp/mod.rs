//! The language server, `multiedit lsp`: open documents kept as ropes, plans validated against what
//! the user sees and handed to the editor as one WorkspaceEdit. The protocol is described in
//! docs/protocol.md.
//!
//! `server.rs` holds the `LanguageServer` implementation and `capabilities.rs` its answer to
//! `initialize`; `sync.rs` the wrapper that applies document notifications in wire order,
//! `documents.rs` the store; `commands/` and `notifications/` one file per command or notification;
//! `workspace.rs` which files may be edited, `transport.rs` the check on incoming frames,
//! `convert.rs` every conversion to and from LSP types, and `bridge.rs` the socket on which programs
//! outside the editor hand over plans.

pub mod bridge;
pub mod capabilities;
pub mod commands;
pub mod convert;
pub mod diagnostics;
pub mod documents;
pub mod logging;
pub mod notifications;
pub mod server;
pub mod session;
pub mod sync;
pub mod transport;
pub mod workspace;

use std::process::ExitCode;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::{LspService, Server};

use server::Backend;
use session::Session;
use sync::DocSync;

pub use logging::log;

pub use crate::process::catch_panic;

/// Runs the server on standard input/output. `log_level`: `--log-level`, as `MessageType`'s number.
pub fn run(log_level: Option<u8>) -> ExitCode {
    if let Some(level) = log_level {
        logging::set_max_level(level);
    }
    let Some(clean) = crate::process::block_on("multiedit lsp", || serve(tokio::io::stdin(), tokio::io::stdout())) else {
        return ExitCode::from(2);
    };
    // The protocol asks for 0 after shutdown then exit, 1 for an exit without shutdown.
    if clean { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// Serves one connection until `exit` or end of input. Returns whether `shutdown` came first.
pub async fn serve<I, O>(input: I, output: O) -> bool
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite,
{
    let session = Arc::new(Session::default());
    let backend_session = session.clone();
    let (service, socket) = LspService::new(move |client| Backend::new(client, backend_session));
    let client = service.inner().client();
    let (input, feed) = transport::checked_input(input, client.clone());
    session.arrivals.set_feed(feed);
    let service = DocSync::new(service, session.clone(), client);
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
    session.bridge.stop();
    stopped && session.was_shut_down()
}

/// Resolves when the process is asked to terminate (SIGTERM, SIGINT, SIGHUP: an editor that kills its
/// server, a closed terminal), naming the signal; never elsewhere, or if the handlers cannot be set.
async fn terminated() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) =
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
        else {
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
