//! `multiedit apply [--dry-run] [--json] PLAN`.

use std::process::ExitCode;

use crate::disk;
use crate::process::{err, out};
use std::path::PathBuf;

use crate::engine::{self, Matching};
use crate::formats::{self, Format};
use crate::language_servers;
use crate::paths::Folders;
use crate::refusal::{Kind, Refusal};
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
        Ok(body) => finish(&args, &recovered, Ok(body), ExitCode::SUCCESS),
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
            Some(_) => Kind::Engine(engine::Kind::TooLarge),
            None => Kind::Io,
        };
        Refusal::new(kind, format!("Cannot read the plan {source}: {e}"))
    })?;
    String::from_utf8(bytes)
        .map_err(|_| Refusal::new(Kind::Io, format!("The plan {source} is not UTF-8 text")))
}

/// Parses the plan or patch, then applies it on disk (`disk::plan::apply`, shared with `multiedit mcp`);
/// a plan that names symbols or a rename, or asks for the diagnostics delta, with the language servers
/// multiedit starts for this one run (`language_servers::apply`), where the user allowed them.
fn execute(
    text: &str,
    args: &Args,
    recovered: &mut Vec<disk::Recovered>,
) -> Result<(PlanResult, Option<String>), Refusal> {
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
    let delta = matches!(
        plan.options.diagnostics,
        Some(engine::Diagnostics::Errors | engine::Diagnostics::Warnings)
    );
    if !language_servers::needs_servers(&plan) && !delta {
        let (outcome, diff) =
            disk::plan::apply(&plan, args.dry_run, recovered, confined.then_some(&folders))?;
        let mut written = PlanResult::of(&outcome);
        if !args.dry_run {
            written.add_sha256_written(&outcome);
        }
        return Ok((written, diff));
    }
    let ctx = language_servers::Context {
        pool: language_servers::Pool::for_run(),
        folders: vec![root],
        confine: confined.then(|| std::sync::Arc::new(folders)),
        front: language_servers::Front::Cli,
        allow: crate::gate::Allow::default(),
    };
    let dry_run = args.dry_run;
    let ran = crate::process::block_on("multiedit apply", || async {
        let done = language_servers::apply(plan, dry_run, true, &ctx, recovered).await;
        // The servers started for this run end with it.
        ctx.pool.shutdown().await;
        done
    });
    match ran {
        Some(done) => done.map(|d| (d.result, d.diff)),
        None => Err(Refusal::new(
            Kind::Io,
            "Cannot start the async runtime the language servers are spoken to on".to_string(),
        )),
    }
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
    result: Result<(PlanResult, Option<String>), Refusal>,
    code: ExitCode,
) -> ExitCode {
    if args.json {
        let report = match &result {
            Ok((written, diff)) => PlanResult {
                dry_run: Some(args.dry_run),
                diff: diff.clone(),
                ..written.clone()
            },
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
        Ok((written, diff)) => {
            if let Some(d) = diff {
                out(&format!(
                    "{d}Dry run, nothing written. {}\n",
                    written.message
                ));
            } else {
                out(&format!("{}\n", written.message));
            }
            // What the language servers multiedit started made of the change.
            if let Some(d) = &written.diagnostics_text {
                out(&format!("\n{d}\n"));
            }
        }
        Err(r) => err(&format!("{}\n", r.full_text())),
    }
    code
}
