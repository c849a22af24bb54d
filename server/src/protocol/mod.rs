//! What multiedit knows of LSP below every part that speaks it: its own requests and their types
//! (`ext.rs`, the wire contract the VS Code extension's `lsp_ext.ts` is generated from) and the
//! conversions of positions and URIs (`positions.rs`). The editor's server (`lsp/`), multiedit's own
//! language-server client (`language_servers/`), and the symbols and diagnostics they share
//! (`symbols/`, `diagnostics/`) import it; it imports none of them.

pub mod ext;
pub mod positions;
