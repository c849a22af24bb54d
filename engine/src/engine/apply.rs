//! Running a plan: each file's edits folded, in order, into one change against that file's text.

use std::borrow::Cow;

use super::anchor::{Hunk, Placer};
use super::changeset::{ChangeSet, Replacement};
use super::eol::{self, apply_replacements, LineBreaks, View};
use super::hints;
use super::plan::{Anchor, Dialect, Edit, Expect, FileOp, FilePlan, Matching, Mode, Options, Plan};
use super::refusal::{Kind, Refusal};
use super::search::{find_matches, NeedleSet, OriginalIndex, Touching};
use super::target::{Rename, Target};
use super::tolerant::{self, Tier};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditReport {
    pub edit_index: usize,
    pub old_string: String,
    pub new_string: String,
    /// How many places this edit replaced.
    pub replacements: usize,
    /// Set when the match was found by a tolerant tier rather than exactly.
    pub tier: Option<Tier>,
    pub created: bool,
    /// For a hunk: its name (`hunk 2 of src/a.rs, at line 40`), the 1-based line where it applied and
    /// how far that is from the line it stated.
    pub label: Option<String>,
    pub line: Option<usize>,
    pub offset: isize,
    /// An edit placed by a symbol or a rename: what the result says of it, and whether it is one of the
    /// plan's numbered edits (`target::Spans`).
    pub summary: Option<String>,
    pub numbered: bool,
}

impl EditReport {
    pub(super) fn new(edit_index: usize, old: &str, new: &str, replacements: usize) -> Self {
        EditReport {
            edit_index,
            old_string: old.to_string(),
            new_string: new.to_string(),
            replacements,
            tier: None,
            created: false,
            label: None,
            line: None,
            offset: 0,
            summary: None,
            numbered: true,
        }
    }
}

/// What a plan does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub file_path: String,
    pub created: bool,
    /// Deleted or moved besides its edits (`FileOp::Edit` otherwise).
    pub op: FileOp,
    /// The change as sorted, non-overlapping, minimal replacements of the original bytes.
    pub replacements: Vec<Replacement>,
    /// The text after the change.
    pub text: String,
    pub applied: Vec<EditReport>,
    pub failed: Vec<Refusal>,
    pub edit_count: usize,
    /// The mode the patch gives the file (`0o100755`), as `FilePlan::mode`.
    pub mode: Option<u32>,
    /// The style the edits' line breaks were written in, where the plan wrote them in another.
    pub line_breaks: Option<LineBreaks>,
}

impl FileChange {
    pub fn edits_applied(&self) -> usize {
        self.applied.len()
    }
    pub fn replacement_count(&self) -> usize {
        self.applied.iter().map(|e| e.replacements).sum()
    }
}

/// What a whole plan does: one entry per file, in plan order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub files: Vec<FileChange>,
}

impl Outcome {
    pub fn failed(&self) -> impl Iterator<Item = &Refusal> {
        self.files.iter().flat_map(|f| f.failed.iter())
    }
}

/// Runs a plan on the current texts of its files (`originals[i]` for `plan.files[i]`, `None` for a file
/// that does not exist). All-or-nothing across files in atomic mode.
pub fn apply_plan(plan: &Plan, originals: &[Option<&str>]) -> Result<Outcome, Refusal> {
    assert_eq!(
        plan.files.len(),
        originals.len(),
        "one text per file of the plan"
    );
    if let Some(r) = unresolved(plan.rename.as_ref(), &plan.files) {
        return Err(r);
    }
    let mut files = Vec::with_capacity(plan.files.len());
    let mut first_failure: Option<Refusal> = None;
    for (fp, original) in plan.files.iter().zip(originals) {
        match apply_file(*original, fp, &plan.options) {
            Ok(change) => files.push(change),
            Err(r)
                if plan.options.mode == Mode::Partial
                    && r.kind != Kind::InvalidPlan
                    && plan.files.len() > 1 =>
            {
                // In a partial multi-file plan a file whose edits all failed is reported, not fatal.
                first_failure.get_or_insert(r.clone());
                files.push(FileChange {
                    file_path: fp.file_path.clone(),
                    created: false,
                    op: FileOp::Edit,
                    replacements: Vec::new(),
                    text: original.unwrap_or_default().to_string(),
                    applied: Vec::new(),
                    failed: vec![r],
                    edit_count: fp.edits.len(),
                    mode: None,
                    line_breaks: None,
                });
            }
            Err(r) => return Err(r),
        }
    }
    // A file deleted, moved, created or given a mode is a change even without an edit to its text.
    if files.iter().all(|f| {
        f.replacements.is_empty() && !f.created && f.op == FileOp::Edit && f.mode.is_none()
    }) {
        return Err(first_failure.unwrap_or_else(Refusal::unchanged));
    }
    Ok(Outcome { files })
}

