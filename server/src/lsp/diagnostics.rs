//! The editor's side of the diagnostics delta (`crate::diagnostics`): the server cannot see
//! diagnostics, the editor can. A client that announces it (initialization option `diagnostics`)
//! answers the request `multiedit/diagnostics` twice per plan: `phase: "before"` just before
//! `workspace/applyEdit` (what the documents show now) and `phase: "after"` once the editor applied it
//! (what they show once the language servers have published for the new text, or at the settle bound,
//! with the files still pending). Clients that did not announce it are never sent the request and
//! pay nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tower_lsp_server::Client;

use super::convert::{self, Encoding};
use super::documents::Documents;
use super::session::Session;
use crate::diagnostics::{
    add_delta, add_unavailable, summarize, Edited, Options, OwnedEdited, Report, Words,
};
use crate::protocol::ext::{DiagnosticsAnswer, DiagnosticsParams, DiagnosticsRequest};
use crate::result::{DiagnosticsSummary, EarlierDiagnostics, PlanResult};

/// Added to the settle bound for the client's answer to travel: a client that never answers must not
/// hold the command.
const ANSWER_MARGIN: Duration = Duration::from_millis(1000);
/// The "before" snapshot is answered at once by a well-behaved client.
const BEFORE_TIMEOUT: Duration = Duration::from_millis(1000);

/// How long an agent's call looks at the diagnostics after its edit before it answers. A language
/// server cannot be known to stay silent before it settles (a clean file that stays clean publishes
/// nothing, and the editor takes that as unchanged only after twice its usual time): an agent is
/// answered at once, and a delta that has not settled by then comes with its next call.
pub(crate) const FIRST_LOOK: Duration = Duration::from_millis(60);

/// What the first answer says when the delta comes later: fixed, so an agent (and docs/agents.md)
/// can rely on it.
pub(crate) const DEFERRED: &str = "Diagnostics: the editor's language servers are still checking this \
                                   change; the errors it introduced and resolved come with your next \
                                   multiedit call, whichever tool it is.";

/// Where a delta that has not settled at the first look goes: the next call of `caller`, as the
/// edit `label`. Only an agent's call has a next call to carry it.
pub(crate) struct Later {
    pub(crate) session: Arc<Session>,
    pub(crate) caller: String,
    pub(crate) label: String,
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
    ///
    /// With `later` (an agent's call), the first look lasts `FIRST_LOOK`: what has not settled by then
    /// is computed in the background and kept for the caller's next call, and `result` says so
    /// (`DEFERRED`); never a delta from diagnostics older than the edit.
    // Each argument comes from a different place (the call's options, the client, the texts, the
    // answers): a struct gathering them would only rename them for this one call.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn finish(
        self,
        documents: &Documents,
        client: &Client,
        encoding: Encoding,
        folders: &[PathBuf],
        mut edited: Vec<Edited<'_>>,
        later: Option<Later>,
        result: &mut PlanResult,
    ) {
        let started = Instant::now();
        let first = match &later {
            Some(_) => self.options.settle.min(FIRST_LOOK),
            None => self.options.settle,
        };
        let answer = match self.before {
            Some(_) => after(client, &edited, first).await,
            None => None,
        };
        let (Some(before), Some(after)) = (self.before, answer) else {
            add_unavailable(
                "The editor did not report diagnostics for this change.",
                result,
            );
            return;
        };
        if let Some(later) = later.filter(|_| !after.pending.is_empty()) {
            let rest = self.options.settle.saturating_sub(first);
            settle_later(
                client,
                self.options,
                encoding,
                folders,
                &edited,
                before,
                rest,
                later,
            );
            result.diagnostics = Some(DiagnosticsSummary {
                available: false,
                deferred: true,
                delta: None,
            });
            result.diagnostics_text = Some(DEFERRED.into());
            return;
        }
        // Compared once the client answered: every didChange it sent before its answer has been applied.
        // `after` is the text the editor had when it answered applyEdit, its own changes included.
        for e in &mut edited {
            e.differs = documents
                .find(&convert::uri_key(&e.uri))
                .is_some_and(|doc| doc.rope != e.after);
        }
        add_delta(
            result,
            summarize(
                self.options,
                encoding,
                folders,
                &edited,
                &before,
                &after,
                started,
                Words::Editor,
            ),
        );
    }
}

/// Computes, in the background, the delta of `edited` once their diagnostics settle (within `rest`),
/// and keeps it for `later.caller`'s next call.
// Each argument comes from a different place (the call's options, the client, the texts, the
// answers): a struct gathering them would only rename them for this one call.
#[allow(clippy::too_many_arguments)]
fn settle_later(
    client: &Client,
    options: Options,
    encoding: Encoding,
    folders: &[PathBuf],
    edited: &[Edited<'_>],
    before: DiagnosticsAnswer,
    rest: Duration,
    later: Later,
) {
    let owned: Vec<OwnedEdited> = edited.iter().map(OwnedEdited::of).collect();
    let (client, folders) = (client.clone(), folders.to_vec());
    let Later {
        session,
        caller,
        label,
    } = later;
    let documents = session.clone();
    let task = tokio::spawn(async move {
        let started = Instant::now();
        let mut edited: Vec<Edited<'_>> = owned.iter().map(OwnedEdited::view).collect();
        let answer = after(&client, &edited, rest).await?;
        for e in &mut edited {
            e.differs = documents
                .documents
                .find(&convert::uri_key(&e.uri))
                .is_some_and(|doc| doc.rope != e.after);
        }
        let (diagnostics, text) = summarize(
            options,
            encoding,
            &folders,
            &edited,
            &before,
            &answer,
            started,
            Words::Editor,
        );
        Some(EarlierDiagnostics {
            label,
            diagnostics,
            text,
        })
    });
    session.defer(&caller, task);
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
