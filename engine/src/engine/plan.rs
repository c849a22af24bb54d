//! The plan format, one shape for the CLI, the language server and the extension, and its validation.
//!
//! Validation is written by hand over `serde_json::Value` rather than derived: every refusal must name the
//! field to fix (`edits[2].old_string`) in words a caller can act on, which serde's messages do not.

use serde_json::{Map, Value};

use super::refusal::Refusal;
use super::target::{NamePath, Rename, RenameAt, SymbolAction, Target};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Any failure changes nothing.
    #[default]
    Atomic,
    /// Failed edits are skipped and reported, the rest applied (Crush).
    Partial,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// Each edit matches against the result of the previous ones (the documented contract).
    #[default]
    Sequential,
    /// Claude Code's observed behaviour: edits are also validated against the original text.
    ClaudeCode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Matching {
    #[default]
    Exact,
    /// After an exact miss: line-trimmed, then indentation-insensitive, then quote/dash-normalised matching.
    Tolerant,
}

/// How many matches an edit must find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Exactly one (the default).
    One,
    /// At least one; all are replaced (`replace_all: true`).
    All,
    /// Exactly this many; all are replaced (`expected_replacements`).
    Exactly(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old_string: String,
    pub new_string: String,
    pub expect: Expect,
    /// Set for the hunks of line-based formats (diffs, apply_patch envelopes, SEARCH/REPLACE blocks):
    /// where the text must lie. `None` for plan edits, which match anywhere.
    pub anchor: Option<Box<Anchor>>,
    /// Set when the edit is placed by a symbol (or is a rename's, or is resolved into exact spans)
    /// instead of by `old_string`, which is then empty (`target.rs`).
    pub target: Option<Box<Target>>,
}

/// Where a hunk's text may match. An anchored edit matches whole lines only: it starts at the start
/// of a line and ends at the end of one (or of the file). Of several such places one is chosen only
/// by the rules below; otherwise the edit is refused as ambiguous, never guessed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Anchor {
    /// 1-based line where the text is expected, in the text as the file's earlier edits left it
    /// (a unified diff's hunk header). Of several places the nearest wins, once the offset at which
    /// the previous hunk of the file was found is carried over, as `patch` does; two at the same
    /// distance are refused.
    pub line: Option<usize>,
    /// With `line`: only places within this many lines of where the text is expected count (Roo Code's
    /// start lines, which Roo looks no further from).
    pub reach: Option<usize>,
    /// Only places at or after the end of the previous anchored edit of the file count, and the first
    /// wins (apply_patch: hunks come in file order).
    pub forward: bool,
    /// The text must come after the first line (at or after the previous hunk) whose trimmed text is
    /// this (apply_patch's `@@ def handler():`).
    pub after: Option<String>,
    /// The text must start at the start of the file (a hunk at line 1 with context).
    pub at_start: bool,
    /// The text must end at the end of the file (a hunk without trailing context, `*** End of File`).
    pub at_end: bool,
    /// The format cannot say that a file's last line has no newline (apply_patch envelopes,
    /// SEARCH/REPLACE blocks write every line with one): the text may then match the file's last line
    /// without it, and the new text ends without one too, so the file keeps its last line as it was.
    pub eof_newline_optional: bool,
    /// The hunk showed the file's byte order mark (kept out of its text, as out of the engine's view
    /// of the file): the file must start with one.
    pub bom: bool,
    /// How refusals and reports name the edit: `hunk 3 of src/lib.rs (line 120)`.
    pub label: String,
}

/// What happens to the file besides its edits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum FileOp {
    /// Edited in place (or created by an empty first old_string, as plans always could).
    #[default]
    Edit,
    /// Created: refused as `file_exists` if the file exists, even empty.
    Create,
    /// Deleted, after its edits (if any) have left it empty.
    Delete,
    /// Edited, then moved to this path (absolute or a `file://` URI), which must not exist.
    MoveTo(String),
}

