//! What an applied plan did to the editor's diagnostics: the errors (and, on request, warnings) it
//! introduced and those it resolved, from the user's own language servers.
//!
//! The server cannot see diagnostics: the editor can. A client that announces it (initialization
//! option `diagnostics`) answers the request `multiedit/diagnostics` twice per plan: `phase: "before"`
//! just before `workspace/applyEdit` (what the documents show now) and `phase: "after"` once the editor
//! applied it (what they show once the language servers have published for the new text, or at the
//! settle bound, with the files still pending). The delta is computed here, once for every client:
//! a diagnostic that was there before and is still there at the same place, mapped through the
//! plan's replacements (which the server knows exactly), is not reported. Clients that did not
//! announce it are never sent the request and pay nothing.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ropey::Rope;
use serde_json::{json, Value};
use tower_lsp_server::ls_types::{Position, Range};
use tower_lsp_server::Client;

use super::convert::{self, Encoding};
use super::documents::Documents;
use crate::engine::Replacement;
use crate::result::PlanResult;

pub const METHOD: &str = "multiedit/diagnostics";
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(2000);
pub const DEFAULT_MAX: usize = 20;
/// Files named in one sentence of the text; the rest are counted.
const NAMES_SHOWN: usize = 10;
/// Added to the settle bound for the client's answer to travel: a client that never answers must not
/// hold the command.
const ANSWER_MARGIN: Duration = Duration::from_millis(1000);
/// The "before" snapshot is answered at once by a well-behaved client.
const BEFORE_TIMEOUT: Duration = Duration::from_millis(1000);

/// Which diagnostics are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    Off,
    Errors,
    Warnings,
}

impl Report {
    /// `"off"`, `"errors"`, `"warnings"` (errors and warnings), or a boolean (`true`: errors).
    pub fn from_value(v: &Value) -> Option<Report> {
        match v {
            Value::Bool(true) => Some(Report::Errors),
            Value::Bool(false) => Some(Report::Off),
            Value::String(s) => match s.as_str() {
                "off" => Some(Report::Off),
                "errors" => Some(Report::Errors),
                "warnings" => Some(Report::Warnings),
                _ => None,
            },
            _ => None,
        }
    }

    /// A plan's own `diagnostics` field.
    pub fn from_plan(d: crate::engine::Diagnostics) -> Report {
        match d {
            crate::engine::Diagnostics::Errors => Report::Errors,
            crate::engine::Diagnostics::Warnings => Report::Warnings,
            crate::engine::Diagnostics::Off => Report::Off,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Report::Off => "off",
            Report::Errors => "errors",
            Report::Warnings => "warnings",
        }
    }

    /// LSP severities 1 (error) and 2 (warning); a diagnostic without one counts as an error.
    fn keeps(self, severity: u64) -> bool {
        match self {
            Report::Off => false,
            Report::Errors => severity == 1,
            Report::Warnings => severity <= 2,
        }
    }
}

/// The initialization option `diagnostics`: present (and not `false`) when the client answers
/// `multiedit/diagnostics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub report: Report,
    pub settle: Duration,
    pub max: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { report: Report::Errors, settle: DEFAULT_SETTLE, max: DEFAULT_MAX }
    }
}

impl Options {
    /// `true`, or `{"report"?: "errors"|"warnings"|"off", "settleMs"?: n, "max"?: n}`; `false` or
    /// `null` mean the client does not answer. `Err` names what is wrong.
    pub fn from_value(v: &Value) -> Result<Option<Options>, String> {
        let mut o = Options::default();
        match v {
            Value::Null | Value::Bool(false) => return Ok(None),
            Value::Bool(true) => {}
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("report", v) if Report::from_value(v).is_some() => o.report = Report::from_value(v).unwrap_or(Report::Errors),
                        ("settleMs", v) if v.as_u64().is_some() => o.settle = Duration::from_millis(v.as_u64().unwrap_or(0).min(60_000)),
                        ("max", v) if v.as_u64().is_some() => o.max = v.as_u64().unwrap_or(0) as usize,
                        _ => {
                            return Err(format!(
                                "Ignoring diagnostics.{key}={value}: diagnostics takes report (\"errors\", \"warnings\" \
                                 or \"off\"), settleMs and max (numbers)"
                            ))
                        }
                    }
                }
            }
            other => return Err(format!("Ignoring diagnostics={other}: expected true, false or an object")),
        }
        Ok(Some(o))
    }
}

