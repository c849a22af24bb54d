//! The bridge: how a program outside the editor (`multiedit mcp`) hands a plan to a running
//! `multiedit lsp`, so that the plan is checked against the editor's buffers and applied as one
//! WorkspaceEdit (one undo), instead of being written to disk under the editor's feet.
//!
//! Each `multiedit lsp` that allows it listens on a Unix domain socket in a private runtime folder and
//! leaves a registry entry beside it (pid, editor name, workspace folders, socket, token); `route`
//! picks the editor whose workspace folders hold every file of the plan, the most recently active one
//! when several do.
//!
//! The rule that keeps a plan from being applied twice: `route` answers `NoEditor` (so the caller may
//! write to disk) only when no plan was sent to any editor. Once a plan has been sent, whatever
//! happens (the editor refuses, the connection drops, the wait times out) is that editor's answer, and
//! the caller must not fall back to disk. And an editor that holds the files but does not take the
//! plan (busy: its queue full, the hand-over timed out) is `Refused` with kind `busy`, not `NoEditor`:
//! it may have the files open with unsaved changes, which a write on disk behind it would clash with.
//!
//! `registry.rs`: the private folder, its entries and the checks on them; `wire.rs`: the line protocol
//! on the socket; `client.rs`: `route`. The server's side is `lsp/bridge.rs`. Unix only: elsewhere
//! `route` answers `NoEditor` and servers do not listen (named pipes are planned for Windows).

#[cfg(unix)]
mod client;
#[cfg(unix)]
pub mod registry;
#[cfg(unix)]
pub(crate) mod wire;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::Refusal;
use crate::result::PlanResult;

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

/// Why there is no bridge on this platform.
#[cfg(not(unix))]
pub(crate) const UNSUPPORTED: &str =
    "the bridge to editors is not available on this platform yet (it uses Unix domain sockets; named pipes are planned)";

/// Offers `plan` (the plan JSON as the caller received it, `files` its absolute file paths) to the
/// editor that has them all open in a workspace folder; `agent` names the sender for the edit's label.
///
/// Editors are tried from the most recently active; one whose socket is dead (before anything was
/// sent) has its entry removed and the next is tried; one that is alive but does not take the plan is
/// `Refused` with kind `busy`. `editor` in the answer is the editor's name and its server's pid. After
/// the plan was sent, a lost connection or a timeout is `Refused` with kind `not_applied` saying that
/// the outcome is unknown.
pub async fn route(
    plan: &Value,
    files: &[PathBuf],
    intent: Intent,
    agent: Option<&str>,
) -> Routed<PlanResult> {
    let sender = Sender {
        agent,
        allow: crate::gate::Allow::default(),
    };
    route_from(plan, files, intent, sender).await
}

/// Who sends a plan through the bridge: the agent's name, and what its server (`multiedit mcp`) lets
/// agents do beyond the gate's default, which the editor's gate adds to its own settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sender<'a> {
    pub(crate) agent: Option<&'a str>,
    pub(crate) allow: crate::gate::Allow,
}

/// `route`, from a sender whose server allows agents more than the default; `T` the answer `intent`
/// gets.
pub(crate) async fn route_from<T: serde::de::DeserializeOwned>(
    plan: &Value,
    files: &[PathBuf],
    intent: Intent,
    sender: Sender<'_>,
) -> Routed<T> {
    #[cfg(unix)]
    return client::route(plan, files, intent, sender).await;
    #[cfg(not(unix))]
    {
        let _ = (plan, files, intent, sender);
        Routed::NoEditor {
            reason: UNSUPPORTED.into(),
        }
    }
}
