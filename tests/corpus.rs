//! A corpus of real edits nobody wrote for a test: this repository's own history. Every non-merge
//! commit's changes to text files become the edits an assistant would write (one per changed line range,
//! with just enough context to be unique), in the history as committed and converted to CRLF, to tab
//! indentation, to non-ASCII text and to trailing whitespace. Exact plans, one per file and one per
//! commit, must give every post-image byte for byte. Then the same edits written sloppily (indentation
//! unit swapped, trailing whitespace stripped, plain quotes, a changed word), one at a time: under
//! `tolerant` they must give the right text or be refused, never other text; under `exact` they are
//! refused and the hint should name the cause and the line. The figures printed at the end are the
//! docs/performance.md's.

mod support;
use crate::support::corpus as corpus_support;

use corpus_support::derive::{self, DerivedEdit};
use corpus_support::history::{self, Commit};
use corpus_support::images::{indent_unit, Variant, VARIANTS};
use corpus_support::sloppy::{self, Mistake};
use multiedit::engine::{apply_plan, plan_from_value, Kind, Outcome, Refusal};
use serde_json::{json, Value};
use std::time::Instant;

/// A history shorter than this is taken for a shallow or partial clone.
const MIN_COMMITS: usize = 20;
/// At most this many commits, evenly spread over the history, keep the test under 3 minutes.
const MAX_COMMITS: usize = 400;
/// Sloppy edits under `tolerant` that may give text other than the right one.
const MAX_WRONG_TEXTS: usize = 0;
/// Share of exact-mode refusals of sloppy edits whose hint must name the cause and the line, per
/// cause (each at 100% when this was written).
const MIN_HINT_ACCURACY_INDENTATION: f64 = 0.99;
const MIN_HINT_ACCURACY_TRAILING: f64 = 0.99;
const MIN_HINT_ACCURACY_QUOTES: f64 = 0.99;
/// The same for a changed word: the hint must name the line and both words (about 99% when this was
/// written; the misses are lines that occur twice, or a line of one word).
const MIN_HINT_ACCURACY_CHANGED_WORD: f64 = 0.95;
/// How many failures of each sort are printed.
const EXAMPLES: usize = 5;

/// One file's change in one variant, with the edits derived from it.
struct Prepared<'a> {
    commit: &'a str,
    path: &'a str,
    pre: Option<String>,
    post: String,
    edits: Vec<DerivedEdit>,
    indent_unit: usize,
}

impl Prepared<'_> {
    fn plan_file(&self) -> Value {
        let edits: Vec<Value> = self
            .edits
            .iter()
            .map(|e| json!({"old_string": e.old, "new_string": e.new}))
            .collect();
        json!({"file_path": format!("/corpus/{}", self.path), "edits": edits})
    }
}

fn run(plan: &Value, texts: &[Option<&str>]) -> Result<Outcome, Refusal> {
    apply_plan(&plan_from_value(plan)?, texts)
}

/// The files of `commit` in `variant`; `None` for a file whose hunks do not give its post-image.
fn prepare<'a>(commit: &'a Commit, variant: Variant) -> Vec<Option<Prepared<'a>>> {
    commit
        .files
        .iter()
        .map(|f| {
            let (pre, post) = variant.convert(f.pre.as_deref(), &f.post);
            let mut edits = derive::edits(pre.as_deref(), &post, &f.hunks)?;
            if variant == Variant::Crlf {
                // Every other edit written with `\n`, as an assistant writes a CRLF file's lines.
                for e in edits.iter_mut().skip(1).step_by(2) {
                    e.old = e.old.replace("\r\n", "\n");
                    e.new = e.new.replace("\r\n", "\n");
                }
            }
            let indent_unit = indent_unit(pre.iter().map(String::as_str).chain([post.as_str()]));
            Some(Prepared {
                commit: &commit.id,
                path: &f.path,
                pre,
                post,
                edits,
                indent_unit,
            })
        })
        .collect()
}

#[derive(Default)]
struct ExactTally {
    files: usize,
    edits: usize,
    commits: usize,
    files_ok: usize,
    commits_ok: usize,
    failures: Vec<String>,
}

#[derive(Default)]
struct SloppyTally {
    cases: usize,
    recovered: usize,
    refused: usize,
    wrong: usize,
    hint_cause: usize,
    hint_line: usize,
    hint_both: usize,
    wrong_examples: Vec<String>,
    hint_examples: Vec<String>,
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}

fn short(s: &str, max: usize) -> String {
    let s: String = s
        .chars()
        .take(max)
        .collect::<String>()
        .replace('\n', "⏎")
        .replace('\t', "→");
    format!("{s:?}")
}

