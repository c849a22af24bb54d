//! What an applied plan did to the diagnostics of the user's language servers: the errors (and, on
//! request, warnings) it introduced and those it resolved. The part both ways of reading diagnostics
//! share: the editor's (`lsp::diagnostics`, `multiedit/diagnostics`) and multiedit's own started
//! servers when no editor holds the files (`language_servers`). Either hands over the diagnostics
//! before the edit and once settled after it; the delta is computed here, once for both: a
//! diagnostic that was there before and is still there at the same place, mapped through the plan's
//! replacements (which multiedit knows exactly), is not reported.
//!
//! `mod.rs`: the options, and the delta turned into the result's fields; `delta.rs` the pure delta;
//! `text.rs` the words a model reads; `settle.rs` when diagnostics count as settled after an edit.

mod delta;
mod edited;
mod options;
pub(crate) mod settle;
mod text;

use std::path::PathBuf;
use std::time::Instant;

use crate::protocol::ext::DiagnosticsAnswer;
use crate::protocol::positions::Encoding;
use crate::result::{DiagnosticsSummary, PlanResult};
pub(crate) use delta::delta;
pub(crate) use edited::{Edited, OwnedEdited};
pub(crate) use options::{Options, Report};

/// Who read the diagnostics, for the words of a file whose text moved on meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Words {
    /// The editor's language servers: the user typed after the editor applied the plan.
    Editor,
    /// A server multiedit started: the file changed on disk between what it was told and the write.
    Disk,
}

/// Adds a delta (`summarize`'s) to `result`: `diagnostics` and `diagnostics_text`.
pub(crate) fn add_delta(result: &mut PlanResult, (summary, text): (DiagnosticsSummary, String)) {
    result.diagnostics_text = Some(text);
    result.diagnostics = Some(summary);
}

/// The delta of `before` and `after` (the diagnostics of the `edited` files before the edit and once
/// settled after it): the summary, and the text a model reads. `folders`: the workspace's, which the
/// text's paths are shown relative to; `started`: when the wait for the diagnostics after the edit
/// began (the time the wait took, when the answer does not say).
// Each argument comes from a different place (the call's options, the client, the texts, the
// answers): a struct gathering them would only rename them for this one call.
#[allow(clippy::too_many_arguments)]
pub(crate) fn summarize(
    options: Options,
    encoding: Encoding,
    folders: &[PathBuf],
    edited: &[Edited<'_>],
    before: &DiagnosticsAnswer,
    after: &DiagnosticsAnswer,
    started: Instant,
    words: Words,
) -> (DiagnosticsSummary, String) {
    let computing = Instant::now();
    let mut delta = delta(options, encoding, edited, before, after);
    delta.on_disk = words == Words::Disk;
    // The wait for the language servers (as the client measured it, from the edit), apart from the
    // time spent on the delta.
    let waited_ms = after
        .waited_ms
        .unwrap_or(started.elapsed().as_millis() as u64);
    let summary = delta.to_summary(
        options,
        waited_ms,
        after.published_ms,
        computing.elapsed().as_secs_f64() * 1000.0,
    );
    let summary = DiagnosticsSummary {
        available: true,
        deferred: false,
        delta: Some(summary),
    };
    (summary, delta.text(options, folders))
}

/// Adds to `result` that no diagnostics could be compared, and why (`said`).
pub(crate) fn add_unavailable(said: &str, result: &mut PlanResult) {
    result.diagnostics = Some(DiagnosticsSummary {
        available: false,
        deferred: false,
        delta: None,
    });
    result.diagnostics_text = Some(said.into());
}
