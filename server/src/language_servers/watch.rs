//! The diagnostics delta where multiedit wrote the plan on disk: the started servers are told of each
//! edited file's text before the write and their diagnostics for it kept (`before`), then of its new
//! text, and their diagnostics once settled compared with those (`after`), by the rule the VS Code
//! extension applies (`diagnostics::settle`), into the same result fields and words
//! (`diagnostics::add_delta`). A file whose server is not there is `unchecked`; one whose
//! diagnostics did not settle is `pending`; nothing is reported from stale ones.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ask::{allowed, route, Route, ENC};
use super::context::Context;
use super::started::{Held, Publish, Started};
use crate::diagnostics::settle::{self, Settled, Waiting};
use crate::diagnostics::{self, Edited, Options};
use crate::engine::{FileOp, FilePlan, Outcome, Plan};
use crate::paths;
use crate::protocol::ext::DiagnosticsAnswer;
use crate::protocol::positions as convert;
use crate::result::PlanResult;

/// One file of the plan, watched.
struct Watched {
    /// Its path as the plan names it.
    file_path: String,
    uri: String,
    language: &'static str,
    server: Option<Arc<Started>>,
    /// The text its server was told before the edit (`None`: the file did not exist).
    text: Option<String>,
    /// Its diagnostics before the edit, once settled (`None`: not settled in time, or no server).
    before: Option<Publish>,
}

/// The snapshot before a plan's write.
pub(crate) struct Before {
    options: Options,
    files: Vec<Watched>,
    /// Bumped at every publish of the pool's servers.
    changes: tokio::sync::watch::Receiver<u64>,
}

/// Whether `publish` is for the document as `held` (published after it was told of this text, or
/// known to stand for it).
fn current(publish: Option<&Publish>, held: &Held) -> bool {
    held.unchanged
        || publish
            .is_some_and(|p| p.version.is_none_or(|v| v >= held.version) && p.at >= held.synced_at)
}

/// Tells the servers of the plan's files as they are on disk and waits (at most the settle bound)
/// for their diagnostics. `None` where no file of the plan lies in a project allowed servers: then
/// nothing is compared, and the result says no editor checked the change, as before.
pub(crate) async fn before(plan: &Plan, ctx: &Context, options: Options) -> Option<Before> {
    let mut files = Vec::new();
    let mut any = false;
    for f in &plan.files {
        let Some((w, counts)) = watch(f, ctx).await else {
            continue;
        };
        any |= counts;
        files.push(w);
    }
    if !any {
        return None;
    }
    let changes = settle_told(&files, ctx, &options).await;
    for w in &mut files {
        let Some(s) = &w.server else { continue };
        let Some(held) = s.held(&w.uri) else { continue };
        let publish = s.published.get(&w.uri);
        if current(publish.as_ref(), &held) {
            w.before = Some(publish.unwrap_or(Publish {
                version: None,
                at: held.synced_at,
                diagnostics: Vec::new(),
            }));
        }
    }
    Some(Before {
        options,
        files,
        changes,
    })
}

/// `f`'s file, told to its server as it is on disk where it has one, and whether it counts: it lies
/// in a project allowed servers (a file no server checks counts there too: it is `unchecked`).
/// `None` for a file the plan deletes or moves, or one without a URI.
async fn watch(f: &FilePlan, ctx: &Context) -> Option<(Watched, bool)> {
    if matches!(f.op, FileOp::Delete | FileOp::MoveTo(_)) {
        return None;
    }
    let path = paths::to_path(&f.file_path).ok()?;
    let uri = convert::file_uri(&path, &f.file_path).ok()?;
    let mut w = Watched {
        file_path: f.file_path.clone(),
        uri: uri.as_str().to_string(),
        language: "",
        server: None,
        text: None,
        before: None,
    };
    let counts = match route(&f.file_path, ctx) {
        Route::NotAllowed { .. } => false,
        Route::NoServer(_) => allowed(&f.file_path),
        Route::Server {
            program,
            root,
            language,
        } => {
            w.language = language;
            let text = crate::disk::read(&path)
                .ok()
                .flatten()
                .and_then(|b| String::from_utf8(b).ok());
            w.text = text.clone();
            let uri = w.uri.clone();
            let synced = ctx
                .pool
                .ask(&program, &root, |s| {
                    let (uri, text) = (uri.clone(), text.clone());
                    async move {
                        if let Some(text) = &text {
                            s.sync(&uri, language, text).await?;
                        }
                        Ok(())
                    }
                })
                .await;
            if let Ok(((), server)) = synced {
                w.server = Some(server);
            }
            true
        }
    };
    Some((w, counts))
}

