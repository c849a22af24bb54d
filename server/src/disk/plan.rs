//! A plan applied to the files on disk: recover what an interrupted plan left, read the files, run the
//! engine, write every file or none. The one disk path: `multiedit apply` and `multiedit mcp` both
//! call `apply`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::commit::commit;
use super::folders::Steps;
use super::journal::{recover, Recovered};
use super::permissions::mode_of;
use super::private::refuse_inside as refuse_private;
use super::read::{read, read_at, resolve};
use super::stage::Write1;
use crate::engine::{self, diff, FileOp, FilePlan, Outcome, Plan};
use crate::paths;
use crate::refusal::{Kind, Refusal};
use crate::symbols::{retain_by, Resolved};

/// A plan that was applied (or, for a dry run, checked): the engine's outcome, and for a dry run the
/// unified diff of what it would write.
pub(crate) type Applied = (Outcome, Option<String>);

/// What turns a plan's symbol edits and rename into exact spans once its texts are read (per file of
/// the plan, `None` for one that does not exist): `crate::symbols::resolve` on the answers of the
/// language servers multiedit started (`language_servers`).
pub(crate) type Resolve<'a> = &'a dyn Fn(&mut Plan, &[Option<&str>]) -> Result<Resolved, Refusal>;

/// A plan applied with `apply_with`.
pub(crate) struct Written {
    /// The plan as run: resolved, without the files a rename reached but left unchanged.
    pub(crate) plan: Option<Plan>,
    pub(crate) outcome: Outcome,
    pub(crate) diff: Option<String>,
    /// The texts read, per file of the plan as run (kept only when asked: the diagnostics delta).
    pub(crate) read: Vec<Option<String>>,
    pub(crate) resolved: Option<Resolved>,
}

/// Validates, computes and (unless `dry_run`) writes. Returns the outcome and, for dry runs, the diff.
/// An interrupted plan of this user's met in a folder of this one is completed or rolled back before
/// that folder is read, and reported in `recovered`; a dry run writes nothing, so it only reports it
/// (its diff is then against the files as that plan left them), as it does any journal it ignored.
///
/// Each path is resolved once (`disk::resolve`) and used as resolved from then on: read, checked to lie
/// in `confine` (the folders the caller confined the plan to, if any) and written, so a folder swapped
/// with a link after the caller's check cannot carry the plan elsewhere.
pub(crate) fn apply(
    plan: &Plan,
    dry_run: bool,
    recovered: &mut Vec<Recovered>,
    confine: Option<&paths::Folders>,
) -> Result<Applied, Refusal> {
    apply_with(plan, dry_run, recovered, confine, None, false).map(|w| (w.outcome, w.diff))
}

/// `apply`, with the plan's symbol edits and rename made spans by `resolve` once its texts are read
/// (the files it reaches without changing them then left out), and with the texts read kept when
/// `keep_read` (the diagnostics delta maps the old diagnostics through them).
pub(crate) fn apply_with(
    plan: &Plan,
    dry_run: bool,
    recovered: &mut Vec<Recovered>,
    confine: Option<&paths::Folders>,
    resolve: Option<Resolve<'_>>,
    keep_read: bool,
) -> Result<Written, Refusal> {
    let mut paths_on_disk: Vec<PathBuf> = plan
        .files
        .iter()
        .map(|f| paths::to_path(&f.file_path))
        .collect::<Result<_, _>>()?;
    refuse_private(plan)?;
    let folders_of_plan = with_move_targets(plan, &paths_on_disk)?;
    links_acted_on(plan, &paths_on_disk)?;
    recovered.extend(recover(&folders_of_plan, dry_run)?);
    let mut resolved = resolve_confined(plan, &paths_on_disk, confine)?;
    let mut bytes = read_files(plan, &paths_on_disk, &resolved)?;
    let (run, renumber) = match resolve {
        Some(resolve) => {
            let (run, done) =
                resolve_spans(plan, resolve, &mut paths_on_disk, &mut resolved, &mut bytes)?;
            (Some(run), Some(done))
        }
        None => (None, None),
    };
    let plan = run.as_ref().unwrap_or(plan);
    let texts = decode(plan, &bytes)?;
    let deleted = vacated(plan, &paths_on_disk);
    let (targets, real_targets) = move_targets_on_disk(plan, &paths_on_disk, &deleted, confine)?;
    let mut outcome = engine::apply_plan(plan, &texts).map_err(|r| match &renumber {
        Some(done) => done.renumber_refusal(r.into(), &plan.files),
        None => r.into(),
    })?;
    if let Some(done) = &renumber {
        done.renumber(&mut outcome);
    }
    // Where the new files go, checked as the commit will (a dry run must refuse what the run would).
    folder_steps(&outcome, &paths_on_disk, &targets, &deleted)?;
    let read: Vec<Option<String>> = if keep_read {
        texts.iter().map(|t| t.map(str::to_string)).collect()
    } else {
        Vec::new()
    };
    let written = |outcome: Outcome, diff: Option<String>, read: Vec<Option<String>>| Written {
        plan: run.clone(),
        outcome,
        diff,
        read,
        resolved: renumber,
    };
    if dry_run {
        let diff: String = outcome
            .files
            .iter()
            .zip(&texts)
            .map(|(f, before)| diff::file_diff(f, before.unwrap_or("")))
            .collect();
        return Ok(written(outcome, Some(diff), read));
    }
    commit(writes(&outcome, resolved, bytes, real_targets))?;
    Ok(written(outcome, None, read))
}

