//! `multiedit_symbols`: a file's outline from the user's language servers, through the editor that
//! holds the file (the editor's `multiedit.symbols`). Without such an editor there are no symbols to
//! give: multiedit reads none itself (docs/plans.md, "Symbols").

use std::path::PathBuf;

use rmcp::model::CallToolResult;
use serde_json::{json, Value};

use super::render;
use crate::bridge::{self, Intent, Routed};
use crate::language_servers;
use crate::paths;
use crate::refusal::Refusal;
use crate::result::SymbolsResult;

/// The tool's one argument, `file_path`, as an absolute path.
pub(crate) fn request(args: &Value) -> Result<(String, PathBuf), Refusal> {
    if let Some(k) = args
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "file_path"))
    {
        return Err(Refusal::input(format!(
            "multiedit_symbols takes file_path only; `{k}` is not it"
        )));
    }
    let file_path =
        match args.get("file_path") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(Refusal::input(format!(
                    "`file_path` must be a string, not {other}"
                )))
            }
            None => return Err(Refusal::input(
                "`file_path` is missing: give the absolute path of the file whose outline to give",
            )),
        };
    let path = paths::to_path(&file_path)?;
    if !path.is_absolute() {
        return Err(Refusal::input(format!(
            "`file_path` must be an absolute path, not {file_path}"
        )));
    }
    Ok((file_path, path))
}

/// Asks the editor that holds the file, else the language server multiedit starts for it where the
/// user allowed that; answers with its outline, or why there is none.
pub(crate) async fn call(
    file_path: String,
    path: PathBuf,
    agent: Option<String>,
    ctx: language_servers::Context,
) -> CallToolResult {
    let request = json!({"file_path": file_path});
    let routed = tokio::spawn(async move {
        let sender = bridge::Sender {
            agent: agent.as_deref(),
            allow: Default::default(),
        };
        bridge::route_from::<SymbolsResult>(&request, &[path], Intent::Symbols, sender).await
    })
    .await;
    match routed {
        Ok(Routed::Answered { editor, answer }) => {
            let r = render(&answer, Some(&editor));
            super::render::with_earlier(r, &answer.earlier_diagnostics)
        }
        Ok(Routed::Refused { editor, refusal }) => render::refusal(&refusal, Some(&editor)),
        Ok(Routed::Blind { refusal }) => render::refusal(&refusal, None),
        Ok(Routed::NoEditor { reason }) => {
            match language_servers::outline(&file_path, &reason, &ctx).await {
                Ok(outline) => render(&outline, None),
                Err(refusal) => render::refusal(&refusal, None),
            }
        }
        Err(e) => render::internal(format!("multiedit hit an internal error while asking the editors for symbols ({e}). Please report it.")),
    }
}

/// The outline, and where it came from: an editor (`editor`), else a server multiedit started.
fn render(outline: &SymbolsResult, editor: Option<&str>) -> CallToolResult {
    let from = match editor {
        Some(e) => format!("From {e}."),
        None => {
            "From a language server multiedit started for this project (no editor holds the file)."
                .to_string()
        }
    };
    let text = format!("{}\n{from}", outline.text.trim_end());
    let mut structured = serde_json::to_value(outline).expect("an outline serialises");
    structured["ok"] = json!(true);
    if let Some(e) = editor {
        structured["editor"] = json!(e);
    }
    super::render::result(text, structured, false)
}
