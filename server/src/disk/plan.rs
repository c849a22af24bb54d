//! A plan applied to the files on disk: recover what an interrupted plan left, read the files, run the
//! engine, write every file or none. The one disk path: `multiedit apply` and `multiedit mcp` both
//! call `apply`.

use std::path::PathBuf;

use crate::engine::{self, diff, FileOp, Outcome, Plan, Refusal};
use crate::paths;

/// A plan that was applied (or, for a dry run, checked): the engine's outcome, and for a dry run the
/// unified diff of what it would write.
pub type Applied = (Outcome, Option<String>);

/// Validates, computes and (unless `dry_run`) writes. Returns the outcome and, for dry runs, the diff.
/// An interrupted plan met in a folder of this one is completed or rolled back before that folder is
/// read (dry runs too: a diff against a half-applied plan would show the wrong files), and reported in
/// `recovered`.
pub fn apply(plan: &Plan, dry_run: bool, recovered: &mut Vec<super::Recovered>) -> Result<Applied, Refusal> {
    let mut paths_on_disk: Vec<PathBuf> = Vec::with_capacity(plan.files.len());
    let mut bytes: Vec<Option<Vec<u8>>> = Vec::with_capacity(plan.files.len());
    for f in &plan.files {
        let p = paths::to_path(&f.file_path)?;
        recovered.extend(super::recover(std::slice::from_ref(&p))?);
        bytes.push(super::read(&p).map_err(|r| r.in_file(&f.file_path))?);
        paths_on_disk.push(p);
    }
    let texts = plan
        .files
        .iter()
        .zip(&bytes)
        .map(|(f, b)| b.as_deref().map(|b| engine::decode(&f.file_path, b)).transpose())
        .collect::<Result<Vec<Option<&str>>, Refusal>>()?;
    let moves = move_targets(plan, recovered)?;
    let outcome = engine::apply_plan(plan, &texts)?;
    if dry_run {
        let diff: String = outcome
            .files
            .iter()
            .zip(&texts)
            .map(|(f, before)| diff::file_diff(f, before.unwrap_or("")))
            .collect();
        return Ok((outcome, Some(diff)));
    }
    let mut writes = Vec::new();
    for ((f, path), before) in outcome.files.iter().zip(paths_on_disk).zip(bytes) {
        match &f.op {
            FileOp::Delete => writes.push(super::Write1 { path, before, after: None }),
            FileOp::MoveTo(_) => {
                let to = moves.iter().find(|(from, _)| *from == path).map(|(_, to)| to.clone()).expect("checked above");
                writes.push(super::Write1 { path: to, before: None, after: Some(f.text.clone().into_bytes()) });
                writes.push(super::Write1 { path, before, after: None });
            }
            FileOp::Edit | FileOp::Create if !f.replacements.is_empty() || f.created => {
                writes.push(super::Write1 { path, before, after: Some(f.text.clone().into_bytes()) })
            }
            FileOp::Edit | FileOp::Create => {}
        }
    }
    super::commit(writes)?;
    Ok((outcome, None))
}

/// The paths files are moved to, each with the path it comes from. A move never replaces a file: one
/// onto a path that exists, or that another file of the plan also takes, is refused as `file_exists`.
fn move_targets(plan: &Plan, recovered: &mut Vec<super::Recovered>) -> Result<Vec<(PathBuf, PathBuf)>, Refusal> {
    let mut moves: Vec<(PathBuf, PathBuf)> = Vec::new();
    for f in &plan.files {
        let FileOp::MoveTo(to) = &f.op else { continue };
        let from = paths::to_path(&f.file_path)?;
        let to_path = paths::to_path(to)?;
        recovered.extend(super::recover(std::slice::from_ref(&to_path))?);
        let taken = plan.files.iter().any(|g| paths::to_path(&g.file_path).is_ok_and(|p| p == to_path))
            || moves.iter().any(|(_, t)| *t == to_path);
        if taken || super::read(&to_path)?.is_some() {
            return Err(Refusal::move_target_exists(&f.file_path, to));
        }
        moves.push((from, to_path));
    }
    Ok(moves)
}
