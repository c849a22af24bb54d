//! The delta itself, pure: the diagnostics before the edit mapped through the plan's replacements
//! (and what the editor changed after it), matched against those after it.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::path::Path;

use ropey::Rope;
use tower_lsp_server::ls_types::{NumberOrString, Position, Range};

use super::edited::Edited;
use super::options::Options;
use crate::engine::Replacement;
use crate::protocol::ext::{DiagnosticsAnswer, ReportedDiagnostic};
use crate::protocol::positions::{self as convert, Encoding};
use crate::result::{DiagnosticItem, DiagnosticsDelta};

/// A diagnostic as reported: 1-based line and column (in characters) in the text after the edit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    pub(crate) file_path: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) end_line: usize,
    pub(crate) end_column: usize,
    pub(crate) severity: u64,
    pub(crate) source: Option<String>,
    pub(crate) code: Option<String>,
    pub(crate) message: String,
}

impl Item {
    fn severity_name(&self) -> &'static str {
        match self.severity {
            1 => "error",
            2 => "warning",
            3 => "information",
            _ => "hint",
        }
    }

    fn to_result(&self) -> DiagnosticItem {
        DiagnosticItem {
            file_path: self.file_path.clone(),
            line: self.line,
            column: self.column,
            end_line: self.end_line,
            end_column: self.end_column,
            severity: self.severity_name().to_string(),
            source: self.source.clone(),
            code: self.code.clone(),
            message: self.message.clone(),
        }
    }

    pub(super) fn to_text(&self, folders: &[std::path::PathBuf]) -> String {
        let shown = shown(&self.file_path, folders);
        let tag = match (&self.source, &self.code) {
            (Some(s), Some(c)) => format!(" ({s} {c})"),
            (Some(x), None) | (None, Some(x)) => format!(" ({x})"),
            (None, None) => String::new(),
        };
        let warning = if self.severity == 2 { "warning: " } else { "" };
        format!(
            "{shown}:{}:{} {warning}{}{tag}",
            self.line,
            self.column,
            self.message.replace('\n', " ")
        )
    }
}

