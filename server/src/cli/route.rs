//! `multiedit setup --route-edits`: each agent's own file-editing tools turned off in its own
//! configuration, so that its edits go through multiedit's tools (the editor's buffers, review, one
//! undo, diagnostics); and `--undo-route-edits`, which takes back what it wrote.
//!
//! Each agent has its own switch, checked in the versions the tests install (tests/agents/install.sh):
//! Claude Code's permission deny rules (a bare tool name takes the tool out of the model's context),
//! a Gemini CLI policy file (its `tools.exclude` setting warns that it is deprecated at every start,
//! and it ignores a project's `.gemini/policies/`, so only the user's policy folder is left), and
//! OpenCode's `permission.edit` (which covers its edit, write and apply_patch tools). Codex CLI has
//! no switch for apply_patch; Cursor and VS Code have none that a file sets. For those `setup` says
//! so, and for Codex writes an instruction in AGENTS.md when asked (`--agents-md`).
//!
//! What was written is recorded (`routes.json` in multiedit's state folder, beside the journals) with
//! what the file looked like around it, so that the undo removes only what setup added, only while it
//! is as setup wrote it, and restores the file byte for byte when nothing else changed it. JSON is
//! changed by splicing, as `setup` changes it: every other byte stays.

use std::path::{Path, PathBuf};

use crate::result::sha256;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::agents::{home, Agent, Scope, SERVER_NAME};
use super::config_file::{
    eol, indent_at, insert_member, inside_project, line_diff, load, offset_in, read_resolved,
    refuse_parse, render, writable, write_atomic, Members,
};
use crate::disk::private;

/// Claude Code's built-in tools that edit text files. NotebookEdit stays: multiedit refuses notebooks.
/// Claude Code 2.1 has no MultiEdit tool and warns that a rule naming it "matches no known tool".
pub(crate) const CLAUDE_DENIED: [&str; 2] = ["Edit", "Write"];
/// Gemini CLI's tools that edit files (`replace` is its edit tool).
pub(crate) const GEMINI_DENIED: [&str; 2] = ["replace", "write_file"];

/// The Gemini CLI policy multiedit owns, whole.
pub(crate) const GEMINI_POLICY: &str = "\
# Written by `multiedit setup gemini --user --route-edits`: Gemini CLI's own file-editing tools are
# turned off, so that its edits go through the multiedit MCP server (the editor's buffers, review, one
# undo, diagnostics). `multiedit setup gemini --user --undo-route-edits` removes this file.
[[rule]]
toolName = [\"replace\", \"write_file\"]
decision = \"deny\"
priority = 900
denyMessage = \"Edit files with the multiedit tools (multiedit, multiedit_patch, multiedit_write).\"
";

/// The instruction `--agents-md` adds to AGENTS.md, between its markers.
pub(crate) const AGENTS_MD_BLOCK: &str = "\
<!-- multiedit: route edits (multiedit setup --undo-route-edits removes this block) -->
## Editing files

Edit files with the multiedit MCP tools, not with apply_patch or shell commands that write files:
`multiedit` (exact find-and-replace edits to one or more files), `multiedit_patch` (a unified diff or
an apply_patch envelope) and `multiedit_write` (a whole file: to replace one, give the sha256 that
multiedit_read showed for it). They go through the user's editor when it has the files open, so its
unsaved changes are kept, the change is one undo step, and the result lists the errors it introduced.
<!-- /multiedit -->
";

/// Where an agent's switch is, for a scope, or why there is none.
pub(crate) enum Target {
    /// A JSON file, and what to add to it.
    Json { path: PathBuf, adds: Vec<Add> },
    /// A file multiedit owns whole.
    File { path: PathBuf, text: &'static str },
    /// A block appended to a Markdown file.
    Block { path: PathBuf, text: &'static str },
    /// No switch: why, and what the user may do.
    None(String),
}

/// One thing to add to a JSON file: strings into the array at `path` (made if missing), or the string
/// member at `path` set (left alone when the user has set it otherwise).
#[derive(Clone, Debug)]
pub(crate) enum Add {
    List {
        path: &'static [&'static str],
        items: Vec<&'static str>,
    },
    Member {
        path: &'static [&'static str],
        value: &'static str,
    },
}

/// The switch of `agent` for `scope` (`agents_md`: Codex's instruction was asked for).
pub(crate) fn target(
    agent: Agent,
    scope: Scope,
    project: &Path,
    agents_md: bool,
) -> Result<Target, String> {
    Ok(match agent {
        Agent::ClaudeCode => {
            let deny = Add::List { path: &["permissions", "deny"], items: CLAUDE_DENIED.to_vec() };
            match scope {
                // The user's own file for this project (Claude Code keeps it out of git), not the
                // team's .claude/settings.json. It also approves the project's multiedit server, which
                // Claude Code otherwise asks about once: a routed agent without it could not edit.
                Scope::Project => Target::Json {
                    path: project.join(".claude/settings.local.json"),
                    adds: vec![deny, Add::List { path: &["enabledMcpjsonServers"], items: vec![SERVER_NAME] }],
                },
                Scope::User => Target::Json { path: home()?.join(".claude/settings.json"), adds: vec![deny] },
            }
        }
        Agent::Opencode => {
            let (path, _) = agent.config_path(scope, project)?;
            Target::Json { path, adds: vec![Add::Member { path: &["permission", "edit"], value: "deny" }] }
        }
        Agent::Gemini => match scope {
            Scope::User => Target::File { path: home()?.join(".gemini/policies/multiedit.toml"), text: GEMINI_POLICY },
            Scope::Project => Target::None(
                "Gemini CLI has no switch for one project that it reads without a warning (it warns at every start \
                 that tools.exclude is deprecated, and it ignores a project's .gemini/policies/). Run `multiedit \
                 setup gemini --user --route-edits` to write a policy in ~/.gemini/policies/ that turns off \
                 replace and write_file in every project."
                    .into(),
            ),
        },
        Agent::Codex if agents_md => {
            let path = match scope {
                Scope::Project => project.join("AGENTS.md"),
                Scope::User => codex_home()?.join("AGENTS.md"),
            };
            Target::Block { path, text: AGENTS_MD_BLOCK }
        }
        Agent::Codex => Target::None(
            "Codex CLI has no setting that turns off apply_patch (and it runs apply_patch given to its shell too). \
             With --agents-md, setup writes an instruction into AGENTS.md that asks the model to edit with \
             multiedit's tools; the model may still use apply_patch."
                .into(),
        ),
        Agent::Cursor => Target::None("Cursor has no setting in a file that turns off its own edit tool; its edits still go around multiedit.".into()),
        Agent::Vscode => Target::None(
            "VS Code's agent mode has no setting in a file that turns off its own edit tools; pick the tools in the \
             chat's tool picker (Configure Tools), where the MultiEdit extension's tools are offered."
                .into(),
        ),
    })
}

fn codex_home() -> Result<PathBuf, String> {
    match std::env::var_os("CODEX_HOME").map(PathBuf::from) {
        Some(d) if d.is_absolute() => Ok(d),
        _ => Ok(home()?.join(".codex")),
    }
}

/// What setup wrote into one file, as the undo reads it back.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Record {
    agent: String,
    file: PathBuf,
    /// The file did not exist before setup made it.
    created: bool,
    /// Folders setup made for it, the deepest last.
    folders: Vec<PathBuf>,
    /// SHA-256 of the file as setup left it: while it is that, `undo` gives back the bytes before.
    after_sha256: String,
    /// The splices that turn the file as setup left it back into what it was, last one first.
    undo: Vec<Splice>,
    wrote: Vec<Wrote>,
}

