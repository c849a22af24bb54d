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
pub(crate) mod settle;
mod text;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::engine::Replacement;
use crate::lsp::convert::Encoding;
use crate::lsp::ext::{DiagnosticsAnswer, DiagnosticsReport, OrBool};
use crate::result::{DiagnosticsSummary, PlanResult};
pub(crate) use delta::delta;

pub(crate) const DEFAULT_SETTLE: Duration = Duration::from_millis(2000);
pub(crate) const DEFAULT_MAX: usize = 20;
/// Which diagnostics are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    Off,
    Errors,
    Warnings,
}

impl From<OrBool<DiagnosticsReport>> for Report {
    fn from(v: OrBool<DiagnosticsReport>) -> Report {
        match v {
            OrBool::Named(DiagnosticsReport::Off) | OrBool::Bool(false) => Report::Off,
            OrBool::Named(DiagnosticsReport::Errors) | OrBool::Bool(true) => Report::Errors,
            OrBool::Named(DiagnosticsReport::Warnings) => Report::Warnings,
        }
    }
}

impl Report {
    /// `"off"`, `"errors"`, `"warnings"` (errors and warnings), or a boolean (`true`: errors).
    pub(crate) fn from_value(v: &Value) -> Option<Report> {
        serde_json::from_value::<OrBool<DiagnosticsReport>>(v.clone())
            .ok()
            .map(Report::from)
    }

    /// A plan's own `diagnostics` field.
    pub(crate) fn from_plan(d: crate::engine::Diagnostics) -> Report {
        match d {
            crate::engine::Diagnostics::Errors => Report::Errors,
            crate::engine::Diagnostics::Warnings => Report::Warnings,
            crate::engine::Diagnostics::Off => Report::Off,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Report::Off => "off",
            Report::Errors => "errors",
            Report::Warnings => "warnings",
        }
    }

    /// LSP severities 1 (error) and 2 (warning); a diagnostic without one counts as an error.
    fn keeps(self, severity: u64) -> bool {
        match self {
            Report::Off => false,
            Report::Errors => severity == 1,
            Report::Warnings => severity <= 2,
        }
    }
}

/// The initialization option `diagnostics`: present (and not `false`) when the client answers
/// `multiedit/diagnostics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Options {
    pub(crate) report: Report,
    pub(crate) settle: Duration,
    pub(crate) max: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            report: Report::Errors,
            settle: DEFAULT_SETTLE,
            max: DEFAULT_MAX,
        }
    }
}

impl Options {
    /// `true`, or `{"report"?: "errors"|"warnings"|"off", "settleMs"?: n, "max"?: n}`; `false` or
    /// `null` mean the client does not answer. `Err` names what is wrong.
    pub(crate) fn from_value(v: &Value) -> Result<Option<Options>, String> {
        let mut o = Options::default();
        match v {
            Value::Null | Value::Bool(false) => return Ok(None),
            Value::Bool(true) => {}
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("report", v) if Report::from_value(v).is_some() => o.report = Report::from_value(v).unwrap_or(Report::Errors),
                        ("settleMs", v) if v.as_u64().is_some() => o.settle = Duration::from_millis(v.as_u64().unwrap_or(0).min(60_000)),
                        ("max", v) if v.as_u64().is_some() => o.max = v.as_u64().unwrap_or(0) as usize,
                        _ => {
                            return Err(format!(
                                "Ignoring diagnostics.{key}={value}: diagnostics takes report (\"errors\", \"warnings\" \
                                 or \"off\"), settleMs and max (numbers)"
                            ))
                        }
                    }
                }
            }
            other => {
                return Err(format!(
                    "Ignoring diagnostics={other}: expected true, false or an object"
                ))
            }
        }
        Ok(Some(o))
    }
}

/// An `Edited` that owns its texts, for a delta computed after the plan's answer went out.
pub(crate) struct OwnedEdited {
    file_path: String,
    uri: String,
    before: String,
    after: String,
    replacements: Vec<Replacement>,
    then: Vec<Replacement>,
    was_open: bool,
}

impl OwnedEdited {
    pub(crate) fn of(e: &Edited<'_>) -> OwnedEdited {
        OwnedEdited {
            file_path: e.file_path.to_string(),
            uri: e.uri.clone(),
            before: e.before.to_string(),
            after: e.after.to_string(),
            replacements: e.replacements.to_vec(),
            then: e.then.to_vec(),
            was_open: e.was_open,
        }
    }

    pub(crate) fn view(&self) -> Edited<'_> {
        Edited {
            file_path: &self.file_path,
            uri: self.uri.clone(),
            before: &self.before,
            after: &self.after,
            replacements: &self.replacements,
            then: &self.then,
            differs: false,
            was_open: self.was_open,
        }
    }
}

/// One edited document, as the delta needs it.
pub(crate) struct Edited<'a> {
    pub(crate) file_path: &'a str,
    pub(crate) uri: String,
    pub(crate) before: &'a str,
    /// The text once the editor applied the plan: the plan's, or the editor's where it changed the
    /// edit (`now_reads`).
    pub(crate) after: &'a str,
    pub(crate) replacements: &'a [Replacement],
    /// What the editor changed on top of the plan's text (offsets in it), taking it to `after`.
    pub(crate) then: &'a [Replacement],
    /// The text changed after the editor applied the plan (typed since): nothing maps its diagnostics.
    pub(crate) differs: bool,
    /// The editor had the document open before the edit (else its language servers may never have
    /// checked it: no diagnostics before means nothing to compare with).
    pub(crate) was_open: bool,
}

/// Who read the diagnostics, for the words of a file whose text moved on meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Words {
    /// The editor's language servers: the user typed after the editor applied the plan.
    Editor,
    /// A server multiedit started: the file changed on disk between what it was told and the write.
    Disk,
}

/// Adds the delta of `before` and `after` (the diagnostics of the `edited` files before the edit and
/// once settled after it) to `result`: `diagnostics` and `diagnostics_text`. `folders`: the
/// workspace's, which the text's paths are shown relative to; `started`: when the wait for the
/// diagnostics after the edit began (the time the wait took, when the answer does not say).
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_delta(
    options: Options,
    encoding: Encoding,
    folders: &[PathBuf],
    edited: &[Edited<'_>],
    before: &DiagnosticsAnswer,
    after: &DiagnosticsAnswer,
    started: Instant,
    words: Words,
    result: &mut PlanResult,
) {
    let (summary, text) = summarize(
        options, encoding, folders, edited, before, after, started, words,
    );
    result.diagnostics_text = Some(text);
    result.diagnostics = Some(summary);
}

/// `add_delta`'s fields, as a value: the summary and the text a model reads.
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
