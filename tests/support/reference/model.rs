//! The reference: MultiEdit semantics written the slow, obvious way, to check the engine against.
//!
//! Every edit runs on a materialised `String` with `str::matches` (leftmost, non-overlapping) and
//! `str::replacen`/`str::replace`. No change sets, no indexes, no windows: nothing clever that could be
//! wrong in the same way as the engine.
//!
//! Line endings and the BOM are modelled the simple way the contract states them: matching happens in a
//! "view" of the text without its UTF-8 BOM and, when the text contains CRLF, with every `\r\n` read as
//! `\n`; plan strings are always read with `\r\n` as `\n`, so a file without CRLF gets `\n` line breaks. The reference computes the final *view*; how the engine
//! writes a `\n` back as `\r\n` depends on where its composed replacements land, which the reference
//! deliberately does not model. `compare.rs` says what is checked exactly and what as a property.

pub const BOM: &str = "\u{feff}";

/// Past this size (8 MB; the fuzz target lowers it to 1 MB to keep its pace) the reference gives up
/// with kind `too_large` and the case is not compared: edits like `b` -> `bb` repeated grow a text
/// exponentially, and such a case measures only patience.
pub static MAX_TEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(8 << 20);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    One,
    All,
    Exactly(usize),
}

#[derive(Debug, Clone)]
pub struct Edit {
    pub old: String,
    pub new: String,
    pub expect: Expect,
}

#[derive(Debug, Clone)]
pub struct File {
    pub path: String,
    pub edits: Vec<Edit>,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub files: Vec<File>,
    pub partial: bool,
    pub claude_code: bool,
}

/// Why the reference refused. `kind` uses the engine's snake_case names; `count` is the number of
/// matches found, for the kinds whose message states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: &'static str,
    pub file: usize,
    pub edit_index: Option<usize>,
    pub count: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct FileResult {
    /// The text the edits ran on: the original, or the first edit's new_string when it creates the file.
    pub base: String,
    /// Whether the text the edits ran on started with a BOM and contained CRLF.
    pub bom: bool,
    pub crlf: bool,
    /// The view before and after the edits.
    pub view_before: String,
    pub view_after: String,
    pub created: bool,
    /// `(edit_index, replacements)` of every applied edit, in order.
    pub applied: Vec<(usize, usize)>,
    /// Failed edits (partial mode), in edit order.
    pub failed: Vec<Failure>,
}

/// The view of a text: (had a BOM, contains CRLF, the text without BOM and with `\r\n` as `\n`).
pub fn view(text: &str) -> (bool, bool, String) {
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let crlf = body.contains("\r\n");
    (
        bom,
        crlf,
        if crlf {
            body.replace("\r\n", "\n")
        } else {
            body.to_string()
        },
    )
}

fn check_count(
    n: usize,
    expect: Expect,
    claude_code: bool,
) -> Result<(), (&'static str, Option<usize>)> {
    match (n, expect) {
        (0, _) if claude_code => Err(("apply_failed", None)),
        (0, _) => Err(("not_found", None)),
        (1, Expect::One) | (_, Expect::All) => Ok(()),
        (_, Expect::One) => Err(("ambiguous", Some(n))),
        (_, Expect::Exactly(k)) if k == n => Ok(()),
        (_, Expect::Exactly(_)) => Err(("count_mismatch", Some(n))),
    }
}