/// Bytes `at..at+len` of the later text were `text` before.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Splice {
    at: usize,
    len: usize,
    text: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Wrote {
    /// Strings setup added to the array at `path`; `made`: the member setup inserted to hold them (an
    /// ancestor of `path`, or `path` itself), whose whole value was setup's.
    List {
        path: Vec<String>,
        items: Vec<String>,
        made: Option<Vec<String>>,
    },
    /// The member at `path` set to `value`.
    Member {
        path: Vec<String>,
        value: String,
        made: Option<Vec<String>>,
    },
    /// The whole file.
    File { text: String },
    /// A block of the file.
    Block { text: String },
}

#[derive(Serialize, Deserialize, Default)]
struct Records {
    routes: Vec<Record>,
}

/// `routes.json` in multiedit's state folder (`$XDG_STATE_HOME/multiedit`, else
/// `~/.local/state/multiedit`), where the journals live too.
fn records_path() -> Result<PathBuf, String> {
    let xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute());
    let state = match xdg {
        Some(d) => d,
        None => home()?.join(".local/state"),
    };
    Ok(state.join("multiedit/routes.json"))
}

/// What is wrong with the record at `path` (`routes.json`) or its folder, if either cannot be
/// trusted, and how to fix it: `disk::private`'s check, the one journals get (a real folder and a
/// regular file, this user's, closed to others). The undo rewrites and removes files on the record's
/// word, so one that another user could have written is neither read nor added to. Neither there yet:
/// nothing to trust (`write_records` makes the folder private, then checks it again).
fn untrusted(path: &Path) -> Option<(String, String)> {
    let there = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let dir = path.parent().filter(|d| there(d))?;
    if let Err(why) = private::check(dir, true) {
        let fix = if mine(dir, true) {
            format!(
                "Make the folder yours alone (chmod 700 {}), check that routes.json names only files setup wrote, \
                 and run setup again.",
                dir.display()
            )
        } else {
            format!(
                "Move {} away (setup then makes its own, closed to others) and run setup again.",
                dir.display()
            )
        };
        return Some((why, fix));
    }
    if !there(path) {
        return None;
    }
    let why = private::check(path, false).err()?;
    let fix = if mine(path, false) {
        format!(
            "Make it yours alone (chmod 600 {}), check that it names only files setup wrote, and run setup again.",
            path.display()
        )
    } else {
        format!("Move {} away and run setup again.", path.display())
    };
    Some((why, fix))
}

/// Whether `path` is a folder (`folder`) or a regular file of this user's, whatever its mode: then
/// `chmod` is the fix.
#[cfg(unix)]
fn mine(path: &Path, folder: bool) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.uid() == private::uid() && if folder { m.is_dir() } else { m.is_file() })
}

