//! `setup --undo-route-edits`: what setup wrote taken back, only where it is still as setup wrote it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::result::sha256;

use super::record::{read_records, unsplice, write_records, Record};
use super::rules::{targets, Target};
use super::splice::take_back;
use crate::cli::agents::{Agent, Scope};
use crate::cli::config_file::{inside_project, line_diff, read_resolved, writable, write_atomic};

/// Takes back what `route` wrote for `agent` in `scope`. `Ok` says what was done, with what was left
/// because the user changed it.
pub(crate) fn undo(
    agent: Agent,
    scope: Scope,
    project: &Path,
    agents_md: bool,
    dry_run: bool,
) -> Result<String, (String, String)> {
    let name = agent.name();
    let paths: Vec<PathBuf> = targets(agent, scope, project, agents_md, "", true)
        .map_err(|why| (String::new(), why))?
        .into_iter()
        .filter_map(|t| match t {
            Target::None(_) => None,
            Target::Json { path, .. }
            | Target::File { path, .. }
            | Target::Block { path, .. }
            | Target::Toml { path, .. } => Some(path),
        })
        .collect();
    if paths.is_empty() {
        return Ok(format!(
            "{name}: nothing to undo (setup writes no switch for it here)\n"
        ));
    }
    let mut said = String::new();
    let mut nothing = Vec::new();
    for path in paths {
        match undo_one(agent, scope, project, path, dry_run) {
            Ok(Ok(one)) => said.push_str(&one),
            Ok(Err(none)) => nothing.push(none),
            Err(why) => return Err((said, why)),
        }
    }
    if said.is_empty() {
        if let Some(first) = nothing.first() {
            said = first.clone();
        }
    }
    Ok(said)
}

/// Takes back what `route` wrote in `path`: `Ok(Ok(said))`, or `Ok(Err(said))` when there was no
/// record of it.
fn undo_one(
    agent: Agent,
    scope: Scope,
    project: &Path,
    path: PathBuf,
    dry_run: bool,
) -> Result<Result<String, String>, String> {
    let name = agent.name();
    // Nothing is read, written or removed through a link that leads out of the project (`load`).
    if scope == Scope::Project && path.starts_with(project) {
        inside_project(&path, project, "take back what setup wrote there by hand")?;
    }
    // Resolved as `load` resolved it when the record was made.
    let real = crate::paths::real_path(&path).unwrap_or(path.clone());
    let (records_at, mut records) = read_records()?;
    let Some(i) = records.routes.iter().position(|r| r.file == real) else {
        return Ok(Err(format!(
            "{name}: nothing to undo in {}: setup did not route its edits there\n",
            real.display()
        )));
    };
    let record = records.routes[i].clone();
    let shown = real.display().to_string();
    let Some(current) = read_current(&real)? else {
        if !dry_run {
            records.routes.remove(i);
            write_records(&records_at, &records)?;
        }
        return Ok(Ok(format!("{name}: {shown} is gone; nothing to undo\n")));
    };
    // As setup left it: the bytes from before, exactly.
    let unchanged = sha256(&current) == record.after_sha256;
    let (after, left) = taken_back(&record, &current, unchanged);
    let mut said = put_back(
        name,
        &real,
        &current,
        after.as_deref(),
        unchanged,
        &record,
        dry_run,
    )?;
    for why in &left {
        said.push_str(&format!("  {why}\n"));
    }
    if !dry_run {
        records.routes.remove(i);
        write_records(&records_at, &records)?;
    }
    Ok(Ok(said))
}

/// The text of the recorded file `real` now, `None` when it is gone.
fn read_current(real: &Path) -> Result<Option<String>, String> {
    let shown = real.display();
    match read_resolved(real) {
        Ok(bytes) => Ok(Some(String::from_utf8(bytes).map_err(|_| {
            format!("{shown} is not UTF-8 text any more; left unchanged")
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {shown} ({e}); left unchanged")),
    }
}

/// What the file `record` names should hold once what setup wrote is taken back from `current`
/// (`None`: removed, as it was not there), and what was left, and why. `unchanged`: `current` is
/// as setup left it, so the bytes from before come back exactly.
fn taken_back(record: &Record, current: &str, unchanged: bool) -> (Option<String>, Vec<String>) {
    if unchanged && record.created {
        return (None, Vec::new());
    }
    if let Some(before) = unchanged
        .then(|| unsplice(current, &record.undo))
        .flatten()
        .filter(|_| !record.undo.is_empty())
    {
        return (Some(before), Vec::new());
    }
    let mut text = current.to_string();
    let mut left = Vec::new();
    for w in &record.wrote {
        let (new, why) = take_back(&text, w);
        text = new;
        left.extend(why);
    }
    // A file setup made that holds nothing else now is removed, as it was not there.
    let empty = record.created
        && serde_json::from_str::<Value>(&text)
            .is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty()));
    if empty || (record.created && text.trim().is_empty()) {
        (None, left)
    } else {
        (Some(text), left)
    }
}

/// Writes `after` over `current` at `real` (`None`: removes the file, and the folders setup made
/// for it), unless `dry_run`, and says what was (or would have been) done.
fn put_back(
    name: &str,
    real: &Path,
    current: &str,
    after: Option<&str>,
    unchanged: bool,
    record: &Record,
    dry_run: bool,
) -> Result<String, String> {
    let shown = real.display();
    let verb = if dry_run { "would have " } else { "" };
    match after {
        Some(text) if text == current => Ok(format!("{name}: {shown} left as it is\n")),
        Some(text) => {
            writable(real, "remove the rules by hand")?;
            if !dry_run {
                write_atomic(real, text)
                    .map_err(|e| format!("cannot write {shown} ({e}); left unchanged"))?;
            }
            let how = if unchanged {
                " (as it was before setup, byte for byte)"
            } else {
                ""
            };
            Ok(format!(
                "{name}: {verb}restored {shown}{how}:\n{}",
                line_diff(current, text)
            ))
        }
        None => {
            if !dry_run {
                crate::disk::atomic::remove_resolved(real)
                    .map_err(|e| format!("cannot remove {shown} ({e}); left unchanged"))?;
                // The folders setup made, if nothing else is in them now. By path: a folder swapped
                // for a link since is not removed (rmdir never follows one), and one elsewhere that
                // a swapped folder above leads to is removed only if empty.
                for d in record.folders.iter().rev() {
                    let _ = std::fs::remove_dir(d);
                }
            }
            Ok(format!(
                "{name}: {verb}removed {shown}, which setup had made\n"
            ))
        }
    }
}
