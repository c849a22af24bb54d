//! Edits addressed by symbol, and renames, through the editor's own language servers.
//!
//! A plan's symbol edits and its rename are resolved before the plan is checked, by asking the editor
//! (`multiedit/symbols`, `multiedit/rename`: `ext.rs`), and each answer carries the versions of the
//! texts it was computed on. `gather` asks and waits until this server holds those versions; `prepare`
//! then runs in the same tick, on exactly those texts: `expand` adds the files the rename reaches, and
//! `resolve` turns each symbol edit and the rename's edits into exact spans of those texts, which the
//! engine applies like any other edit (mapped through the earlier edits of the file, refused where
//! they overlap one). So ordering, atomicity, the review, the one undo, the diagnostics and the save
//! rule are those of every plan.
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
use std::time::Duration;

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextEdit};
use tower_lsp_server::Client;

use super::config::Config;
use super::convert::{self, Encoding};
use super::ext::{
    RenameAnswer, RenameParams, RenameRequest, SymbolsAnswer, SymbolsParams, SymbolsRequest,
};
use super::session::Session;
use crate::engine::{self, Edit, FilePlan, Kind, Outcome, Plan, Refusal, RenameAt, Spans, Target};
use crate::result::{plural, SymbolsResult};
use crate::{disk, paths};

/// How long the editor may take for symbols or a rename: a language server that is still starting
/// (indexing a project) can take seconds.
pub(crate) const ANSWER: Duration = Duration::from_secs(15);
/// How long, at most, for the documents an answer was computed on to reach this server (the editor
/// may open one to answer, and its didOpen travels on its own).
const SETTLE: Duration = Duration::from_secs(2);

/// The editor's answers for one plan, asked before it is checked.
#[derive(Debug, Default)]
pub struct Answers {
    symbols: Vec<FileSymbols>,
    rename: Option<Renaming>,
    /// How long the editor took, for the log.
    pub(crate) asked_ms: Vec<(String, u128)>,
}

#[derive(Debug)]
struct FileSymbols {
    /// The plan file's document key.
    key: String,
    answer: SymbolsAnswer,
}

#[derive(Debug)]
struct Renaming {
    /// The plan's rename file.
    file_path: String,
    new_name: String,
    /// The name before, from the editor's prepare rename, else the symbol the plan named.
    old_name: Option<String>,
    /// The rename's edits per document URI, and the versions of the documents the editor held.
    edits: Vec<(String, Vec<TextEdit>)>,
    versions: BTreeMap<String, i32>,
}

impl Answers {
    fn symbols_of(&self, key: &str) -> Option<&SymbolsAnswer> {
        self.symbols
            .iter()
            .find(|s| s.key == key)
            .map(|s| &s.answer)
    }

    /// Whether this server holds every document at the version the answers were computed on (and
    /// holds none of those the editor's rename read from disk).
    pub(crate) fn held(&self, session: &Session) -> bool {
        let at = |key: &str, version: Option<i32>| {
            session.documents.find(key).map(|d| d.version) == version
        };
        self.symbols
            .iter()
            .all(|s| at(&s.key, Some(s.answer.version)))
            && self.rename.iter().all(|r| {
                r.edits
                    .iter()
                    .all(|(uri, _)| at(&convert::uri_key(uri), r.versions.get(uri).copied()))
            })
    }

