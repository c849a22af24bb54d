//! Why a plan or an edit was refused: a stable `kind` for programs, the exact text for people.

use serde::{Deserialize, Serialize};

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
    /// The layer above the engine could not read, write or reach the file.
    Io,
    /// The file lies outside the folders the caller may edit.
    OutsideWorkspace,
    /// The editor did not apply the change (it changed meanwhile or the client refused).
    NotApplied,
    /// The user declined the change in the editor (its approval, or its review).
    Declined,
    /// The user did not decide on the change in time: it was withdrawn and will not be applied.
    Undecided,
    /// An editor that holds the files is running but did not take the plan in time: nothing was
    /// changed anywhere; try again.
    Busy,
    /// multiedit itself failed (a bug caught before it could change anything).
    InternalError,
    /// An edit's result would pass the size a file's text may reach (`engine::MAX_TEXT`).
    TooLarge,
    /// A whole-file write whose file is not the text the caller read (its sha256 differs), or that
    /// replaces a file without saying which text it read.
    Stale,
    /// A symbol edit or a rename where nothing resolves symbols (on disk, or an editor that cannot ask
    /// its language servers): it needs an editor running multiedit lsp.
    NeedsEditor,
    /// The file's language has no language server in the editor that gives symbols (or renames).
    NoLanguageServer,
    /// No symbol of the file has the name path (the hint gives the file's outline).
    SymbolNotFound,
    /// Several symbols have the name path (the hint lists each with its line).
    SymbolAmbiguous,
    /// `replace: "body"` where the file's own delimiters do not settle the body.
    NoBody,
    /// An edit placed by a symbol or a rename lies in text an earlier edit of the plan changed.
    Overlaps,
    /// The editor's language server refused the rename (its words are in the message).
    RenameRefused,
    /// An agent's write to a file where an agent's permissions, MCP servers or hooks, or an editor's
    /// automatic tasks, are configured, with nobody to ask the user (the server's `gate`).
    Protected,
    /// The agent runs in a mode where its own edit tools write nothing (Codex's read-only sandbox), so
    /// multiedit writes nothing for it either.
    ReadOnly,
}

impl Kind {
    /// Every kind, in declaration order (the wire contract lists them: `server/src/lsp/typescript.rs`).
    pub const ALL: [Kind; 29] = [
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
        Kind::Io,
        Kind::OutsideWorkspace,
        Kind::NotApplied,
        Kind::Declined,
        Kind::Undecided,
        Kind::Busy,
        Kind::InternalError,
        Kind::TooLarge,
        Kind::Stale,
        Kind::NeedsEditor,
        Kind::NoLanguageServer,
        Kind::SymbolNotFound,
        Kind::SymbolAmbiguous,
        Kind::NoBody,
        Kind::Overlaps,
        Kind::RenameRefused,
        Kind::Protected,
        Kind::ReadOnly,
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
            Kind::Io => "io",
            Kind::OutsideWorkspace => "outside_workspace",
            Kind::NotApplied => "not_applied",
            Kind::Declined => "declined",
            Kind::Undecided => "undecided",
            Kind::Busy => "busy",
            Kind::InternalError => "internal_error",
            Kind::TooLarge => "too_large",
            Kind::Stale => "stale",
            Kind::NeedsEditor => "needs_editor",
            Kind::NoLanguageServer => "no_language_server",
            Kind::SymbolNotFound => "symbol_not_found",
            Kind::SymbolAmbiguous => "symbol_ambiguous",
            Kind::NoBody => "no_body",
            Kind::Overlaps => "overlaps",
            Kind::RenameRefused => "rename_refused",
            Kind::Protected => "protected",
            Kind::ReadOnly => "read_only",
        }
    }
}

/// What `Refusal::input` puts before its message.
pub const INPUT_PREFIX: &str = "InputValidationError: ";

