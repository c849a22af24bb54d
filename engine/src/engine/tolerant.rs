//! `match: tolerant`: what to try, in order, after an exact miss.
//!
//! The rule every tier keeps: what is written is what the exact plan would have written, or the edit
//! is refused. So whatever new_string repeats of old_string (context lines, kept characters) is taken
//! from the FILE, byte for byte; only what the edit really changes comes from new_string, adapted to the
//! file where the adaptation is certain (the run of leading whitespace old_string lacks or has too much
//! of on every line, given back exactly as Aider does; else the file's indentation unit and depth; a
//! curly quote where the matched text had one). Where it is not certain (an indentation the file's unit
//! cannot express, a depth the plan's spaces never showed in the file, a file whose lines disagree about
//! their unit) the edit is refused. Each tier must find exactly one place: a tier that finds several
//! refuses as ambiguous, listing them (a looser tier would only find more).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};

use super::text::{
    common_indent, indent_of, line_of, line_similarity, line_starts, lines_with_offsets,
    pair_most_alike, plain, plain_char,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Lines equal but for trailing whitespace.
    LineTrimmed,
    /// Lines equal but for leading and trailing whitespace; new_string is re-indented.
    Indentation,
    /// Equal once typographic quotes, dashes and spaces are made plain; new_string is re-curled.
    Quotes,
}

impl Tier {
    pub fn describe(self) -> &'static str {
        match self {
            Tier::LineTrimmed => "ignoring trailing whitespace",
            Tier::Indentation => "ignoring indentation",
            Tier::Quotes => "ignoring quote and dash style",
        }
    }
}

pub struct TolerantMatch {
    pub start: usize,
    pub end: usize,
    pub new_text: String,
    pub tier: Tier,
}

pub enum Found {
    None,
    One(TolerantMatch),
    /// The tier matched several places: their first and last lines, 1-based.
    Several {
        tier: Tier,
        lines: Vec<(usize, usize)>,
    },
    /// The tier matched one place (its first and last lines, 1-based), but writing new_string there
    /// needs an adaptation whose amount cannot be known: `why`, a clause for the hint.
    Unsure {
        tier: Tier,
        lines: (usize, usize),
        why: String,
    },
}

/// Diffs of old_string against new_string are small in practice; a pathological pair gets a coarser
/// (still correct) diff rather than a stall.
const DIFF_BUDGET: Duration = Duration::from_millis(200);

/// `whole_lines`: the text matches whole lines only (a hunk's), never from inside a line's indentation.
pub fn find(current: &str, old: &str, new: &str, whole_lines: bool) -> Found {
    let lines = lines_with_offsets(current);
    let mut old_lines: Vec<&str> = old.split('\n').collect();
    let keeps_newline = old.ends_with('\n') && old_lines.len() > 1;
    if keeps_newline {
        old_lines.pop();
    }
    type SameLine = fn(&str, &str) -> bool;
    let tiers: [(Tier, SameLine); 2] = [
        (Tier::LineTrimmed, |a, b| a.trim_end() == b.trim_end()),
        (Tier::Indentation, |a, b| a.trim() == b.trim()),
    ];
    for (tier, same) in tiers {
        let hits = find_lines(
            current,
            &lines,
            &old_lines,
            keeps_newline,
            same,
            whole_lines,
        );
        match hits.as_slice() {
            [] => continue,
            [hit] => {
                let region = &current[hit.start..hit.end];
                return match rewrite_lines(tier, &old_lines, region, new, hit.mid_first, &lines) {
                    Ok(new_text) => Found::One(TolerantMatch {
                        start: hit.start,
                        end: hit.end,
                        new_text,
                        tier,
                    }),
                    Err(why) => Found::Unsure {
                        tier,
                        lines: (hit.first + 1, hit.first + old_lines.len()),
                        why,
                    },
                };
            }
            _ => {
                let lines = hits
                    .iter()
                    .map(|h| (h.first + 1, h.first + old_lines.len()))
                    .collect();
                return Found::Several { tier, lines };
            }
        }
    }
    let hits = find_plain(current, old);
    match hits.as_slice() {
        [] => Found::None,
        &[(s, e)] => match recurl(old, &current[s..e], new) {
            Some(new_text) => Found::One(TolerantMatch {
                start: s,
                end: e,
                new_text,
                tier: Tier::Quotes,
            }),
            None => {
                let starts = line_starts(current);
                let lines = (line_of(&starts, s), line_of(&starts, e.max(s + 1) - 1));
                Found::Unsure { tier: Tier::Quotes, lines, why: "a quote or dash in text the edit changes could stand for a typographic one of old_string or for the plain one new_string gives (or for either of two), so whether to write it typographic cannot be known".into() }
            }
        },
        _ => {
            let starts = line_starts(current);
            let lines = hits
                .iter()
                .map(|&(s, e)| (line_of(&starts, s), line_of(&starts, e.max(s + 1) - 1)))
                .collect();
            Found::Several {
                tier: Tier::Quotes,
                lines,
            }
        }
    }
}

struct LineHit {
    /// Index of the first matched line.
    first: usize,
    start: usize,
    end: usize,
    /// old_string's first line has no indentation and the file's has some: the match starts after
    /// the file's indentation, as an exact old_string copied from the first visible character would.
    mid_first: bool,
}