    /// Waits, at most `SETTLE`, for the documents to reach this server at the answers' versions.
    async fn settle(&self, session: &Session) {
        let mut changes = session.documents.watch();
        let wait = async {
            while !self.held(session) {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(SETTLE, wait).await;
    }
}

/// The editor's name, for refusals.
fn editor(config: &Config) -> &str {
    config.client_name.as_deref().unwrap_or("the editor")
}

/// The refusal where the editor cannot ask its language servers for what the plan needs.
fn unsupported(config: &Config, what: &str, capability: &str) -> Refusal {
    Refusal::new(
        Kind::NeedsEditor,
        format!(
            "{what} is resolved by the editor's language servers, and {} does not offer them to multiedit (it does not \
             announce the client capability experimental.multiedit.{capability}). Nothing was changed. Use VS Code with the \
             MultiEdit extension, or Neovim with multiedit's symbols handler (editors/nvim), or address the text with \
             old_string.",
            editor(config)
        ),
    )
}

/// A plan file's document key, URI and path, confined to the workspace.
fn locate(
    session: &Session,
    config: &Config,
    file_path: &str,
) -> Result<(String, String, PathBuf), Refusal> {
    let path = paths::to_path(file_path)?;
    let key = convert::path_key(&path);
    let open = session.documents.find(&key);
    config.workspace.check(file_path, &path, open.is_some())?;
    let uri = match open {
        Some(doc) => doc.uri,
        None => convert::file_uri(&path, file_path)?.as_str().to_string(),
    };
    Ok((key, uri, path))
}

/// Asks the editor and waits for its answers to everything the plan of `arguments` needs from its
/// language servers (nothing for a plan without symbols or a rename, or one that does not parse:
/// `prepare` refuses that). The documents are then held at the answers' versions, unless the user
/// typed meanwhile (`Answers::held`).
pub(crate) async fn gather(
    session: &Session,
    client: &Client,
    config: &Config,
    plan: &Plan,
) -> Result<Answers, Refusal> {
    let mut answers = Answers::default();
    for f in &plan.files {
        let Some(first) = f
            .edits
            .iter()
            .position(|e| matches!(e.target.as_deref(), Some(Target::Symbol { .. })))
        else {
            continue;
        };
        let fail = |r: Refusal| r.at(first).in_file(&f.file_path);
        if !config.symbols_support {
            return Err(fail(unsupported(config, "A symbol edit", "symbols")));
        }
        ask_symbols(&mut answers, session, client, config, &f.file_path)
            .await
            .map_err(fail)?;
    }
    if let Some(r) = &plan.rename {
        let fail = |e: Refusal| e.in_file(&r.file_path);
        if !config.rename_support {
            return Err(fail(unsupported(config, "A rename", "rename")));
        }
        let (key, uri, path) = locate(session, config, &r.file_path).map_err(fail)?;
        let (position, old_name) = match &r.at {
            RenameAt::Symbol(name) => {
                if !config.symbols_support {
                    return Err(fail(unsupported(config, "A rename by symbol", "symbols")));
                }
                ask_symbols(&mut answers, session, client, config, &r.file_path)
                    .await
                    .map_err(fail)?;
                answers.settle(session).await;
                let answer = answers.symbols_of(&key).expect("asked above");
                let doc = session
                    .documents
                    .find(&key)
                    .filter(|d| d.version == answer.version)
                    .ok_or_else(|| fail(changed(&r.file_path)))?;
                let read = outline::read(
                    answer.symbols.as_deref().unwrap_or_default(),
                    &doc.rope,
                    config.encoding,
                )
                .map_err(|why| fail(misfit(&r.file_path, &why)))?;
                let found = outline::find(&read, name, &r.file_path).map_err(fail)?;
                let (a, b) = found.symbol.selection;
                (
                    convert::byte_to_position(&doc.rope, a, config.encoding),
                    Some(doc.rope.byte_slice(a..b).to_string()),
                )
            }
            RenameAt::Position { line, column } => {
                let (position, word) = position_of(
                    session,
                    &key,
                    &path,
                    &r.file_path,
                    *line,
                    *column,
                    config.encoding,
                )
                .map_err(fail)?;
                (position, word)
            }
        };
        let started = std::time::Instant::now();
        let params = RenameParams {
            uri: uri.clone(),
            position,
            new_name: r.new_name.clone(),
        };
        let answer = ask::<RenameRequest>(client, params, "multiedit/rename", &r.file_path)
            .await
            .map_err(fail)?;
        answers.asked_ms.push((
            format!("rename in {}", r.file_path),
            started.elapsed().as_millis(),
        ));
        let RenameAnswer {
            edit,
            versions,
            placeholder,
            refused,
            no_provider,
        } = answer;
        let what = format!(
            "{} to {}",
            placeholder
                .as_deref()
                .or(old_name.as_deref())
                .unwrap_or("the symbol"),
            r.new_name
        );
        if no_provider {
            return Err(fail(no_server(config, "renames in", &r.file_path)));
        }
        if let Some(words) = refused {
            return Err(fail(Refusal::new(
                Kind::RenameRefused,
                format!("The language server refused the rename of {what} (it said: {words}). Nothing was changed."),
            )));
        }
        let edits = match &edit {
            Some(e) => rename::text_edits(e, &format!("The rename of {what}"))?,
            None => Vec::new(),
        };
        rename::within_caps(&edits, &format!("The rename of {what}")).map_err(fail)?;
        answers.rename = Some(Renaming {
            file_path: r.file_path.clone(),
            new_name: r.new_name.clone(),
            old_name: placeholder.or(old_name),
            edits,
            versions,
        });
    }
    answers.settle(session).await;
    Ok(answers)
}

/// A file's outline from the editor's language servers (`multiedit.symbols`), read on the text the
/// server holds at the version the editor computed it on (asked again, at most three times, while the
/// user's typing moves it on).
pub(crate) async fn outline_of(
    session: &Session,
    client: &Client,
    config: &Config,
    file_path: &str,
) -> Result<SymbolsResult, Refusal> {
    if !config.symbols_support {
        return Err(unsupported(config, "A file's outline", "symbols").in_file(file_path));
    }
    for _ in 0..3 {
        let mut answers = Answers::default();
        ask_symbols(&mut answers, session, client, config, file_path)
            .await
            .map_err(|r| r.in_file(file_path))?;
        answers.settle(session).await;
        let asked = &answers.symbols[0];
        let Some(doc) = session
            .documents
            .find(&asked.key)
            .filter(|d| d.version == asked.answer.version)
        else {
            continue;
        };
        let read = outline::read(
            asked.answer.symbols.as_deref().unwrap_or_default(),
            &doc.rope,
            config.encoding,
        )
        .map_err(|why| misfit(file_path, &why))?;
        return Ok(outline::result(file_path, &read));
    }
    Err(changed(file_path).in_file(file_path))
}

/// Asks the editor for a file's symbols, once per file; refused when no language server gives them.
async fn ask_symbols(
    answers: &mut Answers,
    session: &Session,
    client: &Client,
    config: &Config,
    file_path: &str,
) -> Result<(), Refusal> {
    let (key, uri, _) = locate(session, config, file_path)?;
    if answers.symbols_of(&key).is_some() {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let answer = ask::<SymbolsRequest>(
        client,
        SymbolsParams { uri },
        "multiedit/symbols",
        file_path,
    )
    .await?;
    answers.asked_ms.push((
        format!("symbols of {file_path}"),
        started.elapsed().as_millis(),
    ));
    if answer.symbols.is_none() {
        return Err(no_server(config, "gives the symbols of", file_path));
    }
    answers.symbols.push(FileSymbols { key, answer });
    Ok(())
}

/// One request to the editor, bounded by `ANSWER`.
async fn ask<R: tower_lsp_server::ls_types::request::Request>(
    client: &Client,
    params: R::Params,
    method: &str,
    file_path: &str,
) -> Result<R::Result, Refusal> {
    match tokio::time::timeout(ANSWER, client.send_request::<R>(params)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(Refusal::new(Kind::NotApplied, format!("The editor could not answer {method} for {file_path} (the editor said: {}). Nothing was changed.", e.message))),
        Err(_) => Err(Refusal::new(
            Kind::NotApplied,
            format!("The editor did not answer {method} for {file_path} within {} s (its language server may still be starting). Nothing was changed; try again.", ANSWER.as_secs()),
        )),
    }
}

fn no_server(config: &Config, does: &str, file_path: &str) -> Refusal {
    Refusal::new(
        Kind::NoLanguageServer,
        format!(
            "No language server in {} {does} {file_path}: none runs for its language there (or none that can). Nothing was \
             changed. Start one for it in the editor, or address the text with old_string.",
            editor(config)
        ),
    )
}

/// The refusal for a document that changed between the editor's answer and the check.
fn changed(file_path: &str) -> Refusal {
    Refusal::new(
        Kind::NotApplied,
        format!("{file_path} kept changing in the editor while its language server was asked about it. Nothing was changed; send the plan again."),
    )
}

fn misfit(file_path: &str, why: &str) -> Refusal {
    Refusal::new(
        Kind::NotApplied,
        format!("The editor's answer for {file_path} does not fit the text multiedit holds ({why}). Nothing was changed; send the plan again."),
    )
}

/// The position of 1-based `line` and `column` (in characters) of the file as the server holds it,
/// and the name written there (for the words of a refusal, when the editor gives none).
fn position_of(
    session: &Session,
    key: &str,
    path: &Path,
    file_path: &str,
    line: usize,
    column: usize,
    enc: Encoding,
) -> Result<(Position, Option<String>), Refusal> {
    let rope = match session.documents.find(key) {
        Some(doc) => doc.rope,
        None => {
            let bytes =
                disk::read(path)?.ok_or_else(|| engine::Refusal::file_not_found(file_path))?;
            Rope::from_str(engine::decode(file_path, &bytes)?)
        }
    };
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
        convert::byte_to_position(&rope, rope.line_to_byte(line - 1) + at, enc),
        word,
    ))
}

/// The files a plan's rename reaches, added to it before they are read.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    /// Per rename file: the index of its plan file, and its edits.
    files: Vec<(usize, Vec<TextEdit>)>,
}

