//! What addressing by symbol saves, on real code: every Rust function of this repository's history whose
//! body a commit changed (and nothing else of it), as the plan that replaces the body by `old_string`
//! (the old body, then the new) and as the plan that names the symbol (`replace: "body"`, the new body
//! only). Each symbol plan is also resolved and applied, the way `multiedit lsp` does with a language
//! server's range, and must give the commit's text of the function.
//!
//! Reads the history with git, so it is left out of the ordinary run:
//! `cargo test --test it symbol_plans -- --ignored --nocapture` prints the figures docs/performance.md gives.

use crate::support::corpus::history;

use multiedit::engine::{NamePath, SymbolAction};
use multiedit::lsp::convert::{self, Encoding};
use multiedit::protocol::ext::ReportedSymbol;
use multiedit::symbols::{braces, outline, place};
use ropey::Rope;
use serde_json::json;
use tower_lsp_server::ls_types::Range;

/// A Rust function of a text: its name path (`Type/name` inside an `impl`), whole span, name, body.
struct Function {
    path: String,
    start: usize,
    end: usize,
    name: (usize, usize),
    body: (usize, usize),
}

/// The functions of a Rust text whose last line is `}` at their own indentation, as rustfmt writes
/// them; their bodies found as `multiedit lsp` finds them (`braces::body`).
fn functions(text: &str) -> Vec<Function> {
    let mut out = Vec::new();
    let mut offset = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut starts = Vec::with_capacity(lines.len());
    for l in &lines {
        starts.push(offset);
        offset += l.len();
    }
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let rest = ["pub(crate) ", "pub ", "async ", "unsafe ", "const "]
            .iter()
            .fold(trimmed, |t, p| t.strip_prefix(p).unwrap_or(t));
        let Some(after) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let name_start = starts[i] + (line.len() - after.len());
        let close = format!("{indent}}}");
        let Some(last) = (i..lines.len()).find(|&k| lines[k].trim_end() == close) else {
            continue;
        };
        let end = starts[last] + close.len();
        let Ok(body) = braces::body(
            text,
            "rs",
            starts[i] + indent.len(),
            name_start + name.len(),
            end,
        ) else {
            continue;
        };
        // The type of the `impl` it sits in, if any: the nearest line above at a smaller indentation.
        let owner = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty() && l.len() - l.trim_start().len() < indent.len())
            .and_then(|l| {
                let t = l.trim_start().strip_prefix("impl")?;
                let target = t.rsplit(" for ").next()?.trim_end_matches(['{', ' ', '\n']);
                Some(target.split('<').next()?.trim().to_string())
            });
        let path = match owner {
            Some(o) if !o.is_empty() => format!("{o}/{name}"),
            _ => name.clone(),
        };
        out.push(Function {
            path,
            start: starts[i] + indent.len(),
            end,
            name: (name_start, name_start + name.len()),
            body,
        });
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[ignore = "reads the git history; run with --ignored --nocapture for the figures"]
fn a_body_by_symbol_costs_the_new_body_only() {
    let root = history::repo_root();
    if let Some(why) = history::unusable(&root, 20) {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let h = history::read(&root, 400).expect("the history");
    let (mut cases, mut old_total, mut symbol_total, mut ratios, mut applied, mut refused) =
        (0usize, 0usize, 0usize, Vec::new(), 0usize, 0usize);
    let mut largest: Option<(usize, usize, String)> = None;
    for commit in &h.commits {
        for f in commit.files.iter().filter(|f| f.path.ends_with(".rs")) {
            let Some(pre) = &f.pre else { continue };
            let after = functions(&f.post);
            for before in functions(pre) {
                let Some(now) = after.iter().find(|a| a.path == before.path) else {
                    continue;
                };
                let (old_body, new_body) = (
                    &pre[before.body.0 + 1..before.body.1],
                    &f.post[now.body.0 + 1..now.body.1],
                );
                // Only the body changed: the same signature, a different body.
                if old_body == new_body
                    || pre[before.start..before.body.0] != f.post[now.start..now.body.0]
                {
                    continue;
                }
                // The body as place.rs replaces it: whole lines between the braces' lines.
                let inner = |b: &str| {
                    b.strip_prefix('\n')
                        .and_then(|b| b.rfind('\n').map(|i| b[..=i].to_string()))
                };
                let (Some(old_lines), Some(new_lines)) = (inner(old_body), inner(new_body)) else {
                    continue;
                };
                let file_path = format!("/project/{}", f.path);
                let by_text = json!({"file_path": file_path, "edits": [{"old_string": old_lines, "new_string": new_lines}]}).to_string();
                let by_symbol = json!({"file_path": file_path, "edits": [{"symbol": before.path, "replace": "body", "new_string": new_lines}]}).to_string();
                cases += 1;
                old_total += by_text.len();
                symbol_total += by_symbol.len();
                ratios.push(by_text.len() as f64 / by_symbol.len() as f64);
                if largest.as_ref().is_none_or(|l| by_text.len() > l.0) {
                    largest = Some((
                        by_text.len(),
                        by_symbol.len(),
                        format!("{} in {} at {}", before.path, f.path, &commit.id[..10]),
                    ));
                }

                // Resolved from the range a language server gives, it makes the commit's function.
                let rope = Rope::from_str(pre);
                let pos = |b: usize| convert::byte_to_position(&rope, b, Encoding::Utf16);
                let reported = ReportedSymbol {
                    name: before.path.rsplit('/').next().unwrap().to_string(),
                    detail: None,
                    kind: 12,
                    range: Range::new(pos(before.start), pos(before.end)),
                    selection_range: Range::new(pos(before.name.0), pos(before.name.1)),
                    children: vec![],
                };
                let symbols = outline::read(&[reported], &rope, Encoding::Utf16).unwrap();
                let found = outline::find(
                    &symbols,
                    &NamePath::parse(before.path.rsplit('/').next().unwrap(), "symbol").unwrap(),
                    &file_path,
                )
                .unwrap();
                // Right or refused: a body whose new first line sits at another indentation is refused.
                let Ok(spans) = place::place(pre, "rs", &found, SymbolAction::Body, &new_lines)
                else {
                    refused += 1;
                    continue;
                };
                let s = &spans.spans[0];
                let made = format!(
                    "{}{}{}",
                    &pre[before.start..s.start],
                    s.text,
                    &pre[s.end..before.end]
                );
                assert_eq!(
                    made,
                    f.post[now.start..now.end],
                    "{} in {} at {}",
                    before.path,
                    f.path,
                    commit.id
                );
                applied += 1;
            }
        }
    }
    assert!(cases > 20, "too few changed bodies in the history: {cases}");
    let (big_text, big_symbol, big_what) = largest.unwrap();
    println!(
        "{cases} function bodies changed by {} commits of this repository (Rust), each applied by symbol: {applied} gave the commit's text, {refused} refused, none other:\n\
         plans by old_string {old_total} bytes, by symbol {symbol_total} bytes ({:.2}x); median per body {:.2}x; \
         the largest {big_text} against {big_symbol} bytes ({big_what})",
        h.commits.len(),
        old_total as f64 / symbol_total as f64,
        median(ratios)
    );
}
