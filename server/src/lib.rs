//! multiedit: an engine that turns MultiEdit plans into one exact change, and the command line and
//! language server over it. See ARCHITECTURE.md.

pub mod bridge;
pub mod cli;
pub mod diagnostics;
pub mod disk;
pub(crate) mod gate;
pub(crate) mod language_servers;
pub mod lsp;
pub mod mcp;
pub mod paths;
pub mod process;
pub mod protocol;
pub mod refusal;
pub mod result;
pub mod symbols;
pub mod write;

// The pure engine is its own crate (no tokio, tower-lsp-server or rmcp); `crate::engine::…` and
// `crate::formats::…` keep naming it here.
pub use multiedit_engine::{engine, formats};
