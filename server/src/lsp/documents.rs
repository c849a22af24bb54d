//! The documents the editor has open, as ropes: an edit of one keystroke costs O(log n) whatever the
//! size of the document.
//!
//! A plain `RwLock<HashMap>` behind closures rather than a concurrent map: all handlers run inside one
//! task, so sharding buys nothing, and an API that never hands out a guard cannot hold one across an
//! `.await` (the deadlock that map guards invite).

use std::collections::HashMap;
use std::sync::RwLock;

use ropey::Rope;
use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;

use super::convert::{self, Encoding};

#[derive(Debug, Clone)]
pub(crate) struct Document {
    /// The URI exactly as the client sent it: edits are addressed back with it.
    pub(crate) uri: String,
    pub(crate) rope: Rope,
    pub(crate) version: i32,
}

pub struct Documents {
    map: RwLock<HashMap<String, Document>>,
    /// Bumped on every open, change and close, so a plan waiting for the editor's didChange after
    /// `workspace/applyEdit` wakes when it arrives instead of polling.
    generation: tokio::sync::watch::Sender<u64>,
    /// Real path (symbolic links resolved) -> key, for documents opened through a link: a plan that
    /// names the link's target still finds the buffer.
    aliases: RwLock<HashMap<String, String>>,
}

/// The key of the file's real path, when it differs from `key` (the file is reached through a link).
fn real_key(key: &str) -> Option<String> {
    if !key.starts_with('/') {
        return None;
    }
    let real = convert::path_key(&std::fs::canonicalize(key).ok()?);
    (real != key).then_some(real)
}

impl Default for Documents {
    fn default() -> Self {
        Documents {
            map: RwLock::default(),
            generation: tokio::sync::watch::Sender::new(0),
            aliases: RwLock::default(),
        }
    }
}

impl Documents {
    /// A receiver that sees every later open, change and close.
    pub(crate) fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.generation.subscribe()
    }

    fn bump(&self) {
        self.generation.send_modify(|g| *g += 1);
    }

    fn read<R>(&self, f: impl FnOnce(&HashMap<String, Document>) -> R) -> R {
        // A panic elsewhere while holding the lock must not take every later request down with it.
        let guard = self.map.read().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    fn write<R>(&self, f: impl FnOnce(&mut HashMap<String, Document>) -> R) -> R {
        let mut guard = self.map.write().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    pub(crate) fn open(&self, uri: &str, text: &str, version: i32) {
        let doc = Document {
            uri: uri.to_string(),
            rope: Rope::from_str(text),
            version,
        };
        let key = convert::uri_key(uri);
        if let Some(real) = real_key(&key) {
            self.aliases
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(real, key.clone());
        }
        self.write(|m| m.insert(key, doc));
        self.bump();
    }

    pub(crate) fn close(&self, uri: &str) -> bool {
        let key = convert::uri_key(uri);
        self.aliases
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, k| *k != key);
        let closed = self.write(|m| m.remove(&key).is_some());
        self.bump();
        closed
    }

    /// Applies one didChange: its changes in order, each against the text the previous one left.
    /// Returns false if the document is not open (the change is then ignored).
    pub fn change(
        &self,
        uri: &str,
        version: i32,
        changes: &[TextDocumentContentChangeEvent],
        enc: Encoding,
    ) -> bool {
        let key = convert::uri_key(uri);
        let changed = self.write(|m| {
            let Some(doc) = m.get_mut(&key) else {
                return false;
            };
            for c in changes {
                match c.range {
                    None => doc.rope = Rope::from_str(&c.text),
                    Some(range) => {
                        let r = convert::range_to_chars(&doc.rope, range, enc);
                        if !r.is_empty() {
                            doc.rope.remove(r.clone());
                        }
                        if !c.text.is_empty() {
                            doc.rope.insert(r.start, &c.text);
                        }
                    }
                }
            }
            doc.version = version;
            true
        });
        self.bump();
        changed
    }

    /// A copy of the document (O(1): ropes share their nodes) that later changes do not affect.
    pub(crate) fn snapshot(&self, key: &str) -> Option<Document> {
        self.read(|m| m.get(key).cloned())
    }

    /// The open document for a plan's file, also when the plan and the editor name it through
    /// different symbolic links.
    pub(crate) fn find(&self, key: &str) -> Option<Document> {
        if let Some(doc) = self.snapshot(key) {
            return Some(doc);
        }
        let real = real_key(key).unwrap_or_else(|| key.to_string());
        if let Some(doc) = self.snapshot(&real) {
            return Some(doc);
        }
        let alias = self
            .aliases
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&real)
            .cloned()?;
        self.snapshot(&alias)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn change(sl: u32, sc: u32, el: u32, ec: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(sl, sc), Position::new(el, ec))),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn changes_apply_in_sequence_with_utf16_columns() {
        let docs = Documents::default();
        docs.open("file:///t/a.txt", "😀x😀\nline two\n", 1);
        let changes = [
            change(0, 2, 0, 3, "y"),
            change(0, 5, 0, 5, "!"),
            change(1, 0, 1, 4, "LINE"),
        ];
        assert!(docs.change("file:///t/a.txt", 2, &changes, Encoding::Utf16));
        let d = docs.snapshot("/t/a.txt").unwrap();
        assert_eq!(d.rope.to_string(), "😀y😀!\nLINE two\n");
        assert_eq!(d.version, 2);
        assert!(!docs.change("file:///t/other.txt", 2, &changes, Encoding::Utf16));
    }

    #[test]
    fn absurd_ranges_do_not_panic() {
        let docs = Documents::default();
        docs.open("file:///t/a.txt", "ab", 1);
        docs.change(
            "file:///t/a.txt",
            2,
            &[change(7, 9, 0, 1, "Z"), change(0, 99, 99, 99, "!")],
            Encoding::Utf8,
        );
        assert_eq!(docs.snapshot("/t/a.txt").unwrap().rope.to_string(), "aZb!");
    }
}
