//! Runs a case through the engine and the reference and says how they differ, if they do.
//!
//! Checked exactly, always: Ok or refused; the refusal's kind, edit index, file and match count; per
//! file, whether it was created, which edits applied with how many replacements each, which failed
//! (partial mode); that the replacements are sorted, non-overlapping, on character boundaries and
//! turn the original into the final text.
//!
//! The final text: for a text without CRLF it must equal the reference's exactly (BOM put back in
//! front). For a text with CRLF the engine chooses, per inserted `\n`, the line break nearest to where
//! it lands; the reference does not model that choice, so the check is: the BOM is kept; with every run
//! of `\r` before a `\n` dropped, the text equals the reference's view (always); read as a view (`\r\n`
//! as `\n`) it equals the reference's view exactly whenever no lone `\r` can pair up with a `\n` across
//! a replacement's edge; and a file whose every line break is CRLF stays so.

use multiedit::engine::{self, Dialect, Matching, Mode, Options, Outcome, Refusal};

use super::gen::Case;
use super::model::{self, Expect, Failure, FileResult, BOM};

pub fn to_engine(plan: &model::Plan, matching: Matching) -> engine::Plan {
    engine::Plan {
        files: plan
            .files
            .iter()
            .map(|f| engine::FilePlan {
                file_path: f.path.clone(),
                edits: f
                    .edits
                    .iter()
                    .map(|e| engine::Edit {
                        old_string: e.old.clone(),
                        new_string: e.new.clone(),
                        expect: match e.expect {
                            Expect::One => engine::Expect::One,
                            Expect::All => engine::Expect::All,
                            Expect::Exactly(n) => engine::Expect::Exactly(n),
                        },
                        anchor: None,
                        target: None,
                    })
                    .collect(),
                op: engine::FileOp::Edit,
                mode: None,
                literal: false,
            })
            .collect(),
        options: Options {
            mode: if plan.partial {
                Mode::Partial
            } else {
                Mode::Atomic
            },
            dialect: if plan.claude_code {
                Dialect::ClaudeCode
            } else {
                Dialect::Sequential
            },
            matching,
            diagnostics: None,
            save: None,
        },
        rename: None,
    }
}

/// `Ok(())` when the engine agrees with the reference on `case`, else what differs.
pub fn check(case: &Case) -> Result<(), String> {
    let originals = case.originals();
    let want = model::run(&case.plan, &originals);
    if want.as_ref().is_err_and(|f| f.kind == "too_large") {
        return Ok(());
    }
    let eplan = to_engine(&case.plan, Matching::Exact);
    let got = engine::apply_plan(&eplan, &originals);
    // Rendering the results must not fail either.
    match &got {
        Ok(o) => {
            let _ = o.message();
            let _ = multiedit::result::PlanResult::of(o).to_value();
        }
        Err(r) => {
            let _ = r.full_text();
        }
    }
    match (&got, &want) {
        (Err(e), Err(f)) => same_failure(e, f, case)?,
        (Ok(o), Ok(r)) => same_outcome(o, r, case)?,
        _ => {
            return Err(format!(
                "engine {}, reference {}",
                brief(&got),
                cut(&format!("{want:?}"))
            ))
        }
    }
    // Tolerant matching only acts after an exact miss: where every edit matched exactly it changes
    // nothing. Wherever it succeeds, its change must still turn the original into its text.
    let tolerant = engine::apply_plan(&to_engine(&case.plan, Matching::Tolerant), &originals);
    if let Some(o) = got.as_ref().ok().filter(|o| o.failed().next().is_none()) {
        match &tolerant {
            Ok(t) if t == o => {}
            other => {
                return Err(format!(
                    "exact matching succeeded but tolerant matching gave {}",
                    brief(other)
                ))
            }
        }
    }
    if let Ok(t) = &tolerant {
        let _ = t.message();
        for (i, fc) in t.files.iter().enumerate() {
            check_replacements(case.texts[i].as_deref().unwrap_or(""), fc)
                .map_err(|e| format!("tolerant: {e}"))?;
        }
    }
    Ok(())
}

/// At most 300 characters of a text, for messages.
fn cut(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{:?}... ({} bytes)", &s[..i], s.len()),
        None => format!("{s:?}"),
    }
}