fn find_lines(
    current: &str,
    lines: &[(usize, &str)],
    old: &[&str],
    keeps_newline: bool,
    same: fn(&str, &str) -> bool,
    whole_lines: bool,
) -> Vec<LineHit> {
    let k = old.len();
    if k == 0 || k > lines.len() || old.iter().all(|l| l.trim().is_empty()) {
        return Vec::new();
    }
    let first_unindented =
        !whole_lines && indent_of(old[0]).is_empty() && !old[0].trim().is_empty();
    let mut hits = Vec::new();
    for c in 0..=lines.len() - k {
        let (offset, line) = lines[c];
        let mid_first = if same(old[0], line) {
            false
        } else if first_unindented && same(old[0], line.trim_start()) {
            true
        } else {
            continue;
        };
        if !(1..k).all(|j| same(old[j], lines[c + j].1)) {
            continue;
        }
        let (lo, ll) = lines[c + k - 1];
        let mut end = lo + ll.len();
        if keeps_newline {
            // old_string ends with a line break: so must the match.
            if end == current.len() {
                continue;
            }
            end += 1;
        }
        let start = if mid_first {
            offset + indent_of(line).len()
        } else {
            offset
        };
        hits.push(LineHit {
            first: c,
            start,
            end,
            mid_first,
        });
    }
    hits
}

/// new_string for a line-tier match: lines it keeps from old_string are the file's lines as they
/// are; the lines it changes are written as the plan wrote them, re-indented in the file's unit and at
/// the file's depth for the indentation tier. `Err(why)` when that re-indentation would be a guess.
fn rewrite_lines(
    tier: Tier,
    old: &[&str],
    region: &str,
    new: &str,
    mid_first: bool,
    lines: &[(usize, &str)],
) -> Result<String, String> {
    let region_lines: Vec<&str> = region.split('\n').take(old.len()).collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    // Keys keep the indentation: a line new_string re-indents (a block wrapped in an `if`) is a change,
    // not context to copy from the file.
    let old_keys: Vec<&str> = old.iter().map(|l| l.trim_end()).collect();
    let new_keys: Vec<&str> = new_lines.iter().map(|l| l.trim_end()).collect();
    // new_string only keeps and removes old_string's lines: nothing is written but the file's own
    // lines, so nothing needs re-indenting (Codex's trimmed tier removing lines).
    let reindent = match tier {
        Tier::Indentation
            if writes(&old_keys, &new_keys, false) || writes(&old_keys, &new_keys, true) =>
        {
            let file_lines: Vec<&str> = lines.iter().map(|(_, l)| *l).collect();
            Some(Shift::learn(
                old,
                &region_lines,
                &new_lines,
                mid_first,
                &file_lines,
            )?)
        }
        _ => None,
    };
    if reindent.as_ref().is_some_and(Shift::moves) {
        same_frame(old, &region_lines, &new_lines, mid_first)?;
    }
    let n = old_keys.len().min(region_lines.len());
    let twin = (0..n)
        .find(|&a| (0..n).any(|b| old_keys[a] == old_keys[b] && region_lines[a] != region_lines[b]))
        .map(|a| old_keys[a].trim());
    both_ways(|backwards| {
        let ops = diff(&old_keys, &new_keys, backwards);
        adapt_lines(&ops, &old_keys, &region_lines, &new_lines, |k, line| match &reindent {
            Some(r) if !(k == 0 && mid_first) => r.line(line).map(Cow::Owned),
            _ => Some(Cow::Borrowed(line)),
        })
    })
    .ok_or_else(|| {
        let unwritable = new_lines.iter().enumerate().find(|&(k, l)| !(k == 0 && mid_first) && reindent.as_ref().is_some_and(|r| r.line(l).is_none()));
        match (unwritable, twin) {
            (Some((_, l)), _) => format!("new_string's line \"{}\" has an indentation that cannot be written at the file's depth in the file's unit", l.trim()),
            (None, Some(t)) => format!("old_string has the line \"{t}\" twice and the file's two copies differ in their whitespace, so which one new_string keeps cannot be known"),
            (None, None) => "new_string's lines pair with old_string's in more than one way, so which of the file's lines it keeps cannot be known".to_string(),
        }
    })
}

/// Whether new_string writes a line of its own that is not blank (inserted, or replacing one of
/// old_string's), by the diff of the lines' keys, read `backwards` or not.
fn writes(old_keys: &[&str], new_keys: &[&str], backwards: bool) -> bool {
    diff(old_keys, new_keys, backwards)
        .iter()
        .any(|op| match *op {
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => new_keys[new_index..new_index + new_len]
                .iter()
                .any(|l| !l.trim().is_empty()),
            _ => false,
        })
}

/// The run of leading whitespace that every counted line of `lines` starts with (a blank line, and
/// old_string's first line when it starts inside a line of the file, are not counted); `None` when
/// none counts.
fn base_of<'a>(lines: &[&'a str], mid_first: bool) -> Option<&'a str> {
    common_indent(
        lines
            .iter()
            .enumerate()
            .filter(|&(j, l)| !(l.trim().is_empty() || (j == 0 && mid_first)))
            .map(|(_, l)| *l),
    )
}