#[cfg(not(unix))]
fn mine(_: &Path, _: bool) -> bool {
    false
}

/// Refuses the record at `path` when it cannot be trusted (`untrusted`), saying so, that nothing was
/// used or written, and the fix.
fn trusted_at(path: &Path) -> Result<(), String> {
    match untrusted(path) {
        None => Ok(()),
        Some((why, fix)) => Err(format!(
            "{} cannot be trusted: {why}. Another user could have written it, and --undo-route-edits rewrites and \
             removes files on its word, so setup did not use it and wrote nothing. {fix}",
            path.display()
        )),
    }
}

/// `trusted_at` of this user's record: `setup --route-edits` and `--undo-route-edits` check it before
/// writing anything.
pub(crate) fn records_trusted() -> Result<(), String> {
    trusted_at(&records_path()?)
}

/// What `doctor` says of a record that cannot be trusted, if this user's cannot.
pub(crate) fn records_problem() -> Option<String> {
    let path = records_path().ok()?;
    let (why, fix) = untrusted(&path)?;
    Some(format!(
        "{} cannot be trusted: {why}. Another user could have written it, so setup --route-edits and \
         --undo-route-edits refuse to use it. {fix}",
        path.display()
    ))
}

fn read_records() -> Result<(PathBuf, Records), String> {
    let path = records_path()?;
    trusted_at(&path)?;
    match crate::disk::read_text_capped(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(|r| (path.clone(), r))
            .map_err(|e| {
                format!(
                    "{} cannot be read back ({e}); move it away to start afresh",
                    path.display()
                )
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((path, Records::default())),
        Err(e) => Err(format!("cannot read {} ({e})", path.display())),
    }
}

/// Writes the record, in a folder only this user may enter (made so if missing, and checked again:
/// one another user made meanwhile is refused), as a file only this user may read.
fn write_records(path: &Path, records: &Records) -> Result<(), String> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(format!("{} names no file", path.display()));
    };
    private::make_folder(dir, true)?;
    // Checked before this run wrote anything (`records_trusted`); a folder that fails now was made or
    // changed by someone else since.
    if let Some((why, fix)) = untrusted(path) {
        return Err(format!(
            "{} cannot be trusted: {why}. {fix}",
            path.display()
        ));
    }
    let real = std::fs::canonicalize(dir)
        .map_err(|e| format!("cannot resolve {} ({e})", dir.display()))?
        .join(name);
    let text = serde_json::to_string_pretty(records).expect("records serialise") + "\n";
    crate::disk::atomic::write_resolved(&real, text.as_bytes(), crate::disk::atomic::Mode::Private)
        .map_err(|e| format!("cannot write {} ({e})", path.display()))
}

/// The splice that turns `after` back into `before`: what lies between their common start and end.
fn splice_back(before: &str, after: &str) -> Splice {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let mut start = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    while !before.is_char_boundary(start) {
        start -= 1;
    }
    let room = b.len().min(a.len()) - start;
    let mut end = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    while !before.is_char_boundary(b.len() - end) || !after.is_char_boundary(a.len() - end) {
        end -= 1;
    }
    Splice {
        at: start,
        len: a.len() - end - start,
        text: before[start..b.len() - end].to_string(),
    }
}

/// `text` with `splices` undone, the last one first.
fn unsplice(text: &str, splices: &[Splice]) -> Option<String> {
    let mut text = text.to_string();
    for s in splices.iter().rev() {
        let end = s.at.checked_add(s.len)?;
        if end > text.len() || !text.is_char_boundary(s.at) || !text.is_char_boundary(end) {
            return None;
        }
        text.replace_range(s.at..end, &s.text);
    }
    Some(text)
}

