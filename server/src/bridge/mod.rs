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
mod routed;
#[cfg(unix)]
pub(crate) mod wire;

use std::path::PathBuf;

use serde_json::Value;

use crate::result::PlanResult;
pub(crate) use routed::Sender;
pub use routed::{Intent, Routed};

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
