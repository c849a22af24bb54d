//! `multiedit setup --route-edits`: each agent's own file-editing tools turned off in its own
//! configuration, so that its edits go through multiedit's tools (the editor's buffers, review, one
//! undo, diagnostics); and `--undo-route-edits`, which takes back what it wrote.
//!
//! Each agent has its own switch, checked in the versions the tests install (tests/agents/install.sh):
//! Claude Code's permission deny rules (a bare tool name takes the tool out of the model's context),
//! a Gemini CLI policy file (its `tools.exclude` setting warns that it is deprecated at every start,
//! and it ignores a project's `.gemini/policies/`, so only the user's policy folder is left), and
//! OpenCode's `permission.edit` (which covers its edit, write and apply_patch tools). Codex CLI has
//! no switch for apply_patch; Cursor and VS Code have none that a file sets. For those `setup` says
//! so, and for Codex writes an instruction in AGENTS.md when asked (`--agents-md`).
//!
//! What was written is recorded (`routes.json` in multiedit's state folder, beside the journals) with
//! what the file looked like around it, so that the undo removes only what setup added, only while it
//! is as setup wrote it, and restores the file byte for byte when nothing else changed it. JSON is
//! changed by splicing, as `setup` changes it: every other byte stays.
//!
//! Laid out by concern: `rules.rs` holds each agent's switch (what is written where), `write.rs`
//! writes it (`route`) and `undo.rs` takes it back (`undo`), `splice.rs` what they add to a file's
//! text and take back from it, `json.rs` the JSON text they splice and the agents' JSON with comments,
//! `record.rs` the record in `routes.json` and its trust check, and `status.rs` what `doctor` asks:
//! whether an agent's edits are routed.

mod json;
mod record;
mod rules;
mod splice;
mod status;
mod undo;
mod write;

pub(crate) use json::jsonc;
pub(crate) use record::{approved_command, records_problem, records_trusted};
pub(crate) use rules::CLAUDE_LOCAL;
pub(crate) use status::{routed, Routed};
pub(crate) use undo::undo;
pub(crate) use write::route;
