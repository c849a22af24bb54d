//! Edits addressed by symbol, and renames, made exact: the part both ways of asking a language server
//! share, the editor's (`lsp::symbols`: `multiedit/symbols`, `multiedit/rename`) and multiedit's own
//! started servers (`language_servers`, when no editor holds the files). Whoever asked hands over the
//! same `Answers`; `expand` adds the files a rename reaches, and `resolve` turns each symbol edit and
//! the rename's edits into exact spans of the texts the answers were computed on, which the engine
//! applies like any other edit (mapped through the earlier edits of the file, refused where they
//! overlap one). So a plan means the same thing whichever way it is resolved.
//!
//! Where the rename stands: first. Each file's rename edits are the file's first edit (unnumbered in
//! the result), the plan's own edits after it: an old_string matches the renamed text, and a symbol
//! edit, placed on the text before the plan, is mapped through the rename's edits. A symbol edit
//! replaces the renamed occurrences its span holds (write new_string with the new name); one whose
//! span begins or ends inside an edit made before it is refused (`overlaps`).
//!
//! `outline.rs` reads the symbols and name paths, `place.rs` the rules for each action, `braces.rs`
//! the bodies, `rename.rs` the rename's edit.

pub mod braces;
pub mod outline;
pub mod place;
pub(crate) mod rename;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextEdit};

use crate::engine::{self, Edit, FilePlan, Outcome, Plan, Spans, Target};
use crate::paths;
use crate::protocol::ext::SymbolsAnswer;
use crate::protocol::positions::{self as convert, Encoding};
use crate::refusal::Refusal;
use crate::result::plural;

/// Who answered, for the words of a refusal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Asked {
    /// The editor's language servers, through `multiedit/symbols` and `multiedit/rename`.
    #[default]
    Editor,
    /// A language server multiedit started itself (its program's name).
    Server(String),
}

/// The answers for one plan, asked before it is checked.
#[derive(Debug, Default)]
pub struct Answers {
    pub(crate) symbols: Vec<FileSymbols>,
    pub(crate) rename: Option<Renaming>,
    /// How long each question took, for the log.
    pub(crate) asked_ms: Vec<(String, u128)>,
    pub(crate) asked: Asked,
}

#[derive(Debug)]
pub(crate) struct FileSymbols {
    /// The plan file's document key.
    pub(crate) key: String,
    pub(crate) answer: SymbolsAnswer,
}

#[derive(Debug)]
pub(crate) struct Renaming {
    /// The plan's rename file.
    pub(crate) file_path: String,
    pub(crate) new_name: String,
    /// The name before, from the server's prepare rename, else the symbol the plan named.
    pub(crate) old_name: Option<String>,
    /// The rename's edits per document URI, and the versions of the documents the answer's texts had.
    pub(crate) edits: Vec<(String, Vec<TextEdit>)>,
    pub(crate) versions: BTreeMap<String, i32>,
}

impl Answers {
    pub(crate) fn new(asked: Asked) -> Answers {
        Answers {
            asked,
            ..Answers::default()
        }
    }

    pub(crate) fn symbols_of(&self, key: &str) -> Option<&SymbolsAnswer> {
        self.symbols
            .iter()
            .find(|s| s.key == key)
            .map(|s| &s.answer)
    }

    /// The refusal for a document that changed between the answer and the check.
    pub(crate) fn changed(&self, file_path: &str) -> Refusal {
        let message = match &self.asked {
            Asked::Editor => format!("{file_path} kept changing in the editor while its language server was asked about it. Nothing was changed; send the plan again."),
            Asked::Server(name) => format!("{file_path} changed on disk while {name} was asked about it. Nothing was changed; send the plan again."),
        };
        Refusal::of(engine::Kind::NotApplied, message)
    }

