//! The folders whose files may be edited follow the editor's workspace.

use tower_lsp_server::ls_types::DidChangeWorkspaceFoldersParams;

use crate::lsp::session::Session;

/// Returns warnings about folders that could not be used.
pub(crate) fn run(session: &Session, params: &DidChangeWorkspaceFoldersParams) -> Vec<String> {
    let mut warnings = Vec::new();
    session.update_config(|c| {
        for f in &params.event.removed {
            c.workspace.remove(f.uri.as_str());
        }
        for f in &params.event.added {
            if let Err(w) = c.workspace.add(f.uri.as_str()) {
                warnings.push(w);
            }
        }
    });
    warnings
}
