//! The engine against the reference implementation in `tests/support/reference/`, on random cases: same
//! outcome, same text, same refusal kind. The same generator and comparison drive the fuzz target
//! in `fuzz/`; every input the fuzzer found a difference on is kept in `fuzz/regressions/` and
//! replayed here, and the fuzz corpus is replayed too.

use crate::support::reference;

use proptest::prelude::*;
use reference::model::{self, Edit, Expect, File, Plan};

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 50_000,
        max_shrink_iters: 20_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn engine_agrees_with_reference(data in proptest::collection::vec(any::<u8>(), 0..160)) {
        let case = reference::gen::case(&data);
        if let Err(why) = reference::compare::check(&case) {
            return Err(TestCaseError::fail(format!("{why}\ncase: {case:#?}")));
        }
    }
}

fn replay_dir(dir: &str) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(dir);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_file()
            && path
                .file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        {
            reference::assert_agree(&std::fs::read(&path).unwrap());
            n += 1;
        }
    }
    n
}

#[test]
fn fuzz_regressions_and_corpus_replay() {
    let regressions = replay_dir("fuzz/regressions");
    let corpus = replay_dir("fuzz/corpus/differential");
    assert!(regressions + corpus > 0, "no inputs found to replay");
}

/// The reference itself, on the cases the contract spells out: it must be right for the comparison to mean anything.
#[test]
fn reference_follows_the_contract() {
    let one = |text: &str, edits: Vec<Edit>| {
        let plan = Plan {
            files: vec![File {
                path: "/f".into(),
                edits,
            }],
            partial: false,
            claude_code: false,
        };
        model::run(&plan, &[Some(text)])
            .map(|mut r| r.remove(0).unwrap().view_after)
            .map_err(|f| f.kind)
    };
    let e = |old: &str, new: &str, expect| Edit {
        old: old.into(),
        new: new.into(),
        expect,
    };
    // Non-overlapping, leftmost count: "aa" occurs once in "aaa".
    assert_eq!(one("aaa", vec![e("aa", "b", Expect::One)]), Ok("ba".into()));
    assert_eq!(
        one("aaaa", vec![e("aa", "b", Expect::One)]),
        Err("ambiguous")
    );
    assert_eq!(
        one("aaaa", vec![e("aa", "b", Expect::Exactly(2))]),
        Ok("bb".into())
    );
    assert_eq!(
        one("aaaa", vec![e("aa", "b", Expect::Exactly(3))]),
        Err("count_mismatch")
    );
    assert_eq!(one("x", vec![e("y", "z", Expect::All)]), Err("not_found"));
    // Sequential: the second edit sees the first one's result.
    assert_eq!(
        one(
            "ab",
            vec![e("a", "c", Expect::One), e("cb", "d", Expect::One)]
        ),
        Ok("d".into())
    );
    // Edits that cancel out.
    assert_eq!(
        one(
            "ab",
            vec![e("a", "c", Expect::One), e("c", "a", Expect::One)]
        ),
        Err("unchanged")
    );
    assert_eq!(one("ab", vec![e("a", "a", Expect::One)]), Err("no_op"));
    assert_eq!(one("ab", vec![e("", "a", Expect::One)]), Err("file_exists"));
    // CRLF: a `\n` in the plan matches `\r\n`; the view reads `\r\n` as `\n`; the BOM stays out of matching.
    assert_eq!(
        one("\u{feff}a\r\nb\r\n", vec![e("a\nb", "c\nd", Expect::One)]),
        Ok("c\nd\n".into())
    );
    // `$` and backslashes are literal.
    assert_eq!(
        one("a", vec![e("a", "$&\\1", Expect::One)]),
        Ok("$&\\1".into())
    );
}

/// Partial mode in the claude-code dialect finds some failures while validating against the original
/// and others while applying; they used to be reported in the order found, not the order of the edits.
#[test]
fn partial_failures_are_reported_in_edit_order() {
    use multiedit::engine::{apply_plan, parse_plan};
    let plan = parse_plan(
        r#"{"file_path": "/f", "mode": "partial", "dialect": "claude-code", "edits": [
            {"old_string": "ß", "new_string": "", "replace_all": true},
            {"old_string": "abß", "new_string": "bbß"},
            {"old_string": "a", "new_string": "a"}]}"#,
    )
    .unwrap();
    let out = apply_plan(&plan, &[Some("ax\nabß a")]).unwrap();
    let failed: Vec<_> = out
        .failed()
        .map(|r| (r.kind.as_str(), r.edit_index))
        .collect();
    assert_eq!(failed, [("apply_failed", Some(1)), ("no_op", Some(2))]);
    let message = out.message();
    let (two, three) = (
        message.find("\n2. ").unwrap(),
        message.find("\n3. ").unwrap(),
    );
    assert!(two < three, "{message}");
}

/// Edits whose matches lie inside text an earlier edit inserted used to be spliced into that text one
/// match at a time, each splice costing the inserted text's whole length: quadratic. A fuzz input of
/// 211 bytes (a short text whose `b`s twenty-odd `replace_all` edits keep doubling) took 68 s.
#[test]
fn edits_inside_a_large_inserted_block_cost_linear_time() {
    use multiedit::engine::{apply_plan, Edit, FilePlan, Options, Plan};
    let time = |kb: usize| {
        let block: String = (0..kb * 1024 / 16)
            .map(|i| format!("call foo({:05});\n", i % 100_000))
            .collect();
        let edits = vec![
            Edit::new("MARKER", &block),
            Edit::all("foo", "bar"),
            Edit::all("bar", "bazz"),
            Edit::all("bazz", "q"),
            Edit::all("q", "foo"),
        ];
        let plan = Plan {
            files: vec![FilePlan::edit("/f", edits)],
            options: Options::default(),
            rename: None,
        };
        let t = std::time::Instant::now();
        let out = apply_plan(&plan, &[Some("start\nMARKER\nend\n")]).unwrap();
        assert_eq!(out.files[0].text, format!("start\n{block}\nend\n"));
        t.elapsed()
    };
    let (small, large) = (time(100), time(800));
    // Eight times the text: linear work takes about eight times as long, quadratic sixty-four.
    assert!(
        large < small * 24 + std::time::Duration::from_millis(50),
        "100 KB: {small:?}, 800 KB: {large:?}"
    );
    // The fuzz input itself is `fuzz/regressions/slow-doubling`, replayed with the others.
}