/// One edited document, as the delta needs it.
pub struct Edited<'a> {
    pub file_path: &'a str,
    pub uri: String,
    pub before: &'a str,
    /// The text once the editor applied the plan: the plan's, or the editor's where it changed the
    /// edit (`now_reads`).
    pub after: &'a str,
    pub replacements: &'a [Replacement],
    /// What the editor changed on top of the plan's text (offsets in it), taking it to `after`.
    pub then: &'a [Replacement],
    /// The text changed after the editor applied the plan (typed since): nothing maps its diagnostics.
    pub differs: bool,
    /// The editor had the document open before the edit (else its language servers may never have
    /// checked it: no diagnostics before means nothing to compare with).
    pub was_open: bool,
}

/// A plan's diagnostics watch: the snapshot taken before its edit, and the options for this call.
pub struct Watch {
    options: Options,
    before: Option<Value>,
}

impl Watch {
    /// Takes the "before" snapshot when the client answers the request and the call wants a delta
    /// (`None` otherwise: nothing is sent, nothing is added to the result).
    pub async fn start(client: &Client, options: Option<Options>, report: Option<Report>, uris: Vec<String>) -> Option<Watch> {
        let mut options = options?;
        options.report = report.unwrap_or(options.report);
        if options.report == Report::Off || uris.is_empty() {
            return None;
        }
        Some(Watch { options, before: before(client, &uris).await })
    }

    /// After the editor applied the plan: waits for the client's settled diagnostics and adds the delta
    /// to `result` (`diagnostics` and `diagnostics_text`). `edited`: the plan's files that stay in the
    /// editor; `folders`: the workspace's, which the text's paths are shown relative to.
    pub async fn finish(
        self,
        documents: &Documents,
        client: &Client,
        encoding: Encoding,
        folders: &[PathBuf],
        mut edited: Vec<Edited<'_>>,
        result: &mut PlanResult,
    ) {
        let started = Instant::now();
        let answer = match self.before {
            Some(_) => after(client, &edited, self.options.settle).await,
            None => None,
        };
        let (Some(before), Some(after)) = (self.before, answer) else {
            result.diagnostics = Some(json!({"available": false}));
            result.diagnostics_text = Some("The editor did not report diagnostics for this change.".into());
            return;
        };
        let computing = Instant::now();
        // Compared once the client answered: every didChange it sent before its answer has been applied.
        // `after` is the text the editor had when it answered applyEdit, its own changes included.
        for e in &mut edited {
            e.differs = documents.find(&convert::uri_key(&e.uri)).is_some_and(|doc| doc.rope != e.after);
        }
        let delta = delta(self.options, encoding, &edited, &before, &after);
        let mut summary = delta.to_json(self.options);
        // The wait for the language servers (as the client measured it, from the edit), apart from the
        // time this server spent on the delta.
        summary["waited_ms"] = after.get("waitedMs").cloned().unwrap_or_else(|| json!(started.elapsed().as_millis() as u64));
        if let Some(published) = after.get("publishedMs") {
            summary["published_ms"] = published.clone();
        }
        summary["delta_ms"] = json!(computing.elapsed().as_secs_f64() * 1000.0);
        result.diagnostics_text = Some(delta.text(self.options, folders));
        result.diagnostics = Some(summary);
    }
}

/// The custom request; its params and result are JSON, read leniently (a client's odd answer must not
/// fail the plan it already applied).
enum DiagnosticsRequest {}