/// old_string sits at another depth than the file's text, so new_string is moved by as much. That is
/// right only if new_string was written where old_string is, not already where the file's text is.
/// It is taken to be when new_string starts at old_string's depth and, if it re-indents one of
/// old_string's lines, also keeps one of them whole (it was written around old_string's own lines).
/// Otherwise which depth the model meant cannot be known.
fn same_frame(old: &[&str], region: &[&str], new: &[&str], mid_first: bool) -> Result<(), String> {
    let counted = |j: usize, l: &str| !(l.trim().is_empty() || (j == 0 && mid_first));
    let kept = new.iter().enumerate().any(|(k, n)| {
        counted(k, n) && old.iter().enumerate().any(|(j, o)| counted(j, o) && o == n)
    });
    let moved = new.iter().enumerate().find(|&(k, n)| {
        counted(k, n)
            && old
                .iter()
                .enumerate()
                .any(|(j, o)| counted(j, o) && o.trim() == n.trim() && indent_of(o) != indent_of(n))
    });
    if let (Some((_, n)), false) = (moved, kept) {
        let o = old
            .iter()
            .find(|o| o.trim() == n.trim())
            .map_or("", |o| indent_of(o));
        let f = old
            .iter()
            .zip(region)
            .find(|(o, _)| o.trim() == n.trim())
            .map_or("", |(_, f)| indent_of(f));
        return Err(format!(
            "new_string has the line \"{}\" at {} where old_string has it at {} and the file at {}: whether new_string is indented \
             as old_string is (and moves with it to the file's depth) or already as the file is cannot be known",
            n.trim(),
            show_indent(indent_of(n)),
            show_indent(o),
            show_indent(f)
        ));
    }
    let (Some(o), Some(n)) = (base_of(old, mid_first), base_of(new, mid_first)) else {
        return Ok(());
    };
    if o == n {
        return Ok(());
    }
    let file = old
        .iter()
        .zip(region)
        .enumerate()
        .find(|&(j, (l, _))| !(l.trim().is_empty() || (j == 0 && mid_first)) && indent_of(l) == o)
        .map_or("", |(_, (_, f))| indent_of(f));
    Err(format!(
        "old_string's lines start at {} and new_string's at {}, while the file's are at {} there: whether new_string is indented \
         as old_string is (and moves with it to the file's depth) or already as the file is cannot be known",
        show_indent(o),
        show_indent(n),
        show_indent(file)
    ))
}

/// An indentation in words: "column 0", "4 spaces", "1 tab", "1 tab and 2 spaces".
fn show_indent(indent: &str) -> String {
    let tabs = indent.chars().filter(|&c| c == '\t').count();
    let spaces = indent.chars().count() - tabs;
    let count = |n: usize, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    match (tabs, spaces) {
        (0, 0) => "column 0".to_string(),
        (0, s) => count(s, "space"),
        (t, 0) => count(t, "tab"),
        (t, s) => format!("{} and {}", count(t, "tab"), count(s, "space")),
    }
}

