//! What the three parsers' unit tests share: a patch written line by line, the files a parser reads
//! in it, and the text of its refusal.

use super::patch::{Format, PatchFile};
use crate::engine::Kind;

/// The lines, each ended by '\n'.
pub fn text(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The files the parser of `format` reads in `t`, checked to be of that format.
pub fn files(format: Format, t: &str) -> Vec<PatchFile> {
    let patch = super::parse(t, format).unwrap_or_else(|r| panic!("refused: {}", r.message));
    assert_eq!(patch.format, format);
    patch.files
}

/// The text of the refusal the parser of `format` gives `t`: through the one conversion every caller
/// gets (`From<ParseError> for Refusal`), so the text asserted is the refusal's.
pub fn refusal(format: Format, t: &str) -> String {
    let r = super::parse(t, format).expect_err("should be refused");
    assert_eq!(r.kind, Kind::InvalidPlan);
    r.message
}
