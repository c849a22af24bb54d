//! The pure engine: text and plan in, one composed change or one refusal out. No I/O, no LSP.
//!
//! `apply_plan` is the entry point; `plan` holds the format, `changeset` the composition of sequential
//! edits, `search` how matches are found, `eol` line endings and the BOM, `hints` and `tolerant` what
//! happens after an exact miss, `report` the success texts.

mod anchor;
mod apply;
pub mod changeset;
pub mod diff;
mod eol;
mod grams;
mod hints;
pub(crate) mod json_error;
pub mod plan;
pub mod refusal;
mod report;
mod search;
pub mod target;
mod text;
pub mod tolerant;
mod write;

pub use apply::{apply_file, apply_plan, EditReport, FileChange, Outcome, MAX_TEXT};
pub use changeset::Replacement;
pub use eol::{apply_replacements, LineBreaks};
pub use plan::{
    parse_plan, plan_from_value, Anchor, Diagnostics, Dialect, Edit, Expect, FileOp, FilePlan,
    Matching, Mode, Options, Plan, Save,
};
pub use refusal::{Kind, Refusal, Wraps};
pub use target::{NamePath, Rename, RenameAt, Span, Spans, SymbolAction, Target};
pub use text::cap as sentence;
pub use text::{line_of, line_starts};
pub use tolerant::Tier;
pub use write::write_file;

/// Decodes file bytes as UTF-8, or refuses: a file that is not UTF-8 is never edited (and never
/// rewritten with replacement characters).
pub fn decode<'a>(path: &str, bytes: &'a [u8]) -> Result<&'a str, Refusal> {
    std::str::from_utf8(bytes).map_err(|e| Refusal::not_utf8(path, e.valid_up_to()).in_file(path))
}
