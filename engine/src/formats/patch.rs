//! A patch as the parsers read it, whatever its format: what each file should become, hunk by hunk,
//! with paths as the patch wrote them. `mod.rs` detects a text's format and turns a patch into a plan.

use crate::engine::Anchor;

/// The formats `multiedit apply --format` and the `format` field name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Plan,
    Diff,
    ApplyPatch,
    SearchReplace,
}

impl Format {
    pub const NAMES: &'static [(&'static str, Format)] = &[
        ("plan", Format::Plan),
        ("diff", Format::Diff),
        ("apply-patch", Format::ApplyPatch),
        ("search-replace", Format::SearchReplace),
    ];

    pub fn from_name(name: &str) -> Option<Format> {
        Format::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    pub fn name(self) -> &'static str {
        Format::NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("plan")
    }

    /// How refusals name the format.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Plan => "a MultiEdit JSON plan",
            Format::Diff => "a unified diff",
            Format::ApplyPatch => "an apply_patch envelope",
            Format::SearchReplace => "SEARCH/REPLACE blocks",
        }
    }
}

/// A parsed patch: what each file should become, with paths as the patch wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub format: Format,
    pub files: Vec<PatchFile>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    /// As written in the patch, `a/` and `b/` prefixes removed: relative to the root, or absolute.
    pub path: String,
    pub op: PatchOp,
    /// In order. For `Add`: one hunk with an empty `old` whose `new` is the whole content.
    pub hunks: Vec<Hunk>,
    /// The mode the patch gives the file (git's `0o100755` or `0o100644`); `None`: it keeps its own.
    pub mode: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    Update,
    Add,
    Delete,
    /// Edited by the hunks, then moved to this path (as written: relative or absolute).
    Move(String),
}

/// One hunk or block: `old` (context and removed lines) becomes `new` (context and added lines). Both
/// are whole lines with their line endings as the patch has them; the last line has none only when
/// the patch says so (`\ No newline at end of file`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    pub old: String,
    pub new: String,
    /// What the engine needs to place it; `label` names it in refusals (`hunk 2 of src/lib.rs (line 40)`).
    pub anchor: Anchor,
}