fn adapt_lines<'a>(
    ops: &[DiffOp],
    old_keys: &[&str],
    region_lines: &[&'a str],
    new_lines: &[&'a str],
    changed: impl Fn(usize, &'a str) -> Option<Cow<'a, str>>,
) -> Option<String> {
    let mut first_seen: HashMap<&str, &str> = HashMap::new();
    let mut twins: HashSet<&str> = HashSet::new();
    for (key, line) in old_keys.iter().zip(region_lines) {
        if *first_seen.entry(key).or_insert(line) != *line {
            twins.insert(key);
        }
    }
    let mut out: Vec<Cow<'_, str>> = Vec::with_capacity(new_lines.len());
    for op in ops {
        match *op {
            DiffOp::Equal { old_index, len, .. } => {
                for j in old_index..old_index + len {
                    // A kept line that old_string has twice, the file's two copies unlike (trailing
                    // whitespace): which one new_string keeps is a guess.
                    if twins.contains(old_keys[j]) {
                        return None;
                    }
                    out.push(Cow::Borrowed(region_lines[j]));
                }
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                for (k, line) in new_lines.iter().enumerate().skip(new_index).take(new_len) {
                    out.push(changed(k, line)?);
                }
            }
        }
    }
    Some(out.join("\n"))
}

/// How a changed line of new_string is re-indented for the file.
enum Shift {
    Prefix(Prefix),
    Units(Reindent),
}

impl Shift {
    /// How the indentation tier writes new_string's lines at the file's depth: the file's text is the
    /// plan's shifted by one run (`Prefix`), else re-indented in the file's unit (`Reindent`).
    /// `Err(why)` where either would be a guess.
    fn learn(
        old: &[&str],
        region_lines: &[&str],
        new_lines: &[&str],
        mid_first: bool,
        file_lines: &[&str],
    ) -> Result<Shift, String> {
        match Prefix::learn(old, region_lines, new_lines, mid_first, file_lines) {
            Fit::Exact(p) => Ok(Shift::Prefix(p)),
            // The plan is the file's text shifted, but writes a depth that shift does not settle:
            // refused...
            Fit::Unsettled(p) => {
                Shift::unsettled(&p, old, region_lines, new_lines, mid_first, file_lines)
            }
            Fit::None => Ok(Shift::Units(Reindent::learn(
                old,
                region_lines,
                new_lines,
                mid_first,
                file_lines,
            )?)),
        }
    }

    /// The plan is the file's text shifted by `p`, but writes a depth that shift does not settle.
    fn unsettled(
        p: &Prefix,
        old: &[&str],
        region_lines: &[&str],
        new_lines: &[&str],
        mid_first: bool,
        file_lines: &[&str],
    ) -> Result<Shift, String> {
        // ...if the exchange itself writes tabs for spaces or spaces for tabs, in the
        // units the reading uses: otherwise the plan is the file's own text, shifted.
        let r = Reindent::learn(old, region_lines, new_lines, mid_first, file_lines)?;
        let only = |t: &str, c: u8| !t.is_empty() && t.bytes().all(|b| b == c);
        let (pl, fl) = (p.plan.len(), p.file.len());
        let shown = match () {
            _ if only(&p.plan, b' ') && only(&p.file, b'\t') && pl % fl == 0 => {
                Some((Style::Spaces(pl / fl), Style::Tabs))
            }
            _ if only(&p.plan, b'\t') && only(&p.file, b' ') && fl % pl == 0 => {
                Some((Style::Tabs, Style::Spaces(fl / pl)))
            }
            _ => None,
        };
        let unsettled = || {
            format!(
                "new_string writes a depth that old_string's lines never show, and {} of the plan's stand for {} of the file's, which the file's indentation unit does not settle",
                show_indent(&p.plan),
                show_indent(&p.file)
            )
        };
        if shown != Some((r.plan, r.file)) {
            return Err(unsettled());
        }
        // Spaces for the file's tabs: read as levels, a deeper line's spaces past the run are
        // whole levels; read as the run exchanged, they are alignment kept as it is. In a file
        // that aligns with as many spaces after its tabs as the plan takes for a level, only
        // old_string's own lines at two depths show that the plan's spaces are levels.
        let depths: HashSet<&str> = old
            .iter()
            .enumerate()
            .filter(|&(j, l)| !(l.trim().is_empty() || (j == 0 && mid_first)))
            .map(|(_, l)| indent_of(l))
            .collect();
        let aligns = match (r.plan, r.file) {
            (Style::Spaces(u), Style::Tabs) => file_lines.iter().any(|l| {
                let after_tabs = indent_of(l).trim_start_matches('\t');
                after_tabs.len() < indent_of(l).len()
                    && after_tabs.len() >= u
                    && after_tabs.bytes().all(|b| b == b' ')
            }),
            _ => false,
        };
        if aligns
            && depths.len() < 2
            && new_lines
                .iter()
                .any(|l| !l.trim().is_empty() && p.line(l) != r.line(l))
        {
            return Err(unsettled());
        }
        Ok(Shift::Units(r))
    }

    /// Whether it moves lines to another depth, rather than writing the same depth in the file's
    /// characters (four spaces of the plan's for the file's tab).
    fn moves(&self) -> bool {
        match self {
            Shift::Prefix(p) => {
                let kind = |t: &str| t.chars().next();
                p.plan != p.file
                    && (p.plan.is_empty() || p.file.is_empty() || kind(&p.plan) == kind(&p.file))
            }
            Shift::Units(r) => match (r.plan, r.file) {
                (Style::Spaces(a), Style::Spaces(b)) => r.shift != 0 || a != b,
                _ => r.shift != 0,
            },
        }
    }

    fn line(&self, line: &str) -> Option<String> {
        match self {
            Shift::Prefix(p) => p.line(line),
            Shift::Units(r) => r.line(line),
        }
    }
}

/// Aider's rule, which is exact: old_string lacks (or has in excess) the same leading run on every
/// line, so the file's line is always `file` + what follows `plan` on the plan's line. new_string's
/// lines get the same exchange. It holds only where every depth new_string writes is one the plan
/// shows the file at, or deeper than one by whole steps of the file's indentation unit: a depth the
/// file never showed, in a unit the file does not use, would be a guess.
struct Prefix {
    plan: String,
    file: String,
}

/// The run the plan's lines share, the run the file has in its place, the depths (past the plan's
/// run) old_string shows, and new_string's non-blank lines.
struct Exchange<'a> {
    plan: &'a str,
    file: &'a str,
    seen: Vec<&'a str>,
    news: Vec<&'a str>,
}

enum Fit {
    Exact(Prefix),
    /// Every line old_string shares with the file differs by the same run, but new_string writes a
    /// depth that is neither one of theirs nor whole steps of the file's unit from one.
    Unsettled(Prefix),
    None,
}

impl Prefix {
    fn learn(
        old: &[&str],
        region: &[&str],
        new: &[&str],
        mid_first: bool,
        file_lines: &[&str],
    ) -> Fit {
        match Prefix::exchange(old, region, new, mid_first) {
            Some(x) if Prefix::settled(&x.seen, &x.news, x.plan.len(), file_lines) => {
                Fit::Exact(Prefix {
                    plan: x.plan.to_string(),
                    file: x.file.to_string(),
                })
            }
            Some(x) => Fit::Unsettled(Prefix {
                plan: x.plan.to_string(),
                file: x.file.to_string(),
            }),
            None => Fit::None,
        }
    }

    fn exchange<'a>(
        old: &[&'a str],
        region: &[&'a str],
        new: &[&'a str],
        mid_first: bool,
    ) -> Option<Exchange<'a>> {
        let counted = |j: usize, l: &str| !(l.trim().is_empty() || j == 0 && mid_first);
        let pairs: Vec<(&str, &str)> = old
            .iter()
            .zip(region)
            .enumerate()
            .filter(|&(j, (o, f))| counted(j, o) && counted(j, f))
            .map(|(_, (o, f))| (*o, *f))
            .collect();
        let news: Vec<&str> = new
            .iter()
            .enumerate()
            .filter(|&(k, l)| counted(k, l))
            .map(|(_, l)| *l)
            .collect();
        let plan = common_indent(pairs.iter().map(|(o, _)| *o).chain(news.iter().copied()))?;
        let mut file: Option<&str> = None;
        let mut seen: Vec<&str> = Vec::new();
        for &(o, f) in &pairs {
            let rest = &indent_of(o)[plan.len()..];
            let lead = indent_of(f).strip_suffix(rest)?;
            if *file.get_or_insert(lead) != lead {
                return None;
            }
            seen.push(rest);
        }
        Some(Exchange {
            plan,
            file: file?,
            seen,
            news,
        })
    }

    /// Whether every depth new_string writes is one old_string shows, or whole steps of the file's
    /// unit from one (deeper or shallower).
    fn settled(seen: &[&str], news: &[&str], plan: usize, file_lines: &[&str]) -> bool {
        let unit = file_unit(file_lines);
        let whole_steps = |extra: &str| match unit.as_deref() {
            _ if extra.is_empty() => true,
            Some(u) => {
                extra.len().is_multiple_of(u.len()) && extra == u.repeat(extra.len() / u.len())
            }
            None => false,
        };
        let apart = |a: &str, b: &str| {
            (b.starts_with(a) && whole_steps(&b[a.len()..]))
                || (a.starts_with(b) && whole_steps(&a[b.len()..]))
        };
        news.iter()
            .all(|n| seen.iter().any(|s| apart(s, &indent_of(n)[plan..])))
    }

    fn line(&self, line: &str) -> Option<String> {
        if line.trim().is_empty() {
            return Some(line.to_string());
        }
        Some(format!(
            "{}{}",
            self.file,
            line.strip_prefix(self.plan.as_str())?
        ))
    }
}

/// The file's indentation step: a tab, or its usual rise in spaces (in a file that never rises, the
/// widest step all its indentations are made of); `None` when its lines do not say.
fn file_unit(file_lines: &[&str]) -> Option<String> {
    let spaces = || {
        file_lines
            .iter()
            .map(|l| indent_of(l))
            .filter(|i| !i.is_empty() && i.bytes().all(|b| b == b' '))
    };
    match uses_tabs(file_lines.iter().copied())? {
        Some(true) => Some("\t".to_string()),
        Some(false) => unit_of(file_lines.iter().copied())
            .or_else(|| spaces().map(str::len).reduce(gcd))
            .map(|u| " ".repeat(u)),
        None => None,
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The space units tried last, in this order, when nothing shows the file's or the plan's.
const USUAL_UNITS: [usize; 3] = [4, 2, 8];

/// How the file indents, against how the plan does: the file's style, the plan's, and
/// how many levels deeper the file's lines sit than old_string's.
struct Reindent {
    file: Style,
    plan: Style,
    shift: isize,
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Tabs,
    Spaces(usize),
}

impl Style {
    /// Level and alignment spaces of an indentation written in this style.
    fn parse(self, indent: &str) -> Option<(usize, usize)> {
        let tabs = indent.bytes().take_while(|&b| b == b'\t').count();
        let spaces = indent.len() - tabs;
        if !indent[tabs..].bytes().all(|b| b == b' ') {
            return None;
        }
        match self {
            _ if tabs > 0 => Some((tabs, spaces)),
            Style::Tabs => Some((0, spaces)),
            Style::Spaces(u) => Some((spaces / u, spaces % u)),
        }
    }
    fn render(self, level: usize, align: usize) -> String {
        match self {
            Style::Tabs => "\t".repeat(level) + &" ".repeat(align),
            Style::Spaces(u) => " ".repeat(level * u + align),
        }
    }
}

impl Reindent {
    fn learn(
        old: &[&str],
        region: &[&str],
        new: &[&str],
        mid_first: bool,
        file_lines: &[&str],
    ) -> Result<Reindent, String> {
        let plan_tabs = old.iter().chain(new).any(|l| l.starts_with('\t'));
        let file_tabs = Reindent::file_tabs(region, file_lines, plan_tabs)?;
        let pairs: Vec<(&str, &str)> = old
            .iter()
            .zip(region)
            .enumerate()
            .filter(|&(j, (o, f))| {
                (j != 0 || !mid_first) && !o.trim().is_empty() && !f.trim().is_empty()
            })
            .map(|(_, (o, f))| (indent_of(o), indent_of(f)))
            .collect();
        let files = Reindent::file_styles(file_tabs, &pairs, old, new, region, file_lines);
        let mut readings = Reindent::readings(files, plan_tabs, &pairs, old, new);
        // One at the same depth is the likeliest (an assistant rarely misreads how deep a line is,
        // often which unit it uses).
        let same_depth = readings.iter().position(|r| r.shift == 0).unwrap_or(0);
        if readings.is_empty() {
            return Err("the file's lines do not keep the depths old_string's lines have relative to each other, so no re-indentation maps every line".into());
        }
        let reading = readings.swap_remove(same_depth);
        // In a one-space unit every indentation is whole levels, so a line new_string indents deeper
        // than any line of old_string could be levels or alignment: "   =" under " x" is three
        // levels or one and two spaces of alignment. That is a guess; refuse it.
        if reading.plan == Style::Spaces(1) {
            let shown: Vec<usize> = old
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| indent_of(l).len())
                .collect();
            let deepest = shown.iter().copied().max().unwrap_or(0);
            if new
                .iter()
                .any(|l| !l.trim().is_empty() && indent_of(l).len() > deepest)
            {
                return Err("the plan indents one space per level, so a line new_string indents deeper than old_string's could be deeper levels or alignment".into());
            }
        }
        reading.unit_known(old, new, mid_first, region, file_lines)?;
        Ok(reading)
    }

    /// Whether the file indents with tabs: as the matched region says, else as the whole file says;
    /// with no indented line anywhere, as the plan does (`plan_tabs`).
    fn file_tabs(region: &[&str], file_lines: &[&str], plan_tabs: bool) -> Result<bool, String> {
        let decided = |t: Option<Option<bool>>| t.filter(Option::is_some);
        match decided(uses_tabs(region.iter().copied()))
            .or_else(|| uses_tabs(file_lines.iter().copied()))
        {
            Some(Some(tabs)) => Ok(tabs),
            // Tabs and spaces alike: the file does not say which to write.
            Some(None) => Err("the file indents with tabs and with spaces alike, so which to write cannot be known".into()),
            // No indented line anywhere: write the plan's own style.
            None => Ok(plan_tabs),
        }
    }

    /// The file's styles worth trying, likeliest first: tabs, or the space units that `pairs` (old_string's
    /// and the file's indentations) and the lines around show, then the usual ones.
    fn file_styles(
        file_tabs: bool,
        pairs: &[(&str, &str)],
        old: &[&str],
        new: &[&str],
        region: &[&str],
        file_lines: &[&str],
    ) -> Vec<Style> {
        if file_tabs {
            return vec![Style::Tabs];
        }
        // A tab of the plan's that stands for the file's indentation at the same depth tells the
        // file's unit; then what the file's own lines rise by.
        let mut units: Vec<usize> = pairs
            .iter()
            .filter_map(|&(o, f)| {
                let (l, a) = Style::Tabs.parse(o).filter(|_| o.starts_with('\t'))?;
                let w = f.len().checked_sub(a)?;
                (l > 0 && f.bytes().all(|b| b == b' ') && w % l == 0 && w > 0).then_some(w / l)
            })
            .collect();
        units.extend(
            unit_of(region.iter().copied()).or_else(|| unit_of(file_lines.iter().copied())),
        );
        units.extend(unit_of(old.iter().chain(new).copied()));
        units.extend(USUAL_UNITS);
        dedup(units).into_iter().map(Style::Spaces).collect()
    }

    /// Every reading of the plan's and the file's units (the file's among `files`) that maps each
    /// pair of `pairs`.
    fn readings(
        files: Vec<Style>,
        plan_tabs: bool,
        pairs: &[(&str, &str)],
        old: &[&str],
        new: &[&str],
    ) -> Vec<Reindent> {
        let mut readings = Vec::new();
        for file in files {
            // A plan that indents with tabs aligns with spaces after them, as the file would.
            let plans = if plan_tabs {
                vec![Style::Tabs]
            } else {
                Reindent::plan_units(file, pairs, old, new)
                    .into_iter()
                    .map(Style::Spaces)
                    .collect()
            };
            for plan in plans {
                if let Some(shift) = shift_for(pairs, plan, file) {
                    readings.push(Reindent { file, plan, shift });
                }
            }
        }
        readings
    }

    /// The space units the plan may indent by, read as the file indents in `file`: the rises that
    /// `pairs` show, what the plan's lines rise by, the file's own unit, then the usual ones.
    fn plan_units(file: Style, pairs: &[(&str, &str)], old: &[&str], new: &[&str]) -> Vec<usize> {
        let mut units: Vec<usize> = Vec::new();
        let levels: Vec<(usize, usize, usize)> = pairs
            .iter()
            .filter(|(o, _)| o.bytes().all(|b| b == b' '))
            .filter_map(|&(o, f)| file.parse(f).map(|(l, a)| (o.len(), l, a)))
            .collect();
        for (k, &(w, l, a)) in levels.iter().enumerate() {
            for &(w2, l2, a2) in &levels[k + 1..] {
                let (dw, dl) = (
                    (w2 - a2.min(w2)) as isize - (w - a.min(w)) as isize,
                    l2 as isize - l as isize,
                );
                if dl != 0 && dw % dl == 0 && dw / dl > 0 {
                    units.push((dw / dl) as usize);
                }
            }
            if l > 0 && w > a && (w - a) % l == 0 {
                units.push((w - a) / l);
            }
        }
        units.extend(unit_of(old.iter().chain(new).copied()));
        if let Style::Spaces(u) = file {
            units.push(u);
        }
        units.extend(USUAL_UNITS);
        dedup(units)
    }

    /// Tabs written for a file's spaces: a depth old_string shows maps to the file's through
    /// old_string's own lines, but a depth it does not show needs the file's unit, which only its own
    /// lines can tell (rising by it) and the reading must agree with. A file whose lines never rise, or
    /// rise by another step, leaves the number of spaces to a level unknown. (Spaces written for a
    /// file's tabs need no such unit: a tab is one level.)
    fn unit_known(
        &self,
        old: &[&str],
        new: &[&str],
        mid_first: bool,
        region: &[&str],
        file_lines: &[&str],
    ) -> Result<(), String> {
        let counted = |lines: &[&str]| -> Vec<usize> {
            lines
                .iter()
                .enumerate()
                .filter(|&(j, l)| !(l.trim().is_empty() || (j == 0 && mid_first)))
                .filter_map(|(_, l)| self.plan.parse(indent_of(l)).map(|(level, _)| level))
                .collect()
        };
        let shown = counted(old);
        if counted(new).iter().all(|l| shown.contains(l)) {
            return Ok(());
        }
        let (Style::Tabs, Style::Spaces(unit)) = (self.plan, self.file) else {
            return Ok(());
        };
        // A file that indents with tabs too does not say what its spaces are.
        let spaced = uses_tabs(file_lines.iter().copied()) == Some(Some(false));
        let own = if spaced {
            unit_of(region.iter().copied()).or_else(|| unit_of(file_lines.iter().copied()))
        } else {
            None
        };
        if own == Some(unit) {
            return Ok(());
        }
        let seen = match own {
            Some(o) => format!("rise by {o}"),
            None => "never rise".into(),
        };
        Err(format!(
            "new_string writes a depth old_string does not show, in tabs where the file has spaces, and the file's lines {seen}, so how many spaces make a level ({unit} by old_string's lines) cannot be known"
        ))
    }

    fn line(&self, line: &str) -> Option<String> {
        if line.is_empty() {
            return Some(String::new());
        }
        let indent = indent_of(line);
        let (level, align) = self.plan.parse(indent)?;
        let level = usize::try_from(level as isize + self.shift).ok()?;
        Some(self.file.render(level, align) + &line[indent.len()..])
    }
}

/// The diff of two sequences, computed front to back or back to front. Where several alignments are
/// equally short (a line repeated, a quote that could pair with either of two) the two directions
/// break the tie differently: an adaptation that comes out the same both ways did not rest on the tie.
fn diff<T: Eq + std::hash::Hash + Clone>(old: &[T], new: &[T], backwards: bool) -> Vec<DiffOp> {
    let deadline = Some(Instant::now() + DIFF_BUDGET);
    if !backwards {
        return capture_diff_slices_deadline(Algorithm::Myers, old, new, deadline);
    }
    let rev = |v: &[T]| v.iter().rev().cloned().collect::<Vec<T>>();
    let (no, nn) = (old.len(), new.len());
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &rev(old), &rev(new), deadline);
    ops.into_iter()
        .rev()
        .map(|op| {
            let (o, n) = (op.old_range(), op.new_range());
            let (old_index, new_index) = (no - o.end, nn - n.end);
            match op {
                DiffOp::Equal { len, .. } => DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                },
                DiffOp::Delete { old_len, .. } => DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                },
                DiffOp::Insert { new_len, .. } => DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                },
                DiffOp::Replace {
                    old_len, new_len, ..
                } => DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                },
            }
        })
        .collect()
}