/// The refusal for a plan with a rename or a symbol edit that no front end resolved.
fn unresolved(rename: Option<&Rename>, files: &[FilePlan]) -> Option<Refusal> {
    if let Some(r) = rename {
        return Some(
            super::target::needs_editor(&format!("The rename to {}", r.new_name))
                .in_file(&r.file_path),
        );
    }
    files.iter().find_map(|f| {
        f.edits
            .iter()
            .enumerate()
            .find_map(|(i, e)| match e.target.as_deref() {
                Some(Target::Symbol { path, .. }) => Some(
                    super::target::needs_editor(&format!(
                        "Edit {} names the symbol {}, which",
                        i + 1,
                        path.text
                    ))
                    .at(i)
                    .in_file(&f.file_path),
                ),
                _ => None,
            })
    })
}

/// Runs one file's edits on its current text (`None`: the file does not exist).
pub fn apply_file(
    original: Option<&str>,
    plan: &FilePlan,
    opts: &Options,
) -> Result<FileChange, Refusal> {
    FileRun::new(original, plan, opts)
        .run()
        .map_err(|r| r.in_file(&plan.file_path))
}

struct FileRun<'p> {
    original: Option<&'p str>,
    plan: &'p FilePlan,
    opts: &'p Options,
    applied: Vec<EditReport>,
    failed: Vec<Refusal>,
}

/// Where a file's edits start: the text they run on (the file, or the content the first edit
/// creates), the first edit still to run, and whether the file is being created.
struct Start<'p> {
    base: &'p str,
    from: usize,
    creating: bool,
}

/// What the edits of one file share as they apply: each edit's strings as the view reads them, the
/// change set they compose into, the indexes that find their matches, the placer of a patch's hunks, and
/// the new strings written so far (which the claude-code dialect checks later edits against).
struct Work<'v, 's, 'n> {
    olds: &'v [Cow<'v, str>],
    news: &'v [Cow<'v, str>],
    cs: ChangeSet<'v>,
    index: OriginalIndex<'v>,
    touching: Option<Touching<'s, 'n>>,
    placer: Option<Placer>,
    applied_news: Vec<&'v str>,
}

impl Work<'_, '_, '_> {
    /// Replaces `found` (current coordinates) by `text`, and scans what changed for later matches.
    fn replace(&mut self, found: &[(usize, usize)], text: &str) {
        let made = self.cs.apply(found, text);
        self.record(&made);
    }

    /// Scans the replacements `made` (their indexes in the change set) for later matches.
    fn record(&mut self, made: &[usize]) {
        if let Some(t) = self.touching.as_mut() {
            t.record(&self.cs, made);
        }
    }
}

