//! Line endings and the byte-order mark, kept out of the matching logic.
//!
//! Edits are matched in an "engine view" of the text: without a UTF-8 BOM and, when the text has CRLF
//! line breaks, with each `\r\n` seen as `\n`. A plan's strings are seen the same way (their `\r\n` as
//! `\n`), so a line break in `old_string` matches whatever break the file has there, whichever style the
//! plan wrote it in, and the replacements found in the view are mapped back to the original bytes, with
//! every line break they insert written in the style of the line break nearest to where it lands: an LF
//! file gets `\n`, a CRLF file `\r\n`, a mixed file the style of the break next to the edit. A file
//! without CRLF keeps its view borrowed. A diff that carries `\r` is `literal`: its bytes are taken as
//! written, as `git apply` takes them (docs/guarantees.md, "Line breaks").

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::changeset::Replacement;

const BOM: &str = "\u{feff}";

/// The style line breaks an edit inserted were written in, when it is not the style the plan wrote
/// them in (`FileChange::line_breaks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineBreaks {
    /// `\n`, the file's only style.
    Lf,
    /// `\r\n`, the file's only style.
    Crlf,
    /// Each as the line break nearest to it, in a file that has both.
    Nearest,
}

impl LineBreaks {
    pub fn describe(self) -> &'static str {
        match self {
            LineBreaks::Lf => "as LF (\\n), the file's line breaks",
            LineBreaks::Crlf => "as CRLF (\\r\\n), the file's line breaks",
            LineBreaks::Nearest => {
                "as the line break nearest to each (the file has both CRLF and LF)"
            }
        }
    }
}

pub struct View<'a> {
    original: &'a str,
    pub text: Cow<'a, str>,
    bom: usize,
    /// View positions of the `\n`s that had a `\r` before them in the original.
    crlf_at: Vec<usize>,
    /// The bytes are taken as written: no plan string is normalised.
    literal: bool,
}

impl<'a> View<'a> {
    pub fn new(original: &'a str) -> Self {
        let bom = if original.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let body = &original[bom..];
        // A `\r` then its next byte: cheaper than a two-byte memmem search, whose searcher costs
        // more to build than most files take to scan.
        let bytes = body.as_bytes();
        if !memchr::memchr_iter(b'\r', bytes).any(|i| bytes.get(i + 1) == Some(&b'\n')) {
            return View {
                original,
                text: Cow::Borrowed(body),
                bom,
                crlf_at: Vec::new(),
                literal: false,
            };
        }
        let mut text = String::with_capacity(body.len());
        let mut crlf_at = Vec::new();
        let mut last = 0;
        for i in memchr::memmem::find_iter(body.as_bytes(), b"\r\n") {
            text.push_str(&body[last..i]);
            crlf_at.push(text.len());
            last = i + 1;
        }
        text.push_str(&body[last..]);
        View {
            original,
            text: Cow::Owned(text),
            bom,
            crlf_at,
            literal: false,
        }
    }

    /// The text as it is, its mark and CRLF breaks included: for edits that state them
    /// (`FilePlan::literal`).
    pub fn literal(original: &'a str) -> Self {
        View {
            original,
            text: Cow::Borrowed(original),
            bom: 0,
            crlf_at: Vec::new(),
            literal: true,
        }
    }

    pub fn has_bom(&self) -> bool {
        self.bom > 0
    }

    pub fn has_crlf(&self) -> bool {
        !self.crlf_at.is_empty()
    }