/// The same adaptation both ways, or None.
fn both_ways(f: impl Fn(bool) -> Option<String>) -> Option<String> {
    let forwards = f(false)?;
    (f(true)? == forwards).then_some(forwards)
}

fn dedup(items: Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(items.len());
    for i in items {
        if i > 0 && !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// How many levels deeper the file's lines sit than the plan's, if that is one number for every pair
/// and rendering the plan's indentation that much deeper gives the file's exactly.
fn shift_for(pairs: &[(&str, &str)], plan: Style, file: Style) -> Option<isize> {
    let mut shift = None;
    for &(o, f) in pairs {
        let (lo, ao) = plan.parse(o)?;
        let (lf, _) = file.parse(f)?;
        let s = lf as isize - lo as isize;
        if *shift.get_or_insert(s) != s || file.render(lf, ao) != f {
            return None;
        }
    }
    Some(shift.unwrap_or(0))
}

/// Whether the indented lines among `lines` use tabs (`Some(Some(true))`), spaces, or both alike
/// (`Some(None)`); `None` when no line is indented. A stray line of the other kind (one in five or
/// fewer) does not make a file mixed.
fn uses_tabs<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Option<bool>> {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    for l in lines.filter(|l| !l.trim().is_empty()) {
        match l.as_bytes().first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') => spaces += 1,
            _ => {}
        }
    }
    match (tabs, spaces) {
        (0, 0) => None,
        _ if tabs >= 4 * spaces => Some(Some(true)),
        _ if spaces >= 4 * tabs => Some(Some(false)),
        _ => Some(None),
    }
}

/// The indentation step of space-indented lines: the most common rise from one line to the next.
fn unit_of<'a>(lines: impl Iterator<Item = &'a str>) -> Option<usize> {
    let mut counts = [0usize; 9];
    let mut prev: Option<usize> = None;
    for l in lines {
        if l.trim().is_empty() {
            continue;
        }
        let indent = indent_of(l);
        if !indent.bytes().all(|b| b == b' ') {
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            if let Some(c) = indent.len().checked_sub(p).filter(|d| (1..=8).contains(d)) {
                counts[c] += 1;
            }
        }
        prev = Some(indent.len());
    }
    (1..=8)
        .filter(|&d| counts[d] > 0)
        .max_by_key(|&d| (counts[d], std::cmp::Reverse(d)))
}

