//! A plan's questions to the language servers multiedit starts: which server a file has (`route`),
//! the symbols of each file a symbol edit names and the rename's edit (`gather`), and a file's outline
//! (`outline`). The answers are the editor path's (`crate::symbols::Answers`), each with the text it
//! was computed on, which the disk write then checks is still the file's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextEdit};

use super::consent::{self, Consent};
use super::context::Context;
use super::refuse;
use super::started::{Failure, Started};
use super::table::{self, Program};
use crate::engine::{self, FilePlan, Plan, Rename, RenameAt, Target};
use crate::protocol::ext::{RenameAnswer, SymbolsAnswer};
use crate::protocol::positions::{self as convert, Encoding};
use crate::refusal::{Kind, Refusal};
use crate::result::SymbolsResult;
use crate::symbols::{outline, rename, Answers, Asked, FileSymbols, Renaming};
use crate::{disk, paths};

/// Positions are UTF-16 with every started server (the encoding multiedit announces).
pub(crate) const ENC: Encoding = Encoding::Utf16;

/// Where a file's questions go.
#[derive(Debug, Clone)]
pub(crate) enum Route {
    /// To this program, started in `root` (the allowed project), the file's language id.
    Server {
        program: Program,
        root: PathBuf,
        language: &'static str,
    },
    /// Nowhere: the project has not been allowed servers (`project`: where to allow them).
    NotAllowed { project: PathBuf, consent: Consent },
    /// Nowhere: no server for the file's type, or none found.
    NoServer(Refusal),
}

/// The project a file is suggested to be allowed for: the deepest of the front end's folders that
/// holds it, else the nearest folder above it holding `.git`, else its own folder.
fn project_of(file: &Path, folders: &[PathBuf]) -> PathBuf {
    let real = paths::real_path(file).unwrap_or_else(|_| file.to_path_buf());
    if let Some(f) = folders
        .iter()
        .filter(|f| real.starts_with(f) || file.starts_with(f))
        .max_by_key(|f| f.as_os_str().len())
    {
        return f.clone();
    }
    let parent = real.parent().unwrap_or(&real);
    parent
        .ancestors()
        .find(|a| a.join(".git").exists())
        .unwrap_or(parent)
        .to_path_buf()
}

/// Whether the user allowed servers for the project `file` lies in.
pub(crate) fn allowed(file: &str) -> bool {
    paths::to_path(file)
        .is_ok_and(|p| matches!(consent::of(p.parent().unwrap_or(&p)), Consent::Allowed(_)))
}

/// The route of `file` (as the plan names it).
pub(crate) fn route(file: &str, ctx: &Context) -> Route {
    let Ok(path) = paths::to_path(file) else {
        return Route::NoServer(refuse::none_for(file, None));
    };
    let Some((spec, language)) = table::for_file(&path) else {
        return Route::NoServer(refuse::none_for(file, None));
    };
    let folder = path.parent().unwrap_or(&path);
    match consent::of(folder) {
        Consent::Allowed(root) => match table::find(spec, &root, true) {
            Ok(program) => Route::Server {
                program,
                root,
                language,
            },
            Err(missing) => Route::NoServer(refuse::none_for(file, Some((spec, &missing)))),
        },
        other => Route::NotAllowed {
            project: project_of(&path, &ctx.folders),
            consent: other,
        },
    }
}

/// The answers, and the text each file's answer was computed on, by document key.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    pub(crate) answers: Answers,
    pub(crate) texts: HashMap<String, String>,
}

/// A file's text on disk, as the servers are told it.
fn disk_text(path: &Path, file_path: &str) -> Result<String, Refusal> {
    let bytes = disk::read(path)
        .map_err(|r| r.in_file(file_path))?
        .ok_or_else(|| Refusal::file_not_found(file_path))?;
    Ok(engine::decode(file_path, &bytes)?.to_string())
}

/// The server `file` goes to, or its refusal (`what`: the subject of a `needs_editor` sentence).
fn server_for(
    file: &str,
    what: &str,
    ctx: &Context,
) -> Result<(Program, PathBuf, &'static str), Refusal> {
    match route(file, ctx) {
        Route::Server {
            program,
            root,
            language,
        } => Ok((program, root, language)),
        Route::NotAllowed { project, consent } => {
            Err(refuse::not_allowed(what, &project, &consent).in_file(file))
        }
        Route::NoServer(r) => Err(r.in_file(file)),
    }
}

