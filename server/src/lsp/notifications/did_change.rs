use tower_lsp_server::ls_types::DidChangeTextDocumentParams;

use crate::lsp::session::Session;

pub(crate) fn run(session: &Session, p: DidChangeTextDocumentParams) -> Result<(), String> {
    let d = p.text_document;
    if session.documents.change(
        d.uri.as_str(),
        d.version,
        &p.content_changes,
        session.encoding(),
    ) {
        Ok(())
    } else {
        Err(format!(
            "Ignoring textDocument/didChange for {}, which is not open",
            d.uri.as_str()
        ))
    }
}
