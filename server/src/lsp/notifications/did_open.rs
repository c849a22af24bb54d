use tower_lsp_server::ls_types::DidOpenTextDocumentParams;

use crate::lsp::session::Session;

pub(crate) fn run(session: &Session, p: DidOpenTextDocumentParams) -> Result<(), String> {
    let d = p.text_document;
    session.documents.open(d.uri.as_str(), &d.text, d.version);
    Ok(())
}
