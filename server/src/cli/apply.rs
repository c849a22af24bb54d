//! `multiedit apply [--dry-run] [--json] PLAN`.

use std::process::ExitCode;

use crate::process::{err, out};
use crate::disk;
use std::path::PathBuf;

use crate::engine::{self, Kind, Matching, Outcome, Refusal};
use crate::formats::{self, Format};
use crate::paths::Folders;
use crate::result::PlanResult;

pub(crate) struct Args {
    pub(crate) dry_run: bool,
    pub(crate) json: bool,
    pub(crate) plan: String,
    /// `None`: detect it.
    pub(crate) format: Option<Format>,
    pub(crate) root: Option<PathBuf>,
    /// Files outside the root may be touched.
    pub(crate) allow_outside: bool,
    /// `--match`; `None`: not given.
    pub(crate) matching: Option<Matching>,
    /// `--file-path`: the file of SEARCH/REPLACE blocks that name none.
    pub(crate) file_path: Option<String>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let text = match read_plan(&args.plan) {
        Ok(t) => t,
        Err(r) => {
            let code = if r.kind == Kind::Io { 2 } else { 1 };
            return finish(&args, &[], Err(r), ExitCode::from(code));
        }
    };
    let mut recovered = Vec::new();
    let result = execute(&text, &args, &mut recovered);
    for r in &recovered {
        err(&format!(
            "multiedit: {}\n",
            r.report("before applying this one")
        ));
    }
    match result {
        Ok((outcome, diff)) => {
            let body = (outcome, diff);
            finish(&args, &recovered, Ok(body), ExitCode::SUCCESS)
        }
        Err(r) => {
            let code = if r.kind == Kind::Io { 2 } else { 1 };
            finish(&args, &recovered, Err(r), ExitCode::from(code))
        }
    }
}

/// The plan's text, from standard input (`-`) or a file, read with the cap every file has
/// (`disk::MAX_READ`): a plan is never longer than the most a file may be.
fn read_plan(source: &str) -> Result<String, Refusal> {
    let bytes = if source == "-" {
        disk::read_capped(std::io::stdin().lock(), 0)
    } else {
        disk::read_file_capped(std::path::Path::new(source))
    };
    let bytes = bytes.map_err(|e| {
        let kind = match disk::TooBig::of(&e) {
            Some(_) => Kind::TooLarge,
            None => Kind::Io,
        };
        Refusal::new(kind, format!("Cannot read the plan {source}: {e}"))
    })?;
    String::from_utf8(bytes)
        .map_err(|_| Refusal::new(Kind::Io, format!("The plan {source} is not UTF-8 text")))
}

/// Parses the plan or patch, then applies it on disk (`disk::plan::apply`, shared with `multiedit mcp`).
fn execute(
    text: &str,
    args: &Args,
    recovered: &mut Vec<disk::Recovered>,
) -> Result<(Outcome, Option<String>), Refusal> {
    let root = match &args.root {
        Some(r) => std::path::absolute(r).map_err(|e| {
            Refusal::new(Kind::Io, format!("Cannot use --root {}: {e}", r.display()))
        })?,
        None => std::env::current_dir()
            .map_err(|e| Refusal::new(Kind::Io, format!("Cannot read the current folder: {e}")))?,
    };
    let request = formats::PatchRequest {
        text: text.to_string(),
        format: args.format,
        root: Some(root.clone()),
        matching: args.matching,
        file_path: args.file_path.clone(),
    };
    let (plan, format) = request.plan_and_format(None)?;
    // A patch's paths are someone else's text, read relative to the root: like `git apply`, they
    // stay inside it. A JSON plan names absolute paths the user chose; it is held to --root only
    // when one is given.
    let confined = !args.allow_outside && (format != Format::Plan || args.root.is_some());
    let mut folders = Folders::default();
    if confined {
        folders.add(&root);
        confine(&plan, &folders, &root, args.root.is_some())?;
    }
    if format != Format::Plan {
        crate::paths::refuse_patch_links(&plan, &root)?;
    }
    disk::plan::apply(&plan, args.dry_run, recovered, confined.then_some(&folders))
}

/// Refuses a plan with a file (or a move's target) outside `root`.
fn confine(
    plan: &engine::Plan,
    folders: &Folders,
    root: &std::path::Path,
    given: bool,
) -> Result<(), Refusal> {
    let what = if given {
        "the --root folder"
    } else {
        "the current folder, where the patch's paths start (--root)"
    };
    let what = format!("{what} {}", root.display());
    folders.confine_plan(
        plan,
        &what,
        "To allow paths outside it, add --allow-outside.",
    )
}

/// `recovered`: interrupted plans of earlier runs that this one completed or rolled back first.
fn finish(
    args: &Args,
    recovered: &[disk::Recovered],
    result: Result<(Outcome, Option<String>), Refusal>,
    code: ExitCode,
) -> ExitCode {
    if args.json {
        let report = match &result {
            Ok((outcome, diff)) => {
                let mut report = PlanResult {
                    dry_run: Some(args.dry_run),
                    diff: diff.clone(),
                    ..PlanResult::of(outcome)
                };
                if !args.dry_run {
                    report.add_sha256_written(outcome);
                }
                report
            }
            Err(r) => PlanResult::refusal(r),
        };
        let report = PlanResult {
            recovered: recovered.iter().map(disk::Recovered::to_entry).collect(),
            ..report
        };
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).expect("a result serialises")
        ));
        return code;
    }
    match result {
        Ok((outcome, diff)) => {
            if let Some(d) = diff {
                out(&format!(
                    "{d}Dry run, nothing written. {}\n",
                    outcome.message()
                ));
            } else {
                out(&format!("{}\n", outcome.message()));
            }
        }
        Err(r) => err(&format!("{}\n", r.full_text())),
    }
    code
}