/// Turns the agent's edits to multiedit: writes its switch (or says there is none). `Ok` says what was
/// done; `Err` what was left and why.
pub(crate) fn route(
    agent: Agent,
    scope: Scope,
    project: &Path,
    agents_md: bool,
    dry_run: bool,
) -> Result<String, String> {
    let name = agent.name();
    let (path, adds, whole) = match target(agent, scope, project, agents_md)? {
        Target::None(why) => return Ok(format!("{name}: edits not routed: {why}\n")),
        Target::Json { path, adds } => (path, adds, None),
        Target::File { path, text } => (path, Vec::new(), Some((text, true))),
        Target::Block { path, text } => (path, Vec::new(), Some((text, false))),
    };
    let or_else = "turn the agent's own edit tools off by hand (docs/agents.md says where)";
    // A project's file must stay inside the project (`--project` targets are all the project's).
    let inside = (scope == Scope::Project).then_some(project);
    let (path, before) = load(&path, inside, or_else)?;
    let shown = path.display().to_string();
    let old = before.as_deref().unwrap_or("");
    let mut notes = String::new();
    let (after, wrote) = match whole {
        None => {
            let mut text = old.to_string();
            let mut wrote = Vec::new();
            for add in &adds {
                match add_json(&text, add).map_err(|why| format!("{shown} {why}; left unchanged. Or {or_else}"))? {
                    Added::Changed(new, w) => {
                        text = new;
                        wrote.push(w);
                    }
                    Added::Already => {}
                    Added::Left(why) => notes.push_str(&format!("  {why}; left as it is\n")),
                }
            }
            (text, wrote)
        }
        Some((text, true)) => match &before {
            None => (text.to_string(), vec![Wrote::File { text: text.to_string() }]),
            Some(t) if t == text => (t.clone(), Vec::new()),
            Some(_) => return Err(format!("{shown} exists and is not the policy multiedit writes; left unchanged. Or {or_else}")),
        },
        Some((text, false)) if old.contains(text) => (old.to_string(), Vec::new()),
        Some((text, false)) => {
            let sep = if old.is_empty() || old.ends_with("\n\n") { "" } else if old.ends_with('\n') { "\n" } else { "\n\n" };
            let crlf = old.contains("\r\n");
            (format!("{old}{}", eol(format!("{sep}{text}"), crlf)), vec![Wrote::Block { text: eol(text.to_string(), crlf) }])
        }
    };
    if before.as_deref() == Some(after.as_str()) || (before.is_none() && wrote.is_empty()) {
        // Nothing to write: all there already, or a setting of the user's stands in the way.
        if notes.is_empty() {
            return Ok(format!(
                "{name}: edits already routed through multiedit in {shown}\n"
            ));
        }
        return Ok(format!(
            "{name}: edits not routed through multiedit in {shown}:\n{notes}"
        ));
    }
    writable(&path, or_else)?;
    let verb = if before.is_some() {
        "updated"
    } else {
        "created"
    };
    if dry_run {
        return Ok(format!(
            "{name}: would have {verb} {shown} (edits routed through multiedit):\n{}{notes}",
            line_diff(old, &after)
        ));
    }
    let (records_at, mut records) = read_records()?;
    let folders = missing_folders(&path);
    write_atomic(&path, &after)
        .map_err(|e| format!("cannot write {shown} ({e}); left unchanged"))?;
    let splice = splice_back(old, &after);
    match records.routes.iter_mut().find(|r| r.file == path) {
        // Written before: what this run added joins it; the bytes can be given back only if nothing
        // else changed the file in between.
        Some(r) => {
            if before.as_deref().map(sha256).as_deref() == Some(r.after_sha256.as_str()) {
                r.undo.push(splice);
            } else {
                r.undo.clear();
                r.created = false;
                r.folders.clear();
            }
            r.after_sha256 = sha256(&after);
            r.wrote.extend(wrote);
        }
        None => records.routes.push(Record {
            agent: name.to_string(),
            file: path.clone(),
            created: before.is_none(),
            folders,
            after_sha256: sha256(&after),
            undo: if before.is_none() {
                Vec::new()
            } else {
                vec![splice]
            },
            wrote,
        }),
    }
    write_records(&records_at, &records)
        .map_err(|e| format!("{shown} was {verb}, but what it holds of setup's could not be recorded for the undo: {e}"))?;
    Ok(format!(
        "{name}: {verb} {shown} (edits routed through multiedit):\n{}{notes}",
        line_diff(old, &after)
    ))
}

/// The folders above `path` that do not exist yet, the outermost first.
fn missing_folders(path: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// Takes back what `route` wrote for `agent` in `scope`. `Ok` says what was done, with what was left
/// because the user changed it.
pub(crate) fn undo(
    agent: Agent,
    scope: Scope,
    project: &Path,
    agents_md: bool,
    dry_run: bool,
) -> Result<String, String> {
    let name = agent.name();
    let path = match target(agent, scope, project, agents_md || agent == Agent::Codex)? {
        Target::None(_) => {
            return Ok(format!(
                "{name}: nothing to undo (setup writes no switch for it here)\n"
            ))
        }
        Target::Json { path, .. } | Target::File { path, .. } | Target::Block { path, .. } => path,
    };
    // Nothing is read, written or removed through a link that leads out of the project (`load`).
    if scope == Scope::Project {
        inside_project(&path, project, "take back what setup wrote there by hand")?;
    }
    // Resolved as `load` resolved it when the record was made.
    let real = crate::paths::real_path(&path).unwrap_or(path.clone());
    let (records_at, mut records) = read_records()?;
    let Some(i) = records.routes.iter().position(|r| r.file == real) else {
        return Ok(format!(
            "{name}: nothing to undo in {}: setup did not route its edits there\n",
            real.display()
        ));
    };
    let record = records.routes[i].clone();
    let shown = real.display().to_string();
    let current = match read_resolved(&real) {
        Ok(bytes) => Some(
            String::from_utf8(bytes)
                .map_err(|_| format!("{shown} is not UTF-8 text any more; left unchanged"))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown} ({e}); left unchanged")),
    };
    let Some(current) = current else {
        if !dry_run {
            records.routes.remove(i);
            write_records(&records_at, &records)?;
        }
        return Ok(format!("{name}: {shown} is gone; nothing to undo\n"));
    };
    // As setup left it: the bytes from before, exactly.
    let unchanged = sha256(&current) == record.after_sha256;
    let (after, left) = if unchanged && record.created {
        (None, Vec::new())
    } else if let Some(before) = unchanged
        .then(|| unsplice(&current, &record.undo))
        .flatten()
        .filter(|_| !record.undo.is_empty())
    {
        (Some(before), Vec::new())
    } else {
        let mut text = current.clone();
        let mut left = Vec::new();
        for w in &record.wrote {
            let (new, why) = take_back(&text, w);
            text = new;
            left.extend(why);
        }
        // A file setup made that holds nothing else now is removed, as it was not there.
        let empty = record.created
            && serde_json::from_str::<Value>(&text)
                .is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty()));
        if empty || (record.created && text.trim().is_empty()) {
            (None, left)
        } else {
            (Some(text), left)
        }
    };
    let mut said = String::new();
    let verb = if dry_run { "would have " } else { "" };
    match &after {
        Some(text) if *text == current => {
            said.push_str(&format!("{name}: {shown} left as it is\n"))
        }
        Some(text) => {
            writable(&real, "remove the rules by hand")?;
            if !dry_run {
                write_atomic(&real, text)
                    .map_err(|e| format!("cannot write {shown} ({e}); left unchanged"))?;
            }
            let how = if unchanged {
                " (as it was before setup, byte for byte)"
            } else {
                ""
            };
            said.push_str(&format!(
                "{name}: {verb}restored {shown}{how}:\n{}",
                line_diff(&current, text)
            ));
        }
        None => {
            if !dry_run {
                crate::disk::atomic::remove_resolved(&real)
                    .map_err(|e| format!("cannot remove {shown} ({e}); left unchanged"))?;
                // The folders setup made, if nothing else is in them now. By path: a folder swapped
                // for a link since is not removed (rmdir never follows one), and one elsewhere that
                // a swapped folder above leads to is removed only if empty.
                for d in record.folders.iter().rev() {
                    let _ = std::fs::remove_dir(d);
                }
            }
            said.push_str(&format!(
                "{name}: {verb}removed {shown}, which setup had made\n"
            ));
        }
    }
    for why in &left {
        said.push_str(&format!("  {why}\n"));
    }
    if !dry_run {
        records.routes.remove(i);
        write_records(&records_at, &records)?;
    }
    Ok(said)
}