/// `plan` with its symbol edits and rename made spans by `resolve` on the texts of `bytes`, and the
/// files the rename reaches without changing them left out of it and of `paths`, `resolved` and
/// `bytes`; with what renumbers the outcome as the caller's plan numbers its files.
fn resolve_spans(
    plan: &Plan,
    resolve: Resolve<'_>,
    paths: &mut Vec<PathBuf>,
    resolved: &mut Vec<PathBuf>,
    bytes: &mut Vec<Option<Vec<u8>>>,
) -> Result<(Plan, Resolved), Refusal> {
    let mut owned = plan.clone();
    let done = resolve(&mut owned, &decode(plan, bytes)?)?;
    if done.keep.contains(&false) {
        retain_by(&mut owned.files, &done.keep);
        retain_by(paths, &done.keep);
        retain_by(resolved, &done.keep);
        retain_by(bytes, &done.keep);
    }
    Ok((owned, done))
}

/// The texts of `bytes` (per file of `plan`), refused where one is not UTF-8.
fn decode<'b>(plan: &Plan, bytes: &'b [Option<Vec<u8>>]) -> Result<Vec<Option<&'b str>>, Refusal> {
    plan.files
        .iter()
        .zip(bytes)
        .map(|(f, b)| {
            b.as_deref()
                .map(|b| engine::decode(&f.file_path, b))
                .transpose()
                .map_err(Refusal::from)
        })
        .collect()
}

/// The paths of the plan's files (`paths`) and its moves' targets: every folder the plan reads or
/// writes, for recovery to look at in one look.
fn with_move_targets(plan: &Plan, paths: &[PathBuf]) -> Result<Vec<PathBuf>, Refusal> {
    let mut folders_of_plan = paths.to_vec();
    for f in &plan.files {
        if let FileOp::MoveTo(to) = &f.op {
            folders_of_plan.push(paths::to_path(to)?);
        }
    }
    Ok(folders_of_plan)
}

/// Each file's path resolved once (`read::resolve`; a deletion's link itself), refused unless it
/// still lies in `confine`.
fn resolve_confined(
    plan: &Plan,
    paths: &[PathBuf],
    confine: Option<&paths::Folders>,
) -> Result<Vec<PathBuf>, Refusal> {
    let resolved: Vec<PathBuf> = plan
        .files
        .iter()
        .zip(paths)
        .map(|(f, p)| resolve(p, f.op == FileOp::Delete))
        .collect();
    for (f, real) in plan.files.iter().zip(&resolved) {
        still_inside(confine, &f.file_path, real)?;
    }
    Ok(resolved)
}

/// The bytes of each file of the plan (`None`: it does not exist), read at its `resolved` path.
fn read_files(
    plan: &Plan,
    paths: &[PathBuf],
    resolved: &[PathBuf],
) -> Result<Vec<Option<Vec<u8>>>, Refusal> {
    let mut bytes: Vec<Option<Vec<u8>>> = Vec::with_capacity(plan.files.len());
    for ((f, p), real) in plan.files.iter().zip(paths).zip(resolved) {
        if f.op == FileOp::Delete && p.is_dir() {
            // A patch's input error, not a failure of the disk: refused like a missing file (exit 1).
            let message = format!("Cannot delete {}: it is a directory, and a patch deletes only files. Nothing was changed.", p.display());
            return Err(Refusal::of(engine::Kind::FileNotFound, message).in_file(&f.file_path));
        }
        // A new file where a folder is: read as absent, if the plan empties that folder (below).
        if f.op == FileOp::Create && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
            bytes.push(None);
            continue;
        }
        // A deleted link is read through (its target's text is what the hunk removes).
        let real = (f.op != FileOp::Delete).then_some(real.as_path());
        bytes.push(read_at(p, real).map_err(|r| r.in_file(&f.file_path))?);
    }
    Ok(bytes)
}