impl<'p> FileRun<'p> {
    fn new(original: Option<&'p str>, plan: &'p FilePlan, opts: &'p Options) -> Self {
        FileRun {
            original,
            plan,
            opts,
            applied: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// Atomic mode stops at the first failure; partial mode records it and goes on.
    fn fail(&mut self, r: Refusal) -> Result<(), Refusal> {
        match self.opts.mode {
            Mode::Atomic => Err(r),
            Mode::Partial => {
                self.failed.push(r.in_file(&self.plan.file_path));
                Ok(())
            }
        }
    }

    /// The file's edits, each placed by its kind (`by_target`, `by_anchor`, `by_text`) and recorded
    /// by the one step they share; then the change as replacements of the original text (`finish`).
    fn run(mut self) -> Result<FileChange, Refusal> {
        self.check_op()?;
        let edits = &self.plan.edits;
        let Some(first) = edits.first() else {
            return self.without_edits();
        };
        let start = self.start(first)?;
        let view = if self.plan.literal {
            View::literal(start.base)
        } else {
            View::new(start.base)
        };
        let olds: Vec<Cow<'_, str>> = edits
            .iter()
            .map(|e| view.normalize(&e.old_string))
            .collect();
        let news: Vec<Cow<'_, str>> = edits
            .iter()
            .map(|e| view.normalize(&e.new_string))
            .collect();
        let needle_refs: Vec<&str> = olds[start.from..].iter().map(|s| s.as_ref()).collect();
        let needle_set = NeedleSet::new(&needle_refs);
        let mut w = Work {
            olds: &olds,
            news: &news,
            cs: ChangeSet::new(&view.text),
            index: OriginalIndex::new(&view.text, needle_set.as_ref()),
            touching: needle_set.as_ref().map(Touching::new),
            placer: edits
                .iter()
                .any(|e| e.anchor.is_some())
                .then(|| Placer::new(&view.text)),
            applied_news: if start.creating {
                vec![first.new_string.as_str()]
            } else {
                Vec::new()
            },
        };
        let mut skip = vec![false; edits.len()];
        if self.opts.dialect == Dialect::ClaudeCode {
            self.check_against_original(&mut w, &view, start.from, &mut skip)?;
        }
        for i in start.from..edits.len() {
            if skip[i] {
                continue;
            }
            let edit = &edits[i];
            let report = match (&edit.target, &edit.anchor, w.placer.is_some()) {
                (Some(target), _, _) => self.by_target(&mut w, &view, start.base, i, target)?,
                (None, Some(anchor), true) => self.by_anchor(&mut w, &view, i, anchor)?,
                _ => self.by_text(&mut w, i)?,
            };
            // The step every kind of edit ends with: what it wrote, and its report.
            if let Some(report) = report {
                w.applied_news.push(&edit.new_string);
                self.applied.push(report);
            }
        }
        self.finish(w.cs, &view, &start)
    }

    /// A plan to create a file that exists, or to delete or move one that does not.
    fn check_op(&self) -> Result<(), Refusal> {
        match (&self.plan.op, self.original) {
            (FileOp::Create, Some(_)) => Err(Refusal::file_exists().at(0)),
            (FileOp::Delete | FileOp::MoveTo(_), None) => {
                Err(Refusal::file_not_found(&self.plan.file_path).at(0))
            }
            _ => Ok(()),
        }
    }

    /// A file deleted, moved or created empty, or given a mode, with no edit to its text.
    fn without_edits(self) -> Result<FileChange, Refusal> {
        match (&self.plan.op, self.original) {
            (FileOp::Edit, Some(text)) if self.plan.mode.is_some() => {
                Ok(self.finish_op(FileOp::Edit, text.to_string(), Vec::new(), false))
            }
            (FileOp::Edit, None) if self.plan.mode.is_some() => {
                Err(Refusal::file_not_found(&self.plan.file_path).at(0))
            }
            (FileOp::Edit, _) => Err(Refusal::input("a file to edit has no edits")),
            (op, original) => Ok(self.finish_op(
                op.clone(),
                original.unwrap_or("").to_string(),
                Vec::new(),
                original.is_none(),
            )),
        }
    }

    /// The text the edits run on: the file, or the content its first edit creates (then reported as
    /// applied, and the edits start at the second).
    fn start(&mut self, first: &'p Edit) -> Result<Start<'p>, Refusal> {
        let create_empty = self.plan.op == FileOp::Create
            && first.old_string.is_empty()
            && first.new_string.is_empty();
        let mut start = Start {
            base: self.original.unwrap_or(""),
            from: 0,
            creating: false,
        };
        // Lines added at a place (a hunk of only '+' lines: after its @@ line, or at the end) go through
        // the placer; an empty old text without such an anchor is a new file's content, or (a diff's
        // `@@ -0,0 +1,n @@`, anchored at both ends) lines added to a file that exists and is empty.
        let adds_at_a_place = first
            .anchor
            .as_ref()
            .is_some_and(|a| a.forward || (a.at_end && !a.at_start));
        if first.old_string.is_empty() && !adds_at_a_place && first.target.is_none() {
            if let Some(a) = &first.anchor {
                // A hunk adding lines to an empty file (`@@ -0,0 +1,n @@`): the file must be there, empty.
                match self.original {
                    None => return Err(Refusal::file_not_found(&self.plan.file_path).at(0)),
                    Some(t) if !t.is_empty() => {
                        let lines = t.split_inclusive('\n').count();
                        let message = format!("{} does not apply: it adds lines to an empty file, and the file holds {lines} lines.", super::text::cap(&a.label));
                        return Err(Refusal::new(Kind::NotFound, message).at(0));
                    }
                    Some(_) => {}
                }
            }
            start.from = 1;
            if first.new_string.is_empty() && !create_empty {
                self.fail(Refusal::no_op().at(0))?;
            } else if self.original.is_some_and(|t| !t.is_empty()) {
                self.fail(Refusal::file_exists().at(0))?;
            } else {
                start.creating = true;
                start.base = &first.new_string;
                self.applied.push(EditReport {
                    created: self.original.is_none(),
                    ..EditReport::new(0, "", &first.new_string, 1)
                });
            }
        }
        if self.original.is_none() && !start.creating {
            return Err(Refusal::file_not_found(&self.plan.file_path).at(0));
        }
        Ok(start)
    }

    /// Claude Code validates every edit against the text as it was before any of them: those that
    /// fail are recorded (partial mode) and marked in `skip`.
    fn check_against_original(
        &mut self,
        w: &mut Work<'_, '_, '_>,
        view: &View<'_>,
        from: usize,
        skip: &mut [bool],
    ) -> Result<(), Refusal> {
        let edits = &self.plan.edits;
        for i in from..edits.len() {
            if edits[i].anchor.is_some() || edits[i].target.is_some() {
                continue;
            }
            if let Err(r) = precheck(&w.olds[i], &w.news[i]) {
                self.fail(r.at(i))?;
                skip[i] = true;
                continue;
            }
            let found = find_matches(&w.cs, &mut w.index, w.touching.as_ref(), &w.olds[i]);
            if let Err(r) = check_count(&found, edits[i].expect, &edits[i].old_string, false) {
                let r = with_hint(r, &view.text, &found, &w.olds[i], &w.news[i]);
                self.fail(r.at(i))?;
                skip[i] = true;
            }
        }
        Ok(())
    }

    /// `fail`, then no report: the edit `i` is left out (partial mode), or the file refused (atomic).
    fn failed(&mut self, r: Refusal, i: usize) -> Result<Option<EditReport>, Refusal> {
        self.fail(r.at(i))?;
        Ok(None)
    }

    /// An edit placed by a symbol or a rename: the exact spans the editor's answers were made into.
    fn by_target(
        &mut self,
        w: &mut Work<'_, '_, '_>,
        view: &View<'_>,
        base: &str,
        i: usize,
        target: &Target,
    ) -> Result<Option<EditReport>, Refusal> {
        let edit = &self.plan.edits[i];
        let spans = match target {
            Target::Spans(spans) => spans,
            Target::Symbol { path, .. } => {
                return Err(super::target::needs_editor(&format!("The symbol {}", path.text)).at(i))
            }
        };
        let places = match super::target::places(&w.cs, view, base, spans) {
            Ok(p) => p,
            Err(r) => return self.failed(r, i),
        };
        if let Err(r) = fits_each(&w.cs, &places) {
            return self.failed(r, i);
        }
        // All of them in one pass: a rename's thousands of spans, each applied alone, would rebuild the
        // change set thousands of times.
        let made = w.cs.apply_each(&places);
        w.record(&made);
        if let Some(placer) = &w.placer {
            placer.changed();
        }
        Ok(Some(EditReport {
            summary: Some(spans.summary.clone()),
            numbered: spans.numbered,
            ..EditReport::new(i, &edit.old_string, &edit.new_string, places.len())
        }))
    }

    /// A patch's hunk: located by its lines and its anchor (`anchor::Placer`).
    fn by_anchor(
        &mut self,
        w: &mut Work<'_, '_, '_>,
        view: &View<'_>,
        i: usize,
        anchor: &Anchor,
    ) -> Result<Option<EditReport>, Refusal> {
        let edit = &self.plan.edits[i];
        let (old, new) = (&w.olds[i], &w.news[i]);
        let adds_lines = old.is_empty() && !new.is_empty();
        // A hunk of only context lines in a file that is moved (Codex's pure move that states the
        // lines it expects) checks that they are there.
        let checks = matches!(self.plan.op, FileOp::MoveTo(_)) && !old.is_empty() && old == new;
        if !(adds_lines || checks) {
            if let Err(r) = precheck(old, new) {
                return self.failed(r, i);
            }
        }
        let hunk = Hunk {
            old,
            new,
            written: &edit.old_string,
            anchor,
        };
        let tolerant = self.opts.matching == Matching::Tolerant;
        let Some(placer) = w.placer.as_ref() else {
            return Ok(None);
        };
        let located = placer.locate(
            (&w.cs, &mut w.index, w.touching.as_ref()),
            &hunk,
            tolerant,
            view.has_bom(),
        );
        let (p, new_text, tier) = match located {
            Ok(placed) => placed,
            Err(r) => return self.failed(r, i),
        };
        if !checks {
            w.replace(&[(p.start, p.end)], &new_text);
        }
        if let Some(placer) = w.placer.as_mut() {
            placer.applied(&p, &new_text);
        }
        Ok(Some(EditReport {
            tier,
            label: Some(anchor.label.clone()),
            line: Some(p.line),
            offset: p.offset,
            ..EditReport::new(i, &edit.old_string, &edit.new_string, usize::from(!checks))
        }))
    }

    /// An edit found by its exact text (`old_string`), or with `match: tolerant` by a near match.
    fn by_text(
        &mut self,
        w: &mut Work<'_, '_, '_>,
        i: usize,
    ) -> Result<Option<EditReport>, Refusal> {
        let edit = &self.plan.edits[i];
        let (old, new) = (&w.olds[i], &w.news[i]);
        if self.opts.dialect == Dialect::Sequential {
            if let Err(r) = precheck(old, new) {
                return self.failed(r, i);
            }
        } else {
            let own = edit.old_string.trim_end_matches('\n');
            if !own.is_empty() && w.applied_news.iter().any(|n| n.contains(own)) {
                return self.failed(Refusal::chained(), i);
            }
        }
        let mut found = find_matches(&w.cs, &mut w.index, w.touching.as_ref(), old);
        let mut new_text: Cow<'_, str> = Cow::Borrowed(new.as_ref());
        let mut tier = None;
        if found.is_empty()
            && self.opts.matching == Matching::Tolerant
            && matches!(edit.expect, Expect::One | Expect::Exactly(1))
        {
            let current = w.cs.current_text();
            match tolerant::find(&current, old, new, false) {
                tolerant::Found::One(m) => {
                    found = vec![(m.start, m.end)];
                    new_text = Cow::Owned(m.new_text);
                    tier = Some(m.tier);
                }
                tolerant::Found::Several { tier, lines } => {
                    let r = Refusal::ambiguous(lines.len(), &edit.old_string);
                    return self
                        .failed(r.with_hint(Some(hints::tolerant_matches(tier, &lines))), i);
                }
                tolerant::Found::Unsure { tier, lines, why } => {
                    let r = Refusal::not_found(&edit.old_string);
                    let hint = hints::tolerant_unsure(tier, lines, &why);
                    return self.failed(r.with_hint(Some(hint)), i);
                }
                tolerant::Found::None => {}
            }
        }
        let apply_miss = self.opts.dialect == Dialect::ClaudeCode;
        if let Err(r) = check_count(&found, edit.expect, &edit.old_string, apply_miss) {
            let r = if r.kind == Kind::ApplyFailed {
                r
            } else {
                with_hint(r, &w.cs.current_text(), &found, old, new)
            };
            return self.failed(r, i);
        }
        if let Err(r) = fits(&w.cs, &found, &new_text) {
            return self.failed(r, i);
        }
        w.replace(&found, &new_text);
        if let Some(placer) = &w.placer {
            placer.changed();
        }
        Ok(Some(EditReport {
            tier,
            ..EditReport::new(i, &edit.old_string, &edit.new_string, found.len())
        }))
    }

    /// The composed change as replacements of the original text, checked: a plan's edits that cancel
    /// out are refused, and so is a deletion of a file that holds more than the patch removes.
    fn finish(
        mut self,
        cs: ChangeSet<'_>,
        view: &View<'_>,
        start: &Start<'_>,
    ) -> Result<FileChange, Refusal> {
        let edits = &self.plan.edits;
        let creating = start.creating;
        // The claude-code dialect finds some failures while validating and others while applying:
        // report them in edit order.
        self.failed.sort_by_key(|r| r.edit_index);
        if self.applied.is_empty() {
            return Err(all_failed(std::mem::take(&mut self.failed), edits.len()));
        }
        let view_reps = cs.finish();
        let original = self.original.unwrap_or("");
        // The created content (edit 0) is the file's first text, written as given; what the later
        // edits insert takes its line breaks.
        let news = self
            .applied
            .iter()
            .filter(|e| !(creating && e.edit_index == 0))
            .map(|e| e.new_string.as_str());
        let reps = view.to_original_replacements(view_reps);
        let line_breaks = eol::converted(view, news, &reps);
        let (replacements, text) = if creating {
            let text = apply_replacements(start.base, &reps);
            let whole = Replacement {
                start: 0,
                end: original.len(),
                text: text.clone(),
            };
            (vec![whole], text)
        } else {
            let text = apply_replacements(original, &reps);
            (reps, text)
        };
        // Compared as whole texts: replacements that are each minimal can still undo one another (delete
        // "😀" at the start, insert "😀" further on, in "😀😀😀"). A plan's own edits that change nothing
        // are refused; a patch's hunks that leave one file as it was (a series that adds a line, then
        // removes it) leave it alone, and the patch is refused only if no file changes at all.
        let (replacements, line_breaks) = if self.original == Some(text.as_str()) {
            (Vec::new(), None)
        } else {
            (replacements, line_breaks)
        };
        let patch = edits.iter().any(|e| e.anchor.is_some());
        if self.original == Some(text.as_str())
            && !patch
            && matches!(self.plan.op, FileOp::Edit)
            && self.plan.mode.is_none()
        {
            return Err(Refusal::unchanged());
        }
        if self.plan.op == FileOp::Delete && !text.is_empty() {
            return Err(Refusal::new(
                Kind::NotFound,
                format!(
                    "{} is to be deleted, but the file holds {} more lines than the patch removes: it changed since the \
                     patch was made. Nothing was changed; make the patch again from the file as it is.",
                    self.plan.file_path,
                    text.lines().count()
                ),
            ));
        }
        let created = creating && self.original.is_none();
        let op = self.plan.op.clone();
        Ok(FileChange {
            line_breaks,
            ..self.finish_op(op, text, replacements, created)
        })
    }

    fn finish_op(
        self,
        op: FileOp,
        text: String,
        replacements: Vec<Replacement>,
        created: bool,
    ) -> FileChange {
        FileChange {
            file_path: self.plan.file_path.clone(),
            created,
            op,
            replacements,
            text,
            applied: self.applied,
            failed: self.failed,
            edit_count: self.plan.edits.len(),
            mode: self.plan.mode,
            line_breaks: None,
        }
    }
}

/// Checks that need no search: a no-op edit, and an empty old_string past the first edit (the file
/// exists by then).
/// The most a file's text may grow to by its edits (256 MiB): a `replace_all` of a short text by a
/// long one multiplies a file, and past what the process may allocate it would abort rather than
/// refuse. Checked before the replacements are built.
pub const MAX_TEXT: usize = 256 << 20;

/// Refuses replacing `found` in the current text of `cs` by `new` when the result would pass `MAX_TEXT`.
fn fits(cs: &ChangeSet<'_>, found: &[(usize, usize)], new: &str) -> Result<(), Refusal> {
    let removed: usize = found.iter().map(|(a, b)| b - a).sum();
    grows_within(
        cs,
        removed,
        found.len().checked_mul(new.len()),
        found.len(),
        new.len(),
    )
}

/// `fits` for places that each have their own text (a resolved edit's spans), all of them together:
/// the message gives the longest text's length.
fn fits_each(cs: &ChangeSet<'_>, places: &[(usize, usize, String)]) -> Result<(), Refusal> {
    let removed: usize = places.iter().map(|(a, b, _)| b - a).sum();
    let added = places
        .iter()
        .try_fold(0usize, |sum, (_, _, t)| sum.checked_add(t.len()));
    let longest = places.iter().map(|(_, _, t)| t.len()).max().unwrap_or(0);
    grows_within(cs, removed, added, places.len(), longest)
}

/// Refuses a change of `count` replacements, removing `removed` bytes of the current text and adding
/// `added` (`None`: more than can be counted), of `each` bytes, that would pass `MAX_TEXT`.
fn grows_within(
    cs: &ChangeSet<'_>,
    removed: usize,
    added: Option<usize>,
    count: usize,
    each: usize,
) -> Result<(), Refusal> {
    let len = added.and_then(|a| (cs.current_len() - removed).checked_add(a));
    match len {
        Some(len) if len <= MAX_TEXT => Ok(()),
        _ => {
            let size = len.map_or_else(
                || "more bytes than can be counted".to_string(),
                |l| format!("{l} bytes"),
            );
            Err(Refusal::new(
                Kind::TooLarge,
                format!(
                    "The edit would make the file {size} long ({count} replacements of {each} bytes), more than the {MAX_TEXT} bytes (256 MiB) \
                     multiedit lets a file grow to. Nothing was changed."
                ),
            ))
        }
    }
}

fn precheck(old: &str, new: &str) -> Result<(), Refusal> {
    if old == new {
        return Err(Refusal::no_op());
    }
    if old.is_empty() {
        return Err(Refusal::file_exists());
    }
    Ok(())
}

fn check_count(
    found: &[(usize, usize)],
    expect: Expect,
    old: &str,
    apply_miss: bool,
) -> Result<(), Refusal> {
    let n = found.len();
    match (n, expect) {
        (0, _) if apply_miss => Err(Refusal::apply_failed()),
        (0, _) => Err(Refusal::not_found(old)),
        (1, Expect::One) | (_, Expect::All) => Ok(()),
        (_, Expect::One) => Err(Refusal::ambiguous(n, old)),
        (_, Expect::Exactly(k)) if k == n => Ok(()),
        (_, Expect::Exactly(k)) => Err(Refusal::count_mismatch(n, k, old)),
    }
}

fn with_hint(r: Refusal, current: &str, found: &[(usize, usize)], old: &str, new: &str) -> Refusal {
    let hint = match r.kind {
        Kind::NotFound => hints::not_found(current, old, new),
        Kind::Ambiguous | Kind::CountMismatch => Some(hints::match_lines(current, found)),
        _ => None,
    };
    r.with_hint(hint)
}

fn all_failed(mut failed: Vec<Refusal>, total: usize) -> Refusal {
    if failed.len() == 1 || total == 1 {
        return failed.swap_remove(0);
    }
    let first = failed[0].clone();
    let mut message = format!("None of the {} edits could be applied:", failed.len());
    for r in &failed {
        message.push_str(&format!(
            "\n{}. {}",
            r.edit_index.map_or(0, |i| i + 1),
            r.message
        ));
    }
    Refusal {
        message,
        hint: None,
        ..first
    }
}