pub fn run_file(
    file: usize,
    original: Option<&str>,
    f: &File,
    partial: bool,
    claude_code: bool,
) -> Result<FileResult, Failure> {
    let edits = &f.edits;
    let n = edits.len();
    let mut failed: Vec<Failure> = Vec::new();
    // Atomic mode: the first failure refuses the file. Partial mode: it is recorded and skipped.
    macro_rules! fail {
        ($kind:expr, $i:expr, $count:expr) => {{
            let failure = Failure {
                kind: $kind,
                file,
                edit_index: Some($i),
                count: $count,
            };
            if !partial {
                return Err(failure);
            }
            failed.push(failure);
        }};
    }

    let mut applied: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let mut creating = false;
    let mut base: &str = original.unwrap_or("");
    if edits[0].old.is_empty() {
        start = 1;
        if edits[0].new.is_empty() {
            fail!("no_op", 0, None);
        } else if original.is_some_and(|t| !t.is_empty()) {
            fail!("file_exists", 0, None);
        } else {
            creating = true;
            base = &edits[0].new;
            applied.push((0, 1));
        }
    }
    if original.is_none() && !creating {
        return Err(Failure {
            kind: "file_not_found",
            file,
            edit_index: Some(0),
            count: None,
        });
    }

    let (bom, crlf, view_before) = view(base);
    let norm = |s: &str| s.replace("\r\n", "\n");
    let mut text = view_before.clone();
    let mut skip = vec![false; n];

    if claude_code {
        // Every edit is first validated against the text before any of them.
        for i in start..n {
            let (old, new) = (norm(&edits[i].old), norm(&edits[i].new));
            if old == new {
                fail!("no_op", i, None);
                skip[i] = true;
            } else if old.is_empty() {
                fail!("file_exists", i, None);
                skip[i] = true;
            } else if let Err((kind, count)) = check_count(
                view_before.matches(old.as_str()).count(),
                edits[i].expect,
                false,
            ) {
                fail!(kind, i, count);
                skip[i] = true;
            }
        }
    }

    let mut news_applied: Vec<&str> = if creating {
        vec![edits[0].new.as_str()]
    } else {
        Vec::new()
    };
    for i in start..n {
        if skip[i] {
            continue;
        }
        let (old, new) = (norm(&edits[i].old), norm(&edits[i].new));
        if !claude_code {
            if old == new {
                fail!("no_op", i, None);
                continue;
            }
            if old.is_empty() {
                fail!("file_exists", i, None);
                continue;
            }
        } else {
            let own = edits[i].old.trim_end_matches('\n');
            if !own.is_empty() && news_applied.iter().any(|s| s.contains(own)) {
                fail!("chained", i, None);
                continue;
            }
        }
        let count = text.matches(old.as_str()).count();
        if let Err((kind, c)) = check_count(count, edits[i].expect, claude_code) {
            fail!(kind, i, c);
            continue;
        }
        text = match edits[i].expect {
            Expect::One => text.replacen(old.as_str(), &new, 1),
            _ => text.replace(old.as_str(), &new),
        };
        if text.len() > MAX_TEXT.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Failure {
                kind: "too_large",
                file,
                edit_index: Some(i),
                count: None,
            });
        }
        news_applied.push(&edits[i].new);
        applied.push((i, count));
    }

    failed.sort_by_key(|f| f.edit_index);
    if applied.is_empty() {
        // Partial mode with nothing applied: the first failure (every edit failed).
        return Err(failed.swap_remove(0));
    }
    let unchanged = if creating {
        // The created text equals what was there: only an empty file left empty.
        original == Some("") && !bom && text.is_empty()
    } else {
        text == view_before
    };
    if unchanged {
        return Err(Failure {
            kind: "unchanged",
            file,
            edit_index: None,
            count: None,
        });
    }
    Ok(FileResult {
        base: base.to_string(),
        bom,
        crlf,
        view_before,
        view_after: text,
        created: creating && original.is_none(),
        applied,
        failed,
    })
}

/// One entry per file: its result, or (partial multi-file plans) the failure that left it alone.
pub type PlanResult = Vec<Result<FileResult, Failure>>;

pub fn run(plan: &Plan, originals: &[Option<&str>]) -> Result<PlanResult, Failure> {
    let mut out = Vec::new();
    for (i, (f, original)) in plan.files.iter().zip(originals).enumerate() {
        match run_file(i, *original, f, plan.partial, plan.claude_code) {
            Ok(r) => out.push(Ok(r)),
            Err(e) if e.kind == "too_large" => return Err(e),
            // In a partial plan of several files, a file whose edits all failed is reported, not fatal.
            Err(e) if plan.partial && plan.files.len() > 1 => out.push(Err(e)),
            Err(e) => return Err(e),
        }
    }
    if out.iter().all(|r| r.is_err()) {
        return Err(out
            .into_iter()
            .find_map(Result::err)
            .expect("at least one file"));
    }
    Ok(out)
}
