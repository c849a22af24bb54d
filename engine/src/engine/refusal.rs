//! Why a plan or an edit was refused: a stable `kind` for programs, the exact text for people.

use serde::{Deserialize, Serialize};

/// The engine's own kinds: what a plan, a patch or the text can make it refuse. The server's kinds
/// (the disk, the editor, the gate, language servers) wrap these (`multiedit::refusal::Kind`); on the
/// wire both are one flat list of names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The plan itself is malformed (wrong types, unknown fields, empty edits, relative path...).
    InvalidPlan,
    NotFound,
    Ambiguous,
    NoOp,
    FileExists,
    FileNotFound,
    /// claude-code dialect: an old_string lies inside an earlier edit's new_string.
    Chained,
    /// claude-code dialect: an edit that validated against the original no longer applies.
    ApplyFailed,
    CountMismatch,
    /// The edits cancel out: the final text equals the original.
    Unchanged,
    NotUtf8,
    /// The change does not fit the text it was placed on (which changed meanwhile), or the editor did
    /// not apply it.
    NotApplied,
    /// An edit's result would pass the size a file's text may reach (`engine::MAX_TEXT`).
    TooLarge,
    /// A symbol edit or a rename where nothing resolves symbols (on disk, or an editor that cannot ask
    /// its language servers): it needs an editor running multiedit lsp.
    NeedsEditor,
    /// An edit placed by a symbol or a rename lies in text an earlier edit of the plan changed.
    Overlaps,
}

impl Kind {
    /// Every kind, in declaration order (the wire contract lists them: `server/src/lsp/typescript.rs`).
    pub const ALL: [Kind; 15] = [
        Kind::InvalidPlan,
        Kind::NotFound,
        Kind::Ambiguous,
        Kind::NoOp,
        Kind::FileExists,
        Kind::FileNotFound,
        Kind::Chained,
        Kind::ApplyFailed,
        Kind::CountMismatch,
        Kind::Unchanged,
        Kind::NotUtf8,
        Kind::NotApplied,
        Kind::TooLarge,
        Kind::NeedsEditor,
        Kind::Overlaps,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::InvalidPlan => "invalid_plan",
            Kind::NotFound => "not_found",
            Kind::Ambiguous => "ambiguous",
            Kind::NoOp => "no_op",
            Kind::FileExists => "file_exists",
            Kind::FileNotFound => "file_not_found",
            Kind::Chained => "chained",
            Kind::ApplyFailed => "apply_failed",
            Kind::CountMismatch => "count_mismatch",
            Kind::Unchanged => "unchanged",
            Kind::NotUtf8 => "not_utf8",
            Kind::NotApplied => "not_applied",
            Kind::TooLarge => "too_large",
            Kind::NeedsEditor => "needs_editor",
            Kind::Overlaps => "overlaps",
        }
    }
}

/// What `Refusal::input` puts before its message.
pub const INPUT_PREFIX: &str = "InputValidationError: ";

/// A kind that holds the engine's: the server's, which adds those of the disk, the editor, the gate
/// and the language servers. A refusal of the engine's becomes one of such a kind with `?`, and the
/// engine's own constructors (`Refusal::not_found`, …) build it directly.
pub trait Wraps: From<Kind> {}

/// A refusal. `message` is the exact, stable text (the seed texts where they define one);
/// `hint` carries the extra help (closest region, line numbers) kept apart so the message stays exact.
/// Read back (Deserialize) by the bridge, which carries refusals between processes. `K`: the kind it
/// is of, the engine's own here, the server's (which wraps them) in the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal<K = Kind> {
    pub kind: K,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_index: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl<K> Refusal<K> {
    pub fn new(kind: K, message: impl Into<String>) -> Self {
        Refusal {
            kind,
            edit_index: None,
            file_path: None,
            message: message.into(),
            hint: None,
        }
    }
    pub fn at(mut self, edit_index: usize) -> Self {
        self.edit_index = Some(edit_index);
        self
    }
    pub fn in_file(mut self, path: &str) -> Self {
        if self.file_path.is_none() {
            self.file_path = Some(path.to_string());
        }
        self
    }
    pub fn with_hint(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }

    /// The message followed by the hint, for people reading a terminal or a chat.
    pub fn full_text(&self) -> String {
        match &self.hint {
            Some(h) => format!("{}\n{}", self.message, h),
            None => self.message.clone(),
        }
    }
}