/// Where each file of a plan moves (`None`: it stays), as named and as resolved.
type Targets = (Vec<Option<PathBuf>>, Vec<Option<PathBuf>>);

/// Where each file moves (`move_targets`, a target on disk taken as occupied unless the plan empties
/// it), each resolved target refused unless it lies in `confine`.
fn move_targets_on_disk(
    plan: &Plan,
    paths: &[PathBuf],
    deleted: &BTreeSet<PathBuf>,
    confine: Option<&paths::Folders>,
) -> Result<Targets, Refusal> {
    let targets = move_targets(
        plan,
        paths,
        |p| p.to_string_lossy().into_owned(),
        |_, _, target| {
            Ok(
                !(target.is_dir() && deleted.iter().any(|d| d.starts_with(target)))
                    && read(target)?.is_some(),
            )
        },
    )?;
    let real_targets: Vec<Option<PathBuf>> = targets
        .iter()
        .map(|t| t.as_deref().map(|t| resolve(t, false)))
        .collect();
    for (f, real) in plan.files.iter().zip(&real_targets) {
        if let (FileOp::MoveTo(to), Some(real)) = (&f.op, real) {
            still_inside(confine, to, real)?;
        }
    }
    Ok((targets, real_targets))
}

/// What the commit writes for `outcome`: each file at its `resolved` path, checked against the
/// `bytes` read there; a move as its text written at its resolved target (`real_targets`) and its
/// file deleted; a file the plan left as it was, nothing.
fn writes(
    outcome: &Outcome,
    resolved: Vec<PathBuf>,
    bytes: Vec<Option<Vec<u8>>>,
    real_targets: Vec<Option<PathBuf>>,
) -> Vec<Write1> {
    let mut writes = Vec::new();
    for (((f, path), before), target) in outcome
        .files
        .iter()
        .zip(resolved)
        .zip(bytes)
        .zip(real_targets)
    {
        // A new file gets what git gives a 100644 one, the umask's.
        let mode = f.mode.or(f.created.then_some(0o100644)).map(permissions);
        match (&f.op, target) {
            (FileOp::Delete, _) => writes.push(Write1 {
                path,
                before,
                after: None,
                mode: None,
            }),
            (FileOp::MoveTo(_), Some(to)) => {
                // The moved file keeps its permissions unless the patch states a mode.
                let kept = mode.or_else(|| mode_of(&path));
                writes.push(Write1 {
                    path: to,
                    before: None,
                    after: Some(f.text.clone().into_bytes()),
                    mode: kept,
                });
                writes.push(Write1 {
                    path,
                    before,
                    after: None,
                    mode: None,
                });
            }
            (FileOp::MoveTo(_), None) => unreachable!("move_targets gives every move its target"),
            (FileOp::Edit | FileOp::Create, _)
                if !f.replacements.is_empty() || f.created || mode.is_some() =>
            {
                writes.push(Write1 {
                    path,
                    before,
                    after: Some(f.text.clone().into_bytes()),
                    mode,
                })
            }
            (FileOp::Edit | FileOp::Create, _) => {}
        }
    }
    writes
}

/// Refuses what a plan would do to a symbolic link (`paths`: its files' paths) other than edit the
/// file it points to or delete the link itself: set a mode (git apply: "wrong type"; a chmod would
/// reach the target), or move it (git moves the link itself; a writer of regular files would leave it
/// and write its target's text anew). Shared by the disk path and the language server.
pub(crate) fn links_acted_on(plan: &Plan, paths: &[PathBuf]) -> Result<(), Refusal> {
    for (f, p) in plan.files.iter().zip(paths) {
        if !std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        let what = match &f.op {
            _ if f.mode.is_some() => format!(
                "Cannot change the mode of {}: it is a symbolic link, and a patch sets modes only on regular files (git \
                 apply refuses it as the wrong type). Nothing was changed.",
                f.file_path
            ),
            FileOp::MoveTo(to) => format!(
                "Cannot move {} to {to}: it is a symbolic link, and multiedit writes only regular files (git apply \
                 moves the link itself). Nothing was changed. Move the link with `git mv` or `mv`.",
                f.file_path
            ),
            _ => continue,
        };
        return Err(Refusal::new(Kind::Io, what).in_file(&f.file_path));
    }
    Ok(())
}

