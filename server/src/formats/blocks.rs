//! stub
use super::Patch;
use crate::engine::Refusal;
pub fn looks_like(_t: &str) -> bool { false }
pub fn parse(_t: &str) -> Result<Patch, Refusal> { Err(Refusal::invalid("not yet")) }