impl Edit {
    pub fn new(old: &str, new: &str) -> Self {
        Edit {
            old_string: old.into(),
            new_string: new.into(),
            expect: Expect::One,
            anchor: None,
            target: None,
        }
    }
    pub fn all(old: &str, new: &str) -> Self {
        Edit {
            expect: Expect::All,
            ..Edit::new(old, new)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePlan {
    /// An absolute path or a `file://` URI, as the caller wrote it.
    pub file_path: String,
    pub edits: Vec<Edit>,
    pub op: FileOp,
    /// The mode a patch gives the file, as git writes it (`0o100755`), after its edits; `None`: the
    /// file keeps its own (a new file gets the umask's). Plans have none.
    pub mode: Option<u32>,
    /// The edits' line endings and byte order mark are the bytes to find and write, as written: a
    /// diff that carries `\r` (or a mark) changes exactly those bytes. Otherwise (`false`) a `\n`
    /// matches a CRLF break and the file's mark stays out of matching (`eol.rs`).
    pub literal: bool,
}

impl FilePlan {
    /// A file to edit in place, as a plan states it.
    pub fn edit(file_path: impl Into<String>, edits: Vec<Edit>) -> Self {
        FilePlan {
            file_path: file_path.into(),
            edits,
            op: FileOp::Edit,
            mode: None,
            literal: false,
        }
    }
}

/// Which diagnostics an editor reports after applying the plan (the plan's `diagnostics`). The engine
/// only carries it: the language server reads it (`lsp/diagnostics.rs`); on disk it means nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Diagnostics {
    Errors,
    Warnings,
    Off,
}

/// Which files an editor saves once it applied the plan (the plan's `save`). The engine only carries
/// it: the language server reads it (`lsp/save.rs`); on disk every file is written anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Save {
    /// Files that had no unsaved changes before the plan (and files no editor buffer held).
    Clean,
    /// Every file the plan touched, the user's unsaved changes in it included.
    All,
    /// None: the edit stays in the buffers.
    Never,
}

impl Save {
    /// Each policy with the name plans, settings and results give it.
    pub const NAMES: &'static [(&'static str, Save)] = &[
        ("clean", Save::Clean),
        ("all", Save::All),
        ("never", Save::Never),
    ];

    pub fn name(self) -> &'static str {
        Save::NAMES
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("clean", |(n, _)| n)
    }

    pub fn from_name(name: &str) -> Option<Save> {
        Save::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    pub mode: Mode,
    pub dialect: Dialect,
    pub matching: Matching,
    /// `None`: the editor's own setting.
    pub diagnostics: Option<Diagnostics>,
    /// `None`: the editor's own setting.
    pub save: Option<Save>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub files: Vec<FilePlan>,
    pub options: Options,
    /// The plan's `rename`: applied first, each file's edits after it (`target.rs`).
    pub rename: Option<Rename>,
}

pub fn parse_plan(json: &str) -> Result<Plan, Refusal> {
    let value: Value = serde_json::from_str(json).map_err(|e| {
        // A slip in a plan's JSON is named where it starts; a text that is no object at all gets an
        // example of one.
        let example = if json.trim_start().starts_with('{') {
            ""
        } else {
            " Send one JSON object such as \
             {\"file_path\": \"/abs/path\", \"edits\": [{\"old_string\": \"a\", \"new_string\": \"b\"}]}."
        };
        Refusal::input(format!(
            "the plan is not valid JSON: {}.{example}",
            super::json_error::describe(json, &e)
        ))
    })?;
    plan_from_value(&value)
}

