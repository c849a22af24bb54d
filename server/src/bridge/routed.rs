//! What a request through the bridge is (`Intent`), who sends it (`Sender`), and what became of it
//! (`Routed`): the types the caller's side (`client.rs`) and the line protocol (`wire.rs`) share.

use serde::{Deserialize, Serialize};

use crate::refusal::Refusal;

/// What the caller wants done with a request's plan: which of the editor's own commands it runs as
/// (`multiedit.apply`, `multiedit.preview`, `multiedit.read`, `multiedit.symbols`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Intent {
    #[default]
    Apply,
    Preview,
    /// The files as the editor holds them; nothing changes.
    Read,
    /// A file's outline from the editor's language servers; nothing changes.
    Symbols,
}

/// What became of a request offered to the editors; `T` is what its intent is answered with
/// (`PlanResult` for a plan or a preview, `ReadResult` for a read, `SymbolsResult` for an outline), so a
/// caller matches only the answers its request can get.
#[derive(Debug)]
pub enum Routed<T> {
    /// The editor's server answered: applied the plan (or validated it, for a preview), read the files
    /// as the editor holds them, or gave the file's outline; `answer` is what its command answers, read
    /// back typed.
    Answered { editor: String, answer: T },
    /// The editor's server refused the request; nothing was changed.
    Refused { editor: String, refusal: Refusal },
    /// No running editor has every file of the plan in a workspace folder (those that had are gone): why, in words
    /// fit for the result text ("no editor has /x open"). Nothing was sent.
    NoEditor { reason: String },
    /// The bridge folder is there but cannot be trusted (another user's, or open to others), so no
    /// editor can be seen, nor whether one holds the files with unsaved changes: refused, never
    /// written on disk behind it.
    Blind { refusal: Refusal },
}

/// Who sends a plan through the bridge: the agent's name, and what its server (`multiedit mcp`) lets
/// agents do beyond the gate's default, which the editor's gate adds to its own settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sender<'a> {
    pub(crate) agent: Option<&'a str>,
    pub(crate) allow: crate::gate::Allow,
}
