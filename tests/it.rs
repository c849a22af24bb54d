//! The integration tests in one binary (`cargo test --test it`; one suite: `cargo test --test it lsp::`),
//! so the support tree and the crate are compiled and linked once. Four suites are binaries of their
//! own: `bridge` and `setup` set process-wide environment variables that every server a test starts
//! inherits, and `corpus` and `git_apply` replay this repository's history (slow; run alone).

mod support;

mod cli;
mod confinement_abuse;
mod crash_safety;
mod differential;
mod disk_abuse;
mod disk_errors;
mod docs_links;
mod engine_props;
mod engine_seeds;
mod engine_text;
mod formats;
mod gate;
mod language_servers;
mod lsp;
mod lsp_abuse;
mod lsp_diagnostics;
mod lsp_save;
mod lsp_symbols;
mod mcp;
mod near_misses;
mod nvim;
mod paths;
mod peers;
mod symbol_plans;
