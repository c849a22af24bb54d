//! The order in which the server sees things, and the two mechanisms that keep it.
//!
//! tower-lsp-server calls `Service::call` once per message, in the order the messages arrive, and then
//! polls up to four handlers at once; a handler's body only runs at its first poll. So a didChange
//! sent just before `multiedit.apply` is not guaranteed to be applied when the command reads the
//! document (ebkalderon/tower-lsp#284). Hence:
//!
//! 1. `DocSync`, a `tower::Service` around the framework's, applies `didOpen`/`didChange`/`didClose`
//!    inside `call`, synchronously: every later request sees them, whatever the scheduling. It also
//!    reads `initialize` there (the position encoding is settled before the first didOpen), answers a
//!    command whose `arguments` is not even an array (the framework would refuse it in serde's words),
//!    and swallows the marker below.
//! 2. `Arrivals` puts a plan from the bridge in the same line: the plan waits for a marker written
//!    behind the frames read so far (`transport::Feed`), so it is checked against the documents
//!    exactly as a command arriving at that moment would be.
//!
//! What happens after that is the commands' business: `prepare` reads its snapshot before its first
//! await, and `multiedit.apply` commands take turns (`Session::plans`, a bounded wait refused as
//! `busy`), so each is checked against the last one's result.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::oneshot;
use tower::Service;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::ls_types::MessageType;
use tower_lsp_server::Client;

use super::bridge::Host;
use super::commands;
use super::config::Config;
use super::convert::refusal_error;
use super::logging::log;
use super::notifications;
use super::session::Session;
use super::transport::{self, Feed, INVALID_REQUEST};

pub(crate) struct DocSync<S> {
    inner: S,
    session: Arc<Session>,
    arrivals: Arc<Arrivals>,
    /// Told of the editor's activity, which the bridge's registry entry records.
    bridge: Arc<Host>,
    client: Client,
    /// Set by the first `initialize`; the framework refuses any later one, so must the config.
    initialized: bool,
}

impl<S> DocSync<S> {
    pub(crate) fn new(
        inner: S,
        session: Arc<Session>,
        arrivals: Arc<Arrivals>,
        bridge: Arc<Host>,
        client: Client,
    ) -> Self {
        DocSync {
            inner,
            session,
            arrivals,
            bridge,
            client,
            initialized: false,
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The marker `Arrivals` puts in the input, never passed on to the framework. (An editor sending one
/// could at most let a waiting plan be checked a little early, against documents the editor itself
/// described.)
const ARRIVED: &str = "multiedit/bridgeArrived";

/// Plans from the bridge arrive beside the editor's messages, not among them. `wait_turn` puts a
/// marker behind every frame the server has read so far and returns when `DocSync` reaches it: every
/// notification the server had received when the plan arrived is then applied, as it would be for a
/// command arriving at that moment.
pub(crate) struct Arrivals {
    feed: Feed,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<()>>>,
}

/// How long a plan waits for its turn; only a server that stopped reading its input (after `exit`)
/// takes that long, and the plan then goes on with the documents as they are.
const TURN_TIMEOUT: Duration = Duration::from_secs(10);

impl Arrivals {
    /// `feed`: the framework's input, behind the frames the transport has checked.
    pub(crate) fn new(feed: Feed) -> Arrivals {
        Arrivals {
            feed,
            next: AtomicU64::new(0),
            waiting: Mutex::default(),
        }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<()>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) async fn wait_turn(&self) {
        let id = self.next.fetch_add(1, AtomicOrdering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting().insert(id, tx);
        let marker = serde_json::json!({"jsonrpc": "2.0", "method": ARRIVED, "params": {"id": id}});
        if transport::write_frame(&self.feed, marker.to_string().as_bytes())
            .await
            .is_ok()
        {
            let _ = tokio::time::timeout(TURN_TIMEOUT, rx).await;
        }
        self.waiting().remove(&id);
    }

    fn arrived(&self, params: Option<&serde_json::Value>) {
        let id = params
            .and_then(|p| p.get("id"))
            .and_then(serde_json::Value::as_u64);
        if let Some(tx) = id.and_then(|id| self.waiting().remove(&id)) {
            let _ = tx.send(());
        }
    }
}

impl<S> Service<Request> for DocSync<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let method = req.method();
        if method == ARRIVED {
            self.arrivals.arrived(req.params());
            return Box::pin(std::future::ready(Ok(None)));
        }
        // A frame the transport dropped that named a request id (`transport::invalid_request`).
        if let (INVALID_REQUEST, Some(id)) = (method, req.id()) {
            let why = req
                .params()
                .and_then(|p| p.get("why"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("it is not a request");
            let error = tower_lsp_server::jsonrpc::Error {
                code: tower_lsp_server::jsonrpc::ErrorCode::InvalidRequest,
                message: format!("Invalid request: {why}").into(),
                data: None,
            };
            return Box::pin(std::future::ready(Ok(Some(Response::from_error(
                id.clone(),
                error,
            )))));
        }
        // `$/` requests are optional protocol extensions; the specification asks for MethodNotFound,
        // while the framework would leave them unanswered.
        if let (true, Some(id)) = (method.starts_with("$/"), req.id()) {
            let error = tower_lsp_server::jsonrpc::Error::method_not_found();
            return Box::pin(std::future::ready(Ok(Some(Response::from_error(
                id.clone(),
                error,
            )))));
        }
        if method == "initialize" && !self.initialized {
            self.initialized = true;
            if let Some(params) = req.params() {
                let (config, warnings) = Config::from_initialize(params);
                self.session.set_config(config);
                self.session.set_warnings(warnings);
            }
        } else if method == "workspace/executeCommand" && self.initialized {
            if let (Some(refusal), Some(id)) =
                (commands::arguments_shape_error(req.params()), req.id())
            {
                let response = Response::from_error(id.clone(), refusal_error(&refusal));
                return Box::pin(std::future::ready(Ok(Some(response))));
            }
        } else if notifications::is_document_sync(method) {
            // Before initialize the protocol drops notifications; an early didOpen must not shadow
            // the file on disk for the whole session.
            if !self.initialized {
                return Box::pin(std::future::ready(Ok(None)));
            }
            self.bridge.touch();
            let applied = crate::process::catch_panic(method, || {
                notifications::handle(&self.session, method, req.params())
            });
            if let Err(warning) = applied.and_then(|r| r) {
                let client = self.client.clone();
                tokio::spawn(async move { log(&client, MessageType::WARNING, warning).await });
            }
            // Handled: the framework's default handlers would only log that they are not implemented.
            return Box::pin(std::future::ready(Ok(None)));
        } else if method == notifications::DID_SAVE {
            // Saves only tell which editor the user works in (the bridge's last-active time).
            if self.initialized {
                self.bridge.touch();
            }
            return Box::pin(std::future::ready(Ok(None)));
        }
        Box::pin(self.inner.call(req))
    }
}