/// One file's symbols from its server, on its text on disk: the answer, the text, the server.
async fn symbols_of(
    file: &str,
    what: &str,
    ctx: &Context,
) -> Result<(SymbolsAnswer, String, Arc<Started>), Refusal> {
    let (program, root, language) = server_for(file, what, ctx)?;
    let path = paths::to_path(file)?;
    let uri = convert::file_uri(&path, file)?.as_str().to_string();
    let text = disk_text(&path, file)?;
    let asked = ctx
        .pool
        .ask(&program, &root, |s| {
            let (uri, text) = (uri.clone(), text.clone());
            async move {
                let version = s.sync(&uri, language, &text).await?;
                let symbols = s.symbols(&uri).await?;
                Ok::<_, Failure>(SymbolsAnswer { version, symbols })
            }
        })
        .await;
    let (answer, server) =
        asked.map_err(|f| refuse::failed(&program, &root, file, &f).in_file(file))?;
    if answer.symbols.is_none() {
        return Err(Refusal::new(
            Kind::NoLanguageServer,
            format!(
                "No language server gives the symbols of {file}: {} does not offer them. Nothing was changed. Address the \
                 text with old_string.",
                program.spec.program
            ),
        )
        .in_file(file));
    }
    Ok((answer, text, server))
}

/// Asks the servers everything the plan needs (nothing for a plan without symbol edits or a rename).
pub(crate) async fn gather(plan: &Plan, ctx: &Context) -> Result<Gathered, Refusal> {
    let mut g = Gathered::default();
    for f in &plan.files {
        gather_symbols(f, ctx, &mut g).await?;
    }
    if let Some(r) = &plan.rename {
        gather_rename(r, ctx, &mut g).await?;
    }
    Ok(g)
}

