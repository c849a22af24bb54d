//! What the server knows about the connection: the open documents, the client's config, and the
//! turn that `multiedit.apply` commands take. Plain state: it imports only the stores it holds, and
//! the code that acts on it (commands, notifications, the bridge's plans) is handed a reference.

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
}

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

    pub(crate) fn mark_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
    }

    pub(crate) fn was_shut_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }
}
