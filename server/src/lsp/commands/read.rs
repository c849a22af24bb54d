//! `multiedit.read`: files as the user sees them, the editor's buffers with their unsaved changes, else
//! the disk, confined to the workspace as a plan is. What `multiedit_read` gives an agent whose own
//! file reads see only the disk.

use serde_json::Value;

use super::shared::Failure;
use crate::engine::{self};
use crate::gate::{self, Access, Gate, Who};
use crate::lsp::convert;
use crate::lsp::request::Origin;
use crate::lsp::session::Session;
use crate::refusal::Refusal;
use crate::result::{Place, ReadFile, ReadResult};
use crate::{disk, paths};

/// The paths a read names: `{"file_path"}` or `{"files": [{"file_path"}, ...]}` (the shape of a plan,
/// edits left out), the first argument of the command.
pub(crate) fn paths_of(request: &Value) -> Result<Vec<String>, Refusal> {
    let list: Vec<&Value> = match (request.get("file_path"), request.get("files")) {
        (Some(one), None) => vec![one],
        (None, Some(Value::Array(files))) if !files.is_empty() => files.iter().map(|f| f.get("file_path").unwrap_or(&Value::Null)).collect(),
        _ => {
            return Err(Refusal::input(
                "multiedit.read takes {\"file_path\": \"/abs/path\"} or {\"files\": [{\"file_path\": \"/abs/path\"}, ...]}",
            ))
        }
    };
    list.into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str().map(str::to_string).ok_or_else(|| {
                Refusal::input(format!("file {i}'s `file_path` must be a string, not {v}"))
            })
        })
        .collect()
}

pub(crate) fn run(
    session: &Session,
    origin: Origin,
    arguments: &[Value],
) -> Result<Value, Failure> {
    let request = arguments.first().ok_or_else(|| {
        Failure::Refused(Refusal::input(
            "multiedit.read takes the files to read as its argument",
        ))
    })?;
    let config = session.config();
    let mut files = Vec::new();
    let names = paths_of(request).map_err(Failure::Refused)?;
    // The gate: nothing of multiedit's private folders (the bridge's tokens are there), nor of .git for
    // an agent's read through the bridge.
    let gate = Gate {
        who: if origin.is_bridge() {
            Who::Agent
        } else {
            Who::Person
        },
        allow: match origin {
            Origin::Bridge(allow) => config.allow.or(allow),
            Origin::Editor => config.allow,
        },
        folders: Some(config.workspace.folders_held()),
    };
    gate.judge(
        Access::Read,
        names.iter().map(String::as_str),
        &gate::BRIDGE_OPT_OUT,
    )
    .map_err(Failure::Refused)?;
    for file_path in names {
        let path = paths::to_path(&file_path).map_err(|r| Failure::Refused(r.into()))?;
        let open = session.documents.find(&convert::path_key(&path));
        // Resolved once, confined on that resolution and read there without following a link: a folder
        // swapped for a link after the check is refused, never followed out of the workspace.
        let real = disk::resolve(&path, false);
        config
            .workspace
            .check(&file_path, &path, open.is_some())
            .and_then(|()| config.workspace.check(&file_path, &real, open.is_some()))
            .map_err(Failure::Refused)?;
        let on_disk = disk::read_at(&path, Some(&real))
            .map_err(|r| Failure::Refused(r.in_file(&file_path)))?;
        files.push(match open {
            Some(doc) => {
                let text = doc.rope.to_string();
                let differs_from_disk = on_disk.as_deref() != Some(text.as_bytes());
                ReadFile {
                    file_path,
                    text,
                    source: Place::Editor,
                    differs_from_disk,
                }
            }
            None => {
                let bytes = on_disk.ok_or_else(|| Failure::Refused(not_found(&file_path)))?;
                let text = engine::decode(&file_path, &bytes)
                    .map_err(|r| Failure::Refused(r.into()))?
                    .to_string();
                ReadFile {
                    file_path,
                    text,
                    source: Place::Disk,
                    differs_from_disk: false,
                }
            }
        });
    }
    Ok(serde_json::to_value(ReadResult {
        files,
        earlier_diagnostics: Vec::new(),
    })
    .expect("a read serialises"))
}

pub(crate) fn not_found(file_path: &str) -> Refusal {
    Refusal::of(
        engine::Kind::FileNotFound,
        format!("File does not exist: {file_path}. Nothing was read."),
    )
    .in_file(file_path)
}
