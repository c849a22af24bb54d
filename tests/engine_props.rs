//! Property: applying the composed change to the original equals applying the edits one by one.

use multiedit::engine::{
    apply_plan, apply_replacements, Edit, Expect, FilePlan, Kind, Options, Plan,
};
use proptest::prelude::*;

/// The obvious implementation: materialise the text, one search per edit.
fn one_by_one(text: &str, edits: &[Edit]) -> Result<String, Kind> {
    let mut cur = text.to_string();
    for e in edits {
        if e.old_string == e.new_string {
            return Err(Kind::NoOp);
        }
        let n = cur.matches(e.old_string.as_str()).count();
        match (n, e.expect) {
            (0, _) => return Err(Kind::NotFound),
            (1, Expect::One) | (_, Expect::All) => {}
            (_, Expect::One) => return Err(Kind::Ambiguous),
            (_, Expect::Exactly(k)) if k != n => return Err(Kind::CountMismatch),
            _ => {}
        }
        cur = cur.replace(e.old_string.as_str(), &e.new_string);
    }
    if cur == text {
        return Err(Kind::Unchanged);
    }
    Ok(cur)
}

fn piece() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b", "ab", "é", "😀", "\n", " ", "ba"]),
        1..4,
    )
    .prop_map(|v| v.concat())
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        piece(),
        prop::collection::vec(
            prop::sample::select(vec!["a", "b", "x", "é", "😀", "\n", ""]),
            0..4,
        ),
        0..3u8,
    )
        .prop_map(|(old, new, e)| Edit {
            old_string: old,
            new_string: new.concat(),
            expect: match e {
                0 => Expect::One,
                1 => Expect::All,
                _ => Expect::Exactly(2),
            },
            anchor: None,
            target: None,
        })
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b", "ab", "é", "😀", "\n", " ", "xyz", "ba"]),
        0..60,
    )
    .prop_map(|v| v.concat())
}