/// Every match of `old` in `current` once both are made plain; byte ranges in `current`.
fn find_plain(current: &str, old: &str) -> Vec<(usize, usize)> {
    let needle = plain(old);
    if needle.trim().is_empty() {
        return Vec::new();
    }
    let mut hay = String::with_capacity(current.len());
    let mut map = Vec::with_capacity(current.len() + 1);
    for (i, c) in current.char_indices() {
        let p = plain_char(c);
        for _ in 0..p.len_utf8() {
            map.push(i);
        }
        hay.push(p);
    }
    map.push(current.len());
    memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes())
        .scan(0, |next_free, s| {
            // Non-overlapping, as exact matches are counted.
            let keep = s >= *next_free;
            if keep {
                *next_free = s + needle.len();
            }
            Some(keep.then_some(s))
        })
        .flatten()
        .map(|s| (map[s], map[s + needle.len()]))
        .collect()
}

/// new_string with what it keeps from old_string written as the matched text has it there (a
/// straight quote that stood for `„` stays `„`); what the edit adds is written as given. Lines first,
/// so that a kept line is the file's line whole and a quote is never paired with one on another line;
/// then characters, within the lines the edit changes. None where the pairing is a tie.
fn recurl(old: &str, matched: &str, new: &str) -> Option<String> {
    let o: Vec<&str> = old.split('\n').collect();
    let m: Vec<&str> = matched.split('\n').collect();
    let n: Vec<&str> = new.split('\n').collect();
    debug_assert_eq!(o.len(), m.len(), "plain() keeps line breaks");
    both_ways(|backwards| {
        let mut out: Vec<String> = Vec::with_capacity(n.len());
        for op in diff(&o, &n, backwards) {
            match op {
                DiffOp::Equal { old_index, len, .. } => {
                    out.extend(m[old_index..old_index + len].iter().map(|l| l.to_string()))
                }
                DiffOp::Delete { .. } => {}
                DiffOp::Insert {
                    new_index, new_len, ..
                } => out.extend(
                    n[new_index..new_index + new_len]
                        .iter()
                        .map(|l| l.to_string()),
                ),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => {
                    // A changed line keeps the quotes of the old line it was made from; a line unlike
                    // any old one is new text, written as given.
                    let made_from = pair_most_alike(
                        new_index..new_index + new_len,
                        old_index..old_index + old_len,
                        0.5,
                        |k, j| line_similarity(o[j], n[k]),
                        |_| None,
                    );
                    for (k, from) in (new_index..).zip(made_from) {
                        match from {
                            Some(j) => out.push(recurl_chars(o[j], m[j], n[k])?),
                            None => out.push(n[k].to_string()),
                        }
                    }
                }
            }
        }
        Some(out.join("\n"))
    })
}

