//! A plan on disk with the language servers multiedit starts: its symbol edits and rename resolved
//! (`ask::gather`), the files the rename reaches added and judged by the gate, the one atomic,
//! journaled write (`disk::plan::apply_with`), and the diagnostics delta around it (`watch`). The one
//! function `multiedit mcp` and `multiedit apply` call for a plan no editor takes.

use std::path::Path;

use super::ask::{self, ENC};
use super::context::Context;
use super::watch;
use crate::diagnostics::{Options, Report};
use crate::disk::{self, Recovered};
use crate::engine::{Plan, Target};
use crate::gate;
use crate::paths;
use crate::protocol::positions as convert;
use crate::refusal::{Kind, Refusal};
use crate::result::PlanResult;
use crate::symbols::{self, rename};

/// A plan written (or, for a dry run, checked): its result and, for a dry run, its diff.
pub(crate) struct Done {
    pub(crate) result: PlanResult,
    pub(crate) diff: Option<String>,
}

/// Whether the plan names a symbol or a rename.
pub(crate) fn needs_servers(plan: &Plan) -> bool {
    plan.rename.is_some()
        || plan.files.iter().any(|f| {
            f.edits
                .iter()
                .any(|e| matches!(e.target.as_deref(), Some(Target::Symbol { .. })))
        })
}

/// Applies `plan` on disk (a dry run with `dry_run`), with what the started servers say of it.
/// `delta`: report the diagnostics delta (the plan's own `diagnostics` field can still turn it off).
pub(crate) async fn apply(
    mut plan: Plan,
    dry_run: bool,
    delta: bool,
    ctx: &Context,
    recovered: &mut Vec<Recovered>,
) -> Result<Done, Refusal> {
    let needs = needs_servers(&plan);
    let gathered = if needs {
        Some(ask::gather(&plan, ctx).await?)
    } else {
        None
    };
    let mut expansion = symbols::Expansion::default();
    if let Some(g) = &gathered {
        expansion = reached(&mut plan, g, ctx)?;
    }
    let report = plan
        .options
        .diagnostics
        .map(Report::from_plan)
        .unwrap_or(Report::Errors);
    let options = Options {
        report,
        ..Options::default()
    };
    let watching = if delta && !dry_run && report != Report::Off {
        watch::before(&plan, ctx, options).await
    } else {
        None
    };
    let resolving = gathered.map(|g| Resolving { g, expansion });
    let keep_read = watching.is_some();
    let (written, plan) = write(plan, dry_run, resolving, keep_read, ctx, recovered).await?;
    let run = written.plan.as_ref().unwrap_or(&plan);
    let mut result = PlanResult::of(&written.outcome);
    if !dry_run {
        result.add_sha256_written(&written.outcome);
    }
    if let Some(count) = written.resolved.as_ref().and_then(|r| r.count.as_ref()) {
        result.add_rename(rename::summary(count));
    }
    if let Some(w) = watching {
        w.after(
            run,
            &written.outcome,
            &written.read,
            &ctx.folders,
            &mut result,
        )
        .await;
    }
    Ok(Done {
        result,
        diff: written.diff,
    })
}

/// Adds to `plan` the files the rename of `g` reaches (`expand`) and judges them: what a rename
/// reaches is the language server's choice, not the sender's: never .git, and nothing an agent may
/// not write on its own.
fn reached(
    plan: &mut Plan,
    g: &ask::Gathered,
    ctx: &Context,
) -> Result<symbols::Expansion, Refusal> {
    let named = plan.files.len();
    let expansion = expand(plan, &g.answers, ctx)?;
    let reached: Vec<&str> = plan.files[named..]
        .iter()
        .map(|f| f.file_path.as_str())
        .collect();
    let judge = ctx.gate();
    judge.refuse_reached(reached.iter().copied(), ctx.opt_out())?;
    let protected = judge.judge(gate::Access::Write, reached.iter().copied(), ctx.opt_out())?;
    if !protected.is_empty() {
        return Err(gate::refuse_protected(&protected, ctx.opt_out()));
    }
    Ok(expansion)
}

/// What the servers said of a plan, for resolving it on the texts the write reads (`resolve`).
struct Resolving {
    g: ask::Gathered,
    expansion: symbols::Expansion,
}