/// `text` without what `w` added, where it is still as setup wrote it; and what was left, and why.
fn take_back(text: &str, w: &Wrote) -> (String, Vec<String>) {
    let mut left = Vec::new();
    let mut text = text.to_string();
    match w {
        Wrote::List { path, items, made } => {
            let keys: Vec<&str> = path.iter().map(String::as_str).collect();
            for item in items {
                match remove_json(&text, &keys, Some(item)) {
                    Some(new) => text = new,
                    None => left.push(format!(
                        "{item:?} is no longer in {} as setup wrote it (changed or removed): nothing taken back for it",
                        keys.join(".")
                    )),
                }
            }
            if let Some(made) = made {
                text = remove_if_empty(&text, made);
            }
        }
        Wrote::Member { path, value, made } => {
            let keys: Vec<&str> = path.iter().map(String::as_str).collect();
            match value_at(&text, &keys) {
                Some(Value::String(v)) if v == *value => {
                    if let Some(new) = remove_json(&text, &keys, None) {
                        text = new;
                    }
                }
                Some(other) => left.push(format!(
                    "{} is now {other}, not the {value:?} setup wrote: left as it is",
                    keys.join(".")
                )),
                None => {}
            }
            if let Some(made) = made {
                text = remove_if_empty(&text, made);
            }
        }
        Wrote::File { text: ours } => {
            if text != *ours {
                left.push("the file was changed since setup wrote it: left as it is (remove it yourself if it is no longer wanted)".into());
            } else {
                text.clear();
            }
        }
        Wrote::Block { text: ours } => match text.find(ours.as_str()) {
            Some(at) => {
                let mut start = at;
                // The blank line setup put before the block goes with it.
                for sep in ["\r\n", "\n"] {
                    if text[..start].ends_with(&format!("{sep}{sep}")) {
                        start -= sep.len();
                        break;
                    }
                }
                text.replace_range(start..at + ours.len(), "");
            }
            None => left.push("the block setup added to it was changed: left as it is".into()),
        },
    }
    (text, left)
}

/// The value at `keys` in the JSON object `text`.
fn value_at(text: &str, keys: &[&str]) -> Option<Value> {
    let mut v: Value = serde_json::from_str(text).ok()?;
    for k in keys {
        v = v.get_mut(*k)?.take();
    }
    Some(v)
}

/// Removes the member at `made` if what it holds is empty now (`{}`, `[]`, or objects holding only
/// those).
fn remove_if_empty(text: &str, made: &[String]) -> String {
    fn empty(v: &Value) -> bool {
        match v {
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.values().all(empty),
            _ => false,
        }
    }
    let keys: Vec<&str> = made.iter().map(String::as_str).collect();
    match value_at(text, &keys) {
        Some(v) if empty(&v) => remove_json(text, &keys, None).unwrap_or_else(|| text.to_string()),
        _ => text.to_string(),
    }
}

/// What adding to a JSON file came to.
enum Added {
    Changed(String, Wrote),
    /// Everything was there already.
    Already,
    /// The user's own setting is there, otherwise than setup would set it: said why.
    Left(String),
}