/// The engine's refusals, of any kind that holds the engine's.
impl<K: From<Kind>> Refusal<K> {
    /// A refusal of one of the engine's kinds.
    pub fn of(kind: Kind, message: impl Into<String>) -> Self {
        Refusal::new(K::from(kind), message)
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Refusal::of(Kind::InvalidPlan, message)
    }
    /// Input that is not what the caller must send (a field of the wrong type, a patch that does not
    /// parse): `invalid_plan`, its message after `InputValidationError: `, the words Claude Code's
    /// tools use for it.
    pub fn input(message: impl AsRef<str>) -> Self {
        Refusal::invalid(format!("{INPUT_PREFIX}{}", message.as_ref()))
    }

    pub fn not_found(old: &str) -> Self {
        Refusal::of(
            Kind::NotFound,
            format!("String to replace not found in file.\nString: {old}"),
        )
    }
    pub fn ambiguous(n: usize, old: &str) -> Self {
        Refusal::of(
            Kind::Ambiguous,
            format!(
                "Found {n} matches of the string to replace, but replace_all is false. To replace all occurrences, \
                 set replace_all to true. To replace only one occurrence, please provide more context to uniquely \
                 identify the instance.\nString: {old}"
            ),
        )
    }
    pub fn count_mismatch(found: usize, expected: usize, old: &str) -> Self {
        Refusal::of(
            Kind::CountMismatch,
            format!(
                "Found {found} matches of the string to replace, but expected {expected}. The number of actual \
                 matches must equal the expected replacements. Please adjust your string to match or update the \
                 expected count.\nString: {old}"
            ),
        )
    }
    pub fn no_op() -> Self {
        Refusal::of(
            Kind::NoOp,
            "No changes to make: old_string and new_string are exactly the same.",
        )
    }
    pub fn file_exists() -> Self {
        Refusal::of(
            Kind::FileExists,
            "Cannot create new file - file already exists.",
        )
    }
    pub fn file_not_found(path: &str) -> Self {
        Refusal::of(
            Kind::FileNotFound,
            format!("File does not exist: {path}. To create it, make the first edit's old_string empty."),
        )
    }
    /// A patch moves a file onto a path that is taken: a rename never replaces a file.
    pub fn move_target_exists(from: &str, to: &str) -> Self {
        Refusal::of(
            Kind::FileExists,
            format!("Cannot move {from} to {to}: {to} already exists. Nothing was changed."),
        )
        .in_file(from)
    }
    pub fn chained() -> Self {
        Refusal::of(
            Kind::Chained,
            "Cannot edit file: old_string is a substring of a new_string from a previous edit.",
        )
    }
    pub fn apply_failed() -> Self {
        Refusal::of(
            Kind::ApplyFailed,
            "String not found in file. Failed to apply edit.",
        )
    }
    pub fn unchanged() -> Self {
        Refusal::of(
            Kind::Unchanged,
            "Original and edited file match exactly. Failed to apply edit.",
        )
    }
    pub fn not_utf8(path: &str, offset: usize) -> Self {
        Refusal::of(
            Kind::NotUtf8,
            format!(
                "Cannot edit {path}: it is not valid UTF-8 text (invalid byte at offset {offset}). \
                 The file was left unchanged."
            ),
        )
    }
}

impl<K> std::fmt::Display for Refusal<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.full_text())
    }
}

impl<K: std::fmt::Debug> std::error::Error for Refusal<K> {}

impl<K: Wraps> From<Refusal<Kind>> for Refusal<K> {
    fn from(r: Refusal<Kind>) -> Self {
        Refusal {
            kind: K::from(r.kind),
            edit_index: r.edit_index,
            file_path: r.file_path,
            message: r.message,
            hint: r.hint,
        }
    }
}

#[cfg(test)]
mod kind_tests {
    use super::Kind;

    /// `Kind::ALL` holds every kind once: a kind added to the enum and not to the list stops this
    /// match from compiling, and one listed twice or out of place fails the test.
    #[test]
    fn all_lists_every_kind_once() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            let at = match k {
                Kind::InvalidPlan => 0,
                Kind::NotFound => 1,
                Kind::Ambiguous => 2,
                Kind::NoOp => 3,
                Kind::FileExists => 4,
                Kind::FileNotFound => 5,
                Kind::Chained => 6,
                Kind::ApplyFailed => 7,
                Kind::CountMismatch => 8,
                Kind::Unchanged => 9,
                Kind::NotUtf8 => 10,
                Kind::NotApplied => 11,
                Kind::TooLarge => 12,
                Kind::NeedsEditor => 13,
                Kind::Overlaps => 14,
            };
            assert_eq!(at, i, "{k:?}");
        }
    }
}
