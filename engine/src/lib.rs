//! multiedit's engine: MultiEdit plans and patches in, one exact change or one refusal out. Pure: no
//! I/O, no LSP or MCP types, no async runtime (this crate does not depend on any). The `multiedit`
//! crate (command line, language server, MCP server) re-exports these modules. See ARCHITECTURE.md.

pub mod engine;
pub mod formats;
pub mod paths;