fn engine(text: &str, edits: Vec<Edit>) -> Result<String, Kind> {
    let plan = Plan {
        files: vec![FilePlan::edit("/p", edits)],
        options: Options::default(),
        rename: None,
    };
    match apply_plan(&plan, &[Some(text)]) {
        Ok(o) => {
            let f = &o.files[0];
            // The composed change, applied to the original, gives the final text.
            assert_eq!(apply_replacements(text, &f.replacements), f.text);
            for w in f.replacements.windows(2) {
                assert!(w[0].end < w[1].start, "replacements overlap or touch");
            }
            Ok(f.text.clone())
        }
        Err(r) => Err(r.kind),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn composed_equals_one_by_one(t in text(), edits in prop::collection::vec(edit(), 1..8)) {
        prop_assert_eq!(engine(&t, edits.clone()), one_by_one(&t, &edits));
    }

    /// Enough distinct needles for the one-pass multi-pattern index.
    #[test]
    fn composed_equals_one_by_one_with_many_edits(t in text(), edits in prop::collection::vec(edit(), 24..48)) {
        prop_assert_eq!(engine(&t, edits.clone()), one_by_one(&t, &edits));
    }

    /// Long needles cut from the text itself, enough of them for the gram index and the touch tracker.
    #[test]
    fn composed_equals_one_by_one_with_long_needles(
        t in prop::collection::vec(prop::sample::select(vec!["ab", "é", "😀", "\n", " ", "xyz", "ba", "let v"]), 20..120).prop_map(|v| v.concat()),
        cuts in prop::collection::vec((0usize..1000, 15usize..40, 0..3u8, prop::sample::select(vec!["", "Q", "ab", "let v\n"])), 16..30),
    ) {
        let edits: Vec<Edit> = cuts
            .iter()
            .map(|&(at, len, e, new)| {
                let mut a = at % t.len().max(1);
                while !t.is_char_boundary(a) { a -= 1; }
                let mut b = (a + len).min(t.len());
                while !t.is_char_boundary(b) { b -= 1; }
                let old = if b > a { &t[a..b] } else { "zz" };
                Edit { old_string: old.to_string(), new_string: new.to_string(), expect: match e { 0 => Expect::One, 1 => Expect::All, _ => Expect::Exactly(2) }, anchor: None, target: None }
            })
            .collect();
        prop_assert_eq!(engine(&t, edits.clone()), one_by_one(&t, &edits));
    }

    /// With CRLF line breaks the result is the LF result with the file's breaks restored.
    #[test]
    fn crlf_text_behaves_like_its_lf_twin(t in text(), edits in prop::collection::vec(edit(), 1..6)) {
        let crlf = t.replace('\n', "\r\n");
        let ours = engine(&crlf, edits.clone());
        let reference = one_by_one(&t, &edits);
        match (ours, reference) {
            (Ok(o), Ok(r)) => {
                prop_assert_eq!(o.replace("\r\n", "\n"), r);
                prop_assert!(!o.replace("\r\n", "").contains('\n') || !t.contains('\n'), "a bare LF was written into a CRLF file");
            }
            (a, b) => prop_assert_eq!(a.err(), b.err()),
        }
    }
}

/// A large plan of long needles in which later edits match text that earlier ones wrote, next to it
/// and across it: the one-pass index and the change-time tracker must see what a rescan would.
#[test]
fn large_plans_see_text_that_earlier_edits_wrote() {
    let lines: Vec<String> = (0..400)
        .map(|i| format!("let value_{i} = compute({i}); // line {i}\n"))
        .collect();
    let text: String = lines.concat();
    let mut edits = Vec::new();
    for i in (0..400).step_by(10) {
        // Rewrite a line, then edit the rewritten text, then edit across it and the next line.
        edits.push(Edit::new(
            &format!("let value_{i} = compute({i});"),
            &format!("let renamed_{i} = compute_fast({i});"),
        ));
        edits.push(Edit::new(
            &format!("renamed_{i} = compute_fast"),
            &format!("renamed_{i}_v2 = compute_fast"),
        ));
        edits.push(Edit::new(
            &format!("({i}); // line {i}\nlet value_{}", i + 1),
            &format!("({i}); // line {i} (edited)\nlet value_{}", i + 1),
        ));
    }
    edits.push(Edit {
        old_string: "_v2 = compute_fast(".into(),
        new_string: "_v3 = compute_fast(".into(),
        expect: Expect::All,
        anchor: None,
        target: None,
    });
    let ours = engine(&text, edits.clone()).expect("applies");
    assert_eq!(Ok(ours.clone()), one_by_one(&text, &edits));
    assert_eq!(ours.matches("_v3 = compute_fast(").count(), 40);
}

/// Applies a unified diff to `before` (hunks in order, context checked) and returns the new text.
fn patch(before: &str, diff: &str) -> Result<String, String> {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut at = 0usize;
    let mut lines = diff.lines().skip(2).peekable();
    while let Some(h) = lines.next() {
        let spec = h
            .strip_prefix("@@ -")
            .and_then(|r| r.split(' ').next())
            .ok_or(format!("bad header {h}"))?;
        let (s, c) = spec
            .split_once(',')
            .map_or((spec, 1), |(s, c)| (s, c.parse().unwrap()));
        let start: usize = s.parse().unwrap();
        let first = if c == 0 { start } else { start - 1 };
        if first < at {
            return Err(format!("hunk {h} goes back"));
        }
        old[at..first].iter().for_each(|l| out.push_str(l));
        at = first;
        while let Some(l) = lines.peek().copied() {
            if l.starts_with("@@") {
                break;
            }
            lines.next();
            let no_newline = lines.peek() == Some(&"\\ No newline at end of file");
            if no_newline {
                lines.next();
            }
            let text = format!("{}{}", &l[1..], if no_newline { "" } else { "\n" });
            match &l[..1] {
                " " | "-" => {
                    if old.get(at) != Some(&text.as_str()) {
                        return Err(format!(
                            "line {} is {:?}, the diff says {:?}",
                            at + 1,
                            old.get(at),
                            text
                        ));
                    }
                    at += 1;
                    if &l[..1] == " " {
                        out.push_str(&text);
                    }
                }
                "+" => out.push_str(&text),
                m => return Err(format!("bad mark {m}")),
            }
        }
    }
    old[at..].iter().for_each(|l| out.push_str(l));
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The unified diff built from the change, applied to the original, gives the new text.
    #[test]
    fn the_diff_turns_the_original_into_the_result(t in text(), edits in prop::collection::vec(edit(), 1..6)) {
        let plan = Plan { files: vec![FilePlan::edit("/p", edits)], options: Options::default(), rename: None };
        if let Ok(o) = apply_plan(&plan, &[Some(&t)]) {
            let f = &o.files[0];
            let d = multiedit::engine::diff::unified("/p", &t, &f.replacements);
            prop_assert_eq!(patch(&t, &d), Ok(f.text.clone()), "diff:\n{}", d);
        }
    }
}