/// The first line where `got` differs from `want`, both sides.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.split('\n').collect(), got.split('\n').collect());
    let i = (0..w.len().max(g.len()))
        .find(|&i| w.get(i) != g.get(i))
        .unwrap_or(0);
    format!(
        "line {}: want {} got {}",
        i + 1,
        short(w.get(i).unwrap_or(&"<none>"), 400),
        short(g.get(i).unwrap_or(&"<none>"), 400)
    )
}

fn exact_checks(commit: &Commit, files: &[Option<Prepared>], t: &mut ExactTally) {
    let mut all = Vec::new();
    for p in files {
        let Some(p) = p else {
            t.failures.push(format!(
                "{}: a file's hunks do not give its post-image",
                commit.id
            ));
            continue;
        };
        t.files += 1;
        t.edits += p.edits.len();
        match run(&p.plan_file(), &[p.pre.as_deref()]) {
            Ok(o) if o.files[0].text == p.post => t.files_ok += 1,
            Ok(o) => t.failures.push(format!(
                "{} {}: wrong text, {}",
                p.commit,
                p.path,
                first_difference(&p.post, &o.files[0].text)
            )),
            Err(e) => t.failures.push(format!(
                "{} {}: refused: {} {:?}",
                p.commit, p.path, e.message, e.edit_index
            )),
        }
        all.push(p);
    }
    t.commits += 1;
    let plan = json!({"files": all.iter().map(|p| p.plan_file()).collect::<Vec<_>>()});
    let texts: Vec<Option<&str>> = all.iter().map(|p| p.pre.as_deref()).collect();
    match run(&plan, &texts) {
        Ok(o) if o.files.iter().zip(&all).all(|(f, p)| f.text == p.post) => t.commits_ok += 1,
        Ok(_) => t
            .failures
            .push(format!("{}: the commit's plan gives wrong text", commit.id)),
        Err(e) => t.failures.push(format!(
            "{}: the commit's plan is refused: {}",
            commit.id, e.message
        )),
    }
}

fn sloppy_checks(p: &Prepared, mistake: Mistake, t: &mut SloppyTally) {
    let path = format!("/corpus/{}", p.path);
    for (i, e) in p.edits.iter().enumerate() {
        let Some(s) = sloppy::apply(mistake, e, p.indent_unit) else {
            continue;
        };
        t.cases += 1;
        let place = format!("{} {} edit {i}", p.commit, p.path);
        let edit = json!([{"old_string": s.old, "new_string": s.new}]);
        if mistake != Mistake::ChangedWord {
            match run(
                &json!({"file_path": path, "edits": edit, "match": "tolerant"}),
                &[Some(&e.before)],
            ) {
                Ok(o) if o.files[0].text == e.after => t.recovered += 1,
                Ok(o) => {
                    t.wrong += 1;
                    if t.wrong_examples.len() < EXAMPLES {
                        t.wrong_examples.push(format!(
                            "{place}: old {} new {}: {}",
                            short(&s.old, 160),
                            short(&s.new, 160),
                            first_difference(&e.after, &o.files[0].text)
                        ));
                    }
                }
                Err(_) => t.refused += 1,
            }
        }
        let line = s.line + 1;
        let hint = match run(
            &json!({"file_path": path, "edits": edit}),
            &[Some(&e.before)],
        ) {
            Err(r) if r.kind == Kind::NotFound => r.hint.unwrap_or_default(),
            Err(r) => format!("<refused as {} instead of not_found>", r.kind.as_str()),
            Ok(_) => "<applied in exact mode>".into(),
        };
        let said = sloppy::summary(&hint);
        let cause = match &s.words {
            Some((file, old)) => sloppy::names_word(said, file) && sloppy::names_word(said, old),
            None => mistake.cause().iter().any(|c| said.contains(c)),
        };
        let named_line = sloppy::names_line(said, line);
        t.hint_cause += usize::from(cause);
        t.hint_line += usize::from(named_line);
        t.hint_both += usize::from(cause && named_line);
        if !(cause && named_line) && t.hint_examples.len() < EXAMPLES {
            let want = match &s.words {
                Some((file, old)) => format!("line {line}, {file:?} vs {old:?}"),
                None => format!("line {line}, {}", mistake.cause()[0]),
            };
            t.hint_examples.push(format!(
                "{place}: want {want}; old {}; hint {}",
                short(&s.old, 120),
                short(said, 200)
            ));
        }
    }
}

/// Which mistakes are made on which variant's edits.
const SLOPPY: &[(Variant, Mistake)] = &[
    (Variant::Base, Mistake::SpacesAsTabs),
    (Variant::Crlf, Mistake::SpacesAsTabs),
    (Variant::Tabs, Mistake::TabsAsSpaces),
    (Variant::Trailing, Mistake::TrailingStripped),
    (Variant::NonAscii, Mistake::PlainQuotes),
    (Variant::Base, Mistake::ChangedWord),
    (Variant::NonAscii, Mistake::ChangedWord),
];