/// The JSON text `text` (empty: a new file) with `add` made.
fn add_json(text: &str, add: &Add) -> Result<Added, String> {
    let (path, leaf) = match add {
        Add::List { path, items } => (*path, Value::from(items.clone())),
        Add::Member { path, value } => (*path, Value::from(*value)),
    };
    let wrote = |made: Option<usize>, items: Vec<String>| {
        let made = made.map(|n| path[..=n].iter().map(|k| k.to_string()).collect());
        let path = path.iter().map(|k| k.to_string()).collect();
        match add {
            Add::List { .. } => Wrote::List { path, items, made },
            Add::Member { value, .. } => Wrote::Member {
                path,
                value: value.to_string(),
                made,
            },
        }
    };
    // The members below the first missing one, as one value.
    let nest = |from: usize| {
        path[from + 1..]
            .iter()
            .rev()
            .fold(leaf.clone(), |v, k| json!({ *k: v }))
    };
    let all_items = || match add {
        Add::List { items, .. } => items.iter().map(|s| s.to_string()).collect(),
        Add::Member { .. } => Vec::new(),
    };
    if text.trim().is_empty() {
        let doc = nest(0);
        let doc = json!({ path[0]: doc });
        return Ok(Added::Changed(
            format!("{}\n", render(&doc, "  ", "", false)),
            wrote(Some(0), all_items()),
        ));
    }
    let whole: Value = serde_json::from_str(text).map_err(|e| refuse_parse(e, text))?;
    if !whole.is_object() {
        return Err("does not hold a JSON object".into());
    }
    let mut object = text.trim();
    for (depth, key) in path.iter().enumerate() {
        let members: Members = serde_json::from_str(object).map_err(|e| refuse_parse(e, text))?;
        let Some((_, raw)) = members.0.iter().rev().find(|(k, _)| k == key) else {
            let new = insert_member(text, object, &members, key, &nest(depth));
            return checked(text, new, wrote(Some(depth), all_items()));
        };
        let raw: &RawValue = *raw;
        let at = raw.get();
        let dotted = path[..=depth].join(".");
        if depth + 1 < path.len() {
            if !at.trim_start().starts_with('{') {
                return Ok(Added::Left(format!("{dotted} is not an object ({at})")));
            }
            object = at;
            continue;
        }
        return match add {
            Add::Member { value, .. } => {
                let current: Value = serde_json::from_str(at).map_err(|e| refuse_parse(e, text))?;
                if current == Value::from(*value) {
                    Ok(Added::Already)
                } else {
                    Ok(Added::Left(format!("{dotted} is already set to {current} (setup would set {value:?}): edits still go around multiedit")))
                }
            }
            Add::List { items, .. } => {
                let Ok(elements) = serde_json::from_str::<Vec<&RawValue>>(at) else {
                    return Ok(Added::Left(format!("{dotted} is not a list ({at})")));
                };
                let present: Vec<Value> = elements
                    .iter()
                    .filter_map(|e| serde_json::from_str(e.get()).ok())
                    .collect();
                let missing: Vec<&str> = items
                    .iter()
                    .copied()
                    .filter(|i| !present.contains(&Value::from(*i)))
                    .collect();
                if missing.is_empty() {
                    return Ok(Added::Already);
                }
                let new = insert_elements(text, at, &elements, &missing);
                checked(
                    text,
                    new,
                    wrote(None, missing.iter().map(|s| s.to_string()).collect()),
                )
            }
        };
    }
    unreachable!("the loop returns at the last key")
}

/// A spliced text must parse, and taking the addition back must give what was there.
fn checked(old: &str, new: String, wrote: Wrote) -> Result<Added, String> {
    let parse = |t: &str| serde_json::from_str::<Value>(t).ok();
    let back = take_back(&new, &wrote).0;
    match (parse(&new), parse(&back)) {
        (Some(v), Some(b)) if v.is_object() && Some(&b) == parse(old).as_ref() => {
            Ok(Added::Changed(new, wrote))
        }
        _ => Err("could not be merged safely".into()),
    }
}

/// `items` appended to the array whose text is `array` (a slice of `whole`).
fn insert_elements(whole: &str, array: &str, elements: &[&RawValue], items: &[&str]) -> String {
    let crlf = whole.contains("\r\n");
    let start = offset_in(whole, array);
    let quoted: Vec<String> = items.iter().map(|i| Value::from(*i).to_string()).collect();
    match elements.last() {
        None => {
            let end = start + array.len();
            format!(
                "{}[{}]{}",
                &whole[..start],
                quoted.join(", "),
                &whole[end..]
            )
        }
        Some(last) => {
            let after_last = offset_in(whole, last.get()) + last.get().len();
            let inner = &array[1..array.len() - 1];
            let added = if inner.contains('\n') {
                let indent = indent_at(whole, offset_in(whole, last.get()));
                eol(
                    quoted.iter().map(|q| format!(",\n{indent}{q}")).collect(),
                    crlf,
                )
            } else {
                let sep = if inner.contains(", ") || elements.len() == 1 {
                    ", "
                } else {
                    ","
                };
                quoted.iter().map(|q| format!("{sep}{q}")).collect()
            };
            format!("{}{added}{}", &whole[..after_last], &whole[after_last..])
        }
    }
}