/// `recurl` within one changed line. A typographic character is kept only where the text around it
/// is kept too: one the diff pairs inside a word the edit changed (the `’` of `plan’s` taken for the
/// `'` of `tools'`) is a coincidence of the alignment, not a character the edit kept, and whether
/// new_string meant it typographic cannot be known: `None`, refused.
fn recurl_chars(old: &str, matched: &str, new: &str) -> Option<String> {
    let o: Vec<char> = old.chars().collect();
    let m: Vec<char> = matched.chars().collect();
    let n: Vec<char> = new.chars().collect();
    debug_assert_eq!(o.len(), m.len(), "plain() maps characters one to one");
    both_ways(|backwards| {
        let mut out = String::with_capacity(new.len());
        for op in diff(&o, &n, backwards) {
            match op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => {
                    let kept = |k: usize| (new_index..new_index + len).contains(&k);
                    let letter = |j: Option<usize>| {
                        j.and_then(|j| o.get(j))
                            .is_some_and(|c| c.is_alphanumeric())
                    };
                    for i in 0..len {
                        let at = old_index + i;
                        let in_a_word =
                            m[at] != o[at] && letter(at.checked_sub(1)) && letter(Some(at + 1));
                        let k = new_index + i;
                        if in_a_word && !(k > 0 && kept(k - 1) && kept(k + 1)) {
                            return None;
                        }
                    }
                    out.extend(&m[old_index..old_index + len])
                }
                DiffOp::Delete { .. } => {}
                DiffOp::Insert {
                    new_index, new_len, ..
                }
                | DiffOp::Replace {
                    new_index, new_len, ..
                } => out.extend(&n[new_index..new_index + new_len]),
            }
        }
        Some(out)
    })
}