fn issue(text: impl std::fmt::Display) -> Refusal {
    Refusal::input(format!(
        "MultiEdit failed due to the following issue:\n{text}"
    ))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn wrong_type(field: &str, expected: &str, got: &Value) -> Refusal {
    issue(format_args!(
        "The parameter `{field}` type is expected as `{expected}` but provided as `{}`",
        type_name(got)
    ))
}

fn check_fields(obj: &Map<String, Value>, allowed: &[&str], prefix: &str) -> Result<(), Refusal> {
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(issue(format_args!(
                "An unexpected parameter `{prefix}{key}` was provided (allowed here: {})",
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

fn required<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    prefix: &str,
) -> Result<&'a Value, Refusal> {
    obj.get(key).ok_or_else(|| {
        issue(format_args!(
            "The required parameter `{prefix}{key}` is missing"
        ))
    })
}

fn string_field(obj: &Map<String, Value>, key: &str, prefix: &str) -> Result<String, Refusal> {
    match required(obj, key, prefix)? {
        Value::String(s) => Ok(s.clone()),
        other => Err(wrong_type(&format!("{prefix}{key}"), "string", other)),
    }
}

fn choice<T: Copy>(
    obj: &Map<String, Value>,
    key: &str,
    choices: &[(&str, T)],
    default: T,
) -> Result<T, Refusal> {
    Ok(chosen(obj, "", key, choices)?.unwrap_or(default))
}

/// The choice `key` names, or None when the plan leaves it unset. `prefix` places the key in the
/// plan for the refusal (`files[0].edits[2].`; empty at the top).
fn chosen<T: Copy>(
    obj: &Map<String, Value>,
    prefix: &str,
    key: &str,
    choices: &[(&str, T)],
) -> Result<Option<T>, Refusal> {
    let Some(v) = obj.get(key) else {
        return Ok(None);
    };
    let Value::String(s) = v else {
        return Err(wrong_type(&format!("{prefix}{key}"), "string", v));
    };
    choices
        .iter()
        .find(|(name, _)| name == s)
        .map(|(_, t)| Some(*t))
        .ok_or_else(|| {
            let names: Vec<String> = choices.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            issue(format_args!(
                "The parameter `{prefix}{key}` must be one of {} but is \"{s}\"",
                names.join(", ")
            ))
        })
}

const TOP_SINGLE: &[&str] = &[
    "file_path",
    "edits",
    "mode",
    "dialect",
    "match",
    "diagnostics",
    "save",
    "rename",
];
const TOP_MULTI: &[&str] = &[
    "files",
    "mode",
    "dialect",
    "match",
    "diagnostics",
    "save",
    "rename",
];

/// The parameters other agents' edit tools spell in camelCase (OpenCode's `filePath`, `oldString`,
/// `newString`, `replaceAll`), which a model trained on them sends: read as ours.
const CAMEL: &[(&str, &str)] = &[
    ("filePath", "file_path"),
    ("oldString", "old_string"),
    ("newString", "new_string"),
    ("replaceAll", "replace_all"),
    ("expectedReplacements", "expected_replacements"),
];

/// `obj` with camelCase parameters under their snake_case names; both spellings of one are refused.
fn snake_case(obj: &Map<String, Value>, prefix: &str) -> Result<Map<String, Value>, Refusal> {
    let mut out = obj.clone();
    for (camel, snake) in CAMEL {
        if let Some(v) = out.remove(*camel) {
            if out.contains_key(*snake) {
                return Err(issue(format_args!(
                    "`{prefix}{camel}` and `{prefix}{snake}` are the same parameter: give it once"
                )));
            }
            out.insert(snake.to_string(), v);
        }
    }
    Ok(out)
}

pub fn plan_from_value(value: &Value) -> Result<Plan, Refusal> {
    let Value::Object(obj) = value else {
        return Err(wrong_type("plan", "object", value));
    };
    let obj = &snake_case(obj, "")?;
    let options = options(obj)?;
    let rename = obj.get("rename").map(rename).transpose()?;
    let files = if rename.is_some()
        && !["files", "file_path", "edits"]
            .iter()
            .any(|k| obj.contains_key(*k))
    {
        // A plan may be a rename alone.
        check_fields(obj, TOP_SINGLE, "")?;
        Vec::new()
    } else if obj.contains_key("files") {
        if obj.contains_key("file_path") || obj.contains_key("edits") {
            return Err(issue(
                "Give either `files` (several files) or `file_path` with `edits` (one file), not both",
            ));
        }
        check_fields(obj, TOP_MULTI, "")?;
        file_list(&obj["files"])?
    } else {
        check_fields(obj, TOP_SINGLE, "")?;
        vec![file_plan(obj, "")?]
    };
    Ok(Plan {
        files,
        options,
        rename,
    })
}

/// The plan's options (`mode`, `dialect`, `match`, `diagnostics`, `save`).
fn options(obj: &Map<String, Value>) -> Result<Options, Refusal> {
    Ok(Options {
        mode: choice(
            obj,
            "mode",
            &[("atomic", Mode::Atomic), ("partial", Mode::Partial)],
            Mode::Atomic,
        )?,
        dialect: choice(
            obj,
            "dialect",
            &[
                ("sequential", Dialect::Sequential),
                ("claude-code", Dialect::ClaudeCode),
            ],
            Dialect::Sequential,
        )?,
        matching: choice(
            obj,
            "match",
            &[("exact", Matching::Exact), ("tolerant", Matching::Tolerant)],
            Matching::Exact,
        )?,
        // Unset is not a default here: the front end's own setting decides then.
        diagnostics: chosen(
            obj,
            "",
            "diagnostics",
            &[
                ("errors", Diagnostics::Errors),
                ("warnings", Diagnostics::Warnings),
                ("off", Diagnostics::Off),
            ],
        )?,
        save: chosen(obj, "", "save", Save::NAMES)?,
    })
}

/// The plans of `files` (several files): a non-empty array, each file named once.
fn file_list(list: &Value) -> Result<Vec<FilePlan>, Refusal> {
    let list = match list {
        Value::Array(a) => a,
        other => return Err(wrong_type("files", "array", other)),
    };
    if list.is_empty() {
        return Err(issue("At least one file is required in `files`"));
    }
    let mut files = Vec::with_capacity(list.len());
    for (i, f) in list.iter().enumerate() {
        let prefix = format!("files[{i}].");
        let Value::Object(fo) = f else {
            return Err(wrong_type(&format!("files[{i}]"), "object", f));
        };
        let fo = &snake_case(fo, &prefix)?;
        check_fields(fo, &["file_path", "edits"], &prefix)?;
        files.push(file_plan(fo, &prefix)?);
    }
    let mut seen = std::collections::HashSet::new();
    for (i, f) in files.iter().enumerate() {
        if !seen.insert(f.file_path.as_str()) {
            return Err(issue(format_args!(
                "`files[{i}].file_path` names {} a second time: put all edits of one file in one entry",
                f.file_path
            )));
        }
    }
    Ok(files)
}

const RENAME_FIELDS: &[&str] = &["file_path", "symbol", "line", "column", "new_name"];

/// `rename: {file_path, symbol | line + column, new_name}`.
fn rename(value: &Value) -> Result<Rename, Refusal> {
    let Value::Object(obj) = value else {
        return Err(wrong_type("rename", "object", value));
    };
    check_fields(obj, RENAME_FIELDS, "rename.")?;
    let file_path = string_field(obj, "file_path", "rename.")?;
    check_path(&file_path, "rename.")?;
    let new_name = string_field(obj, "new_name", "rename.")?;
    if new_name.trim().is_empty() || new_name.contains(['\n', '\r']) {
        return Err(issue(format_args!(
            "`rename.new_name` must be the new name, one line and not empty, but is {:?}",
            new_name
        )));
    }
    let whole = |key: &str| -> Result<Option<usize>, Refusal> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Number(n)) => match n.as_u64() {
                Some(k) if k >= 1 => Ok(Some(usize::try_from(k).unwrap_or(usize::MAX))),
                _ => Err(issue(format_args!("The parameter `rename.{key}` must be a whole number of at least 1 (lines and columns count from 1), but is {v}"))),
            },
            Some(other) => Err(wrong_type(&format!("rename.{key}"), "number", other)),
        }
    };
    let (line, column) = (whole("line")?, whole("column")?);
    let at = match (obj.get("symbol"), line, column) {
        (Some(_), l, c) if l.is_some() || c.is_some() => {
            return Err(issue("Give `rename.symbol` or `rename.line` with `rename.column`, not both"))
        }
        (Some(Value::String(s)), ..) => RenameAt::Symbol(NamePath::parse(s, "rename.symbol").map_err(issue)?),
        (Some(other), ..) => return Err(wrong_type("rename.symbol", "string", other)),
        (None, Some(line), Some(column)) => RenameAt::Position { line, column },
        (None, None, None) => {
            return Err(issue(
                "`rename` needs the symbol to rename: `rename.symbol` (its name path, such as \"Calculator/total\"), or \
                 `rename.line` and `rename.column` (1-based, the column in characters) of a place in its name",
            ))
        }
        (None, ..) => return Err(issue("`rename.line` and `rename.column` go together: give both (1-based, the column in characters)")),
    };
    Ok(Rename {
        file_path,
        at,
        new_name,
    })
}

