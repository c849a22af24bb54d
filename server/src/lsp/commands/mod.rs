//! `workspace/executeCommand`: the commands the server advertises, and the validation they share.

pub(crate) mod apply;
pub(crate) mod preview;
pub(crate) mod read;
mod shared;
pub(crate) mod symbols;

use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::Client;

pub(crate) use super::request::Origin;
use super::session::Session;
use crate::process::catch_panic;
use crate::refusal::Refusal;
pub use shared::result_json;
pub(crate) use shared::Failure;

pub use super::capabilities::APPLY;
pub(crate) use super::capabilities::{ALL, PREVIEW, READ, SYMBOLS};
pub(crate) use crate::bridge::Intent;

/// The command an intent runs as.
pub(crate) fn command(intent: Intent) -> &'static str {
    match intent {
        Intent::Apply => APPLY,
        Intent::Preview => PREVIEW,
        Intent::Read => READ,
        Intent::Symbols => SYMBOLS,
    }
}

/// The intent of one of the server's commands.
pub(crate) fn intent(command: &str) -> Option<Intent> {
    match command {
        APPLY => Some(Intent::Apply),
        PREVIEW => Some(Intent::Preview),
        READ => Some(Intent::Read),
        SYMBOLS => Some(Intent::Symbols),
        _ => None,
    }
}

/// Runs the command of `intent` on `arguments`: the one function behind both the editor's
/// `workspace/executeCommand` and a request arriving through the bridge, so the two are validated,
/// ordered, applied and answered alike.
/// `caller`: who a delta settled after its answer is kept for (`lsp::diagnostics::Later`), and given to
/// with this call's answer: an agent's `multiedit mcp` process (`bridge:` and its pid), or an agent the
/// editor's own caller names (`agent:` and its name); `None` for a person at the palette.
pub(crate) async fn run(
    session: &Arc<Session>,
    client: &Client,
    intent: Intent,
    origin: Origin,
    caller: Option<&str>,
    arguments: &[Value],
) -> Result<Value, Failure> {
    // Taken before this call runs, so that what it leaves to settle itself goes to the next one.
    let earlier_tasks = caller.map(|c| session.take_deferred(c)).unwrap_or_default();
    let answer = match intent {
        Intent::Apply => apply::run(session, client, origin, caller, arguments).await,
        Intent::Preview => preview::run(session, client, origin, arguments).await,
        Intent::Read => catch_panic(READ, || read::run(session, origin, arguments))
            .map_err(Failure::Internal)
            .and_then(|r| r),
        Intent::Symbols => symbols::run(session, client, arguments).await,
    };
    match (answer, caller) {
        (Ok(mut answer), _) => {
            earlier(session, caller, earlier_tasks, &mut answer).await;
            Ok(answer)
        }
        // A refused call carries no result: the deltas wait for the next one.
        (Err(failure), Some(caller)) => {
            earlier_tasks
                .into_iter()
                .for_each(|t| session.defer(caller, t));
            Err(failure)
        }
        (Err(failure), None) => Err(failure),
    }
}

/// The caller of an editor's own command: the agent its options name (VS Code's language-model tool,
/// `@multiedit`), whose next call gets what this one left to settle.
pub(crate) fn editor_caller(arguments: &[Value]) -> Option<String> {
    let agent = arguments.get(1)?.get("agent")?.as_str()?;
    Some(format!("agent:{}", agent.trim()))
}

/// Adds to `answer` the deltas of the caller's earlier edits that had not settled when they were
/// answered and have settled since (`earlier_diagnostics`). One still settling is not waited for: it
/// is left for the caller's next call, before the deltas this call left, so that an agent calling
/// again at once is not held up by the language servers of its last edits (waiting 100 ms for each
/// cost a quick succession of calls 200 ms apiece in the code-server benchmark).
async fn earlier(
    session: &Session,
    caller: Option<&str>,
    tasks: Vec<crate::lsp::session::Deferred>,
    answer: &mut Value,
) {
    let (settled, settling): (Vec<_>, Vec<_>) = tasks.into_iter().partition(|t| t.is_finished());
    if let Some(caller) = caller {
        session.defer_before(caller, settling);
    }
    let mut list = Vec::new();
    for task in settled {
        // Finished: awaiting it only takes its value.
        if let Ok(Some(delta)) = task.await {
            list.push(delta);
        }
    }
    if let (false, Some(object)) = (list.is_empty(), answer.as_object_mut()) {
        object.insert(
            "earlier_diagnostics".into(),
            serde_json::to_value(list).unwrap_or_default(),
        );
    }
}

/// For one of our commands whose `arguments` is not an array (a plan sent bare, say): the refusal to
/// answer with, instead of the framework's bare "invalid type: map, expected a sequence".
pub(crate) fn arguments_shape_error(params: Option<&Value>) -> Option<Refusal> {
    let params = params?;
    let command = params.get("command")?.as_str()?;
    if !ALL.contains(&command) {
        return None;
    }
    match params.get("arguments") {
        None | Some(Value::Array(_)) => None,
        Some(other) => Some(Refusal::input(format!(
            "the `arguments` of {command} must be an array holding the plan, [plan], but \
             is {}",
            match other {
                Value::Object(_) => "an object (send [plan], not the plan itself)",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            }
        ))),
    }
}