/// A file as the model is shown it: relative to the workspace folder holding it, else as it is.
pub(super) fn shown(file_path: &str, folders: &[std::path::PathBuf]) -> String {
    let path = Path::new(file_path);
    folders
        .iter()
        .find_map(|f| path.strip_prefix(f).ok())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[derive(Debug, Default, PartialEq)]
pub(crate) struct Delta {
    pub(crate) introduced: Vec<Item>,
    pub(crate) resolved: Vec<Item>,
    /// The diagnostics after the edit of files the editor had not open before it and had none for:
    /// nothing to compare with, so they are shown as they are, not as introduced.
    pub(crate) present: Vec<Item>,
    /// Files whose diagnostics had not settled at the bound: nothing is said about them.
    pub(crate) pending: Vec<String>,
    /// Files no language server checks (the client knows of none for their language).
    pub(crate) unchecked: Vec<String>,
    /// Files whose language server sent no update after the edit in its usual time: unchanged.
    pub(crate) quiet: Vec<String>,
    /// Files whose text changed after the editor applied the plan (or, `on_disk`, on disk before the
    /// write, after their server was told of it).
    pub(crate) differs: Vec<String>,
    pub(crate) on_disk: bool,
    /// Files not open before the edit (with `present`).
    pub(crate) fresh: Vec<String>,
    /// Files whose diagnostics were compared.
    pub(crate) checked: usize,
}

impl Delta {
    /// How many of `introduced`, `resolved` and `present` are listed, in that order, within `max`.
    pub(super) fn shown(&self, max: usize) -> [usize; 3] {
        let introduced = self.introduced.len().min(max);
        let resolved = self.resolved.len().min(max - introduced);
        [
            introduced,
            resolved,
            self.present.len().min(max - introduced - resolved),
        ]
    }

    pub(super) fn omitted(&self, max: usize) -> usize {
        self.introduced.len() + self.resolved.len() + self.present.len()
            - self.shown(max).iter().sum::<usize>()
    }

    /// The delta as a result carries it, with the times the caller measured.
    pub(crate) fn to_summary(
        &self,
        options: Options,
        waited_ms: u64,
        published_ms: Option<u64>,
        delta_ms: f64,
    ) -> DiagnosticsDelta {
        let [introduced, resolved, present] = self.shown(options.max);
        let items =
            |list: &[Item], n: usize| list.iter().take(n).map(Item::to_result).collect::<Vec<_>>();
        DiagnosticsDelta {
            report: options.report.as_str().to_string(),
            introduced: items(&self.introduced, introduced),
            resolved: items(&self.resolved, resolved),
            present: items(&self.present, present),
            omitted: self.omitted(options.max),
            pending: self.pending.clone(),
            unchecked: self.unchecked.clone(),
            quiet: self.quiet.clone(),
            not_compared: self.differs.clone(),
            not_open_before: self.fresh.clone(),
            waited_ms,
            published_ms,
            delta_ms,
        }
    }
}

/// One reported diagnostic as the delta reads it: its severity and code made plain.
struct Raw {
    range: Range,
    severity: u64,
    source: Option<String>,
    code: Option<String>,
    message: String,
}

fn raw(d: &ReportedDiagnostic) -> Raw {
    Raw {
        range: d.range,
        severity: d.severity.unwrap_or(1),
        source: d.source.clone(),
        code: d.code.as_ref().map(|c| match c {
            NumberOrString::Number(n) => n.to_string(),
            NumberOrString::String(s) => s.clone(),
        }),
        message: d.message.clone(),
    }
}

/// The diagnostics of an answer, by URI key (as the server compares URIs): read once per answer, so
/// a plan of many files does not scan every key of it for each.
fn by_uri(answer: &DiagnosticsAnswer) -> HashMap<String, Vec<&ReportedDiagnostic>> {
    let mut out: HashMap<String, Vec<&ReportedDiagnostic>> = HashMap::new();
    for (k, v) in &answer.diagnostics {
        out.entry(convert::uri_key(k))
            .or_default()
            .extend(v.iter().filter_map(|d| d.0.as_ref()));
    }
    out
}

/// Byte offsets of the text before a change mapped into the text after it: `reps` sorted and apart,
/// with the running sum of their length changes, so each offset costs a binary search, not a pass
/// over every replacement (a plan of thousands of replacements meets tens of thousands of
/// diagnostics).
struct OffsetMap<'a> {
    reps: &'a [Replacement],
    /// `shifts[k]`: the length change of `reps[..k]`.
    shifts: Vec<isize>,
}

impl<'a> OffsetMap<'a> {
    fn new(reps: &'a [Replacement]) -> Self {
        let mut shifts = Vec::with_capacity(reps.len() + 1);
        let mut shift = 0isize;
        shifts.push(0);
        for r in reps {
            shift += r.text.len() as isize - (r.end - r.start) as isize;
            shifts.push(shift);
        }
        OffsetMap { reps, shifts }
    }

    /// An offset inside a replaced span goes to the start of its replacement (`end_side`: to its
    /// end); one right at an insertion moves after it.
    fn map(&self, offset: usize, end_side: bool) -> usize {
        // The replacements wholly before the offset (ends are ordered: the spans are sorted and apart).
        let k = self.reps.partition_point(|r| r.end <= offset);
        let shift = self.shifts[k];
        match self.reps.get(k) {
            Some(r) if r.start < offset => {
                let start = (r.start as isize + shift).max(0) as usize;
                if end_side {
                    start + r.text.len()
                } else {
                    start
                }
            }
            _ => (offset as isize + shift).max(0) as usize,
        }
    }
}

#[cfg(test)]
fn map_offset(reps: &[Replacement], offset: usize, end_side: bool) -> usize {
    OffsetMap::new(reps).map(offset, end_side)
}

/// 1-based line and column (characters) of a char index.
fn line_column(rope: &Rope, ch: usize) -> (usize, usize) {
    let ch = ch.min(rope.len_chars());
    let line = rope.char_to_line(ch);
    (line + 1, ch - rope.line_to_char(line) + 1)
}