fn file_plan(obj: &Map<String, Value>, prefix: &str) -> Result<FilePlan, Refusal> {
    let file_path = string_field(obj, "file_path", prefix)?;
    check_path(&file_path, prefix)?;
    let list = match required(obj, "edits", prefix)? {
        Value::Array(a) => a,
        other => return Err(wrong_type(&format!("{prefix}edits"), "array", other)),
    };
    if list.is_empty() {
        return Err(issue(format_args!(
            "At least one edit is required in `{prefix}edits`"
        )));
    }
    let edits = list
        .iter()
        .enumerate()
        .map(|(i, e)| edit(e, &format!("{prefix}edits[{i}]")).map_err(|r| r.at(i)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FilePlan::edit(file_path, edits))
}

/// A line that stands for text left out (`(rest of methods ...)`, `// ... existing code ...`,
/// `# rest of code ...`), as its phrase: models write them for code they did not repeat (Gemini CLI
/// refuses them too). `None` for any other line.
fn omission(line: &str) -> Option<String> {
    const PHRASES: &[&str] = &[
        "rest of",
        "rest of method",
        "rest of methods",
        "rest of code",
        "rest of the code",
        "rest of file",
        "rest of the file",
        "unchanged code",
        "unchanged method",
        "unchanged methods",
        "existing code",
        "remaining code",
    ];
    let mut t = line.trim();
    if !(t.contains("...") || t.contains('…')) {
        return None;
    }
    for comment in ["//", "#", "--"] {
        if let Some(rest) = t.strip_prefix(comment) {
            t = rest.trim();
        }
    }
    if let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        t = inner.trim();
    }
    let words: Vec<String> = t
        .replace("...", " ")
        .replace('…', " ")
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    let phrase = words.join(" ");
    PHRASES.contains(&phrase.as_str()).then_some(phrase)
}

