//! The server's refusals: the engine's kinds (what a plan, a patch or the text makes it refuse), and
//! those of what only the server does (the disk, the editor, the gate, the language servers), which
//! wrap them. On the wire both are one flat list of names (`kind`), unchanged by the wrapping.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine;

/// A refusal as the server gives it: the engine's `Refusal` with the server's kinds.
pub type Refusal = engine::Refusal<Kind>;

/// Why the server refused: one of the engine's kinds, or one of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// What the engine refused: the plan, a patch or the text.
    Engine(engine::Kind),
    /// The server could not read, write or reach the file.
    Io,
    /// The file lies outside the folders the caller may edit.
    OutsideWorkspace,
    /// The user declined the change in the editor (its approval, or its review).
    Declined,
    /// The user did not decide on the change in time: it was withdrawn and will not be applied.
    Undecided,
    /// An editor that holds the files is running but did not take the plan in time: nothing was
    /// changed anywhere; try again.
    Busy,
    /// multiedit itself failed (a bug caught before it could change anything).
    InternalError,
    /// A whole-file write whose file is not the text the caller read (its sha256 differs), or that
    /// replaces a file without saying which text it read.
    Stale,
    /// The file's language has no language server in the editor that gives symbols (or renames).
    NoLanguageServer,
    /// No symbol of the file has the name path (the hint gives the file's outline).
    SymbolNotFound,
    /// Several symbols have the name path (the hint lists each with its line).
    SymbolAmbiguous,
    /// `replace: "body"` where the file's own delimiters do not settle the body.
    NoBody,
    /// The editor's language server refused the rename (its words are in the message).
    RenameRefused,
    /// An agent's write to a file where an agent's permissions, MCP servers or hooks, or an editor's
    /// automatic tasks, are configured, with nobody to ask the user (`gate`).
    Protected,
    /// The agent runs in a mode where its own edit tools write nothing (Codex's read-only sandbox), so
    /// multiedit writes nothing for it either.
    ReadOnly,
}

/// The server's own kinds, in declaration order.
const OWN: [Kind; 14] = [
    Kind::Io,
    Kind::OutsideWorkspace,
    Kind::Declined,
    Kind::Undecided,
    Kind::Busy,
    Kind::InternalError,
    Kind::Stale,
    Kind::NoLanguageServer,
    Kind::SymbolNotFound,
    Kind::SymbolAmbiguous,
    Kind::NoBody,
    Kind::RenameRefused,
    Kind::Protected,
    Kind::ReadOnly,
];

impl Kind {
    /// Every kind: the engine's, then the server's own (the wire contract lists them:
    /// `server/src/lsp/typescript.rs`).
    pub fn all() -> impl Iterator<Item = Kind> {
        engine::Kind::ALL.into_iter().map(Kind::Engine).chain(OWN)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Engine(k) => k.as_str(),
            Kind::Io => "io",
            Kind::OutsideWorkspace => "outside_workspace",
            Kind::Declined => "declined",
            Kind::Undecided => "undecided",
            Kind::Busy => "busy",
            Kind::InternalError => "internal_error",
            Kind::Stale => "stale",
            Kind::NoLanguageServer => "no_language_server",
            Kind::SymbolNotFound => "symbol_not_found",
            Kind::SymbolAmbiguous => "symbol_ambiguous",
            Kind::NoBody => "no_body",
            Kind::RenameRefused => "rename_refused",
            Kind::Protected => "protected",
            Kind::ReadOnly => "read_only",
        }
    }
}

impl From<engine::Kind> for Kind {
    fn from(k: engine::Kind) -> Kind {
        Kind::Engine(k)
    }
}

impl engine::Wraps for Kind {}

/// So that a refusal's kind is compared with one of the engine's as it is with one of the server's.
impl PartialEq<engine::Kind> for Kind {
    fn eq(&self, other: &engine::Kind) -> bool {
        *self == Kind::Engine(*other)
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        let name = String::deserialize(d)?;
        Kind::all()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown refusal kind {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `OWN` holds every one of the server's kinds once, in order: one added to the enum and not to
    /// the list stops this match from compiling, one listed twice or out of place fails.
    #[test]
    fn own_lists_every_kind_once() {
        for (i, k) in OWN.iter().enumerate() {
            let at = match k {
                Kind::Engine(_) => usize::MAX,
                Kind::Io => 0,
                Kind::OutsideWorkspace => 1,
                Kind::Declined => 2,
                Kind::Undecided => 3,
                Kind::Busy => 4,
                Kind::InternalError => 5,
                Kind::Stale => 6,
                Kind::NoLanguageServer => 7,
                Kind::SymbolNotFound => 8,
                Kind::SymbolAmbiguous => 9,
                Kind::NoBody => 10,
                Kind::RenameRefused => 11,
                Kind::Protected => 12,
                Kind::ReadOnly => 13,
            };
            assert_eq!(at, i, "{k:?}");
        }
    }

    /// On the wire a kind is its flat name, the engine's as the server's, and reads back as itself.
    #[test]
    fn kinds_travel_by_their_flat_names() {
        let names: Vec<&str> = Kind::all().map(Kind::as_str).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for k in Kind::all() {
            let v = serde_json::to_value(k).unwrap();
            assert_eq!(v, k.as_str());
            assert_eq!(serde_json::from_value::<Kind>(v).unwrap(), k);
        }
        assert_eq!(
            serde_json::to_value(Kind::Engine(engine::Kind::NotFound)).unwrap(),
            "not_found"
        );
        assert!(serde_json::from_value::<Kind>("nope".into()).is_err());
    }
}
