//! A plan applied to the files on disk: recover what an interrupted plan left, read the files, run the
//! engine, write every file or none. The one disk path: `multiedit apply` and `multiedit mcp` both
//! call `apply`.

use std::path::PathBuf;

use crate::engine::{self, diff, Outcome, Plan, Refusal};
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
    let outcome = engine::apply_plan(plan, &texts)?;
    if dry_run {
        let diff: String = outcome
            .files
            .iter()
            .zip(&texts)
            .map(|(f, before)| diff::unified(&f.file_path, before.unwrap_or(""), &f.replacements))
            .collect();
        return Ok((outcome, Some(diff)));
    }
    let writes = outcome
        .files
        .iter()
        .zip(paths_on_disk)
        .zip(bytes)
        .filter(|((f, _), _)| !f.replacements.is_empty() || f.created)
        .map(|((f, path), before)| super::Write1 { path, before, after: f.text.clone().into_bytes() })
        .collect();
    super::commit(writes)?;
    Ok((outcome, None))
}