fn omissions(text: &str) -> Vec<String> {
    text.lines().filter_map(omission).collect()
}

fn check_path(path: &str, prefix: &str) -> Result<(), Refusal> {
    let field = format!("{prefix}file_path");
    if path.is_empty() {
        return Err(issue(format_args!(
            "`{field}` is empty: give the absolute path of the file to edit"
        )));
    }
    if path.contains('\0') {
        return Err(issue(format_args!("`{field}` contains a NUL character")));
    }
    let is_uri = path.starts_with("file://");
    let is_abs = path.starts_with('/') || is_windows_absolute(path);
    if !is_uri && !is_abs {
        return Err(issue(format_args!(
            "`{field}` must be an absolute path (starting with /) or a file:// URI, but is \"{path}\""
        )));
    }
    if path.to_ascii_lowercase().ends_with(".ipynb") {
        return Err(issue(format_args!(
            "`{field}` is a Jupyter Notebook ({path}); notebooks are JSON cells, edit them with a notebook tool"
        )));
    }
    Ok(())
}

fn is_windows_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

const EDIT_FIELDS: &[&str] = &[
    "old_string",
    "new_string",
    "replace_all",
    "expected_replacements",
    "symbol",
    "replace",
    "insert",
];

fn edit(value: &Value, at: &str) -> Result<Edit, Refusal> {
    let Value::Object(obj) = value else {
        return Err(wrong_type(at, "object", value));
    };
    let prefix = format!("{at}.");
    let obj = &snake_case(obj, &prefix)?;
    check_fields(obj, EDIT_FIELDS, &prefix)?;
    if obj.contains_key("symbol") {
        return symbol_edit(obj, &prefix);
    }
    if let Some(key) = ["replace", "insert"]
        .into_iter()
        .find(|k| obj.contains_key(*k))
    {
        if obj.contains_key("old_string") {
            return Err(issue(format_args!(
                "`{prefix}{key}` goes with `{prefix}symbol`, not with `{prefix}old_string`: leave it out (to replace every \
                 occurrence of old_string, set `{prefix}replace_all`: true)"
            )));
        }
        return Err(issue(format_args!(
            "`{prefix}{key}` acts on a symbol: give `{prefix}symbol` (its name path, such as \"Calculator/add\") with it, \
             or find the text with `{prefix}old_string`"
        )));
    }
    let old_string = string_field(obj, "old_string", &prefix)?;
    let new_string = string_field(obj, "new_string", &prefix)?;
    nothing_left_out(&old_string, &new_string, &prefix)?;
    Ok(Edit {
        old_string,
        new_string,
        expect: expect(obj, &prefix)?,
        anchor: None,
        target: None,
    })
}