/// A refusal. `message` is the exact, stable text (the seed texts where they define one);
/// `hint` carries the extra help (closest region, line numbers) kept apart so the message stays exact.
/// Read back (Deserialize) by the bridge, which carries refusals between processes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub kind: Kind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_index: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Refusal {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
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
    pub fn invalid(message: impl Into<String>) -> Self {
        Refusal::new(Kind::InvalidPlan, message)
    }
    /// Input that is not what the caller must send (a field of the wrong type, a patch that does not
    /// parse): `invalid_plan`, its message after `InputValidationError: `, the words Claude Code's
    /// tools use for it.
    pub fn input(message: impl AsRef<str>) -> Self {
        Refusal::invalid(format!("{INPUT_PREFIX}{}", message.as_ref()))
    }

    /// The message followed by the hint, for people reading a terminal or a chat.
    pub fn full_text(&self) -> String {
        match &self.hint {
            Some(h) => format!("{}\n{}", self.message, h),
            None => self.message.clone(),
        }
    }

    pub fn not_found(old: &str) -> Self {
        Refusal::new(
            Kind::NotFound,
            format!("String to replace not found in file.\nString: {old}"),
        )
    }
    pub fn ambiguous(n: usize, old: &str) -> Self {
        Refusal::new(
            Kind::Ambiguous,
            format!(
                "Found {n} matches of the string to replace, but replace_all is false. To replace all occurrences, \
                 set replace_all to true. To replace only one occurrence, please provide more context to uniquely \
                 identify the instance.\nString: {old}"
            ),
        )
    }
    pub fn count_mismatch(found: usize, expected: usize, old: &str) -> Self {
        Refusal::new(
            Kind::CountMismatch,
            format!(
                "Found {found} matches of the string to replace, but expected {expected}. The number of actual \
                 matches must equal the expected replacements. Please adjust your string to match or update the \
                 expected count.\nString: {old}"
            ),
        )
    }
    pub fn no_op() -> Self {
        Refusal::new(
            Kind::NoOp,
            "No changes to make: old_string and new_string are exactly the same.",
        )
    }
    pub fn file_exists() -> Self {
        Refusal::new(
            Kind::FileExists,
            "Cannot create new file - file already exists.",
        )
    }
    pub fn file_not_found(path: &str) -> Self {
        Refusal::new(
            Kind::FileNotFound,
            format!("File does not exist: {path}. To create it, make the first edit's old_string empty."),
        )
    }
    /// A patch moves a file onto a path that is taken: a rename never replaces a file.
    pub fn move_target_exists(from: &str, to: &str) -> Self {
        Refusal::new(
            Kind::FileExists,
            format!("Cannot move {from} to {to}: {to} already exists. Nothing was changed."),
        )
        .in_file(from)
    }
    pub fn chained() -> Self {
        Refusal::new(
            Kind::Chained,
            "Cannot edit file: old_string is a substring of a new_string from a previous edit.",
        )
    }
    pub fn apply_failed() -> Self {
        Refusal::new(
            Kind::ApplyFailed,
            "String not found in file. Failed to apply edit.",
        )
    }
    pub fn unchanged() -> Self {
        Refusal::new(
            Kind::Unchanged,
            "Original and edited file match exactly. Failed to apply edit.",
        )
    }
    pub fn not_utf8(path: &str, offset: usize) -> Self {
        Refusal::new(
            Kind::NotUtf8,
            format!(
                "Cannot edit {path}: it is not valid UTF-8 text (invalid byte at offset {offset}). \
                 The file was left unchanged."
            ),
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.full_text())
    }
}

impl std::error::Error for Refusal {}

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
                Kind::Io => 11,
                Kind::OutsideWorkspace => 12,
                Kind::NotApplied => 13,
                Kind::Declined => 14,
                Kind::Undecided => 15,
                Kind::Busy => 16,
                Kind::InternalError => 17,
                Kind::TooLarge => 18,
                Kind::Stale => 19,
                Kind::NeedsEditor => 20,
                Kind::NoLanguageServer => 21,
                Kind::SymbolNotFound => 22,
                Kind::SymbolAmbiguous => 23,
                Kind::NoBody => 24,
                Kind::Overlaps => 25,
                Kind::RenameRefused => 26,
                Kind::Protected => 27,
                Kind::ReadOnly => 28,
            };
            assert_eq!(at, i, "{k:?}");
        }
    }
}
