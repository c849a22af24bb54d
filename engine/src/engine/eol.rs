//! Line endings and the byte-order mark, kept out of the matching logic.
//!
//! Edits are matched in an "engine view" of the text: without a UTF-8 BOM and, when the text has CRLF
//! line breaks, with each `\r\n` seen as `\n`. A plan's `\n` then matches whatever break the file has
//! there, and the replacements found in the view are mapped back to the original bytes, with every `\n`
//! they insert written in the style of the line break nearest to where it lands. A file without CRLF
//! takes none of this: its view is the text itself, borrowed.

use std::borrow::Cow;

use super::changeset::Replacement;

const BOM: &str = "\u{feff}";

pub struct View<'a> {
    original: &'a str,
    pub text: Cow<'a, str>,
    bom: usize,
    /// View positions of the `\n`s that had a `\r` before them in the original.
    crlf_at: Vec<usize>,
}

impl<'a> View<'a> {
    pub fn new(original: &'a str) -> Self {
        let bom = if original.starts_with(BOM) { BOM.len() } else { 0 };
        let body = &original[bom..];
        // A `\r` then its next byte: cheaper than a two-byte memmem search, whose searcher costs
        // more to build than most files take to scan.
        let bytes = body.as_bytes();
        if !memchr::memchr_iter(b'\r', bytes).any(|i| bytes.get(i + 1) == Some(&b'\n')) {
            return View { original, text: Cow::Borrowed(body), bom, crlf_at: Vec::new() };
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
        View { original, text: Cow::Owned(text), bom, crlf_at }
    }

    /// The text as it is, its mark and CRLF breaks included: for edits that state them
    /// (`FilePlan::literal`).
    pub fn literal(original: &'a str) -> Self {
        View { original, text: Cow::Borrowed(original), bom: 0, crlf_at: Vec::new() }
    }

    pub fn has_bom(&self) -> bool {
        self.bom > 0
    }

    pub fn has_crlf(&self) -> bool {
        !self.crlf_at.is_empty()
    }

    /// A plan string as the view sees it.
    pub fn normalize<'s>(&self, s: &'s str) -> Cow<'s, str> {
        if self.has_crlf() && s.contains("\r\n") {
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
            if r < body { lo = mid + 1 } else { hi = mid }
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