    /// A plan string as the view sees it: its `\r\n`s as `\n` (a literal view takes it as written).
    pub fn normalize<'s>(&self, s: &'s str) -> Cow<'s, str> {
        if !self.literal && s.contains("\r\n") {
            Cow::Owned(s.replace("\r\n", "\n"))
        } else {
            Cow::Borrowed(s)
        }
    }

    /// The view position of an original byte offset; `None` inside the mark or between a `\r` and
    /// its `\n` (no place of the view is there).
    pub fn to_view(&self, p: usize) -> Option<usize> {
        let body = p.checked_sub(self.bom)?;
        if self.crlf_at.is_empty() {
            return Some(body);
        }
        // Each CRLF before `p` is one byte shorter in the view; `p` on a `\n` whose `\r` came first
        // would split the pair.
        let mut lo = 0;
        let mut hi = self.crlf_at.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            // The original offset of the `\r` of the mid-th CRLF.
            let r = self.crlf_at[mid] + mid;
            if r < body {
                lo = mid + 1
            } else {
                hi = mid
            }
        }
        let before = lo;
        if before > 0 && self.crlf_at[before - 1] + before - 1 + 1 == body {
            return None;
        }
        Some(body - before)
    }

    fn to_original(&self, p: usize) -> usize {
        p + self.bom + self.crlf_at.partition_point(|&q| q < p)
    }

    /// Maps view replacements to replacements of the original bytes.
    pub fn to_original_replacements(&self, reps: Vec<Replacement>) -> Vec<Replacement> {
        if self.bom == 0 && !self.has_crlf() {
            return reps;
        }
        reps.into_iter()
            .map(|r| {
                let start = self.to_original(r.start);
                let end = self.to_original(r.end);
                let text = if self.has_crlf() && r.text.contains('\n') {
                    if self.crlf_near(start) {
                        r.text.replace('\n', "\r\n")
                    } else {
                        r.text
                    }
                } else {
                    r.text
                };
                Replacement { start, end, text }
            })
            .collect()
    }

    /// Whether the line break nearest to a replacement starting at `start` is CRLF: the first one at or
    /// after it (inside the replaced text or past it), else the last one before it.
    fn crlf_near(&self, start: usize) -> bool {
        let b = self.original.as_bytes();
        let is_crlf = |nl: usize| nl > 0 && b[nl - 1] == b'\r';
        if let Some(i) = memchr::memchr(b'\n', &b[start..]) {
            return is_crlf(start + i);
        }
        memchr::memrchr(b'\n', &b[..start]).is_some_and(is_crlf)
    }
}

/// The style the view's replacements wrote line breaks in, when the plan's `news` (the strings as the
/// plan wrote them, of the edits that were applied) used another: `None` when nothing was converted.
/// `written` are the replacements as mapped to the original bytes.
pub fn converted<'a>(
    view: &View<'_>,
    news: impl IntoIterator<Item = &'a str>,
    written: &[Replacement],
) -> Option<LineBreaks> {
    if view.literal {
        return None;
    }
    let (mut plan_crlf, mut plan_lf) = (false, false);
    for n in news {
        let crlf = memchr::memmem::find_iter(n.as_bytes(), b"\r\n").count();
        plan_crlf |= crlf > 0;
        plan_lf |= memchr::memchr_iter(b'\n', n.as_bytes()).count() > crlf;
    }
    let (mut wrote_crlf, mut wrote_lf) = (false, false);
    for r in written {
        let crlf = memchr::memmem::find_iter(r.text.as_bytes(), b"\r\n").count();
        wrote_crlf |= crlf > 0;
        wrote_lf |= memchr::memchr_iter(b'\n', r.text.as_bytes()).count() > crlf;
    }
    if !(wrote_crlf && plan_lf || wrote_lf && plan_crlf) {
        return None;
    }
    let body = &view.original.as_bytes()[view.bom..];
    let file_lf = memchr::memchr_iter(b'\n', body).count() > view.crlf_at.len();
    Some(match (view.has_crlf(), file_lf) {
        (true, true) => LineBreaks::Nearest,
        (true, false) => LineBreaks::Crlf,
        _ => LineBreaks::Lf,
    })
}

/// Applies replacements (sorted, non-overlapping, against `original`) and returns the new text.
pub fn apply_replacements(original: &str, reps: &[Replacement]) -> String {
    let grow: usize = reps.iter().map(|r| r.text.len()).sum();
    let mut out = String::with_capacity(original.len() + grow);
    let mut last = 0;
    for r in reps {
        out.push_str(&original[last..r.start]);
        out.push_str(&r.text);
        last = r.end;
    }
    out.push_str(&original[last..]);
    out
}
