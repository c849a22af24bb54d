//! What the commands share: why a command gave no result (`Failure`), a plan command's arguments
//! decoded once (`decode`), the plan checked against the editor's documents (`prepare_logged`), and
//! the result both plan commands answer with (`result_json`).

use serde_json::Value;
use tower_lsp_server::jsonrpc;
use tower_lsp_server::ls_types::MessageType;
use tower_lsp_server::Client;

use crate::lsp::config::Config;
use crate::lsp::convert::{internal_error, refusal_error};
use crate::lsp::logging::log;
use crate::lsp::prepare::{prepare, Prepared};
use crate::lsp::request::{self, Origin, PlanCall};
use crate::lsp::session::Session;
use crate::process::catch_panic;
use crate::refusal::Refusal;
use crate::result::PlanResult;

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

/// A plan command's arguments decoded (`request::decode`), once per command.
pub(super) fn decode(
    session: &Session,
    command: &str,
    arguments: &[Value],
) -> Result<PlanCall, Failure> {
    request::decode(&session.config(), command, arguments).map_err(Failure::Refused)
}

/// `prepare` with the session's current config, a panic turned into `Failure::Internal`, and each
/// interrupted plan it completed or rolled back told to the editor's log (and stderr). Returns the
/// config the plan was checked under.
pub(super) async fn prepare_logged(
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
        return Err(Failure::Refused(Refusal::of(
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