impl tower_lsp_server::ls_types::request::Request for DiagnosticsRequest {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = METHOD;
}

/// Asks the client what the documents show now. `None` when it does not answer in time or errs: the
/// plan then goes on without a delta (and says so).
async fn before(client: &Client, uris: &[String]) -> Option<Value> {
    let params = json!({"phase": "before", "uris": uris});
    tokio::time::timeout(BEFORE_TIMEOUT, client.send_request::<DiagnosticsRequest>(params)).await.ok()?.ok()
}

/// Asks the client for the diagnostics once settled; `None` when it does not answer within the bound
/// (plus the time to travel) or errs.
async fn after(client: &Client, edited: &[Edited<'_>], settle: Duration) -> Option<Value> {
    let uris: Vec<&str> = edited.iter().map(|e| e.uri.as_str()).collect();
    let params = json!({"phase": "after", "uris": uris, "settleMs": settle.as_millis() as u64});
    tokio::time::timeout(settle + ANSWER_MARGIN, client.send_request::<DiagnosticsRequest>(params)).await.ok()?.ok()
}

/// A diagnostic as reported: 1-based line and column (in characters) in the text after the edit.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub file_path: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub severity: u64,
    pub source: Option<String>,
    pub code: Option<String>,
    pub message: String,
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

    fn to_json(&self) -> Value {
        json!({"file_path": self.file_path, "line": self.line, "column": self.column, "end_line": self.end_line,
               "end_column": self.end_column, "severity": self.severity_name(), "source": self.source,
               "code": self.code, "message": self.message})
    }

    fn to_text(&self, folders: &[std::path::PathBuf]) -> String {
        let shown = shown(&self.file_path, folders);
        let tag = match (&self.source, &self.code) {
            (Some(s), Some(c)) => format!(" ({s} {c})"),
            (Some(x), None) | (None, Some(x)) => format!(" ({x})"),
            (None, None) => String::new(),
        };
        let warning = if self.severity == 2 { "warning: " } else { "" };
        format!("{shown}:{}:{} {warning}{}{tag}", self.line, self.column, self.message.replace('\n', " "))
    }
}

/// A file as the model is shown it: relative to the workspace folder holding it, else as it is.
fn shown(file_path: &str, folders: &[std::path::PathBuf]) -> String {
    let path = Path::new(file_path);
    folders.iter().find_map(|f| path.strip_prefix(f).ok()).unwrap_or(path).display().to_string()
}

#[derive(Debug, Default, PartialEq)]
pub struct Delta {
    pub introduced: Vec<Item>,
    pub resolved: Vec<Item>,
    /// The diagnostics after the edit of files the editor had not open before it and had none for:
    /// nothing to compare with, so they are shown as they are, not as introduced.
    pub present: Vec<Item>,
    /// Files whose diagnostics had not settled at the bound: nothing is said about them.
    pub pending: Vec<String>,
    /// Files no language server checks (the client knows of none for their language).
    pub unchecked: Vec<String>,
    /// Files whose language server sent no update after the edit in its usual time: unchanged.
    pub quiet: Vec<String>,
    /// Files whose text changed after the editor applied the plan.
    pub differs: Vec<String>,
    /// Files not open before the edit (with `present`).
    pub fresh: Vec<String>,
    /// Files whose diagnostics were compared.
    pub checked: usize,
}

impl Delta {
    /// How many of `introduced`, `resolved` and `present` are listed, in that order, within `max`.
    fn shown(&self, max: usize) -> [usize; 3] {
        let introduced = self.introduced.len().min(max);
        let resolved = self.resolved.len().min(max - introduced);
        [introduced, resolved, self.present.len().min(max - introduced - resolved)]
    }

    fn omitted(&self, max: usize) -> usize {
        self.introduced.len() + self.resolved.len() + self.present.len() - self.shown(max).iter().sum::<usize>()
    }

