//! One edited document as the delta needs it: its text before and after, and the replacements between.

use crate::engine::Replacement;

/// An `Edited` that owns its texts, for a delta computed after the plan's answer went out.
pub(crate) struct OwnedEdited {
    file_path: String,
    uri: String,
    before: String,
    after: String,
    replacements: Vec<Replacement>,
    then: Vec<Replacement>,
    was_open: bool,
}

impl OwnedEdited {
    pub(crate) fn of(e: &Edited<'_>) -> OwnedEdited {
        OwnedEdited {
            file_path: e.file_path.to_string(),
            uri: e.uri.clone(),
            before: e.before.to_string(),
            after: e.after.to_string(),
            replacements: e.replacements.to_vec(),
            then: e.then.to_vec(),
            was_open: e.was_open,
        }
    }

    pub(crate) fn view(&self) -> Edited<'_> {
        Edited {
            file_path: &self.file_path,
            uri: self.uri.clone(),
            before: &self.before,
            after: &self.after,
            replacements: &self.replacements,
            then: &self.then,
            differs: false,
            was_open: self.was_open,
        }
    }
}

/// One edited document, as the delta needs it.
pub(crate) struct Edited<'a> {
    pub(crate) file_path: &'a str,
    pub(crate) uri: String,
    pub(crate) before: &'a str,
    /// The text once the editor applied the plan: the plan's, or the editor's where it changed the
    /// edit (`now_reads`).
    pub(crate) after: &'a str,
    pub(crate) replacements: &'a [Replacement],
    /// What the editor changed on top of the plan's text (offsets in it), taking it to `after`.
    pub(crate) then: &'a [Replacement],
    /// The text changed after the editor applied the plan (typed since): nothing maps its diagnostics.
    pub(crate) differs: bool,
    /// The editor had the document open before the edit (else its language servers may never have
    /// checked it: no diagnostics before means nothing to compare with).
    pub(crate) was_open: bool,
}