fn brief(r: &Result<Outcome, Refusal>) -> String {
    match r {
        Ok(o) => format!(
            "Ok([{}])",
            o.files
                .iter()
                .map(|f| cut(&f.text))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(e) => format!("Err({:?} at {:?}: {:?})", e.kind, e.edit_index, e.message),
    }
}

fn same_failure(e: &Refusal, f: &Failure, case: &Case) -> Result<(), String> {
    let path = &case.plan.files[f.file].path;
    if e.kind.as_str() != f.kind
        || e.edit_index != f.edit_index
        || e.file_path.as_ref() != Some(path)
    {
        return Err(format!(
            "engine refused {:?} at edit {:?} of {:?}, reference {} at edit {:?} of {path}",
            e.kind, e.edit_index, e.file_path, f.kind, f.edit_index
        ));
    }
    if let Some(n) = f.count {
        if !e.message.contains(&format!("Found {n} matches")) {
            return Err(format!(
                "reference counted {n} matches, engine said {:?}",
                e.message
            ));
        }
    }
    if e.message.is_empty() {
        return Err("empty refusal message".into());
    }
    Ok(())
}

fn same_outcome(o: &Outcome, r: &model::PlanResult, case: &Case) -> Result<(), String> {
    if o.files.len() != r.len() {
        return Err(format!(
            "engine returned {} files, reference {}",
            o.files.len(),
            r.len()
        ));
    }
    for (i, (fc, want)) in o.files.iter().zip(r).enumerate() {
        let original = case.texts[i].as_deref().unwrap_or("");
        let file = &case.plan.files[i];
        if fc.file_path != file.path {
            return Err(format!(
                "file {i} is {:?}, expected {:?}",
                fc.file_path, file.path
            ));
        }
        check_replacements(original, fc)?;
        match want {
            Err(f) => {
                if !fc.applied.is_empty() || fc.text != original || fc.failed.len() != 1 {
                    return Err(format!(
                        "file {i} should be left alone after {f:?}, engine: {}",
                        cut(&format!("{fc:?}"))
                    ));
                }
                same_failure(&fc.failed[0], f, case)?;
            }
            Ok(want) => same_file(i, fc, want, case)?,
        }
    }
    Ok(())
}

fn check_replacements(original: &str, fc: &engine::FileChange) -> Result<(), String> {
    let mut last = 0;
    for rep in &fc.replacements {
        if rep.start < last || rep.end < rep.start || rep.end > original.len() {
            return Err(format!(
                "replacements out of order or bounds: {}",
                cut(&format!("{:?}", fc.replacements))
            ));
        }
        if !original.is_char_boundary(rep.start) || !original.is_char_boundary(rep.end) {
            return Err(format!("replacement {rep:?} splits a character"));
        }
        last = rep.end;
    }
    let applied = engine::apply_replacements(original, &fc.replacements);
    if applied != fc.text {
        return Err(format!(
            "replacements {} give {}, text is {}",
            cut(&format!("{:?}", fc.replacements)),
            cut(&applied),
            cut(&fc.text)
        ));
    }
    Ok(())
}

fn same_file(
    i: usize,
    fc: &engine::FileChange,
    want: &FileResult,
    case: &Case,
) -> Result<(), String> {
    if fc.created != want.created {
        return Err(format!(
            "file {i}: created {} vs reference {}",
            fc.created, want.created
        ));
    }
    let applied: Vec<(usize, usize)> = fc
        .applied
        .iter()
        .map(|a| (a.edit_index, a.replacements))
        .collect();
    if applied != want.applied {
        return Err(format!(
            "file {i}: applied (edit, replacements) {applied:?} vs reference {:?}",
            want.applied
        ));
    }
    let failed: Vec<(&str, Option<usize>)> = fc
        .failed
        .iter()
        .map(|r| (r.kind.as_str(), r.edit_index))
        .collect();
    let want_failed: Vec<(&str, Option<usize>)> =
        want.failed.iter().map(|f| (f.kind, f.edit_index)).collect();
    if failed != want_failed {
        return Err(format!(
            "file {i}: failed edits {failed:?} vs reference {want_failed:?}"
        ));
    }
    // The success text counts what was applied.
    let n = want.applied.len();
    let head = if want.failed.is_empty() {
        format!(
            "Applied {n} edit{} to {}:",
            if n == 1 { "" } else { "s" },
            fc.file_path
        )
    } else {
        format!("Applied {n} of {} edit", fc.edit_count)
    };
    if !fc.message().starts_with(&head) {
        return Err(format!(
            "file {i}: message {} does not start with {head:?}",
            cut(&fc.message())
        ));
    }
    let prefix = if want.bom { BOM } else { "" };
    if !want.crlf {
        let expected = format!("{prefix}{}", want.view_after);
        if fc.text != expected {
            return Err(format!(
                "file {i}: text {}, reference {}",
                cut(&fc.text),
                cut(&expected)
            ));
        }
        return Ok(());
    }
    let Some(body) = fc.text.strip_prefix(prefix) else {
        return Err(format!("file {i}: BOM lost: {}", cut(&fc.text)));
    };
    // Always: read with every run of `\r` before a `\n` dropped, the texts are equal. The engine's text
    // differs from the reference's view only by `\r`s put before some `\n`s, so this holds whatever it
    // chose, and it checks every other character.
    if without_cr_before_lf(body) != without_cr_before_lf(&want.view_after) {
        return Err(format!(
            "file {i}: text {} differs from the reference's {} beyond the line breaks",
            cut(&fc.text),
            cut(&want.view_after)
        ));
    }
    let lone_cr = want.view_before.contains('\r')
        || case.plan.files[i]
            .edits
            .iter()
            .any(|e| e.new.replace("\r\n", "\n").contains('\r'));
    if !lone_cr {
        let as_view = body.replace("\r\n", "\n");
        if as_view != want.view_after {
            return Err(format!(
                "file {i}: text {} reads as {}, reference {}",
                cut(&fc.text),
                cut(&as_view),
                cut(&want.view_after)
            ));
        }
        let base_body = want.base.strip_prefix(prefix).unwrap_or(&want.base);
        if all_crlf(base_body) && !all_crlf(body) {
            return Err(format!(
                "file {i}: a CRLF file got a bare LF: {}",
                cut(&fc.text)
            ));
        }
    }
    Ok(())
}

/// `s` with each run of `\r` directly before a `\n` removed.
fn without_cr_before_lf(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut crs = 0;
    for c in s.chars() {
        match c {
            '\r' => crs += 1,
            '\n' => {
                crs = 0;
                out.push('\n');
            }
            c => {
                out.extend(std::iter::repeat_n('\r', crs));
                crs = 0;
                out.push(c);
            }
        }
    }
    out.extend(std::iter::repeat_n('\r', crs));
    out
}

/// Every `\n` is preceded by `\r`.
fn all_crlf(s: &str) -> bool {
    s.match_indices('\n')
        .all(|(i, _)| i > 0 && s.as_bytes()[i - 1] == b'\r')
}