    fn to_json(&self, options: Options) -> Value {
        let [introduced, resolved, present] = self.shown(options.max);
        let items = |list: &[Item], n: usize| list.iter().take(n).map(Item::to_json).collect::<Vec<_>>();
        json!({
            "available": true,
            "report": options.report.as_str(),
            "introduced": items(&self.introduced, introduced),
            "resolved": items(&self.resolved, resolved),
            "present": items(&self.present, present),
            "omitted": self.omitted(options.max),
            "pending": self.pending,
            "unchecked": self.unchecked,
            "quiet": self.quiet,
            "not_compared": self.differs,
            "not_open_before": self.fresh,
        })
    }

    /// The compact text a model reads.
    pub fn text(&self, options: Options, folders: &[std::path::PathBuf]) -> String {
        let warnings = options.report == Report::Warnings;
        let what = if warnings { "errors or warnings" } else { "errors" };
        let mut lines = Vec::new();
        let [introduced, resolved, present] = self.shown(options.max);
        let list = |items: &[Item], n: usize| -> String {
            let texts: Vec<String> = items.iter().take(n).map(|i| i.to_text(folders)).collect();
            if texts.len() == 1 {
                format!(" {}", texts[0])
            } else {
                texts.iter().map(|t| format!("\n  {t}")).collect()
            }
        };
        // A many-file plan's lists are cut: a model needs the files with errors, not every quiet one.
        let names = |files: &[String]| {
            let mut out = files.iter().take(NAMES_SHOWN).map(|p| shown(p, folders)).collect::<Vec<_>>().join(", ");
            if files.len() > NAMES_SHOWN {
                out.push_str(&format!(" and {} more", files.len() - NAMES_SHOWN));
            }
            out
        };
        if !self.introduced.is_empty() {
            let label = if warnings { "New errors and warnings" } else { "New errors" };
            lines.push(format!("{label}:{}", list(&self.introduced, introduced)));
        } else if self.checked > 0 {
            lines.push(format!("No new {what}."));
        }
        if resolved > 0 {
            lines.push(format!("Resolved:{}", list(&self.resolved, resolved)));
        }
        if present > 0 {
            let with: Vec<String> = self.fresh.iter().filter(|f| self.present.iter().any(|i| &i.file_path == *f)).cloned().collect();
            lines.push(format!("Now in {} (not open before the edit, so not compared):{}", names(&with), list(&self.present, present)));
        }
        let clean: Vec<String> = self.fresh.iter().filter(|f| !self.present.iter().any(|i| &i.file_path == *f)).cloned().collect();
        if !clean.is_empty() {
            lines.push(format!("No {what} in {} after the edit.", names(&clean)));
        }
        let omitted = self.omitted(options.max);
        if omitted > 0 {
            lines.push(format!("... and {omitted} more (structured result: diagnostics)."));
        }
        if !self.pending.is_empty() {
            lines.push(format!(
                "Diagnostics still pending after {} ms (not checked): {}.",
                options.settle.as_millis(),
                names(&self.pending)
            ));
        }
        if !self.quiet.is_empty() {
            lines.push(format!("No diagnostics update for {} after the edit: taken as unchanged.", names(&self.quiet)));
        }
        if !self.differs.is_empty() {
            lines.push(format!(
                "Diagnostics not compared for {}: the text changed after the editor applied the plan (typed since).",
                names(&self.differs)
            ));
        }
        if !self.unchecked.is_empty() {
            lines.push(format!("No diagnostics for {}: no language server checks it.", names(&self.unchecked)));
        }
        lines.join("\n")
    }
}

/// One LSP diagnostic, read leniently; `None` for an entry without a usable range or message.
struct Raw {
    range: Range,
    severity: u64,
    source: Option<String>,
    code: Option<String>,
    message: String,
}

fn position(v: &Value) -> Option<Position> {
    Some(Position::new(v.get("line")?.as_u64()? as u32, v.get("character")?.as_u64()? as u32))
}

