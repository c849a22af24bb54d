//! Which diagnostics a delta reports and how long it waits for them: the call's or client's options.

use std::time::Duration;

use serde_json::Value;

use crate::protocol::ext::{DiagnosticsReport, OrBool};

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
    pub(super) fn keeps(self, severity: u64) -> bool {
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
