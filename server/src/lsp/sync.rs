//! `DocSync`: a `tower::Service` around the framework's service that applies document notifications
//! in wire order.
//!
//! tower-lsp-server polls up to four handlers at once and a handler's body only runs at its first
//! poll, so a didChange sent just before `multiedit.apply` is not guaranteed to be applied when the
//! command reads the document (ebkalderon/tower-lsp#284). The transport calls `Service::call` once per
//! message, in the order they arrive; applying the notifications inside `call`, synchronously, makes
//! every later request see them. `initialize` is read here too, so the position encoding is settled
//! before the first didOpen whatever the scheduling; and a command whose `arguments` is not even an
//! array is answered here, with a message that says so, since the framework would refuse it in serde's
//! words.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::Service;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::ls_types::MessageType;
use tower_lsp_server::Client;

use super::commands;
use super::convert::refusal_error;
use super::notifications;
use super::session::{Config, Session};

pub struct DocSync<S> {
    inner: S,
    session: Arc<Session>,
    client: Client,
    /// Set by the first `initialize`; the framework refuses any later one, so must the config.
    initialized: bool,
}

impl<S> DocSync<S> {
    pub fn new(inner: S, session: Arc<Session>, client: Client) -> Self {
        DocSync { inner, session, client, initialized: false }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

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
        // `$/` requests are optional protocol extensions; the specification asks for MethodNotFound,
        // while the framework would leave them unanswered.
        if let (true, Some(id)) = (method.starts_with("$/"), req.id()) {
            let error = tower_lsp_server::jsonrpc::Error::method_not_found();
            return Box::pin(std::future::ready(Ok(Some(Response::from_error(id.clone(), error)))));
        }
        if method == "initialize" && !self.initialized {
            self.initialized = true;
            if let Some(params) = req.params() {
                let (config, warnings) = Config::from_initialize(params);
                self.session.set_config(config);
                self.session.set_warnings(warnings);
            }
        } else if method == "workspace/executeCommand" && self.initialized {
            if let (Some(refusal), Some(id)) = (commands::arguments_shape_error(req.params()), req.id()) {
                let response = Response::from_error(id.clone(), refusal_error(&refusal));
                return Box::pin(std::future::ready(Ok(Some(response))));
            }
        } else if notifications::is_document_sync(method) {
            // Before initialize the protocol drops notifications; an early didOpen must not shadow
            // the file on disk for the whole session.
            if !self.initialized {
                return Box::pin(std::future::ready(Ok(None)));
            }
            self.session.bridge.touch();
            let applied = super::catch_panic(method, || notifications::handle(&self.session, method, req.params()));
            if let Err(warning) = applied.and_then(|r| r) {
                let client = self.client.clone();
                tokio::spawn(async move { super::log(&client, MessageType::WARNING, warning).await });
            }
            // Handled: the framework's default handlers would only log that they are not implemented.
            return Box::pin(std::future::ready(Ok(None)));
        } else if method == notifications::DID_SAVE {
            // Saves only tell which editor the user works in (the bridge's last-active time).
            if self.initialized {
                self.session.bridge.touch();
            }
            return Box::pin(std::future::ready(Ok(None)));
        }
        Box::pin(self.inner.call(req))
    }
}