fn raw(v: &Value) -> Option<Raw> {
    let range = v.get("range")?;
    let code = match v.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Some(Raw {
        range: Range::new(position(range.get("start")?)?, position(range.get("end")?)?),
        severity: v.get("severity").and_then(Value::as_u64).unwrap_or(1),
        source: v.get("source").and_then(Value::as_str).map(String::from),
        code,
        message: v.get("message")?.as_str()?.to_string(),
    })
}

/// The diagnostics of an answer, by URI key (as the server compares URIs): read once per answer, so
/// a plan of many files does not scan every key of it for each.
fn by_uri(answer: &Value) -> HashMap<String, Vec<&Value>> {
    let mut out: HashMap<String, Vec<&Value>> = HashMap::new();
    for (k, v) in answer.get("diagnostics").and_then(Value::as_object).into_iter().flatten() {
        out.entry(convert::uri_key(k)).or_default().extend(v.as_array().into_iter().flatten());
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
                if end_side { start + r.text.len() } else { start }
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
        Same { severity: i.severity, source: i.source.as_deref(), code: i.code.as_deref(), message: &i.message, line: i.line }
    }
}

/// The delta of one plan: per file, the diagnostics after the edit that were not there before (mapped
/// through the replacements), and those before that are gone. Two diagnostics are the same when their
/// severity, source, code and message agree and they start on the same line once mapped.
pub fn delta(options: Options, encoding: Encoding, edited: &[Edited<'_>], before: &Value, after: &Value) -> Delta {
    let listed = |field: &str| -> Vec<String> {
        after.get(field).and_then(Value::as_array).map(|p| p.iter().filter_map(Value::as_str).map(convert::uri_key).collect()).unwrap_or_default()
    };
    let (pending, unchecked, quiet) = (listed("pending"), listed("unchecked"), listed("quiet"));
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
        let (was, now) = (before_of.get(&key).unwrap_or(&none), after_of.get(&key).unwrap_or(&none));
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
            .copied()
            .filter_map(raw)
            .filter(keep)
            .map(|d| {
                let to_byte = |p: Position| old_rope.char_to_byte(convert::position_to_char(&old_rope, p, encoding));
                let mapped = |offset: usize, end_side: bool| then_map.map(plan_map.map(offset, end_side), end_side);
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
            unmatched.entry(hasher.hash_one(Same::of(o))).or_default().push_back(i);
        }
        let mut matched = vec![false; old.len()];
        for d in now.iter().copied().filter_map(raw).filter(keep) {
            let range = convert::range_to_chars(&new_rope, d.range, encoding);
            let now = item(e.file_path, &new_rope, range.start, range.end, &d);
            if fresh {
                out.present.push(now);
                continue;
            }
            let same = Same::of(&now);
            let bucket = unmatched.get_mut(&hasher.hash_one(&same));
            // A bucket holds equal diagnostics, bar a hash collision: the first one matches.
            let hit = bucket.and_then(|b| b.iter().position(|&i| Same::of(&old[i]) == same).and_then(|at| b.remove(at)));
            match hit {
                Some(i) => matched[i] = true,
                None => out.introduced.push(now),
            }
        }
        out.resolved.extend(old.into_iter().zip(matched).filter(|(_, m)| !m).map(|(o, _)| o));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(start: usize, end: usize, text: &str) -> Replacement {
        Replacement { start, end, text: text.into() }
    }

    fn diag(line: u32, col: u32, end_col: u32, message: &str, code: u64) -> Value {
        json!({"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": end_col}},
               "severity": 1, "source": "ts", "code": code, "message": message})
    }

    const URI: &str = "file:///w/calc.ts";

    fn run(before_text: &str, reps: &[Replacement], after_text: &str, before: Vec<Value>, after: Vec<Value>, options: Options) -> Delta {
        let edited = [Edited { file_path: "/w/calc.ts", uri: URI.into(), before: before_text, after: after_text, replacements: reps, then: &[], differs: false, was_open: true }];
        delta(options, Encoding::Utf16, &edited, &json!({"diagnostics": {URI: before}}), &json!({"diagnostics": {URI: after}}))
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
                    let d = run(&text, &reps, &after_text, before.clone(), after.clone(), Options::default());
                    assert_eq!((d.introduced.len(), d.resolved.len()), (n, n));
                    start.elapsed()
                })
                .min()
                .unwrap()
        };
        let (small, large) = (time(1_000), time(8_000));
        eprintln!("diagnostics delta: 1,000 in {small:?}, 8,000 in {large:?}");
        assert!(large < small * 16, "8 times the diagnostics took {large:?} against {small:?}");
    }

    #[test]
    fn offsets_map_through_replacements() {
        let reps = [rep(2, 4, "xyz"), rep(6, 6, "++")];
        assert_eq!(map_offset(&reps, 0, false), 0);
        assert_eq!(map_offset(&reps, 2, false), 2, "the start of a replaced span stays");
        assert_eq!(map_offset(&reps, 3, false), 2, "inside: the replacement's start");
        assert_eq!(map_offset(&reps, 3, true), 5, "inside, as an end: the replacement's end");
        assert_eq!(map_offset(&reps, 4, false), 5);
        assert_eq!(map_offset(&reps, 6, false), 9, "an insertion at the offset comes before it");
        assert_eq!(map_offset(&reps, 9, false), 12);
    }

    #[test]
    fn an_error_that_was_there_and_moved_is_not_reported() {
        // A line inserted above the old error; a new error on the changed call.
        let before_text = "let a: number = 'x';\nadd(1, 2);\n";
        let after_text = "// added\nlet a: number = 'x';\nadd(1, '2');\n";
        let reps = [rep(0, 0, "// added\n"), rep(28, 29, "'2'")];
        assert_eq!(&after_text[..9], "// added\n");
        let old_error = diag(0, 4, 5, "Type 'string' is not assignable to type 'number'.", 2322);
        let moved = diag(1, 4, 5, "Type 'string' is not assignable to type 'number'.", 2322);
        let new_error = diag(2, 7, 10, "Argument of type 'string' is not assignable to parameter of type 'number'.", 2345);
        let d = run(before_text, &reps, after_text, vec![old_error.clone()], vec![moved.clone(), new_error.clone()], Options::default());
        assert_eq!(d.introduced.len(), 1, "{d:?}");
        assert_eq!((d.introduced[0].line, d.introduced[0].column), (3, 8));
        assert!(d.resolved.is_empty());
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "New errors: calc.ts:3:8 Argument of type 'string' is not assignable to parameter of type 'number'. (ts 2345)"
        );

        // And the plan that fixes it: resolved, at its line after the fix.
        let fixed = "// added\nlet a: number = 'x';\nadd(1, 2);\n";
        let d = run(after_text, &[rep(37, 40, "2")], fixed, vec![moved.clone(), new_error], vec![moved], Options::default());
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
        let error = |line| diag(line, 0, 3, "Cannot redeclare block-scoped variable 'c'.", 2451);
        let new_error = diag(2, 7, 10, "Argument of type 'string' is not assignable to parameter of type 'number'.", 2345);
        let mut edited = [Edited { file_path: "/w/calc.ts", uri: URI.into(), before: before_text, after: editor_text, replacements: &reps, then: &then, differs: false, was_open: true }];
        let before = json!({"diagnostics": {URI: [error(0), error(2)]}});
        let after = json!({"diagnostics": {URI: [error(0), new_error, error(3)]}});
        let d = delta(Options::default(), Encoding::Utf16, &edited, &before, &after);
        assert_eq!(
            d.text(Options::default(), &["/w".into()]),
            "New errors: calc.ts:3:8 Argument of type 'string' is not assignable to parameter of type 'number'. (ts 2345)"
        );
        // Mapped through the plan alone, the error below would land a line short: resolved, and new.
        edited[0].then = &[];
        let d = delta(Options::default(), Encoding::Utf16, &edited, &before, &after);
        assert_eq!((d.introduced.len(), d.resolved.len()), (2, 1));
    }

    #[test]
    fn warnings_only_on_request_and_a_cap_with_the_count_of_the_rest() {
        let text = "a\nb\nc\n";
        let mut warning = diag(0, 0, 1, "unused", 6133);
        warning["severity"] = json!(2);
        let errors: Vec<Value> = (0..3).map(|l| diag(l, 0, 1, &format!("bad {l}"), 1)).collect();
        let mut after = errors.clone();
        after.push(warning);
        let d = run(text, &[], text, vec![], after.clone(), Options::default());
        assert_eq!(d.introduced.len(), 3, "errors only by default");
        let options = Options { report: Report::Warnings, max: 2, ..Options::default() };
        let d = run(text, &[], text, vec![], after, options);
        assert_eq!(d.introduced.len(), 4);
        let summary = d.to_json(options);
        assert_eq!(summary["introduced"].as_array().unwrap().len(), 2);
        assert_eq!(summary["omitted"], 2);
        assert_eq!(
            d.text(options, &[]),
            "New errors and warnings:\n  /w/calc.ts:1:1 bad 0 (ts 1)\n  /w/calc.ts:2:1 bad 1 (ts 1)\n... and 2 more (structured result: diagnostics)."
        );
    }

    #[test]
    fn pending_files_are_named_not_guessed() {
        let edited = [Edited { file_path: "/w/calc.ts", uri: URI.into(), before: "a", after: "b", replacements: &[], then: &[], differs: false, was_open: true }];
        let after = json!({"diagnostics": {URI: [diag(0, 0, 1, "stale", 1)]}, "pending": [URI]});
        let d = delta(Options::default(), Encoding::Utf16, &edited, &json!({"diagnostics": {}}), &after);
        assert!(d.introduced.is_empty());
        assert_eq!(d.pending, ["/w/calc.ts"]);
        assert_eq!(d.text(Options::default(), &["/w".into()]), "Diagnostics still pending after 2000 ms (not checked): calc.ts.");
    }

    #[test]
    fn files_no_language_server_checks_are_said_to_be_unchecked() {
        let edited = [
            Edited { file_path: "/w/calc.ts", uri: URI.into(), before: "a", after: "b", replacements: &[], then: &[], differs: false, was_open: true },
            Edited { file_path: "/w/notes.txt", uri: "file:///w/notes.txt".into(), before: "a", after: "b", replacements: &[], then: &[], differs: false, was_open: true },
        ];
        let after = json!({"diagnostics": {}, "unchecked": ["file:///w/notes.txt"]});
        let d = delta(Options::default(), Encoding::Utf16, &edited, &json!({"diagnostics": {}}), &after);
        assert_eq!(d.text(Options::default(), &["/w".into()]), "No new errors.\nNo diagnostics for notes.txt: no language server checks it.");
        let after = json!({"diagnostics": {}, "unchecked": [URI, "file:///w/notes.txt"]});
        let d = delta(Options::default(), Encoding::Utf16, &edited, &json!({"diagnostics": {}}), &after);
        assert_eq!(d.text(Options::default(), &["/w".into()]), "No diagnostics for calc.ts, notes.txt: no language server checks it.");
    }

    #[test]
    fn a_file_its_server_did_not_republish_is_taken_as_unchanged_not_remapped() {
        // The old error below the edit, still at its old line: comparing would invent a change.
        let before_text = "a\nb\n";
        let after_text = "x\na\nb\n";
        let stale = vec![diag(1, 0, 1, "old", 1)];
        let edited = [Edited { file_path: "/w/calc.ts", uri: URI.into(), before: before_text, after: after_text, replacements: &[rep(0, 0, "x\n")], then: &[], differs: false, was_open: true }];
        let after = json!({"diagnostics": {URI: stale.clone()}, "quiet": [URI]});
        let d = delta(Options::default(), Encoding::Utf16, &edited, &json!({"diagnostics": {URI: stale}}), &after);
        assert!(d.introduced.is_empty() && d.resolved.is_empty(), "{d:?}");
        assert_eq!(d.text(Options::default(), &["/w".into()]), "No new errors.\nNo diagnostics update for calc.ts after the edit: taken as unchanged.");
    }

    #[test]
    fn a_file_not_open_before_shows_its_errors_as_present_not_as_new() {
        let mut edited = vec![Edited { file_path: "/w/calc.ts", uri: URI.into(), before: "a\n", after: "b\n", replacements: &[], then: &[], differs: false, was_open: false }];
        let after = json!({"diagnostics": {URI: [diag(0, 0, 1, "bad", 1)]}});
        let d = delta(Options::default(), Encoding::Utf16, &edited, &json!({"diagnostics": {URI: []}}), &after);
        assert!(d.introduced.is_empty());
        assert_eq!(d.text(Options::default(), &["/w".into()]), "Now in calc.ts (not open before the edit, so not compared): calc.ts:1:1 bad (ts 1)");
        let clean = delta(Options::default(), Encoding::Utf16, &edited, &json!({"diagnostics": {}}), &json!({"diagnostics": {}}));
        assert_eq!(clean.text(Options::default(), &["/w".into()]), "No errors in calc.ts after the edit.");
        assert_eq!(d.to_json(Options::default())["not_open_before"], json!(["/w/calc.ts"]));
        // A language server that checks closed files too had published for it: compared as usual.
        let before = json!({"diagnostics": {URI: [diag(0, 0, 1, "old", 1)]}});
        let d = delta(Options::default(), Encoding::Utf16, &edited, &before, &after);
        assert_eq!((d.introduced.len(), d.resolved.len(), d.present.len()), (1, 1, 0));
        edited[0].was_open = true;
        let d = delta(Options::default(), Encoding::Utf16, &edited, &json!({"diagnostics": {URI: []}}), &after);
        assert_eq!((d.introduced.len(), d.present.len()), (1, 0));
    }

    #[test]
    fn columns_are_characters_whatever_the_encoding() {
        // "😀 x": x is the third character, at UTF-16 unit 3 and byte 5.
        let text = "😀 x\n";
        for (enc, col) in [(Encoding::Utf16, 3), (Encoding::Utf8, 5)] {
            let edited = [Edited { file_path: "/w/calc.ts", uri: URI.into(), before: text, after: text, replacements: &[], then: &[], differs: false, was_open: true }];
            let after = json!({"diagnostics": {URI: [diag(0, col, col + 1, "bad", 1)]}});
            let d = delta(Options::default(), enc, &edited, &json!({"diagnostics": {URI: []}}), &after);
            assert_eq!((d.introduced[0].line, d.introduced[0].column, d.introduced[0].end_column), (1, 3, 4), "{enc:?}");
        }
    }

    #[test]
    fn odd_answers_are_read_leniently() {
        let text = "abc\n";
        let garbage = vec![json!(7), json!({"range": {}}), json!({"message": "no range"}), diag(99, 99, 99, "clamped", 1)];
        let d = run(text, &[], text, vec![], garbage, Options::default());
        assert_eq!(d.introduced.len(), 1);
        assert_eq!((d.introduced[0].line, d.introduced[0].column), (2, 1), "clamped to the end of the text");
        assert_eq!(Options::from_value(&json!(false)), Ok(None));
        assert_eq!(Options::from_value(&json!({"report": "warnings", "settleMs": 500})).unwrap().unwrap().settle, Duration::from_millis(500));
        assert!(Options::from_value(&json!({"report": "all"})).unwrap_err().contains("diagnostics.report"));
    }
}