/// Refuses a new_string with a line that stands for text left out ("// ... existing code ...")
/// where old_string has none: new_string is written as it is.
fn nothing_left_out(old_string: &str, new_string: &str, prefix: &str) -> Result<(), Refusal> {
    let kept = omissions(old_string);
    if let Some(line) = new_string
        .lines()
        .find(|l| omission(l).is_some_and(|o| !kept.contains(&o)))
    {
        return Err(issue(format_args!(
            "`{prefix}new_string` has the line \"{}\", which stands for text left out, and old_string has no such line: \
             new_string is written as it is, so the text it stands for would be lost. Write that text in full",
            line.trim()
        )));
    }
    Ok(())
}

/// How many occurrences an edit replaces, from `replace_all` and `expected_replacements`.
fn expect(obj: &Map<String, Value>, prefix: &str) -> Result<Expect, Refusal> {
    let replace_all = match obj.get("replace_all") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            return Err(wrong_type(
                &format!("{prefix}replace_all"),
                "boolean",
                other,
            ))
        }
    };
    let expected = match obj.get("expected_replacements") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Number(n)) => match n.as_u64() {
            Some(k) if k >= 1 => Some(usize::try_from(k).unwrap_or(usize::MAX)),
            _ => {
                return Err(issue(format_args!(
                    "The parameter `{prefix}expected_replacements` must be a whole number of at least 1, but is {v}"
                )))
            }
        },
        Some(other) => return Err(wrong_type(&format!("{prefix}expected_replacements"), "number", other)),
    };
    Ok(match (replace_all, expected) {
        (Some(false), Some(n)) if n != 1 => {
            return Err(issue(format_args!(
                "`{prefix}replace_all` is false but `{prefix}expected_replacements` is {n}: set replace_all to true \
                 or drop one of them"
            )))
        }
        (_, Some(1)) if replace_all != Some(true) => Expect::One,
        (_, Some(n)) => Expect::Exactly(n),
        (Some(true), None) => Expect::All,
        _ => Expect::One,
    })
}

/// `{"symbol", "replace": "whole" | "body"}` or `{"symbol", "insert": "before" | "after"}`, with
/// `new_string`.
fn symbol_edit(obj: &Map<String, Value>, prefix: &str) -> Result<Edit, Refusal> {
    let path = match &obj["symbol"] {
        Value::String(s) => NamePath::parse(s, &format!("{prefix}symbol")).map_err(issue)?,
        other => return Err(wrong_type(&format!("{prefix}symbol"), "string", other)),
    };
    if let Some(key) = ["old_string", "replace_all", "expected_replacements"]
        .into_iter()
        .find(|k| obj.contains_key(*k))
    {
        return Err(issue(format_args!(
            "`{prefix}symbol` places the edit, so `{prefix}{key}` has no place beside it: give either `symbol` (with \
             `replace` or `insert`) or `old_string`"
        )));
    }
    let replace = chosen(
        obj,
        prefix,
        "replace",
        &[("whole", SymbolAction::Whole), ("body", SymbolAction::Body)],
    )?;
    let insert = chosen(
        obj,
        prefix,
        "insert",
        &[
            ("before", SymbolAction::Before),
            ("after", SymbolAction::After),
        ],
    )?;
    let action = match (replace, insert) {
        (Some(a), None) | (None, Some(a)) => a,
        (Some(_), Some(_)) => return Err(issue(format_args!("Give `{prefix}replace` or `{prefix}insert`, not both"))),
        (None, None) => {
            return Err(issue(format_args!(
                "`{prefix}symbol` names {}: say what to do with it, `{prefix}replace`: \"whole\" or \"body\", or \
                 `{prefix}insert`: \"before\" or \"after\"",
                path.text
            )))
        }
    };
    let new_string = string_field(obj, "new_string", prefix)?;
    Ok(Edit {
        target: Some(Box::new(Target::Symbol { path, action })),
        ..Edit::new("", &new_string)
    })
}
