//! What an applied plan did to the editor's diagnostics: the errors (and, on request, warnings) it
//! introduced and those it resolved, from the user's own language servers.
//!
//! The server cannot see diagnostics: the editor can. A client that announces it (initialization
//! option `diagnostics`) answers the request `multiedit/diagnostics` twice per plan: `phase: "before"`
//! just before `workspace/applyEdit` (what the documents show now) and `phase: "after"` once the editor
//! applied it (what they show once the language servers have published for the new text, or at the
//! settle bound, with the files still pending). The delta is computed here, once for every client:
//! a diagnostic that was there before and is still there at the same place, mapped through the
//! plan's replacements (which the server knows exactly), is not reported. Clients that did not
//! announce it are never sent the request and pay nothing.

//!
//! `mod.rs`: the options and the round trip to the client; `delta.rs` the pure delta; `text.rs` the
//! words a model reads.

mod delta;
mod text;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use tower_lsp_server::Client;

use super::convert::{self, Encoding};
use super::documents::Documents;
use super::ext::{
    DiagnosticsAnswer, DiagnosticsParams, DiagnosticsReport, DiagnosticsRequest, OrBool,
};
use crate::engine::Replacement;
use crate::result::{DiagnosticsSummary, PlanResult};
pub(crate) use delta::delta;

pub(crate) const DEFAULT_SETTLE: Duration = Duration::from_millis(2000);
pub(crate) const DEFAULT_MAX: usize = 20;
/// Added to the settle bound for the client's answer to travel: a client that never answers must not
/// hold the command.
const ANSWER_MARGIN: Duration = Duration::from_millis(1000);
/// The "before" snapshot is answered at once by a well-behaved client.
const BEFORE_TIMEOUT: Duration = Duration::from_millis(1000);

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

/// A plan's diagnostics watch: the snapshot taken before its edit, and the options for this call.
pub(crate) struct Watch {
    options: Options,
    before: Option<DiagnosticsAnswer>,
}

impl Watch {
    /// Takes the "before" snapshot when the client answers the request and the call wants a delta
    /// (`None` otherwise: nothing is sent, nothing is added to the result).
    pub(crate) async fn start(
        client: &Client,
        options: Option<Options>,
        report: Option<Report>,
        uris: Vec<String>,
    ) -> Option<Watch> {
        let mut options = options?;
        options.report = report.unwrap_or(options.report);
        if options.report == Report::Off || uris.is_empty() {
            return None;
        }
        Some(Watch {
            options,
            before: before(client, &uris).await,
        })
    }

    /// After the editor applied the plan: waits for the client's settled diagnostics and adds the delta
    /// to `result` (`diagnostics` and `diagnostics_text`). `edited`: the plan's files that stay in the
    /// editor; `folders`: the workspace's, which the text's paths are shown relative to.
    pub(crate) async fn finish(
        self,
        documents: &Documents,
        client: &Client,
        encoding: Encoding,
        folders: &[PathBuf],
        mut edited: Vec<Edited<'_>>,
        result: &mut PlanResult,
    ) {
        let started = Instant::now();
        let answer = match self.before {
            Some(_) => after(client, &edited, self.options.settle).await,
            None => None,
        };
        let (Some(before), Some(after)) = (self.before, answer) else {
            result.diagnostics = Some(DiagnosticsSummary {
                available: false,
                delta: None,
            });
            result.diagnostics_text =
                Some("The editor did not report diagnostics for this change.".into());
            return;
        };
        let computing = Instant::now();
        // Compared once the client answered: every didChange it sent before its answer has been applied.
        // `after` is the text the editor had when it answered applyEdit, its own changes included.
        for e in &mut edited {
            e.differs = documents
                .find(&convert::uri_key(&e.uri))
                .is_some_and(|doc| doc.rope != e.after);
        }
        let delta = delta(self.options, encoding, &edited, &before, &after);
        // The wait for the language servers (as the client measured it, from the edit), apart from the
        // time this server spent on the delta.
        let waited_ms = after
            .waited_ms
            .unwrap_or(started.elapsed().as_millis() as u64);
        let summary = delta.to_summary(
            self.options,
            waited_ms,
            after.published_ms,
            computing.elapsed().as_secs_f64() * 1000.0,
        );
        result.diagnostics_text = Some(delta.text(self.options, folders));
        result.diagnostics = Some(DiagnosticsSummary {
            available: true,
            delta: Some(summary),
        });
    }
}

/// Asks the client what the documents show now. `None` when it does not answer in time or errs: the
/// plan then goes on without a delta (and says so).
async fn before(client: &Client, uris: &[String]) -> Option<DiagnosticsAnswer> {
    let params = DiagnosticsParams::Before {
        uris: uris.to_vec(),
    };
    tokio::time::timeout(
        BEFORE_TIMEOUT,
        client.send_request::<DiagnosticsRequest>(params),
    )
    .await
    .ok()?
    .ok()
}

/// Asks the client for the diagnostics once settled; `None` when it does not answer within the bound
/// (plus the time to travel) or errs.
async fn after(
    client: &Client,
    edited: &[Edited<'_>],
    settle: Duration,
) -> Option<DiagnosticsAnswer> {
    let uris: Vec<String> = edited.iter().map(|e| e.uri.clone()).collect();
    let params = DiagnosticsParams::After {
        uris,
        settle_ms: settle.as_millis() as u64,
    };
    tokio::time::timeout(
        settle + ANSWER_MARGIN,
        client.send_request::<DiagnosticsRequest>(params),
    )
    .await
    .ok()?
    .ok()
}