/// Waits, at most the settle bound, until the diagnostics of the texts `files` were told settled as
/// after an edit: the first publish for the text told, then quiet. What follows the pool's publishes
/// from then on, for `after`.
async fn settle_told(
    files: &[Watched],
    ctx: &Context,
    options: &Options,
) -> tokio::sync::watch::Receiver<u64> {
    let started = Instant::now();
    let mut changes = ctx.pool.published.subscribe();
    changes.mark_unchanged();
    loop {
        let waiting: Vec<Waiting> = files
            .iter()
            .filter_map(|w| {
                let s = w.server.as_ref()?;
                let held = s.held(&w.uri)?;
                let publish = s.published.get(&w.uri);
                Some(Waiting {
                    changed: current(publish.as_ref(), &held)
                        .then(|| publish.map_or(held.synced_at, |p| p.at)),
                    idle: None,
                })
            })
            .collect();
        let Some(wait) = settle::wait_more(&waiting, started, options.settle, Instant::now())
        else {
            break;
        };
        let _ = tokio::time::timeout(wait, changes.changed()).await;
    }
    changes
}

impl Before {
    /// After the write: tells the servers of the new texts, waits for their diagnostics to settle,
    /// and adds the delta to `result`. `plan` and `outcome` are the plan as written (its files found
    /// by path: resolving may have left some out), `read` the texts the write read, per file of it;
    /// `folders`: those the text's paths are shown relative to.
    pub(crate) async fn after(
        self,
        plan: &Plan,
        outcome: &Outcome,
        read: &[Option<String>],
        folders: &[PathBuf],
        result: &mut PlanResult,
    ) {
        let Before {
            options,
            files,
            mut changes,
        } = self;
        let edited = edited(&files, plan, outcome);
        if edited.is_empty() {
            return;
        }
        let edit_at = Instant::now();
        let told = Told::tell(edited, outcome, edit_at).await;
        // Waited for: those with a server, and diagnostics before (or no file before: a new one).
        let waited: Vec<usize> = (0..told.edited.len())
            .filter(|&k| {
                let w = told.edited[k].0;
                told.versions[k].is_some() && (w.before.is_some() || w.text.is_none())
            })
            .collect();
        while let Some(wait) = settle::wait_more(
            &told.waiting(&waited),
            edit_at,
            options.settle,
            Instant::now(),
        ) {
            let _ = tokio::time::timeout(wait, changes.changed()).await;
        }
        let settled: BTreeMap<usize, Settled> = waited
            .iter()
            .copied()
            .zip(settle::outcome(
                &told.waiting(&waited),
                edit_at,
                Instant::now(),
            ))
            .collect();
        let (before, after) = told.answers(&settled);
        let edited = told.edited_texts(outcome, read);
        diagnostics::add_delta(
            result,
            diagnostics::summarize(
                options,
                ENC,
                folders,
                &edited,
                &before,
                &after,
                edit_at,
                diagnostics::Words::Disk,
            ),
        );
    }
}

/// The watched files the plan changed and kept in place, each with the index of its plan file.
fn edited<'a>(files: &'a [Watched], plan: &Plan, outcome: &Outcome) -> Vec<(&'a Watched, usize)> {
    files
        .iter()
        .filter_map(|w| {
            let i = plan.files.iter().position(|f| f.file_path == w.file_path)?;
            let c = &outcome.files[i];
            let changed = !c.replacements.is_empty() || c.created;
            (matches!(c.op, FileOp::Edit | FileOp::Create) && changed).then_some((w, i))
        })
        .collect()
}

/// The edited files, their servers told of their new texts.
struct Told<'a> {
    /// Each with the index of its plan file.
    edited: Vec<(&'a Watched, usize)>,
    /// Per edited file: the version its server holds the new text at (`None`: no server).
    versions: Vec<Option<i32>>,
    /// When the new texts were told.
    edit_at: Instant,
}