    /// The refusal for an answer whose positions do not fit the text it was computed on.
    pub(crate) fn misfit(&self, file_path: &str, why: &str) -> Refusal {
        let message = match &self.asked {
            Asked::Editor => format!("The editor's answer for {file_path} does not fit the text multiedit holds ({why}). Nothing was changed; send the plan again."),
            Asked::Server(name) => format!("The answer of {name} for {file_path} does not fit the file's text ({why}). Nothing was changed; send the plan again."),
        };
        Refusal::of(engine::Kind::NotApplied, message)
    }
}

/// The position of 1-based `line` and `column` (in characters) of `rope`, the text of `file_path`,
/// and the name written there (for the words of a refusal, when the server gives none).
pub(crate) fn position_in(
    rope: &Rope,
    file_path: &str,
    line: usize,
    column: usize,
    enc: Encoding,
) -> Result<(Position, Option<String>), Refusal> {
    let lines = rope.len_lines()
        - usize::from(rope.len_chars() > 0 && rope.char(rope.len_chars() - 1) == '\n');
    let bad = |why: String| {
        Refusal::input(format!(
            "`rename.line` and `rename.column` must name a place in {file_path}: {why}"
        ))
    };
    if line > lines {
        return Err(bad(format!("it has {lines} lines, and line is {line}")));
    }
    let text = rope.line(line - 1).to_string();
    let content = text.trim_end_matches(['\n', '\r']);
    let chars = content.chars().count();
    if column > chars + 1 {
        return Err(bad(format!(
            "line {line} has {chars} characters, and column is {column}"
        )));
    }
    let at = content
        .char_indices()
        .nth(column - 1)
        .map_or(content.len(), |(i, _)| i);
    let name = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let start = content[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| name(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = content[at..]
        .char_indices()
        .find(|(_, c)| !name(*c))
        .map_or(content.len(), |(i, _)| at + i);
    let word = (start < end).then(|| content[start..end].to_string());
    Ok((
        convert::byte_to_position(rope, rope.line_to_byte(line - 1) + at, enc),
        word,
    ))
}

/// The files a plan's rename reaches, added to it before they are read.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    /// Per rename file: the index of its plan file, and its edits.
    pub(crate) files: Vec<(usize, Vec<TextEdit>)>,
}

/// The files of a rename that lie outside what may be edited, for the caller's refusal.
#[derive(Debug)]
pub(crate) struct Outside {
    pub(crate) new_name: String,
    pub(crate) paths: Vec<String>,
}

/// The identity of a path, as a plan's two spellings of one file are judged.
fn identity(path: &Path) -> String {
    std::fs::canonicalize(path)
        .map(|p| convert::path_key(&p))
        .unwrap_or_else(|_| convert::path_key(path))
}

/// Adds to the plan a file for each document the rename edits that the plan does not name, after
/// checking with `inside` that every one of them may be edited (`Err` naming those outside).
pub(crate) fn expand(
    plan: &mut Plan,
    answers: &Answers,
    inside: impl Fn(&Path) -> bool,
) -> Result<Result<Expansion, Outside>, Refusal> {
    let mut expansion = Expansion::default();
    let Some(r) = &answers.rename else {
        return Ok(Ok(expansion));
    };
    let mut outside = Vec::new();
    let mut located: Vec<(PathBuf, &Vec<TextEdit>)> = Vec::new();
    for (uri, edits) in &r.edits {
        let path = paths::to_path(uri)?;
        if inside(&path) {
            located.push((path, edits));
        } else {
            outside.push(path.display().to_string());
        }
    }
    if !outside.is_empty() {
        return Ok(Err(Outside {
            new_name: r.new_name.clone(),
            paths: outside,
        }));
    }
    // Each file's identity is taken once (a rename over thousands of files took it per pair of files).
    let mut known: HashMap<String, usize> = HashMap::new();
    for (i, f) in plan.files.iter().enumerate() {
        if let Ok(p) = paths::to_path(&f.file_path) {
            known.entry(identity(&p)).or_insert(i);
        }
    }
    for (path, edits) in located {
        let index = *known.entry(identity(&path)).or_insert_with(|| {
            plan.files
                .push(FilePlan::edit(path.display().to_string(), Vec::new()));
            plan.files.len() - 1
        });
        expansion.files.push((index, edits.clone()));
    }
    Ok(Ok(expansion))
}

/// What resolving did to the plan: files left out, files whose first edit is the rename's, and the
/// rename's count.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// Per plan file (as expanded): whether it stays (a file the rename reaches without changing it
    /// does not).
    pub(crate) keep: Vec<bool>,
    /// Per plan file kept: the rename's edit comes first in it.
    pub(crate) prepended: Vec<bool>,
    pub(crate) count: Option<rename::Count>,
}

