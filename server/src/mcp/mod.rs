//! `multiedit mcp`: a Model Context Protocol server over stdio, built on the official Rust SDK (rmcp).
//!
//! Two tools take a plan (the same JSON Schema as the VS Code tool, `schema`): `multiedit` applies it,
//! `multiedit_preview` answers with the diff. Each plan is offered first to a running editor that has
//! every file in a workspace folder (`crate::bridge::route`); only when no editor was sent it is it
//! applied on disk, by the CLI's code (`disk::plan::apply`). `render` shapes the results.
//!
//! Standard output carries the protocol and nothing else; messages go to standard error.

mod render;
pub mod schema;
mod tools;

use std::process::ExitCode;

use rmcp::ServiceExt;

pub use tools::{MULTIEDIT_DESCRIPTION, PREVIEW_DESCRIPTION};

/// Runs the server on standard input/output until the client closes it.
pub fn run() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            crate::cli::err(&format!("multiedit mcp: cannot start the async runtime: {e}\n"));
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(serve());
    // The stdin reader may still be parked in a blocking read nobody needs any more.
    runtime.shutdown_background();
    code
}

async fn serve() -> ExitCode {
    let service = match tools::Server::default().serve(rmcp::transport::stdio()).await {
        Ok(s) => s,
        Err(e) => {
            crate::cli::err(&format!("multiedit mcp: the client did not complete the handshake: {e}\n"));
            return ExitCode::from(1);
        }
    };
    match service.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            crate::cli::err(&format!("multiedit mcp: {e}\n"));
            ExitCode::from(1)
        }
    }
}
