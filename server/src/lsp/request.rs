//! A plan command's arguments (`multiedit.apply`, `multiedit.preview`), decoded once where the
//! command arrives and carried typed from there: the plan (a JSON plan, a patch made a plan, or a
//! whole-file write) and the call's options.

use serde_json::{Map, Value};

use super::config::{Config, Review};
use super::save;
use crate::diagnostics::Report;
use crate::engine::{self};
use crate::protocol::ext;
use crate::refusal::Refusal;
use crate::{formats, paths, write};

/// Where a request came from: the editor's own `workspace/executeCommand`, or an agent outside it
/// through the bridge. An agent's plan is approved by the rule for agents (`agentReview`) and waited
/// for within the bound an agent's call has (`apply::AGENT_BOUNDS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    Editor,
    /// With what the sender's server lets agents do (`multiedit mcp --allow-dot-git`, …), which the
    /// gate adds to the editor's own settings.
    Bridge(crate::gate::Allow),
}

impl Origin {
    pub(crate) fn is_bridge(self) -> bool {
        matches!(self, Origin::Bridge(_))
    }
}

/// What a plan command asks to change.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// A MultiEdit plan.
    Plan(engine::Plan),
    /// A patch (`{"patch": TEXT, ...}`), made the plan it stands for.
    Patch(engine::Plan),
    /// A whole-file write (`crate::write`), and the plan it stands for.
    Write {
        request: write::WriteRequest,
        plan: engine::Plan,
    },
}

impl Change {
    pub(crate) fn plan(&self) -> &engine::Plan {
        match self {
            Change::Plan(plan) | Change::Patch(plan) | Change::Write { plan, .. } => plan,
        }
    }

    pub(crate) fn write(&self) -> Option<&write::WriteRequest> {
        match self {
            Change::Write { request, .. } => Some(request),
            _ => None,
        }
    }
}

/// A plan command, decoded: what it changes and how (`Call`).
#[derive(Debug, Clone)]
pub(crate) struct PlanCall {
    pub(crate) change: Change,
    pub(crate) options: Call,
}

/// The call's options (`ext::CallOptions`) as `prepare` uses them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Call {
    pub(crate) review: Option<Review>,
    pub(crate) agent: Option<String>,
    pub(crate) diagnostics: Option<Report>,
    pub(crate) save: Option<engine::Save>,
}

/// Reads the call's options, refusing the first entry that is not one of them, by name and value.
fn call_options(command: &str, options: &Map<String, Value>) -> Result<Call, Refusal> {
    let mut call = Call::default();
    // One entry at a time, so that a refusal names the entry to fix.
    for (key, value) in options {
        let one = Value::Object(Map::from_iter([(key.clone(), value.clone())]));
        let Some(one) = serde_json::from_value::<ext::CallOptions>(one)
            .ok()
            .filter(|o| {
                !value.is_null() && o.agent.as_deref().is_none_or(|n| !n.trim().is_empty())
            })
        else {
            return Err(Refusal::input(format!(
                "the options of {command} (its second argument) take only \
                 \"review\": \"never\", \"multiFile\", \"always\" or a boolean, \"diagnostics\": \
                 \"errors\", \"warnings\" or \"off\", \"save\": \"clean\", \"all\" or \"never\", and \"agent\": \
                 the name of who sent the plan; got {key}={value}"
            )));
        };
        call.review = one.review.map(Review::from).or(call.review);
        call.diagnostics = one.diagnostics.map(Report::from).or(call.diagnostics);
        call.save = one.save.map(save::policy).or(call.save);
        // A name, not a text: one line, and short enough for an undo entry.
        call.agent = one
            .agent
            .map(|name| {
                name.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .chars()
                    .take(60)
                    .collect()
            })
            .or(call.agent);
    }
    Ok(call)
}

