//! `multiedit_write`: create a file or replace its whole text. Through an editor that holds the file,
//! the editor's `multiedit.apply` takes the write (`crate::write`: checked against the buffer, sent as
//! the lines that change, so review, one undo, diagnostics and saving are those of any plan); else
//! the file is written on disk atomically (a temporary file renamed over it, refused if the file
//! changed since it was read). One file: no journal is needed.

use rmcp::model::CallToolResult;

use super::render::{self, internal};
use crate::process::catch_panic;
use crate::refusal::Refusal;
use crate::write::WriteRequest;
use crate::{disk, engine, paths};

pub(crate) const DESCRIPTION: &str = "\
Create a file, or replace all its text: file_path, content and, to replace a file, the sha256 of its \
text as you last read it (multiedit_read and multiedit's results show it). A file changed since is \
refused: read it again. Through an editor holding it, it lands in the buffer as the lines that change. \
Prefer multiedit for changes to some lines.";

/// The write on disk: no editor holds the file.
pub(crate) async fn on_disk(
    request: WriteRequest,
    reason: &str,
    confine: Option<std::sync::Arc<paths::Folders>>,
) -> CallToolResult {
    let done = tokio::task::spawn_blocking(move || {
        catch_panic("multiedit_write", || write(&request, confine.as_deref()))
    })
    .await;
    match done {
        Ok(Ok(Ok((outcome, recovered)))) => {
            for r in &recovered {
                crate::process::err(&format!(
                    "multiedit mcp: {}\n",
                    r.report("before this write")
                ));
            }
            let mut written = crate::result::PlanResult::of(&outcome);
            written.add_sha256_written(&outcome);
            render::disk(written, None, reason, &recovered)
        }
        Ok(Ok(Err(refusal))) => render::refusal(&refusal, None),
        Ok(Err(bug)) => internal(bug),
        Err(e) => internal(format!(
            "multiedit hit an internal error in multiedit_write ({e}); please report it."
        )),
    }
}

fn write(
    request: &WriteRequest,
    confine: Option<&paths::Folders>,
) -> Result<(engine::Outcome, Vec<disk::Recovered>), Refusal> {
    let path = paths::to_path(&request.file_path)?;
    disk::refuse_private(&engine::Plan {
        files: vec![engine::FilePlan::edit(
            request.file_path.clone(),
            Vec::new(),
        )],
        options: engine::Options::default(),
        rename: None,
    })?;
    // An interrupted plan in this folder is finished (or rolled back) before the file is read.
    let recovered = disk::recover(std::slice::from_ref(&path), false)?;
    // Resolved once and confined again on what it resolved to: a folder swapped for a link since the
    // first check cannot carry the write out (`disk::plan` does the same for plans).
    let real = disk::resolve(&path, false);
    disk::plan::still_inside(confine, &request.file_path, &real)?;
    let before = disk::read_at(&path, Some(&real)).map_err(|r| r.in_file(&request.file_path))?;
    let text = before
        .as_deref()
        .map(|b| engine::decode(&request.file_path, b))
        .transpose()?;
    let outcome = request.outcome(text, || false)?;
    let after = outcome.files[0].text.clone().into_bytes();
    disk::commit(vec![disk::Write1 {
        path: real,
        before,
        after: Some(after),
        mode: None,
    }])?;
    Ok((outcome, recovered))
}
