//! What the server knows about the connection: the open documents, the client's config, and the
//! turn that `multiedit.apply` commands take. Plain state: it imports only the stores it holds, and
//! the code that acts on it (commands, notifications, the bridge's plans) is handed a reference.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

use super::config::Config;
use super::convert::Encoding;
use super::documents::Documents;

#[derive(Default)]
pub struct Session {
    pub documents: Documents,
    config: RwLock<Config>,
    /// What `initialize` could not use, reported once the client can receive log messages.
    warnings: Mutex<Vec<String>>,
    shutdown: AtomicBool,
    /// One `multiedit.apply` at a time, from the palette, an agent or the bridge alike: a plan is
    /// checked against the text the previous one left, never against the same text as it (held across
    /// the wait for the editor, which is why it is tokio's lock).
    pub(crate) plans: tokio::sync::Mutex<()>,
    /// Per caller (an agent's `multiedit mcp` process, or an agent named in the editor), the diagnostics
    /// deltas of its edits still being settled when they were answered: each is delivered with the
    /// caller's next call (`lsp::diagnostics`).
    deferred: Mutex<HashMap<String, Vec<Deferred>>>,
}

/// A delta being settled after its edit was answered.
pub(crate) type Deferred = tokio::task::JoinHandle<Option<crate::result::EarlierDiagnostics>>;

impl Session {
    pub(crate) fn config(&self) -> Config {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set_config(&self, config: Config) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = config;
    }

    pub(crate) fn update_config(&self, f: impl FnOnce(&mut Config)) {
        f(&mut self.config.write().unwrap_or_else(|e| e.into_inner()));
    }

    pub(crate) fn set_warnings(&self, warnings: Vec<String>) {
        *self.warnings.lock().unwrap_or_else(|e| e.into_inner()) = warnings;
    }

    pub(crate) fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(crate) fn encoding(&self) -> Encoding {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .encoding
    }

    /// Keeps `delta` for `caller`'s next call.
    pub(crate) fn defer(&self, caller: &str, delta: Deferred) {
        let mut map = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(caller.to_string()).or_default().push(delta);
    }

    /// Keeps `deltas` for `caller`'s next call, before those kept since they were taken (their edits
    /// came first).
    pub(crate) fn defer_before(&self, caller: &str, mut deltas: Vec<Deferred>) {
        if deltas.is_empty() {
            return;
        }
        let mut map = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
        let kept = map.entry(caller.to_string()).or_default();
        deltas.append(kept);
        *kept = deltas;
    }

    /// The deltas kept for `caller`, taken.
    pub(crate) fn take_deferred(&self, caller: &str) -> Vec<Deferred> {
        let mut map = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(caller).unwrap_or_default()
    }

    pub(crate) fn mark_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
    }

    pub(crate) fn was_shut_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }
}