/// The command's arguments decoded, once: the plan, then optionally the call's options
/// (`ext::CallOptions`); a missing argument is the engine's `invalid_plan` refusal.
pub(crate) fn decode(
    config: &Config,
    command: &str,
    arguments: &[Value],
) -> Result<PlanCall, Refusal> {
    let change = |v: &Value| -> Result<Change, Refusal> {
        match v.get("patch") {
            Some(_) => Ok(Change::Patch(patch_plan(config, v)?)),
            None if write::is_write(v) => {
                let request = write::WriteRequest::from_value(v)?;
                Ok(Change::Write {
                    plan: request.plan(),
                    request,
                })
            }
            None => Ok(Change::Plan(engine::plan_from_value(v)?)),
        }
    };
    match arguments {
        [plan] => Ok(PlanCall {
            change: change(plan)?,
            options: Call::default(),
        }),
        [plan, Value::Object(options)] => {
            let options = call_options(command, options)?;
            Ok(PlanCall {
                change: change(plan)?,
                options,
            })
        }
        _ => Err(Refusal::input(format!(
            "{command} takes the plan (an object such as \
             {{\"file_path\": \"/abs/path\", \"edits\": [{{\"old_string\": \"a\", \"new_string\": \"b\"}}]}}) and optionally its options {{\"review\": ..., \"agent\": ..., \"diagnostics\": ...}}, \
             but was given {} arguments",
            arguments.len()
        ))),
    }
}

/// `{"patch": TEXT, "format"?, "root"?, "match"?}` as the plan it stands for. Relative paths resolve
/// against `root`, else the one workspace folder; with none or several, a relative path is refused and
/// asks for `root`.
pub(crate) fn patch_plan(config: &Config, value: &Value) -> Result<engine::Plan, Refusal> {
    let request = formats::PatchRequest::from_value(value, &[])?;
    let fallback = match config.workspace.folders() {
        [one] => Some(one.clone()),
        _ => None,
    };
    let plan = request.plan(fallback.as_deref())?;
    if let Some(root) = request.root.as_deref().or(fallback.as_deref()) {
        paths::refuse_patch_links(&plan, root)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(v: Value) -> Result<Call, String> {
        call_options("multiedit.apply", v.as_object().unwrap()).map_err(|r| r.message)
    }

    #[test]
    fn call_options_read_every_spelling_the_protocol_gives() {
        let c = options(json!({"review": "multiFile", "diagnostics": true, "save": "never", "agent": "  Claude\n Code  "})).unwrap();
        assert_eq!(c.review, Some(Review::MultiFile));
        assert_eq!(c.diagnostics, Some(Report::Errors));
        assert_eq!(c.save, Some(engine::Save::Never));
        assert_eq!(c.agent.as_deref(), Some("Claude Code"));
        let c = options(json!({"review": false, "diagnostics": "warnings"})).unwrap();
        assert_eq!(
            (c.review, c.diagnostics),
            (Some(Review::Never), Some(Report::Warnings))
        );
        assert_eq!(
            options(json!({"agent": "x".repeat(100)}))
                .unwrap()
                .agent
                .unwrap()
                .len(),
            60
        );
        assert!(options(json!({})).unwrap().review.is_none());
    }

    #[test]
    fn a_call_option_that_is_not_one_is_refused_by_name_and_value() {
        let why = |key: &str, value: &str| {
            format!(
                "InputValidationError: the options of multiedit.apply (its second argument) take only \"review\": \"never\", \"multiFile\", \
                 \"always\" or a boolean, \"diagnostics\": \"errors\", \"warnings\" or \"off\", \"save\": \"clean\", \
                 \"all\" or \"never\", and \"agent\": the name of who sent the plan; got {key}={value}"
            )
        };
        for (bad, key, value) in [
            (json!({"review": "sometimes"}), "review", "\"sometimes\""),
            (json!({"review": null}), "review", "null"),
            (json!({"save": true}), "save", "true"),
            (json!({"agent": "   "}), "agent", "\"   \""),
            (json!({"agent": 7}), "agent", "7"),
            (
                json!({"diagnostics": "errors", "colour": "red"}),
                "colour",
                "\"red\"",
            ),
        ] {
            assert_eq!(options(bad).err(), Some(why(key, value)));
        }
    }
}