/// The identity of a path, as `prepare` judges two spellings of one file.
fn identity(path: &Path) -> String {
    std::fs::canonicalize(path)
        .map(|p| convert::path_key(&p))
        .unwrap_or_else(|_| convert::path_key(path))
}

/// Adds to the plan a file for each document the rename edits that the plan does not name, after
/// checking that the workspace holds every one of them (refused naming those outside).
pub(crate) fn expand(
    plan: &mut Plan,
    answers: &Answers,
    config: &Config,
    session: &Session,
) -> Result<Expansion, Refusal> {
    let mut expansion = Expansion::default();
    let Some(r) = &answers.rename else {
        return Ok(expansion);
    };
    let mut outside = Vec::new();
    let mut located = Vec::new();
    for (uri, edits) in &r.edits {
        let path = paths::to_path(uri)?;
        let open = session.documents.find(&convert::path_key(&path)).is_some();
        match config
            .workspace
            .check(&path.display().to_string(), &path, open)
        {
            Ok(()) => located.push((path, edits)),
            Err(_) => outside.push(path.display().to_string()),
        }
    }
    if !outside.is_empty() {
        return Err(Refusal::new(
            Kind::OutsideWorkspace,
            format!(
                "The rename to {} also edits {} outside the workspace folders ({}), which multiedit may not edit. Nothing was \
                 changed. Rename it in the editor, or open a workspace that holds {}.",
                r.new_name,
                outside.join(", "),
                if config.workspace.folders().is_empty() { "none is open".to_string() } else { config.workspace.listed() },
                if outside.len() == 1 { "it" } else { "them" }
            ),
        )
        .in_file(&outside[0]));
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
    Ok(expansion)
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
/// (`texts[i]` and `versions[i]` for `plan.files[i]`, as `prepare` read them).
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
        if !f
            .edits
            .iter()
            .any(|e| matches!(e.target.as_deref(), Some(Target::Symbol { .. })))
        {
            continue;
        }
        let fp = f.file_path.clone();
        let key = convert::path_key(&paths::to_path(&fp)?);
        let answer = answers.symbols_of(&key).ok_or_else(|| changed(&fp))?;
        let text = texts[i].ok_or_else(|| engine::Refusal::file_not_found(&fp))?;
        if versions[i] != Some(answer.version) {
            return Err(changed(&fp).in_file(&fp));
        }
        let rope = Rope::from_str(text);
        let symbols = outline::read(answer.symbols.as_deref().unwrap_or_default(), &rope, enc)
            .map_err(|why| misfit(&fp, &why).in_file(&fp))?;
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
        let fp = plan.files[*i].file_path.clone();
        let text = texts[*i].ok_or_else(|| engine::Refusal::file_not_found(&fp))?;
        let spans =
            rename::spans(text, edits, enc).map_err(|why| misfit(&fp, &why).in_file(&fp))?;
        per_file.push((fp, spans.len()));
        if spans.is_empty() {
            continue;
        }
        let occurrences = plural(spans.len(), "occurrence");
        let target = Target::Spans(Spans {
            spans,
            summary: format!("Renamed {old_name} to {} ({occurrences})", r.new_name),
            what: format!("the rename of {old_name} to {}", r.new_name),
            numbered: false,
        });
        plan.files[*i].edits.insert(
            0,
            Edit {
                target: Some(Box::new(target)),
                ..Edit::new("", &r.new_name)
            },
        );
        resolved.prepended[*i] = true;
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

impl Resolved {
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