/// `text` without the string `item` of the array at `keys` (`None`: without the member at `keys`);
/// `None` when it is not there. The text between the previous entry and the removed one goes with
/// it (or, for the first, the text up to the next), which undoes what `insert_member` and
/// `insert_elements` add.
fn remove_json(text: &str, keys: &[&str], item: Option<&str>) -> Option<String> {
    let mut object = text.trim();
    for (depth, key) in keys.iter().enumerate() {
        let members: Members = serde_json::from_str(object).ok()?;
        let i = members.0.iter().rposition(|(k, _)| k == key)?;
        let raw = members.0[i].1.get();
        if depth + 1 < keys.len() {
            object = raw;
            continue;
        }
        let Some(item) = item else {
            // Spans of the members: from the key to the end of the value.
            let spans: Vec<(usize, usize)> = members
                .0
                .iter()
                .map(|(k, v)| {
                    let value_at = offset_in(text, v.get());
                    let quoted = serde_json::to_string(k).expect("a key serialises");
                    (
                        text[..value_at].rfind(&quoted).unwrap_or(value_at),
                        value_at + v.get().len(),
                    )
                })
                .collect();
            return Some(cut(text, object, &spans, i));
        };
        let elements: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
        let j = elements
            .iter()
            .position(|e| serde_json::from_str::<Value>(e.get()).ok() == Some(Value::from(item)))?;
        let spans: Vec<(usize, usize)> = elements
            .iter()
            .map(|e| {
                (
                    offset_in(text, e.get()),
                    offset_in(text, e.get()) + e.get().len(),
                )
            })
            .collect();
        return Some(cut(text, raw, &spans, j));
    }
    None
}

/// `text` without entry `i` of the container `container` (a slice of `text`) whose entries span `spans`.
fn cut(text: &str, container: &str, spans: &[(usize, usize)], i: usize) -> String {
    let (from, to) = if spans.len() == 1 {
        let start = offset_in(text, container);
        (start + 1, start + container.len() - 1)
    } else if i > 0 {
        (spans[i - 1].1, spans[i].1)
    } else {
        (spans[0].0, spans[1].0)
    };
    format!("{}{}", &text[..from], &text[to..])
}

