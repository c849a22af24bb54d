//! `workspace/executeCommand`: the commands the server advertises, and the validation they share.

pub(crate) mod apply;
pub(crate) mod preview;
pub(crate) mod read;
pub(crate) mod symbols;

use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::jsonrpc;
use tower_lsp_server::ls_types::MessageType;
use tower_lsp_server::Client;

use super::config::Config;
use super::convert::{internal_error, refusal_error};
use super::logging::log;
use super::prepare::{prepare, Prepared};
pub(crate) use super::request::Origin;
use super::request::{self, PlanCall};
use super::session::Session;
use crate::engine::Refusal;
use crate::process::catch_panic;
use crate::result::PlanResult;

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

/// Why a command gave no result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The plan was refused (or the editor did not apply it): nothing was changed.
    Refused(Refusal),
    /// The server itself failed (a bug caught before it could change anything).
    Internal(String),
}

impl Failure {
    /// As the JSON-RPC error `workspace/executeCommand` answers with.
    pub(crate) fn into_rpc(self) -> jsonrpc::Error {
        match self {
            Failure::Refused(r) => refusal_error(&r),
            Failure::Internal(message) => internal_error(message),
        }
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
            earlier(earlier_tasks, &mut answer).await;
            Ok(answer)
        }
        // A refused call carries no result: the deltas wait for the next one.
        (Err(failure), Some(caller)) => {
            earlier_tasks.into_iter().for_each(|t| session.defer(caller, t));
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

/// How long a call waits for an earlier edit's delta still settling: the settle bound and its margin.
const EARLIER_WAIT: std::time::Duration = std::time::Duration::from_secs(4);

/// Adds to `answer` the deltas of the caller's earlier edits that had not settled when they were
/// answered (`tasks`, `earlier_diagnostics`), waiting for each at most `EARLIER_WAIT`.
async fn earlier(tasks: Vec<crate::lsp::session::Deferred>, answer: &mut Value) {
    let mut list = Vec::new();
    for task in tasks {
        if let Ok(Ok(Some(delta))) = tokio::time::timeout(EARLIER_WAIT, task).await {
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

/// A plan command's arguments decoded (`request::decode`), once per command.
fn decode(session: &Session, command: &str, arguments: &[Value]) -> Result<PlanCall, Failure> {
    request::decode(&session.config(), command, arguments).map_err(Failure::Refused)
}

/// `prepare` with the session's current config, a panic turned into `Failure::Internal`, and each
/// interrupted plan it completed or rolled back told to the editor's log (and stderr). Returns the
/// config the plan was checked under.
async fn prepare_logged(
    session: &Session,
    client: &Client,
    command: &str,
    origin: Origin,
    request: &PlanCall,
) -> Result<(Config, Prepared), Failure> {
    let config = session.config();
    // What the editor's language servers say of the plan's symbols and rename, asked again (at most
    // three times) while the user's typing moves the documents past the versions they were computed on.
    let mut asked = 0;
    let answers = loop {
        asked += 1;
        let answers = crate::lsp::symbols::gather(session, client, &config, request.change.plan())
            .await
            .map_err(Failure::Refused)?;
        for (what, ms) in &answers.asked_ms {
            log(
                client,
                MessageType::LOG,
                format!("{command}: {what} from the editor in {ms} ms"),
            )
            .await;
        }
        if crate::lsp::symbols::held(&answers, session) || asked == 3 {
            break answers;
        }
    };
    if !crate::lsp::symbols::held(&answers, session) {
        return Err(Failure::Refused(Refusal::new(
            crate::engine::Kind::NotApplied,
            "The documents kept changing in the editor while its language servers were asked about the plan. Nothing was \
             changed; send the plan again."
                .to_string(),
        )));
    }
    let mut recovered = Vec::new();
    // Everything from the check above to the first await is synchronous: the documents are read
    // exactly as the notifications before this command left them, at the answers' versions.
    let prepared = catch_panic(command, || {
        prepare(
            session,
            &config,
            origin,
            command,
            request,
            &answers,
            &mut recovered,
        )
    });
    for r in &recovered {
        log(
            client,
            MessageType::INFO,
            format!(
                "{command}: {}",
                r.report("before reading this plan's files")
            ),
        )
        .await;
    }
    let prepared = prepared
        .map_err(Failure::Internal)?
        .map_err(Failure::Refused)?;
    Ok((config, prepared))
}

/// The result both commands return: the engine's result object, each file with the version its edit
/// was computed against (`null` for a file the editor has not opened).
pub fn result_json(prepared: &Prepared) -> PlanResult {
    let mut report = PlanResult::of(&prepared.outcome);
    if let Some(count) = &prepared.renamed {
        report.add_rename(crate::symbols::rename::summary(count));
    }
    let mut unset = Vec::new();
    for (f, file) in report.files.iter_mut().zip(&prepared.files) {
        f.version = Some(file.version);
        if let Some(mode) = &f.mode {
            f.mode_applied = Some(false);
            unset.push(format!("{} {mode}", f.file_path));
        }
    }
    if !unset.is_empty() {
        report.message = format!(
            "{}\n\nNot set: the mode{} {} (an editor's workspace edit cannot change a file's mode; run \
             chmod, or apply the patch with `multiedit apply`).",
            report.message,
            if unset.len() == 1 { "" } else { "s" },
            unset.join(", ")
        );
    }
    report
}
