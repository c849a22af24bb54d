//! `multiedit.symbols`: a file's outline (names, kinds, lines, nesting) from the editor's language
//! servers, so that an agent can address a symbol without reading the whole file. Changes nothing.

use serde_json::Value;
use tower_lsp_server::Client;

use super::shared::Failure;
use crate::lsp::session::Session;
use crate::lsp::symbols;
use crate::refusal::Refusal;

pub(crate) async fn run(
    session: &Session,
    client: &Client,
    arguments: &[Value],
) -> Result<Value, Failure> {
    let file_path = match arguments.first().and_then(|a| a.get("file_path")) {
        Some(Value::String(p)) => p.clone(),
        _ => return Err(Failure::Refused(Refusal::input("multiedit.symbols takes {\"file_path\": \"/abs/path\"}: the file whose outline to give"))),
    };
    let config = session.config();
    let outline = symbols::outline_of(session, client, &config, &file_path)
        .await
        .map_err(Failure::Refused)?;
    Ok(serde_json::to_value(outline).expect("an outline serialises"))
}