fn item(file_path: &str, rope: &Rope, start: usize, end: usize, d: &Raw) -> Item {
    let (line, column) = line_column(rope, start);
    let (end_line, end_column) = line_column(rope, end);
    Item {
        file_path: file_path.to_string(),
        line,
        column,
        end_line,
        end_column,
        severity: d.severity,
        source: d.source.clone(),
        code: d.code.clone(),
        message: d.message.clone(),
    }
}

/// What makes two diagnostics the same: severity, source, code and message, on the same line.
#[derive(PartialEq, Eq, Hash)]
struct Same<'a> {
    severity: u64,
    source: Option<&'a str>,
    code: Option<&'a str>,
    message: &'a str,
    line: usize,
}

impl<'a> Same<'a> {
    fn of(i: &'a Item) -> Self {
        Same {
            severity: i.severity,
            source: i.source.as_deref(),
            code: i.code.as_deref(),
            message: &i.message,
            line: i.line,
        }
    }
}

/// The delta of one plan: per file, the diagnostics after the edit that were not there before (mapped
/// through the replacements), and those before that are gone. Two diagnostics are the same when their
/// severity, source, code and message agree and they start on the same line once mapped.
pub(crate) fn delta(
    options: Options,
    encoding: Encoding,
    edited: &[Edited<'_>],
    before: &DiagnosticsAnswer,
    after: &DiagnosticsAnswer,
) -> Delta {
    let listed =
        |uris: &[String]| -> Vec<String> { uris.iter().map(|u| convert::uri_key(u)).collect() };
    let (pending, unchecked, quiet) = (
        listed(&after.pending),
        listed(&after.unchecked),
        listed(&after.quiet),
    );
    let (before_of, after_of) = (by_uri(before), by_uri(after));
    let none = Vec::new();
    let mut out = Delta::default();
    for e in edited {
        let key = convert::uri_key(&e.uri);
        if pending.contains(&key) {
            out.pending.push(e.file_path.to_string());
            continue;
        }
        if unchecked.contains(&key) {
            out.unchecked.push(e.file_path.to_string());
            continue;
        }
        if e.differs {
            out.differs.push(e.file_path.to_string());
            continue;
        }
        let (was, now) = (
            before_of.get(&key).unwrap_or(&none),
            after_of.get(&key).unwrap_or(&none),
        );
        let fresh = !e.was_open && was.is_empty();
        out.checked += usize::from(!fresh);
        if quiet.contains(&key) {
            // Not republished: the editor still holds the old diagnostics at their old places.
            out.quiet.push(e.file_path.to_string());
            continue;
        }
        if fresh {
            out.fresh.push(e.file_path.to_string());
        }
        let old_rope = Rope::from_str(e.before);
        let new_rope = Rope::from_str(e.after);
        let keep = |d: &Raw| options.report.keeps(d.severity);
        // Before: mapped into the text after the edit.
        let (plan_map, then_map) = (OffsetMap::new(e.replacements), OffsetMap::new(e.then));
        let old: Vec<Item> = was
            .iter()
            .map(|d| raw(d))
            .filter(keep)
            .map(|d| {
                let to_byte = |p: Position| {
                    old_rope.char_to_byte(convert::position_to_char(&old_rope, p, encoding))
                };
                let mapped = |offset: usize, end_side: bool| {
                    then_map.map(plan_map.map(offset, end_side), end_side)
                };
                let start = mapped(to_byte(d.range.start), false).min(new_rope.len_bytes());
                let end = mapped(to_byte(d.range.end), true).clamp(start, new_rope.len_bytes());
                let (start, end) = (new_rope.byte_to_char(start), new_rope.byte_to_char(end));
                item(e.file_path, &new_rope, start, end, &d)
            })
            .collect();
        // The old diagnostics by what makes two the same, each list in the old order: a new one takes
        // the first old one still unmatched, found by a lookup rather than a scan of them all.
        let hasher = std::hash::RandomState::new();
        let mut unmatched: HashMap<u64, VecDeque<usize>> = HashMap::new();
        for (i, o) in old.iter().enumerate() {
            unmatched
                .entry(hasher.hash_one(Same::of(o)))
                .or_default()
                .push_back(i);
        }
        let mut matched = vec![false; old.len()];
        for d in now.iter().map(|d| raw(d)).filter(keep) {
            let range = convert::range_to_chars(&new_rope, d.range, encoding);
            let now = item(e.file_path, &new_rope, range.start, range.end, &d);
            if fresh {
                out.present.push(now);
                continue;
            }
            let same = Same::of(&now);
            let bucket = unmatched.get_mut(&hasher.hash_one(&same));
            // A bucket holds equal diagnostics, bar a hash collision: the first one matches.
            let hit = bucket.and_then(|b| {
                b.iter()
                    .position(|&i| Same::of(&old[i]) == same)
                    .and_then(|at| b.remove(at))
            });
            match hit {
                Some(i) => matched[i] = true,
                None => out.introduced.push(now),
            }
        }
        out.resolved.extend(
            old.into_iter()
                .zip(matched)
                .filter(|(_, m)| !m)
                .map(|(o, _)| o),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::options::Report;
    use super::*;
    use serde_json::{json, Value};
    use std::time::{Duration, Instant};

    /// `delta` on answers written as JSON, read as the server reads a client's.
    fn delta_of(
        options: Options,
        encoding: Encoding,
        edited: &[Edited<'_>],
        before: &Value,
        after: &Value,
    ) -> Delta {
        let read = |v: &Value| -> DiagnosticsAnswer {
            serde_json::from_value(v.clone()).expect("an answer")
        };
        delta(options, encoding, edited, &read(before), &read(after))
    }

    /// The delta as a result carries it, as JSON.
    fn summary(d: &Delta, options: Options) -> Value {
        serde_json::to_value(d.to_summary(options, 0, None, 0.0)).unwrap()
    }

    fn rep(start: usize, end: usize, text: &str) -> Replacement {
        Replacement {
            start,
            end,
            text: text.into(),
        }
    }

    fn diag(line: u32, col: u32, end_col: u32, message: &str, code: u64) -> Value {
        json!({"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": end_col}},
               "severity": 1, "source": "ts", "code": code, "message": message})
    }

    const URI: &str = "file:///w/calc.ts";

    fn run(
        before_text: &str,
        reps: &[Replacement],
        after_text: &str,
        before: Vec<Value>,
        after: Vec<Value>,
        options: Options,
    ) -> Delta {
        let edited = [Edited {
            file_path: "/w/calc.ts",
            uri: URI.into(),
            before: before_text,
            after: after_text,
            replacements: reps,
            then: &[],
            differs: false,
            was_open: true,
        }];
        delta_of(
            options,
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {URI: before}}),
            &json!({"diagnostics": {URI: after}}),
        )
    }

    /// A client may answer with tens of thousands of diagnostics (before: every new one was compared
    /// with every old one, and each mapped through every replacement; 60,000 stalled the server 38 s).
    #[test]
    fn a_flood_of_diagnostics_costs_near_linear_time() {
        let time = |n: usize| {
            let text = "x\n".repeat(n);
            // A replacement every 2 lines, and every diagnostic replaced by another: none matches.
            let reps: Vec<Replacement> = (0..n / 2).map(|k| rep(4 * k, 4 * k + 1, "yy")).collect();
            let mut after_text = String::new();
            let mut at = 0;
            for r in &reps {
                after_text.push_str(&text[at..r.start]);
                after_text.push_str(&r.text);
                at = r.end;
            }
            after_text.push_str(&text[at..]);
            let before: Vec<Value> = (0..n as u32).map(|l| diag(l, 0, 1, "same", 1)).collect();
            let after: Vec<Value> = (0..n as u32).map(|l| diag(l, 0, 1, "other", 1)).collect();
            (0..3)
                .map(|_| {
                    let start = Instant::now();
                    let d = run(
                        &text,
                        &reps,
                        &after_text,
                        before.clone(),
                        after.clone(),
                        Options::default(),
                    );
                    assert_eq!((d.introduced.len(), d.resolved.len()), (n, n));
                    start.elapsed()
                })
                .min()
                .unwrap()
        };
        let (small, large) = (time(1_000), time(8_000));
        eprintln!("diagnostics delta: 1,000 in {small:?}, 8,000 in {large:?}");
        assert!(
            large < small * 16,
            "8 times the diagnostics took {large:?} against {small:?}"
        );
    }

    #[test]
    fn offsets_map_through_replacements() {
        let reps = [rep(2, 4, "xyz"), rep(6, 6, "++")];
        assert_eq!(map_offset(&reps, 0, false), 0);
        assert_eq!(
            map_offset(&reps, 2, false),
            2,
            "the start of a replaced span stays"
        );
        assert_eq!(
            map_offset(&reps, 3, false),
            2,
            "inside: the replacement's start"
        );
        assert_eq!(
            map_offset(&reps, 3, true),
            5,
            "inside, as an end: the replacement's end"
        );
        assert_eq!(map_offset(&reps, 4, false), 5);
        assert_eq!(
            map_offset(&reps, 6, false),
            9,
            "an insertion at the offset comes before it"
        );
        assert_eq!(map_offset(&reps, 9, false), 12);
    }

    #[test]
    fn an_error_that_was_there_and_moved_is_not_reported() {
        // A line inserted above the old error; a new error on the changed call.
        let before_text = "let a: number = 'x';\nadd(1, 2);\n";
        let after_text = "// added\nlet a: number = 'x';\nadd(1, '2');\n";
        let reps = [rep(0, 0, "// added\n"), rep(28, 29, "'2'")];
        assert_eq!(&after_text[..9], "// added\n");
        let old_error = diag(
            0,
            4,
            5,
            "Type 'string' is not assignable to type 'number'.",
            2322,
        );
        let moved = diag(
            1,
            4,
            5,
            "Type 'string' is not assignable to type 'number'.",
            2322,
        );
        let new_error = diag(
            2,
            7,
            10,
            "Argument of type 'string' is not assignable to parameter of type 'number'.",
            2345,
        );
        let d = run(
            before_text,
            &reps,
            after_text,
            vec![old_error.clone()],
            vec![moved.clone(), new_error.clone()],
            Options::default(),
        );
        assert_eq!(d.introduced.len(), 1, "{d:?}");
        assert_eq!((d.introduced[0].line, d.introduced[0].column), (3, 8));
        assert!(d.resolved.is_empty());
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "New errors: calc.ts:3:8 Argument of type 'string' is not assignable to parameter of type 'number'. (ts 2345)"
        );

        // And the plan that fixes it: resolved, at its line after the fix.
        let fixed = "// added\nlet a: number = 'x';\nadd(1, 2);\n";
        let d = run(
            after_text,
            &[rep(37, 40, "2")],
            fixed,
            vec![moved.clone(), new_error],
            vec![moved],
            Options::default(),
        );
        assert!(d.introduced.is_empty());
        assert_eq!(d.resolved.len(), 1);
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "No new errors.\nResolved: calc.ts:3:8 Argument of type 'string' is not assignable to parameter of type 'number'. (ts 2345)"
        );
    }

    #[test]
    fn errors_are_mapped_through_what_the_editor_changed_after_the_plan() {
        // The plan breaks the call; the editor's formatter then spaces it and puts a blank line above
        // it, so the error below moves down one more line than the plan moved it.
        let before_text = "let a: number = 'x';\nadd(1, 2);\nlet c: number = 'y';\n";
        let plan_text = "let a: number = 'x';\nadd(1,'2');\nlet c: number = 'y';\n";
        let editor_text = "let a: number = 'x';\n\nadd(1, '2');\nlet c: number = 'y';\n";
        let reps = [rep(26, 29, ",'2'")];
        let then = [rep(21, 33, "\nadd(1, '2');\n")];
        let mut made = plan_text.to_string();
        made.replace_range(21..33, &then[0].text);
        assert_eq!(made, editor_text);
        let error = |line| {
            diag(
                line,
                0,
                3,
                "Cannot redeclare block-scoped variable 'c'.",
                2451,
            )
        };
        let new_error = diag(
            2,
            7,
            10,
            "Argument of type 'string' is not assignable to parameter of type 'number'.",
            2345,
        );
        let mut edited = [Edited {
            file_path: "/w/calc.ts",
            uri: URI.into(),
            before: before_text,
            after: editor_text,
            replacements: &reps,
            then: &then,
            differs: false,
            was_open: true,
        }];
        let before = json!({"diagnostics": {URI: [error(0), error(2)]}});
        let after = json!({"diagnostics": {URI: [error(0), new_error, error(3)]}});
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &before,
            &after,
        );
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "New errors: calc.ts:3:8 Argument of type 'string' is not assignable to parameter of type 'number'. (ts 2345)"
        );
        // Mapped through the plan alone, the error below would land a line short: resolved, and new.
        edited[0].then = &[];
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &before,
            &after,
        );
        assert_eq!((d.introduced.len(), d.resolved.len()), (2, 1));
    }

    #[test]
    fn warnings_only_on_request_and_a_cap_with_the_count_of_the_rest() {
        let text = "a\nb\nc\n";
        let mut warning = diag(0, 0, 1, "unused", 6133);
        warning["severity"] = json!(2);
        let errors: Vec<Value> = (0..3)
            .map(|l| diag(l, 0, 1, &format!("bad {l}"), 1))
            .collect();
        let mut after = errors.clone();
        after.push(warning);
        let d = run(text, &[], text, vec![], after.clone(), Options::default());
        assert_eq!(d.introduced.len(), 3, "errors only by default");
        let options = Options {
            report: Report::Warnings,
            max: 2,
            ..Options::default()
        };
        let d = run(text, &[], text, vec![], after, options);
        assert_eq!(d.introduced.len(), 4);
        let summary = summary(&d, options);
        assert_eq!(summary["introduced"].as_array().unwrap().len(), 2);
        assert_eq!(summary["omitted"], 2);
        assert_eq!(
            d.text(options, &[]),
            "New errors and warnings:\n  /w/calc.ts:1:1 bad 0 (ts 1)\n  /w/calc.ts:2:1 bad 1 (ts 1)\n... and 2 more (structured result: diagnostics)."
        );
    }

    #[test]
    fn pending_files_are_named_not_guessed() {
        let edited = [Edited {
            file_path: "/w/calc.ts",
            uri: URI.into(),
            before: "a",
            after: "b",
            replacements: &[],
            then: &[],
            differs: false,
            was_open: true,
        }];
        let after = json!({"diagnostics": {URI: [diag(0, 0, 1, "stale", 1)]}, "pending": [URI]});
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {}}),
            &after,
        );
        assert!(d.introduced.is_empty());
        assert_eq!(d.pending, ["/w/calc.ts"]);
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "Diagnostics still pending after 2000 ms (not checked): calc.ts."
        );
    }

    #[test]
    fn files_no_language_server_checks_are_said_to_be_unchecked() {
        let edited = [
            Edited {
                file_path: "/w/calc.ts",
                uri: URI.into(),
                before: "a",
                after: "b",
                replacements: &[],
                then: &[],
                differs: false,
                was_open: true,
            },
            Edited {
                file_path: "/w/notes.txt",
                uri: "file:///w/notes.txt".into(),
                before: "a",
                after: "b",
                replacements: &[],
                then: &[],
                differs: false,
                was_open: true,
            },
        ];
        let after = json!({"diagnostics": {}, "unchecked": ["file:///w/notes.txt"]});
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {}}),
            &after,
        );
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "No new errors.\nNo diagnostics for notes.txt: no language server checks it."
        );
        let after = json!({"diagnostics": {}, "unchecked": [URI, "file:///w/notes.txt"]});
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {}}),
            &after,
        );
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "No diagnostics for calc.ts, notes.txt: no language server checks it."
        );
    }

    #[test]
    fn a_file_its_server_did_not_republish_is_taken_as_unchanged_not_remapped() {
        // The old error below the edit, still at its old line: comparing would invent a change.
        let before_text = "a\nb\n";
        let after_text = "x\na\nb\n";
        let stale = vec![diag(1, 0, 1, "old", 1)];
        let edited = [Edited {
            file_path: "/w/calc.ts",
            uri: URI.into(),
            before: before_text,
            after: after_text,
            replacements: &[rep(0, 0, "x\n")],
            then: &[],
            differs: false,
            was_open: true,
        }];
        let after = json!({"diagnostics": {URI: stale.clone()}, "quiet": [URI]});
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {URI: stale}}),
            &after,
        );
        assert!(d.introduced.is_empty() && d.resolved.is_empty(), "{d:?}");
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "No new errors.\nNo diagnostics update for calc.ts after the edit: taken as unchanged."
        );
    }

    #[test]
    fn a_file_not_open_before_shows_its_errors_as_present_not_as_new() {
        let mut edited = vec![Edited {
            file_path: "/w/calc.ts",
            uri: URI.into(),
            before: "a\n",
            after: "b\n",
            replacements: &[],
            then: &[],
            differs: false,
            was_open: false,
        }];
        let after = json!({"diagnostics": {URI: [diag(0, 0, 1, "bad", 1)]}});
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {URI: []}}),
            &after,
        );
        assert!(d.introduced.is_empty());
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "Now in calc.ts (not open before the edit, so not compared): calc.ts:1:1 bad (ts 1)"
        );
        let clean = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {}}),
            &json!({"diagnostics": {}}),
        );
        assert_eq!(
            clean.text(Options::default(), &["/w".into()]),
            "No errors in calc.ts after the edit."
        );
        assert_eq!(
            summary(&d, Options::default())["not_open_before"],
            json!(["/w/calc.ts"])
        );
        // A language server that checks closed files too had published for it: compared as usual.
        let before = json!({"diagnostics": {URI: [diag(0, 0, 1, "old", 1)]}});
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &before,
            &after,
        );
        assert_eq!(
            (d.introduced.len(), d.resolved.len(), d.present.len()),
            (1, 1, 0)
        );
        edited[0].was_open = true;
        let d = delta_of(
            Options::default(),
            Encoding::Utf16,
            &edited,
            &json!({"diagnostics": {URI: []}}),
            &after,
        );
        assert_eq!((d.introduced.len(), d.present.len()), (1, 0));
    }

    #[test]
    fn columns_are_characters_whatever_the_encoding() {
        // "😀 x": x is the third character, at UTF-16 unit 3 and byte 5.
        let text = "😀 x\n";
        for (enc, col) in [(Encoding::Utf16, 3), (Encoding::Utf8, 5)] {
            let edited = [Edited {
                file_path: "/w/calc.ts",
                uri: URI.into(),
                before: text,
                after: text,
                replacements: &[],
                then: &[],
                differs: false,
                was_open: true,
            }];
            let after = json!({"diagnostics": {URI: [diag(0, col, col + 1, "bad", 1)]}});
            let d = delta_of(
                Options::default(),
                enc,
                &edited,
                &json!({"diagnostics": {URI: []}}),
                &after,
            );
            assert_eq!(
                (
                    d.introduced[0].line,
                    d.introduced[0].column,
                    d.introduced[0].end_column
                ),
                (1, 3, 4),
                "{enc:?}"
            );
        }
    }

    #[test]
    fn odd_answers_are_read_leniently() {
        let text = "abc\n";
        let garbage = vec![
            json!(7),
            json!({"range": {}}),
            json!({"message": "no range"}),
            diag(99, 99, 99, "clamped", 1),
        ];
        let d = run(text, &[], text, vec![], garbage, Options::default());
        assert_eq!(d.introduced.len(), 1);
        assert_eq!(
            (d.introduced[0].line, d.introduced[0].column),
            (2, 1),
            "clamped to the end of the text"
        );
        assert_eq!(Options::from_value(&json!(false)), Ok(None));
        assert_eq!(
            Options::from_value(&json!({"report": "warnings", "settleMs": 500}))
                .unwrap()
                .unwrap()
                .settle,
            Duration::from_millis(500)
        );
        assert!(Options::from_value(&json!({"report": "all"}))
            .unwrap_err()
            .contains("diagnostics.report"));
    }
}
