//! Edits addressed by symbol, and renames, through the editor's own language servers: the questions
//! (`multiedit/symbols`, `multiedit/rename`: `ext.rs`) and the wait until this server holds the
//! versions each answer was computed on. `gather` asks; `prepare` then runs in the same tick, on
//! exactly those texts, and makes the answers exact spans with `crate::symbols` (`expand`, `resolve`),
//! which multiedit's own started servers share (`crate::language_servers`). So ordering, atomicity,
//! the review, the one undo, the diagnostics and the save rule are those of every plan.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ropey::Rope;
use tower_lsp_server::ls_types::Position;
use tower_lsp_server::Client;

use super::config::Config;
use super::convert::{self, Encoding};
use super::session::Session;
use crate::engine::{self, NamePath, Plan, Rename, RenameAt, Target};
use crate::protocol::ext::{
    RenameAnswer, RenameParams, RenameRequest, SymbolsParams, SymbolsRequest,
};
use crate::refusal::{Kind, Refusal};
use crate::result::SymbolsResult;
use crate::symbols::{outline, rename, Answers, Expansion, FileSymbols, Renaming};
use crate::{disk, paths};

/// How long the editor may take for symbols or a rename: a language server that is still starting
/// (indexing a project) can take seconds.
pub(crate) const ANSWER: Duration = Duration::from_secs(15);
/// How long, at most, for the documents an answer was computed on to reach this server (the editor
/// may open one to answer, and its didOpen travels on its own).
const SETTLE: Duration = Duration::from_secs(2);

/// Whether this server holds every document at the version the answers were computed on (and holds
/// none of those the editor's rename read from disk).
pub(crate) fn held(answers: &Answers, session: &Session) -> bool {
    let at =
        |key: &str, version: Option<i32>| session.documents.find(key).map(|d| d.version) == version;
    answers
        .symbols
        .iter()
        .all(|s| at(&s.key, Some(s.answer.version)))
        && answers.rename.iter().all(|r| {
            r.edits
                .iter()
                .all(|(uri, _)| at(&convert::uri_key(uri), r.versions.get(uri).copied()))
        })
}

