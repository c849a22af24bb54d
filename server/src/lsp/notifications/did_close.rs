use tower_lsp_server::ls_types::DidCloseTextDocumentParams;

use crate::lsp::session::Session;

pub(crate) fn run(session: &Session, p: DidCloseTextDocumentParams) -> Result<(), String> {
    if session.documents.close(p.text_document.uri.as_str()) {
        Ok(())
    } else {
        Err(format!(
            "Ignoring textDocument/didClose for {}, which is not open",
            p.text_document.uri.as_str()
        ))
    }
}