/// The symbols of `f`'s file, when one of its edits names a symbol and they were not asked yet.
async fn gather_symbols(f: &FilePlan, ctx: &Context, g: &mut Gathered) -> Result<(), Refusal> {
    let Some((first, path)) =
        f.edits
            .iter()
            .enumerate()
            .find_map(|(i, e)| match e.target.as_deref() {
                Some(Target::Symbol { path, .. }) => Some((i, path.text.clone())),
                _ => None,
            })
    else {
        return Ok(());
    };
    let what = format!("Edit {} names the symbol {path}, which", first + 1);
    let key = convert::path_key(&paths::to_path(&f.file_path)?);
    if g.answers.symbols_of(&key).is_some() {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let (answer, text, server) = symbols_of(&f.file_path, &what, ctx).await.map_err(|r| {
        if r.edit_index.is_none() && r.kind == engine::Kind::NeedsEditor {
            r.at(first)
        } else {
            r
        }
    })?;
    g.answers.asked = Asked::Server(server.program.spec.program.to_string());
    g.answers.asked_ms.push((
        format!("symbols of {}", f.file_path),
        started.elapsed().as_millis(),
    ));
    g.answers.symbols.push(FileSymbols {
        key: key.clone(),
        answer,
    });
    g.texts.insert(key, text);
    Ok(())
}

/// The rename's edit from the server of its file, asked at the place the plan names (`rename_at`),
/// with the text each file it edits has for it.
async fn gather_rename(r: &Rename, ctx: &Context, g: &mut Gathered) -> Result<(), Refusal> {
    let fail = |e: Refusal| e.in_file(&r.file_path);
    let what = format!("The rename to {}", r.new_name);
    let path = paths::to_path(&r.file_path)?;
    let key = convert::path_key(&path);
    let (program, root, language) = server_for(&r.file_path, &what, ctx)?;
    let (position, old_name, text) = rename_at(r, &path, &what, ctx, &g.answers).await?;
    let uri = convert::file_uri(&path, &r.file_path)?.as_str().to_string();
    let started = std::time::Instant::now();
    let asked = ctx
        .pool
        .ask(&program, &root, |s| {
            let (uri, text, new_name) = (uri.clone(), text.clone(), r.new_name.clone());
            async move {
                s.sync(&uri, language, &text).await?;
                s.rename(&uri, position, &new_name).await
            }
        })
        .await;
    let (answer, server) =
        asked.map_err(|f| fail(refuse::failed(&program, &root, &r.file_path, &f)))?;
    g.answers.asked = Asked::Server(program.spec.program.to_string());
    g.answers.asked_ms.push((
        format!("rename in {}", r.file_path),
        started.elapsed().as_millis(),
    ));
    g.texts.insert(key, text);
    let shown = format!(
        "{} to {}",
        answer
            .placeholder
            .as_deref()
            .or(old_name.as_deref())
            .unwrap_or("the symbol"),
        r.new_name
    );
    rename_refused(&answer, r, &program, &shown).map_err(fail)?;
    let edits = match &answer.edit {
        Some(e) => rename::text_edits(e, &format!("The rename of {shown}"))?,
        None => Vec::new(),
    };
    rename::within_caps(&edits, &format!("The rename of {shown}")).map_err(fail)?;
    texts_of_edits(&edits, &server, g)?;
    g.answers.rename = Some(Renaming {
        file_path: r.file_path.clone(),
        new_name: r.new_name.clone(),
        old_name: answer.placeholder.or(old_name),
        edits,
        versions: answer.versions,
    });
    Ok(())
}

/// Where the rename asks (the symbol the plan names, found in its server's outline, else the line and
/// column it gives), the name written there, and the file's text that was read for it.
async fn rename_at(
    r: &Rename,
    path: &Path,
    what: &str,
    ctx: &Context,
    answers: &Answers,
) -> Result<(Position, Option<String>, String), Refusal> {
    let fail = |e: Refusal| e.in_file(&r.file_path);
    Ok(match &r.at {
        RenameAt::Symbol(name) => {
            let (answer, text, _) = symbols_of(&r.file_path, what, ctx).await?;
            let rope = Rope::from_str(&text);
            let read = outline::read(answer.symbols.as_deref().unwrap_or_default(), &rope, ENC)
                .map_err(|why| fail(answers.misfit(&r.file_path, &why)))?;
            let found = outline::find(&read, name, &r.file_path).map_err(fail)?;
            let (a, b) = found.symbol.selection;
            (
                convert::byte_to_position(&rope, a, ENC),
                Some(rope.byte_slice(a..b).to_string()),
                text,
            )
        }
        RenameAt::Position { line, column } => {
            let text = disk_text(path, &r.file_path)?;
            let (position, word) = crate::symbols::position_in(
                &Rope::from_str(&text),
                &r.file_path,
                *line,
                *column,
                ENC,
            )
            .map_err(fail)?;
            (position, word, text)
        }
    })
}

/// The refusal of a rename the server does not offer, or refused (`shown`: what it renames to what).
fn rename_refused(
    answer: &RenameAnswer,
    r: &Rename,
    program: &Program,
    shown: &str,
) -> Result<(), Refusal> {
    if answer.no_provider {
        return Err(Refusal::new(
            Kind::NoLanguageServer,
            format!(
                "No language server renames in {}: {} does not offer renames. Nothing was changed. Address the text with \
                 old_string.",
                r.file_path, program.spec.program
            ),
        ));
    }
    if let Some(words) = &answer.refused {
        return Err(Refusal::new(
            Kind::RenameRefused,
            format!("The language server refused the rename of {shown} (it said: {words}). Nothing was changed."),
        ));
    }
    Ok(())
}

/// The text each of the rename's `edits` counts on, for the documents not read yet: the server's copy
/// of a document it holds, else the disk's (it read that itself).
fn texts_of_edits(
    edits: &[(String, Vec<TextEdit>)],
    server: &Started,
    g: &mut Gathered,
) -> Result<(), Refusal> {
    for (uri, _) in edits {
        let key = convert::uri_key(uri);
        if g.texts.contains_key(&key) {
            continue;
        }
        let text = match server.held(uri) {
            Some(h) => h.text,
            None => {
                let p = paths::to_path(uri)?;
                disk_text(&p, &p.display().to_string())?
            }
        };
        g.texts.insert(key, text);
    }
    Ok(())
}

/// A file's outline from its server (`multiedit_symbols` where no editor holds it; `reason`: why no
/// editor was reached).
pub(crate) async fn outline(
    file: &str,
    reason: &str,
    ctx: &Context,
) -> Result<SymbolsResult, Refusal> {
    // A read: its refusals say nothing was read.
    let read = |r: Refusal| Refusal {
        message: r.message.replace("Nothing was changed", "Nothing was read"),
        ..r
    };
    if let Route::NotAllowed { project, consent } = route(file, ctx) {
        return Err(refuse::outline_not_allowed(
            file, reason, &project, &consent,
        ));
    }
    let what = format!("The outline of {file}");
    let (answer, text, server) = symbols_of(file, &what, ctx).await.map_err(read)?;
    let answers = Answers::new(Asked::Server(server.program.spec.program.to_string()));
    let symbols = outline::read(
        answer.symbols.as_deref().unwrap_or_default(),
        &Rope::from_str(&text),
        ENC,
    )
    .map_err(|why| read(answers.misfit(file, &why).in_file(file)))?;
    Ok(outline::result(
        file,
        &symbols,
        &format!("{} gives them", server.program.spec.program),
    ))
}