/// The one atomic, journaled write (`disk::plan::apply_with`), with `resolving` run on the texts it
/// reads; `keep_read`: it hands them back, for the delta. The write is blocking work (reads, fsyncs):
/// off the async thread. The plan comes back for the delta, and `recovered` what it dealt with.
async fn write(
    plan: Plan,
    dry_run: bool,
    resolving: Option<Resolving>,
    keep_read: bool,
    ctx: &Context,
    recovered: &mut Vec<Recovered>,
) -> Result<(disk::plan::Written, Plan), Refusal> {
    let confine = ctx.confine.clone();
    let recovered_here = std::mem::take(recovered);
    let done = tokio::task::spawn_blocking(move || {
        let mut rec = recovered_here;
        let resolving = resolving.map(|Resolving { g, expansion }| {
            move |run: &mut Plan, texts: &[Option<&str>]| resolve(&g, &expansion, run, texts)
        });
        let r = crate::process::catch_panic("the disk write", || {
            disk::plan::apply_with(
                &plan,
                dry_run,
                &mut rec,
                confine.as_deref(),
                resolving.as_ref().map(|f| f as disk::plan::Resolve<'_>),
                keep_read,
            )
        });
        (r, rec, plan)
    })
    .await;
    match done {
        Ok((r, back, plan)) => {
            *recovered = back;
            Ok((r.map_err(|bug| Refusal::new(Kind::InternalError, bug))??, plan))
        }
        Err(e) => Err(Refusal::new(
            Kind::InternalError,
            format!("multiedit hit an internal error while writing the plan ({e}); nothing was changed. Please report it."),
        )),
    }
}

/// The plan's symbol edits and rename made spans of `texts` (as the write read them), once each is
/// seen to be the text its answer was computed on.
fn resolve(
    g: &ask::Gathered,
    expansion: &symbols::Expansion,
    run: &mut Plan,
    texts: &[Option<&str>],
) -> Result<symbols::Resolved, Refusal> {
    let key = |f: &str| paths::to_path(f).map(|p| convert::path_key(&p));
    let mut versions = Vec::with_capacity(texts.len());
    for (f, text) in run.files.iter().zip(texts) {
        let k = key(&f.file_path)?;
        let same = text.is_some() && g.texts.get(&k).map(String::as_str) == *text;
        versions.push(g.answers.symbols_of(&k).filter(|_| same).map(|a| a.version));
    }
    // The rename's edits count on the texts the server renamed in.
    for (i, _) in &expansion.files {
        let f = &run.files[*i];
        let k = key(&f.file_path)?;
        if g.texts.get(&k).map(String::as_str) != texts[*i] {
            return Err(g.answers.changed(&f.file_path).in_file(&f.file_path));
        }
    }
    symbols::resolve(run, &g.answers, expansion, texts, &versions, ENC)
}

/// Adds the files the rename reaches, refusing those outside what may be edited here: the front
/// end's folders, else the project the server runs in.
fn expand(
    plan: &mut Plan,
    answers: &symbols::Answers,
    ctx: &Context,
) -> Result<symbols::Expansion, Refusal> {
    let rename_root = plan
        .rename
        .as_ref()
        .and_then(|r| match ask::route(&r.file_path, ctx) {
            ask::Route::Server { root, .. } => Some(root),
            _ => None,
        });
    let inside = |path: &Path| {
        let real = paths::real_path(path).unwrap_or_else(|_| path.to_path_buf());
        match (&ctx.confine, &rename_root) {
            (Some(folders), _) => folders.as_slice().iter().any(|f| real.starts_with(f)),
            (None, Some(root)) => real.starts_with(root),
            (None, None) => true,
        }
    };
    let listed = match (&ctx.confine, &rename_root) {
        (Some(folders), _) => folders.listed(),
        (None, Some(root)) => root.display().to_string(),
        (None, None) => String::new(),
    };
    symbols::expand(plan, answers, inside)?.map_err(|outside| {
        Refusal::new(
            Kind::OutsideWorkspace,
            format!(
                "The rename to {} also edits {} outside the folders multiedit may edit here ({listed}), where the language \
                 server's rename reached. Nothing was changed. Rename it where every file it reaches may be edited, or \
                 address the text with old_string.",
                outside.new_name,
                outside.paths.join(", "),
            ),
        )
        .in_file(&outside.paths[0])
    })
}
