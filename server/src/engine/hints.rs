//! Help for a refused edit, so the caller can fix its plan in one retry: where the closest text is and
//! how it differs, or where the several matches are.

use std::collections::HashMap;

use super::text::{indent_of, line_of, line_starts, lines_with_offsets, loose, plain};

const MAX_SHOWN_LINES: usize = 30;
const MAX_LISTED_MATCHES: usize = 50;

/// "Matches are at lines 3, 17 and 40." (a line with several: "line 1 (2 matches)").
pub fn match_lines(current: &str, found: &[(usize, usize)]) -> String {
    let starts = line_starts(current);
    let mut per_line: Vec<(usize, usize)> = Vec::new();
    for &(s, _) in found {
        let line = line_of(&starts, s);
        match per_line.last_mut() {
            Some((l, n)) if *l == line => *n += 1,
            _ => per_line.push((line, 1)),
        }
    }
    let mut items: Vec<String> = per_line
        .iter()
        .take(MAX_LISTED_MATCHES)
        .map(|&(l, n)| if n > 1 { format!("{l} ({n} matches)") } else { l.to_string() })
        .collect();
    if per_line.len() > MAX_LISTED_MATCHES {
        items.push(format!("{} more lines", per_line.len() - MAX_LISTED_MATCHES));
    }
    let noun = if per_line.len() == 1 { "line" } else { "lines" };
    format!("Matches are at {noun} {}.", join_and(&items))
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {}", rest.join(", "), last),
    }
}

pub fn not_found(current: &str, old: &str, new: &str) -> Option<String> {
    if !new.is_empty() && new != old {
        if let Some(at) = memchr::memmem::find(current.as_bytes(), new.as_bytes()) {
            let line = line_of(&line_starts(current), at);
            return Some(format!(
                "new_string is already present at line {line}: this edit looks already applied."
            ));
        }
    }
    if old.contains('\r') {
        let lf = old.replace("\r\n", "\n");
        if memchr::memmem::find(current.as_bytes(), lf.as_bytes()).is_some() {
            return Some("Line endings differ: old_string has \\r\\n line breaks but the file uses \\n.".into());
        }
    }
    closest(current, old)
}

/// The window of lines most like `old` (compared loosely), and what differs in it.
fn closest(current: &str, old: &str) -> Option<String> {
    let old_lines: Vec<&str> = old.split('\n').collect();
    let file_lines = lines_with_offsets(current);
    let old_loose: Vec<String> = old_lines.iter().map(|l| loose(l)).collect();
    let wanted: HashMap<&str, Vec<usize>> = old_loose.iter().enumerate().filter(|(_, l)| !l.is_empty()).fold(
        HashMap::new(),
        |mut m, (j, l)| {
            m.entry(l.as_str()).or_default().push(j);
            m
        },
    );
    if wanted.is_empty() {
        return None;
    }
    // Vote for window starts: every file line that loosely equals line j of old votes for start i - j.
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for (i, (_, line)) in file_lines.iter().enumerate() {
        let l = loose(line);
        if let Some(js) = wanted.get(l.as_str()) {
            for &j in js {
                if i >= j {
                    *votes.entry(i - j).or_default() += 1;
                }
            }
        }
    }
    let Some((&start, _)) = votes.iter().max_by_key(|(&s, &v)| (v, std::cmp::Reverse(s))) else {
        let first = old_lines.iter().find(|l| !l.trim().is_empty()).copied().unwrap_or("");
        return Some(format!(
            "No line of the file resembles old_string's line \"{}\", even ignoring whitespace, quotes and dashes. \
             Read the file again before retrying.",
            first.trim()
        ));
    };
    let end = (start + old_lines.len()).min(file_lines.len());
    let mut diffs: Vec<String> = Vec::new();
    let mut note = |d: String| {
        if !diffs.contains(&d) {
            diffs.push(d)
        }
    };
    for (j, o) in old_lines.iter().enumerate() {
        let Some((_, f)) = file_lines.get(start + j) else {
            note("old_string runs past the end of the file".into());
            break;
        };
        if o == f {
            continue;
        }
        let (oi, fi) = (indent_of(o), indent_of(f));
        if oi != fi && (o.trim_start() == f.trim_start() || o.trim() == f.trim()) {
            note(describe_indent(oi, fi));
        }
        let trailing_differs = o.trim_end() != *o || f.trim_end() != *f;
        if trailing_differs && (o.trim_end() == f.trim_end() || o.trim() == f.trim()) {
            note("trailing whitespace".into());
        }
        if o.trim() != f.trim() {
            if plain(o.trim()) == plain(f.trim()) {
                note(describe_quotes(o, f));
            } else if loose(o) == loose(f) {
                note("spacing inside a line".into());
            } else {
                note(format!("the text of line {}", start + j + 1));
            }
        }
    }
    let first_line = start + 1;
    let last_line = end.max(start + 1);
    let from = file_lines[start].0;
    let to = file_lines.get(end - 1).map_or(current.len(), |(o, l)| o + l.len());
    let shown: Vec<&str> = current[from..to].split('\n').take(MAX_SHOWN_LINES).collect();
    let range = if first_line == last_line { format!("line {first_line}") } else { format!("lines {first_line}-{last_line}") };
    let what = if diffs.is_empty() { "its line breaks".to_string() } else { join_and(&diffs) };
    Some(format!(
        "The closest text is at {range} and differs in {what}. The file has there:\n{}",
        shown.join("\n")
    ))
}

fn describe_indent(old: &str, file: &str) -> String {
    let tabs = |s: &str| s.contains('\t');
    match (tabs(old), tabs(file)) {
        (false, true) => "indentation (the file indents with tabs, old_string with spaces)".into(),
        (true, false) => "indentation (the file indents with spaces, old_string with tabs)".into(),
        _ => format!(
            "indentation (the file has {} leading characters, old_string {})",
            file.chars().count(),
            old.chars().count()
        ),
    }
}

fn describe_quotes(old: &str, file: &str) -> String {
    let fancy = |s: &str| s.chars().any(|c| plain(&c.to_string()) != c.to_string());
    match (fancy(old), fancy(file)) {
        (false, true) => "quotes or dashes (the file has typographic ones, old_string plain ones)".into(),
        (true, false) => "quotes or dashes (the file has plain ones, old_string typographic ones)".into(),
        _ => "quotes or dashes".into(),
    }
}