#[test]
fn the_repository_history_replays_through_the_engine() {
    let root = history::repo_root();
    println!("corpus: the history of {}", root.display());
    if let Some(why) = history::unusable(&root, MIN_COMMITS) {
        let bar = "!".repeat(100);
        let msg = format!("\n{bar}\nTHE CORPUS TEST DID NOT RUN: {why}.\nIt needs this repository's full git history.\n{bar}\n");
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{msg}");
        }
        // Straight to stderr, past the test harness's capture: a skipped corpus must be seen.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), msg.as_bytes());
        return;
    }
    let t0 = Instant::now();
    let h =
        history::read(&root, MAX_COMMITS).unwrap_or_else(|e| panic!("reading the history: {e}"));
    let read_time = t0.elapsed();

    let mut exact: Vec<(Variant, ExactTally)> = VARIANTS
        .iter()
        .map(|&v| (v, ExactTally::default()))
        .collect();
    let mut sloppy: Vec<SloppyTally> = SLOPPY.iter().map(|_| SloppyTally::default()).collect();
    for commit in &h.commits {
        for (variant, tally) in exact.iter_mut() {
            let files = prepare(commit, *variant);
            exact_checks(commit, &files, tally);
            for ((v, mistake), t) in SLOPPY.iter().zip(sloppy.iter_mut()) {
                if v == variant {
                    files
                        .iter()
                        .flatten()
                        .for_each(|p| sloppy_checks(p, *mistake, t));
                }
            }
        }
    }

    let base = &exact[0].1;
    println!("\n== corpus: this repository's history ==");
    println!(
        "{} of {} non-merge commits taken (at most {MAX_COMMITS}); {} with text-file changes; {} file changes left out \
         (fuzz inputs, images, lock files, deleted files); history read in {:.1} s, whole test {:.1} s",
        h.taken,
        h.total_commits,
        h.commits.len(),
        h.skipped_files,
        read_time.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    println!("\n| exact plans | commits | files | edits | single-file plans right | multi-file plans right |");
    println!("|---|---|---|---|---|---|");
    for (v, t) in &exact {
        println!(
            "| {} | {} | {} | {} | {}/{} | {}/{} |",
            v.name(),
            t.commits,
            t.files,
            t.edits,
            t.files_ok,
            t.files,
            t.commits_ok,
            t.commits
        );
    }
    println!("\n| sloppy edit | on | cases | tolerant: recovered | refused | WRONG text | exact hint: cause | line | both |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for ((v, m), t) in SLOPPY.iter().zip(&sloppy) {
        let (rec, refd, wrong) = if *m == Mistake::ChangedWord {
            ("-".into(), "-".into(), "-".into())
        } else {
            (
                format!("{} ({})", t.recovered, pct(t.recovered, t.cases)),
                t.refused.to_string(),
                t.wrong.to_string(),
            )
        };
        println!(
            "| {} | {} | {} | {rec} | {refd} | {wrong} | {} | {} | {} |",
            m.name(),
            v.name(),
            t.cases,
            pct(t.hint_cause, t.cases),
            pct(t.hint_line, t.cases),
            pct(t.hint_both, t.cases)
        );
    }
    let mut problems = Vec::new();
    for (v, t) in &exact {
        for f in t.failures.iter().take(EXAMPLES) {
            println!("EXACT FAILURE ({}): {f}", v.name());
        }
        if !t.failures.is_empty() {
            problems.push(format!(
                "{} exact failures on the {} variant",
                t.failures.len(),
                v.name()
            ));
        }
    }
    let wrong: usize = sloppy.iter().map(|t| t.wrong).sum();
    for ((v, m), t) in SLOPPY.iter().zip(&sloppy) {
        for w in &t.wrong_examples {
            println!("WRONG TEXT ({}, {}): {w}", m.name(), v.name());
        }
        for w in &t.hint_examples {
            println!("HINT MISSED ({}, {}): {w}", m.name(), v.name());
        }
        let min = match m {
            Mistake::SpacesAsTabs | Mistake::TabsAsSpaces => MIN_HINT_ACCURACY_INDENTATION,
            Mistake::TrailingStripped => MIN_HINT_ACCURACY_TRAILING,
            Mistake::PlainQuotes => MIN_HINT_ACCURACY_QUOTES,
            Mistake::ChangedWord => MIN_HINT_ACCURACY_CHANGED_WORD,
        };
        if t.cases > 0 && (t.hint_both as f64) < min * t.cases as f64 {
            problems.push(format!(
                "hint accuracy for {} on {}: {} < {:.1}%",
                m.name(),
                v.name(),
                pct(t.hint_both, t.cases),
                min * 100.0
            ));
        }
    }
    if wrong > MAX_WRONG_TEXTS {
        problems.push(format!(
            "{wrong} sloppy edits gave wrong text under tolerant matching"
        ));
    }
    assert!(base.edits > 0, "no edits derived from the history");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