impl<'a> Told<'a> {
    /// Tells each edited file's server of its text in `outcome`.
    async fn tell(
        edited: Vec<(&'a Watched, usize)>,
        outcome: &Outcome,
        edit_at: Instant,
    ) -> Told<'a> {
        let mut versions = Vec::with_capacity(edited.len());
        for (w, i) in &edited {
            versions.push(match &w.server {
                Some(s) => s
                    .sync(&w.uri, w.language, &outcome.files[*i].text)
                    .await
                    .ok(),
                None => None,
            });
        }
        Told {
            edited,
            versions,
            edit_at,
        }
    }

    /// Edited file `k`'s publish since the edit, for its new text.
    fn after_edit(&self, k: usize) -> Option<Publish> {
        let w = self.edited[k].0;
        let p = w.server.as_ref()?.published.get(&w.uri)?;
        (p.at >= self.edit_at && p.version.is_none_or(|v| Some(v) >= self.versions[k])).then_some(p)
    }

    /// Edited file `k`'s idle time (`settle::idle_time`: how long after the edit a document whose
    /// server sends nothing counts as unchanged), learned from its server's earlier edits; `None` for
    /// a file without diagnostics before, which is waited for up to the bound.
    fn idle(&self, k: usize) -> Option<Duration> {
        let w = self.edited[k].0;
        w.before.as_ref()?;
        let s = w.server.as_ref()?;
        let l = s.latencies.lock().unwrap_or_else(|p| p.into_inner());
        Some(settle::idle_time(&l))
    }

    /// Where the edited files `waited` stand, for `settle`.
    fn waiting(&self, waited: &[usize]) -> Vec<Waiting> {
        waited
            .iter()
            .map(|&k| Waiting {
                changed: self.after_edit(k).map(|p| p.at),
                idle: self.idle(k),
            })
            .collect()
    }

    /// The diagnostics before and after, as an editor answers `multiedit/diagnostics`, from how each
    /// edited file settled (`settled`, by its index; none: not waited for).
    fn answers(
        &self,
        settled: &BTreeMap<usize, Settled>,
    ) -> (DiagnosticsAnswer, DiagnosticsAnswer) {
        let mut before = DiagnosticsAnswer::default();
        let mut after = DiagnosticsAnswer {
            waited_ms: Some(self.edit_at.elapsed().as_millis() as u64),
            ..DiagnosticsAnswer::default()
        };
        for (k, (w, _)) in self.edited.iter().enumerate() {
            let uri = w.uri.clone();
            if let Some(b) = &w.before {
                before
                    .diagnostics
                    .insert(uri.clone(), b.diagnostics.clone());
            }
            match (settled.get(&k), &w.server) {
                (None, None) => after.unchecked.push(uri),
                (None | Some(Settled::Pending), _) => after.pending.push(uri),
                (Some(Settled::Quiet), Some(s)) => {
                    if let Some(v) = self.versions[k] {
                        s.unchanged(&w.uri, v);
                    }
                    after.quiet.push(uri);
                }
                (Some(Settled::Quiet), None) => after.quiet.push(uri),
                (Some(Settled::Changed), _) => {
                    let Some(p) = self.after_edit(k) else {
                        continue;
                    };
                    let ms = p.at.saturating_duration_since(self.edit_at);
                    after.published_ms =
                        Some(after.published_ms.unwrap_or(0).max(ms.as_millis() as u64));
                    // Learned from documents checked before the edit: a first check takes longer.
                    if let (Some(s), Some(_)) = (&w.server, &w.before) {
                        s.learned(ms);
                    }
                    after.diagnostics.insert(uri, p.diagnostics);
                }
            }
        }
        (before, after)
    }

    /// The edited files as the delta reads them: the text the write read (`read`, per plan file)
    /// and the one it wrote (`outcome`).
    fn edited_texts<'o>(
        &self,
        outcome: &'o Outcome,
        read: &'o [Option<String>],
    ) -> Vec<Edited<'o>> {
        self.edited
            .iter()
            .map(|(w, i)| {
                let change = &outcome.files[*i];
                let read = read.get(*i).and_then(|t| t.as_deref());
                Edited {
                    file_path: &change.file_path,
                    uri: w.uri.clone(),
                    before: read.unwrap_or(""),
                    after: &change.text,
                    replacements: &change.replacements,
                    then: &[],
                    // The write read another text than the server was told: its diagnostics do not map.
                    differs: w.text.is_some() && w.text.as_deref() != read,
                    was_open: w.text.is_some(),
                }
            })
            .collect()
    }
}