/// Refuses a path that resolves outside `confine` now though the caller found it inside: a folder on
/// its way was swapped for a link meanwhile.
pub(crate) fn still_inside(
    confine: Option<&paths::Folders>,
    name: &str,
    real: &Path,
) -> Result<(), Refusal> {
    match confine {
        Some(folders) if !folders.as_slice().iter().any(|f| real.starts_with(f)) => Err(Refusal::new(
            Kind::OutsideWorkspace,
            format!(
                "Cannot edit {name}: it now resolves to {}, outside the folders it may edit ({}): a folder on its way \
                 changed while the plan was being applied. Nothing was changed.",
                real.display(),
                folders.listed()
            ),
        )
        .in_file(name)),
        _ => Ok(()),
    }
}

/// The paths that `plan` empties (its files deleted or moved away), `paths` being the paths of its
/// files: what the folder checks (`folder_steps`) and a move target's check count as gone.
pub(crate) fn vacated(plan: &Plan, paths: &[PathBuf]) -> BTreeSet<PathBuf> {
    plan.files
        .iter()
        .zip(paths)
        .filter(|(f, _)| matches!(f.op, FileOp::Delete | FileOp::MoveTo(_)))
        .map(|(_, p)| p.clone())
        .collect()
}

/// The new files of `outcome` and the move `targets` checked as the disk commit checks them
/// (`folders::steps`), with `vacated` the paths the plan empties: never under a file the plan keeps,
/// nor where a folder holds what the plan keeps. Shared by the disk path and the language server.
pub(crate) fn folder_steps(
    outcome: &Outcome,
    paths: &[PathBuf],
    targets: &[Option<PathBuf>],
    vacated: &BTreeSet<PathBuf>,
) -> Result<Steps, Refusal> {
    let created = outcome
        .files
        .iter()
        .zip(paths)
        .filter(|(f, _)| f.created)
        .map(|(_, p)| p.as_path());
    super::folders::steps(
        created.chain(targets.iter().flatten().map(PathBuf::as_path)),
        vacated,
    )
}

/// The permission bits `git apply` gives a file of git mode `mode` (`0o100755`): all of read, write
/// and (for an executable) execute that the umask leaves.
fn permissions(mode: u32) -> u32 {
    let all = if mode & 0o111 != 0 { 0o777 } else { 0o666 };
    all & !umask()
}

/// The process's umask, read where it can be read without changing it (Linux's `/proc`); else the
/// usual 022.
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = status.lines().find_map(|l| l.strip_prefix("Umask:"));
    field
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        .unwrap_or(0o022)
}

/// Where each file of `plan` moves (`None`: it stays), `paths` being the paths of its files. A move
/// never replaces anything: a target that a file of the plan names, that another move takes, or that
/// `occupied` says is in use (on disk; for the editor, also its buffers) is refused as `file_exists`.
/// `key` says when two paths are one file (the editor's comparison ignores a drive letter's case).
/// Shared by the disk path and the language server, which differ only in `key` and `occupied`.
pub(crate) fn move_targets(
    plan: &Plan,
    paths: &[PathBuf],
    key: impl Fn(&Path) -> String,
    mut occupied: impl FnMut(&FilePlan, &str, &Path) -> Result<bool, Refusal>,
) -> Result<Vec<Option<PathBuf>>, Refusal> {
    let mut taken: Vec<String> = paths.iter().map(|p| key(p)).collect();
    let mut targets = Vec::with_capacity(plan.files.len());
    for f in &plan.files {
        let FileOp::MoveTo(to) = &f.op else {
            targets.push(None);
            continue;
        };
        let target = paths::to_path(to)?;
        let target_key = key(&target);
        if taken.contains(&target_key) || occupied(f, to, &target)? {
            return Err(Refusal::move_target_exists(&f.file_path, to));
        }
        taken.push(target_key);
        targets.push(Some(target));
    }
    Ok(targets)
}
