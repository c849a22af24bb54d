//! Edits as an assistant writes them: one per changed line range, top to bottom, each `old_string` the
//! removed lines plus just enough surrounding lines (one more on each side at a time) to occur exactly
//! once in the text as it stands when that edit runs.

use super::history::Hunk;
use super::images::lines;

/// One derived edit and the texts around it.
#[derive(Clone, Debug)]
pub struct DerivedEdit {
    pub old: String,
    pub new: String,
    /// The whole text before and after this edit (earlier edits applied).
    pub before: String,
    pub after: String,
    /// 0-based line of `before` where `old` starts.
    pub first_line: usize,
    /// 0-based lines of `old` (relative to `first_line`) the change removes or replaces; empty for a pure
    /// insertion.
    pub changed: std::ops::Range<usize>,
}

/// The edits that turn `pre` into `post`, or `None` if the hunks do not (a history git and this reading
/// disagree on).
pub fn edits(pre: Option<&str>, post: &str, hunks: &[Hunk]) -> Option<Vec<DerivedEdit>> {
    let Some(pre) = pre else {
        let edit = DerivedEdit {
            old: String::new(),
            new: post.to_string(),
            before: String::new(),
            after: post.to_string(),
            first_line: 0,
            changed: 0..0,
        };
        return Some(vec![edit]);
    };
    let post_lines = lines(post);
    let mut cur: Vec<&str> = lines(pre);
    let mut offset: isize = 0;
    let mut out = Vec::with_capacity(hunks.len());
    for h in hunks {
        let start = (h.old_start as isize + offset) as usize;
        let end = start + h.old_len;
        let added = post_lines.get(h.new_start..h.new_start + h.new_len)?;
        if end > cur.len() {
            return None;
        }
        let before: String = cur.concat();
        let normal = before.replace("\r\n", "\n");
        let mut k = 0;
        let (a, old, new) = loop {
            let a = start.saturating_sub(k);
            let b = (end + k).min(cur.len());
            let mut old = cur[a..b].concat();
            let mut new = [&cur[a..start], added, &cur[end..b]].concat().concat();
            for eol in ["\r\n", "\n"] {
                if old.ends_with(eol) && new.ends_with(eol) {
                    old.truncate(old.len() - eol.len());
                    new.truncate(new.len() - eol.len());
                    break;
                }
            }
            // Unique, and the one match the engine finds (leftmost, without overlap) is this one.
            let at: usize = cur[..a]
                .iter()
                .map(|l| l.len() - usize::from(l.ends_with("\r\n")))
                .sum();
            let needle = old.replace("\r\n", "\n");
            let mut found = normal.match_indices(&needle).map(|(i, _)| i);
            if (!old.is_empty() || before.is_empty())
                && found.next() == Some(at)
                && found.next().is_none()
            {
                break (a, old, new);
            }
            k += 1;
        };
        cur.splice(start..end, added.iter().copied());
        offset += h.new_len as isize - h.old_len as isize;
        out.push(DerivedEdit {
            old,
            new,
            before,
            after: cur.concat(),
            first_line: a,
            changed: start - a..end - a,
        });
    }
    (cur.concat() == post).then_some(out)
}