/// Turns every symbol edit and the rename into exact spans of the texts the plan is checked on
/// (`texts[i]` and `versions[i]` for `plan.files[i]`, as the caller read them; a version is the one
/// the answers were computed on, or another when the text moved on since).
pub(crate) fn resolve(
    plan: &mut Plan,
    answers: &Answers,
    expansion: &Expansion,
    texts: &[Option<&str>],
    versions: &[Option<i32>],
    enc: Encoding,
) -> Result<Resolved, Refusal> {
    let n = plan.files.len();
    let mut resolved = Resolved {
        keep: vec![true; n],
        prepended: vec![false; n],
        count: None,
    };
    for (i, f) in plan.files.iter_mut().enumerate() {
        symbol_spans(f, answers, texts[i], versions[i], enc)?;
    }
    let Some(r) = &answers.rename else {
        return Ok(resolved);
    };
    let old_name = r.old_name.clone().unwrap_or_else(|| {
        expansion
            .files
            .iter()
            .find_map(|(i, edits)| rename::old_name(texts[*i]?, edits, enc))
            .unwrap_or_else(|| "the symbol".into())
    });
    if old_name == r.new_name {
        return Err(
            rename::unchanged(&old_name, &r.new_name, "the new name is the name it has")
                .in_file(&r.file_path),
        );
    }
    let mut per_file = Vec::new();
    for (i, edits) in &expansion.files {
        let f = &mut plan.files[*i];
        let spans = rename_spans(f, edits, texts[*i], r, &old_name, answers, enc)?;
        per_file.push((f.file_path.clone(), spans));
        if spans > 0 {
            resolved.prepended[*i] = true;
        }
    }
    let count = rename::count(&old_name, &r.new_name, &per_file);
    if count.files.is_empty() {
        let why = if r.edits.iter().all(|(_, e)| e.is_empty()) {
            "the language server's rename edits no file"
        } else {
            "every place it edits already reads so"
        };
        return Err(rename::unchanged(&old_name, &r.new_name, why).in_file(&r.file_path));
    }
    for (i, f) in plan.files.iter().enumerate() {
        resolved.keep[i] = !f.edits.is_empty();
    }
    resolved.count = Some(count);
    plan.rename = None;
    Ok(resolved)
}

/// Each symbol edit of `f` made the spans of `text` its symbol's rules give (`place`), on the outline
/// the answers hold for the file, computed on that text (`version`).
fn symbol_spans(
    f: &mut FilePlan,
    answers: &Answers,
    text: Option<&str>,
    version: Option<i32>,
    enc: Encoding,
) -> Result<(), Refusal> {
    if !f
        .edits
        .iter()
        .any(|e| matches!(e.target.as_deref(), Some(Target::Symbol { .. })))
    {
        return Ok(());
    }
    let fp = f.file_path.clone();
    let key = convert::path_key(&paths::to_path(&fp)?);
    let answer = answers
        .symbols_of(&key)
        .ok_or_else(|| answers.changed(&fp))?;
    let text = text.ok_or_else(|| Refusal::file_not_found(&fp))?;
    if version != Some(answer.version) {
        return Err(answers.changed(&fp).in_file(&fp));
    }
    let rope = Rope::from_str(text);
    let symbols = outline::read(answer.symbols.as_deref().unwrap_or_default(), &rope, enc)
        .map_err(|why| answers.misfit(&fp, &why).in_file(&fp))?;
    let extension = Path::new(&fp)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_string();
    for (j, edit) in f.edits.iter_mut().enumerate() {
        let Some(Target::Symbol { path, action }) = edit.target.as_deref() else {
            continue;
        };
        let found = outline::find(&symbols, path, &fp).map_err(|r| r.at(j).in_file(&fp))?;
        let spans = place::place(text, &extension, &found, *action, &edit.new_string)
            .map_err(|r| r.at(j).in_file(&fp))?;
        edit.target = Some(Box::new(Target::Spans(spans)));
    }
    Ok(())
}