/// Waits, at most `SETTLE`, for the documents to reach this server at the answers' versions.
async fn settle(answers: &Answers, session: &Session) {
    let mut changes = session.documents.watch();
    let wait = async {
        while !held(answers, session) {
            if changes.changed().await.is_err() {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(SETTLE, wait).await;
}

/// The editor's name, for refusals.
fn editor(config: &Config) -> &str {
    config.client_name.as_deref().unwrap_or("the editor")
}

/// The refusal where the editor cannot ask its language servers for what the plan needs.
fn unsupported(config: &Config, what: &str, capability: &str) -> Refusal {
    Refusal::of(
        engine::Kind::NeedsEditor,
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

/// Asks the editor and waits for its answers to everything `plan` needs from its language servers
/// (nothing for a plan without symbols or a rename). The documents are then held at the answers' versions, unless the user
/// typed meanwhile (`held`).
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
        gather_rename(&mut answers, session, client, config, r).await?;
    }
    settle(&answers, session).await;
    Ok(answers)
}

/// Asks the editor for the plan's rename `r` at the place it names (`rename_at`), and adds its edit
/// to `answers`.
async fn gather_rename(
    answers: &mut Answers,
    session: &Session,
    client: &Client,
    config: &Config,
    r: &Rename,
) -> Result<(), Refusal> {
    let fail = |e: Refusal| e.in_file(&r.file_path);
    if !config.rename_support {
        return Err(fail(unsupported(config, "A rename", "rename")));
    }
    let (key, uri, path) = locate(session, config, &r.file_path).map_err(fail)?;
    let (position, old_name) = match &r.at {
        RenameAt::Symbol(name) => {
            rename_at_symbol(answers, session, client, config, r, name, &key).await?
        }
        RenameAt::Position { line, column } => position_of(
            session,
            &key,
            &path,
            &r.file_path,
            *line,
            *column,
            config.encoding,
        )
        .map_err(fail)?,
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
    answers.rename = Some(renaming(config, r, answer, old_name)?);
    Ok(())
}

/// Where a rename by symbol asks: the symbol `name` found in the outline the editor gives of `r`'s
/// file (its document under `key`), on the text this server holds at the version that outline was
/// computed on; and the name written there.
async fn rename_at_symbol(
    answers: &mut Answers,
    session: &Session,
    client: &Client,
    config: &Config,
    r: &Rename,
    name: &NamePath,
    key: &str,
) -> Result<(Position, Option<String>), Refusal> {
    let fail = |e: Refusal| e.in_file(&r.file_path);
    if !config.symbols_support {
        return Err(fail(unsupported(config, "A rename by symbol", "symbols")));
    }
    ask_symbols(answers, session, client, config, &r.file_path)
        .await
        .map_err(fail)?;
    settle(answers, session).await;
    let answer = answers.symbols_of(key).expect("asked above");
    let doc = session
        .documents
        .find(key)
        .filter(|d| d.version == answer.version)
        .ok_or_else(|| fail(answers.changed(&r.file_path)))?;
    let read = outline::read(
        answer.symbols.as_deref().unwrap_or_default(),
        &doc.rope,
        config.encoding,
    )
    .map_err(|why| fail(answers.misfit(&r.file_path, &why)))?;
    let found = outline::find(&read, name, &r.file_path).map_err(fail)?;
    let (a, b) = found.symbol.selection;
    Ok((
        convert::byte_to_position(&doc.rope, a, config.encoding),
        Some(doc.rope.byte_slice(a..b).to_string()),
    ))
}

/// The rename `r` as the editor answered it (`old_name`: the name where it asked, if known), or the
/// refusal of a rename no language server offers, one it refused, or one too large.
fn renaming(
    config: &Config,
    r: &Rename,
    answer: RenameAnswer,
    old_name: Option<String>,
) -> Result<Renaming, Refusal> {
    let fail = |e: Refusal| e.in_file(&r.file_path);
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
    Ok(Renaming {
        file_path: r.file_path.clone(),
        new_name: r.new_name.clone(),
        old_name: placeholder.or(old_name),
        edits,
        versions,
    })
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
        settle(&answers, session).await;
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
        .map_err(|why| answers.misfit(file_path, &why))?;
        return Ok(outline::result(
            file_path,
            &read,
            "the editor's language servers give them",
        ));
    }
    Err(Answers::default().changed(file_path).in_file(file_path))
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
        Ok(Err(e)) => Err(Refusal::of(engine::Kind::NotApplied, format!("The editor could not answer {method} for {file_path} (the editor said: {}). Nothing was changed.", e.message))),
        Err(_) => Err(Refusal::of(
            engine::Kind::NotApplied,
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
            let bytes = disk::read(path)?.ok_or_else(|| Refusal::file_not_found(file_path))?;
            Rope::from_str(engine::decode(file_path, &bytes)?)
        }
    };
    crate::symbols::position_in(&rope, file_path, line, column, enc)
}

/// Adds to the plan a file for each document the rename edits that the plan does not name, after
/// checking that the workspace holds every one of them (refused naming those outside).
pub(crate) fn expand(
    plan: &mut Plan,
    answers: &Answers,
    config: &Config,
    session: &Session,
) -> Result<Expansion, Refusal> {
    let inside = |path: &Path| {
        let open = session.documents.find(&convert::path_key(path)).is_some();
        config
            .workspace
            .check(&path.display().to_string(), path, open)
            .is_ok()
    };
    crate::symbols::expand(plan, answers, inside)?.map_err(|outside| {
        Refusal::new(
            Kind::OutsideWorkspace,
            format!(
                "The rename to {} also edits {} outside the workspace folders ({}), which multiedit may not edit. Nothing was \
                 changed. Rename it in the editor, or open a workspace that holds {}.",
                outside.new_name,
                outside.paths.join(", "),
                if config.workspace.folders().is_empty() { "none is open".to_string() } else { config.workspace.listed() },
                if outside.paths.len() == 1 { "it" } else { "them" }
            ),
        )
        .in_file(&outside.paths[0])
    })
}