/// Whether an agent's edits go through multiedit, as `doctor` tells it: `Some(where)` when its
/// built-in editing is off (and where), else `None`; `Err` for an agent with no switch (why).
pub(crate) fn routed(agent: Agent, project: &Path) -> Result<Option<String>, String> {
    match agent {
        Agent::ClaudeCode => {
            let files = [
                project.join(".claude/settings.local.json"),
                project.join(".claude/settings.json"),
                home()?.join(".claude/settings.json"),
            ];
            let mut denied: Vec<(String, PathBuf)> = Vec::new();
            for f in &files {
                if let Some(Value::Array(list)) = crate::disk::read_text_capped(f)
                    .ok()
                    .and_then(|t| value_at(&t, &["permissions", "deny"]))
                {
                    for tool in CLAUDE_DENIED {
                        if list.contains(&Value::from(tool))
                            && !denied.iter().any(|(t, _)| t == tool)
                        {
                            denied.push((tool.to_string(), f.clone()));
                        }
                    }
                }
            }
            let missing: Vec<&str> = CLAUDE_DENIED
                .iter()
                .copied()
                .filter(|t| !denied.iter().any(|(d, _)| d == t))
                .collect();
            if missing.is_empty() {
                let wheres: Vec<String> = denied
                    .iter()
                    .map(|(t, f)| format!("{t} in {}", f.display()))
                    .collect();
                Ok(Some(format!(
                    "Edit and Write denied ({})",
                    wheres.join(", ")
                )))
            } else {
                Ok(None)
            }
        }
        Agent::Opencode => {
            for scope in [Scope::Project, Scope::User] {
                let (f, _) = agent.config_path(scope, project)?;
                if let Some(v) = crate::disk::read_text_capped(&f)
                    .ok()
                    .and_then(|t| value_at(&t, &["permission", "edit"]))
                {
                    // The nearest file that sets it decides.
                    return Ok((v == "deny")
                        .then(|| format!("permission.edit is \"deny\" in {}", f.display())));
                }
            }
            Ok(None)
        }
        Agent::Gemini => {
            let dir = home()?.join(".gemini/policies");
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect();
            files.sort();
            let mut denied: Vec<String> = Vec::new();
            let mut found = Vec::new();
            for f in &files {
                let Some(doc) = crate::disk::read_text_capped(f)
                    .ok()
                    .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
                else {
                    continue;
                };
                let before = denied.len();
                for rule in doc
                    .get("rule")
                    .and_then(|r| r.as_array_of_tables())
                    .into_iter()
                    .flatten()
                {
                    let unconditional = [
                        "argsPattern",
                        "commandPrefix",
                        "commandRegex",
                        "mcpName",
                        "modes",
                        "subagent",
                    ]
                    .iter()
                    .all(|k| rule.get(k).is_none());
                    if rule.get("decision").and_then(|d| d.as_str()) != Some("deny")
                        || !unconditional
                    {
                        continue;
                    }
                    let names: Vec<&str> = match rule.get("toolName") {
                        Some(t) => t
                            .as_str()
                            .map(|s| vec![s])
                            .or_else(|| {
                                t.as_array()
                                    .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                            })
                            .unwrap_or_default(),
                        None => Vec::new(),
                    };
                    denied.extend(
                        names
                            .into_iter()
                            .filter(|n| GEMINI_DENIED.contains(n))
                            .map(str::to_string),
                    );
                }
                if denied.len() > before {
                    found.push(f.display().to_string());
                }
            }
            if GEMINI_DENIED.iter().all(|t| denied.iter().any(|d| d == t)) {
                Ok(Some(format!(
                    "replace and write_file denied by {}",
                    found.join(", ")
                )))
            } else {
                Ok(None)
            }
        }
        Agent::Codex => {
            let asked = [project.join("AGENTS.md"), codex_home()?.join("AGENTS.md")]
                .into_iter()
                .find(|f| {
                    crate::disk::read_text_capped(f).is_ok_and(|t| {
                        t.contains(AGENTS_MD_BLOCK.lines().next().unwrap_or_default())
                    })
                });
            Err(match asked {
                Some(f) => format!("Codex CLI has no switch for apply_patch; {} asks it to edit with multiedit (an instruction, not enforced)", f.display()),
                None => "Codex CLI has no switch for apply_patch: its edits go around multiedit (--agents-md asks it in AGENTS.md)".into(),
            })
        }
        Agent::Cursor | Agent::Vscode => {
            Err(match target(agent, Scope::Project, project, false)? {
                Target::None(why) => why,
                _ => String::new(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(path: &'static [&'static str], items: &[&'static str]) -> Add {
        Add::List {
            path,
            items: items.to_vec(),
        }
    }

    fn changed(text: &str, add: &Add) -> (String, Wrote) {
        match add_json(text, add).unwrap() {
            Added::Changed(t, w) => (t, w),
            _ => panic!("nothing added to {text}"),
        }
    }

    #[test]
    fn adding_then_taking_back_gives_the_same_bytes() {
        let deny = list(&["permissions", "deny"], &["Edit", "Write"]);
        for old in [
            "{\n  \"model\": \"opus\"\n}\n",
            "{\"model\":\"opus\",\"permissions\":{\"allow\":[\"Bash(ls)\"]}}",
            "{\n\t\"permissions\": {\n\t\t\"deny\": [\n\t\t\t\"Bash(rm *)\"\n\t\t]\n\t}\n}\n",
            "{\"permissions\": {\"deny\": [\"Read(.env)\"]}}",
            "{\r\n  \"permissions\": {\r\n    \"deny\": [\r\n      \"X\"\r\n    ]\r\n  }\r\n}\r\n",
        ] {
            let (new, wrote) = changed(old, &deny);
            let v: Value = serde_json::from_str(&new).unwrap();
            let names: Vec<&str> = v["permissions"]["deny"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            assert!(names.ends_with(&["Edit", "Write"]), "{new}");
            let (back, left) = take_back(&new, &wrote);
            assert_eq!(back, old, "taken back structurally");
            assert!(left.is_empty());
            let s = splice_back(old, &new);
            assert_eq!(unsplice(&new, &[s]).unwrap(), old);
        }
        let (new, _) = changed("{\"permissions\": {\"deny\": [\"Edit\"]}}", &deny);
        assert_eq!(new, "{\"permissions\": {\"deny\": [\"Edit\", \"Write\"]}}");
        assert!(matches!(add_json(&new, &deny).unwrap(), Added::Already));
        let (fresh, _) = changed("", &deny);
        assert_eq!(
            fresh,
            "{\n  \"permissions\": {\n    \"deny\": [\"Edit\", \"Write\"]\n  }\n}\n"
        );
    }

    #[test]
    fn a_setting_of_the_users_is_left_and_named() {
        let edit = Add::Member {
            path: &["permission", "edit"],
            value: "deny",
        };
        match add_json("{\"permission\": {\"edit\": \"ask\"}}", &edit).unwrap() {
            Added::Left(why) => assert_eq!(why, "permission.edit is already set to \"ask\" (setup would set \"deny\"): edits still go around multiedit"),
            _ => panic!("changed"),
        }
        let (new, wrote) = changed("{\"permission\": {\"bash\": \"ask\"}}", &edit);
        assert_eq!(
            new,
            "{\"permission\": {\"bash\": \"ask\",\"edit\":\"deny\"}}"
        );
        let edited = new.replace("\"deny\"", "\"ask\"");
        let (back, left) = take_back(&edited, &wrote);
        assert_eq!(back, edited);
        assert_eq!(
            left,
            ["permission.edit is now \"ask\", not the \"deny\" setup wrote: left as it is"]
        );
        // A user's rule added beside setup's stays, setup's go.
        let deny = list(&["permissions", "deny"], &["Edit", "Write"]);
        let (new, wrote) = changed("{}", &deny);
        let mixed = new.replace("\"Write\"", "\"Write\", \"Bash(rm *)\"");
        let (back, left) = take_back(&mixed, &wrote);
        assert_eq!(
            value_at(&back, &["permissions", "deny"]),
            Some(json!(["Bash(rm *)"])),
            "{back}"
        );
        assert!(left.is_empty());
    }
}
