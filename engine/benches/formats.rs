//! Patch formats with real sizes: `cargo bench --bench formats`.
//!
//! `diff_*` against `plan_*`: a 1,000-hunk unified diff of a 10 MB file, parsed and applied through the
//! engine (`formats::plan_from_text`, then `engine::apply_plan`), beside the JSON plan of the same
//! 1,000 changes; the goal is the diff within 2x of the plan.
//!
//! The whole-process benchmark (`multiedit apply` against `git apply`) is the server's `cli` bench.

use std::path::Path;
use std::sync::OnceLock;

use multiedit_engine::engine::{apply_plan, parse_plan, Matching};
use multiedit_engine::formats::{plan_from_text, Format};
use serde_json::json;

mod support;

use support::source;

fn main() {
    divan::main();
}

const HUNKS: usize = 1000;
const CONTEXT: usize = 3;

/// The 10 MB text, the unified diff of `HUNKS` one-line changes spread through it (3 lines of context,
/// as `git diff` writes), and the JSON plan of the same changes.
struct Big {
    text: String,
    diff: String,
    plan: String,
    /// The plan an assistant writes with the hunks' own text: context lines included.
    plan_with_context: String,
}

fn big() -> &'static Big {
    static BIG: OnceLock<Big> = OnceLock::new();
    BIG.get_or_init(|| {
        let text = source(10 << 20);
        let lines: Vec<&str> = text.lines().collect();
        let step = lines.len() / HUNKS;
        let mut diff = String::from("diff --git a/bench.rs b/bench.rs\nindex 1111111..2222222 100644\n--- a/bench.rs\n+++ b/bench.rs\n");
        let mut edits = Vec::with_capacity(HUNKS);
        let mut with_context = Vec::with_capacity(HUNKS);
        for k in 0..HUNKS {
            let at = k * step + step / 2;
            let (from, to) = (at - CONTEXT, at + CONTEXT + 1);
            let n = to - from;
            diff.push_str(&format!("@@ -{},{n} +{},{n} @@\n", from + 1, from + 1));
            for (i, line) in lines.iter().enumerate().take(to).skip(from) {
                if i == at {
                    diff.push_str(&format!("-{line}\n+{}\n", line.replace("compute(", "compute_fast(")));
                } else {
                    diff.push_str(&format!(" {line}\n"));
                }
            }
            edits.push(json!({"old_string": lines[at], "new_string": lines[at].replace("compute(", "compute_fast(")}));
            let old: String = lines[from..to].iter().map(|l| format!("{l}\n")).collect();
            with_context.push(json!({"old_string": old, "new_string": old.replace("compute(", "compute_fast(")}));
        }
        let plan = json!({"files": [{"file_path": "/bench.rs", "edits": edits}]}).to_string();
        let plan_with_context = json!({"files": [{"file_path": "/bench.rs", "edits": with_context}]}).to_string();
        Big { text, diff, plan, plan_with_context }
    })
}

/// Parse and apply: the JSON plan of 1,000 edits.
#[divan::bench(sample_count = 20)]
fn plan_mb10_edits1000(b: divan::Bencher) {
    let big = big();
    b.bench(|| {
        let plan = parse_plan(&big.plan).expect("plan parses");
        divan::black_box(apply_plan(&plan, &[Some(&big.text)]).expect("plan applies"));
    });
}

/// Parse and apply: the same 1,000 edits, each with the hunk's context lines in old_string.
#[divan::bench(sample_count = 20)]
fn plan_mb10_edits1000_with_context(b: divan::Bencher) {
    let big = big();
    b.bench(|| {
        let plan = parse_plan(&big.plan_with_context).expect("plan parses");
        divan::black_box(apply_plan(&plan, &[Some(&big.text)]).expect("plan applies"));
    });
}

/// Parse and apply: the unified diff of the same 1,000 changes.
#[divan::bench(sample_count = 20)]
fn diff_mb10_hunks1000(b: divan::Bencher) {
    let big = big();
    let root = Path::new("/");
    b.bench(|| {
        let (plan, _) = plan_from_text(&big.diff, Some(Format::Diff), Some(root), Matching::Exact)
            .expect("diff parses");
        divan::black_box(apply_plan(&plan, &[Some(&big.text)]).expect("diff applies"));
    });
}

/// The parse alone, to tell it from the placing of the hunks.
#[divan::bench(sample_count = 20)]
fn diff_mb10_hunks1000_parse_only(b: divan::Bencher) {
    let big = big();
    let root = Path::new("/");
    b.bench(|| {
        divan::black_box(
            plan_from_text(&big.diff, Some(Format::Diff), Some(root), Matching::Exact)
                .expect("diff parses"),
        )
    });
}
