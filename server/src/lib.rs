//! multiedit: an engine that turns MultiEdit plans into one exact change, and the command line and
//! language server over it. See ARCHITECTURE.md.

pub mod bridge;
pub mod cli;
pub mod disk;
pub mod engine;
pub mod formats;
pub mod lsp;
pub mod mcp;
pub mod paths;
pub mod process;
pub mod result;
