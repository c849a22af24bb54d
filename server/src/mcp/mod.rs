//! `multiedit mcp`: a Model Context Protocol server over stdio, built on the official Rust SDK (rmcp).
//!
//! Two tools take a plan (the same JSON Schema as the VS Code tool, `schema`): `multiedit` applies it,
//! `multiedit_preview` answers with the diff; the third, `multiedit_patch`, takes a patch. Each plan is offered first to a running editor that has
//! every file in a workspace folder (`crate::bridge::route`); only when no editor was sent it is it
//! applied on disk, by the CLI's code (`disk::plan::apply`). `render` shapes the results.
//!
//! Standard output carries the protocol and nothing else; messages go to standard error.

mod read;
mod render;
pub mod schema;
mod symbols;
mod tools;
pub(crate) mod transport;
mod write;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::paths::Folders;
use crate::process::err;

use rmcp::ServiceExt;

/// What the server may edit: the folders given (`--root`), else the one it was started in; or anywhere.
pub(crate) struct Options {
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) allow_outside: bool,
    /// Plans may name files inside `.git` folders.
    pub(crate) allow_dot_git: bool,
    /// Let agents write the files where agents' permissions, servers and hooks are configured (`gate`).
    pub(crate) allow_agent_config: bool,
}

/// The folders plans may touch (`None`: anywhere), or why the options cannot be used.
fn confinement(options: Options) -> Result<Option<Folders>, String> {
    if options.allow_outside {
        return Ok(None);
    }
    let roots = if options.roots.is_empty() {
        let here = std::env::current_dir().map_err(|e| {
            format!(
                "cannot read the current folder ({e}); give the folders to edit with --root DIR"
            )
        })?;
        // Some clients start servers in / (Cline does): then the default protects nothing.
        if here.parent().is_none() {
            err(&format!(
                "multiedit mcp: started in {}, so plans may edit any file; give the project with --root DIR\n",
                here.display()
            ));
        }
        vec![here]
    } else {
        options.roots
    };
    let mut folders = Folders::default();
    for r in &roots {
        folders.add(
            &std::path::absolute(r)
                .map_err(|e| format!("cannot use --root {} ({e})", r.display()))?,
        );
    }
    Ok(Some(folders))
}

/// Runs the server on standard input/output until the client closes it.
pub(crate) fn run(options: Options) -> ExitCode {
    let allow = crate::gate::Allow {
        dot_git: options.allow_dot_git,
        agent_config: options.allow_agent_config,
    };
    let confine = match confinement(options) {
        Ok(c) => c,
        Err(why) => {
            err(&format!("multiedit mcp: {why}\n"));
            return ExitCode::from(2);
        }
    };
    crate::process::block_on("multiedit mcp", || {
        serve(tools::Server::new(confine, allow))
    })
    .unwrap_or(ExitCode::from(2))
}

/// Standard input and output as rmcp's stdio transport takes them, framed by `transport`.
fn stdio() -> transport::Stdio<tokio::io::Stdin, tokio::io::Stdout> {
    let (read, write) = rmcp::transport::stdio();
    transport::Stdio::new(read, write, transport::MAX_LINE)
}

async fn serve(server: tools::Server) -> ExitCode {
    // The language servers this session started end with it.
    let servers = server.clone();
    let code = match server.serve(stdio()).await {
        Ok(service) => match service.waiting().await {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                err(&format!("multiedit mcp: {e}\n"));
                ExitCode::from(1)
            }
        },
        Err(e) => {
            err(&format!(
                "multiedit mcp: the client did not complete the handshake: {e}\n"
            ));
            ExitCode::from(1)
        }
    };
    servers.shutdown().await;
    code
}
