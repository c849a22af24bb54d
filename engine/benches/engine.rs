//! Engine cost with real sizes: `cargo bench --bench engine`.
//!
//! `peer_style_*` is the way today's tools work (materialise the text, rescan the whole file for every
//! edit), kept here so the comparison runs on the same machine.

use multiedit_engine::engine::{apply_plan, Edit, FilePlan, Options, Plan};

mod support;

use support::source;

fn main() {
    divan::main();
}

/// `n` edits of lines spread evenly through the text, in file order.
fn edits(text: &str, n: usize) -> Vec<Edit> {
    let lines: Vec<&str> = text.lines().collect();
    let step = lines.len() / n;
    (0..n)
        .map(|k| {
            let line = lines[k * step];
            Edit::new(line, &line.replace("compute(", "compute_fast("))
        })
        .collect()
}

fn plan(edits: Vec<Edit>) -> Plan {
    Plan {
        files: vec![FilePlan::edit("/bench.rs", edits)],
        options: Options::default(),
        rename: None,
    }
}

fn run(bencher: divan::Bencher, bytes: usize, n: usize) {
    let text = source(bytes);
    let plan = plan(edits(&text, n));
    bencher.bench(|| {
        let out = apply_plan(&plan, &[Some(&text)]).expect("plan applies");
        divan::black_box(out);
    });
}

#[divan::bench(sample_count = 20)]
fn mb1_edits100(b: divan::Bencher) {
    run(b, 1 << 20, 100)
}

#[divan::bench(sample_count = 20)]
fn mb10_edits1(b: divan::Bencher) {
    run(b, 10 << 20, 1)
}

#[divan::bench(sample_count = 20)]
fn mb10_edits1000(b: divan::Bencher) {
    run(b, 10 << 20, 1000)
}

/// Rescan-per-edit, as the peers do: each edit counts its matches in the whole current text and
/// rebuilds the string.
fn peer_style(text: &str, edits: &[Edit]) -> String {
    let mut cur = text.to_string();
    for e in edits {
        assert_eq!(cur.matches(e.old_string.as_str()).count(), 1);
        cur = cur.replacen(e.old_string.as_str(), &e.new_string, 1);
    }
    cur
}

#[divan::bench(sample_count = 3)]
fn peer_style_mb10_edits1000(b: divan::Bencher) {
    let text = source(10 << 20);
    let e = edits(&text, 1000);
    b.bench(|| divan::black_box(peer_style(&text, &e)));
}

/// A miss on a 10 MB file: the refusal and its hint (closest text found by line hashes and trigrams,
/// the changed word named). `changed_word` finds no line as it is and takes the trigram pass;
/// `indentation` finds every line loosely and stops after the hash pass; `tolerant` is the same miss
/// recovered by the indentation tier.
fn miss(
    bencher: divan::Bencher,
    old: impl Fn(&str) -> String,
    matching: multiedit_engine::engine::Matching,
    ok: bool,
) {
    let text = source(10 << 20);
    let lines: Vec<&str> = text.lines().collect();
    let target = lines[lines.len() * 2 / 3];
    // For the tolerant tier, new_string is written as sloppily as old_string (a model that indents with
    // a tab writes both so): the tier then knows the depth, where a new_string at the file's own depth
    // beside a shifted old_string is refused as not certain.
    let new = match matching {
        multiedit_engine::engine::Matching::Tolerant => old(target),
        _ => target.to_string(),
    };
    let mut p = plan(vec![Edit::new(
        &old(target),
        &new.replace("compute(", "compute_fast("),
    )]);
    p.options.matching = matching;
    bencher.bench(|| {
        let out = apply_plan(&p, &[Some(&text)]);
        assert_eq!(out.is_ok(), ok);
        divan::black_box(out.map_err(|r| assert!(r.hint.is_some())).ok());
    });
}

#[divan::bench(sample_count = 10)]
fn mb10_miss_changed_word(b: divan::Bencher) {
    miss(
        b,
        |t| t.replace("compute(", "evaluate("),
        Default::default(),
        false,
    )
}

#[divan::bench(sample_count = 10)]
fn mb10_miss_indentation(b: divan::Bencher) {
    miss(
        b,
        |t| t.replacen("    ", "\t", 1),
        Default::default(),
        false,
    )
}

#[divan::bench(sample_count = 10)]
fn mb10_tolerant_indentation(b: divan::Bencher) {
    miss(
        b,
        |t| t.replacen("    ", "\t", 1),
        multiedit_engine::engine::Matching::Tolerant,
        true,
    )
}
