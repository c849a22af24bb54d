//! What the integration tests share: one module tree, declared once by each test binary (`it.rs`,
//! and the binaries that must run alone). Each binary uses only part of it.
#![allow(dead_code)]

pub mod agents;
pub mod apply;
pub mod corpus;
pub mod disk;
pub mod headless;
pub mod lsp;
pub mod mcp;
pub mod nvim;
pub mod reference;
pub mod report;
pub mod rng;