/// The rename `r`'s `edits` of `f`'s file made spans of `text`, put first among its edits (none when
/// they change nothing there); how many.
fn rename_spans(
    f: &mut FilePlan,
    edits: &[TextEdit],
    text: Option<&str>,
    r: &Renaming,
    old_name: &str,
    answers: &Answers,
    enc: Encoding,
) -> Result<usize, Refusal> {
    let fp = f.file_path.clone();
    let text = text.ok_or_else(|| Refusal::file_not_found(&fp))?;
    let spans =
        rename::spans(text, edits, enc).map_err(|why| answers.misfit(&fp, &why).in_file(&fp))?;
    let n = spans.len();
    if spans.is_empty() {
        return Ok(0);
    }
    let occurrences = plural(n, "occurrence");
    let target = Target::Spans(Spans {
        spans,
        summary: format!("Renamed {old_name} to {} ({occurrences})", r.new_name),
        what: format!("the rename of {old_name} to {}", r.new_name),
        numbered: false,
    });
    f.edits.insert(
        0,
        Edit {
            target: Some(Box::new(target)),
            ..Edit::new("", &r.new_name)
        },
    );
    Ok(n)
}

impl Resolved {
    /// Leaves the files the rename reaches without changing them (`keep`) out of `plan`, and out of
    /// `prepended`, which stays per file of the plan; the `keep` applied, for the caller's own record
    /// of each file (`None`: every file stays).
    pub(crate) fn leave_out(&mut self, plan: &mut Plan) -> Option<Vec<bool>> {
        if !self.keep.contains(&false) {
            return None;
        }
        let keep = std::mem::take(&mut self.keep);
        retain_by(&mut plan.files, &keep);
        retain_by(&mut self.prepended, &keep);
        Some(keep)
    }

    /// The plan's own numbering back on the engine's outcome: in a file whose first edit is the rename's,
    /// the others count from 0 again. `prepended` is per file of the outcome.
    pub(crate) fn renumber(&self, outcome: &mut Outcome) {
        for (file, prepended) in outcome.files.iter_mut().zip(&self.prepended) {
            if !prepended {
                continue;
            }
            for e in file.applied.iter_mut().filter(|e| e.numbered) {
                e.edit_index = e.edit_index.saturating_sub(1);
            }
            for r in &mut file.failed {
                r.edit_index = r.edit_index.and_then(|i| i.checked_sub(1));
            }
        }
    }

    /// The same for a refusal of the plan (`files`: the plan's file paths, as run).
    pub(crate) fn renumber_refusal(&self, mut r: Refusal, files: &[FilePlan]) -> Refusal {
        let Some(i) = files
            .iter()
            .position(|f| Some(f.file_path.as_str()) == r.file_path.as_deref())
        else {
            return r;
        };
        if self.prepended.get(i).copied().unwrap_or(false) {
            r.edit_index = r.edit_index.and_then(|k| k.checked_sub(1));
        }
        r
    }
}

/// Keeps the items whose `keep` is true.
pub(crate) fn retain_by<T>(items: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}
