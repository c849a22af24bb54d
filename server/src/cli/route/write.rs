//! `setup --route-edits`: each switch written into its file, and recorded for the undo.

use std::path::{Path, PathBuf};

use crate::result::sha256;

use super::json::value_at;
use super::record::{read_records, splice_back, write_records, Record, Wrote};
use super::rules::{targets, Add, Target};
use super::splice::{add_json, add_toml, Added};
use crate::cli::agents::{entry_command, Agent, Scope, SERVER_NAME};
use crate::cli::config_file::{eol, line_diff, load, writable, write_atomic, Said};

/// Turns the agent's edits to multiedit: writes its switches (or says there is none). `Ok` says what
/// was done; `Err` what was done before a switch was left, and what was left and why.
pub(crate) fn route(
    agent: Agent,
    scope: Scope,
    project: &Path,
    agents_md: bool,
    command: &str,
    dry_run: bool,
) -> Result<Said, (String, String)> {
    let all = targets(agent, scope, project, agents_md, command, false)
        .map_err(|why| (String::new(), why))?;
    let only_none = all.iter().all(|t| matches!(t, Target::None(_)));
    let mut said = Said::default();
    for t in all {
        let one = match t {
            Target::None(why) if only_none => {
                Said::left(format!("{}: edits not routed: {why}\n", agent.name()))
            }
            Target::None(why) => Said::left(format!("{}: {why}\n", agent.name())),
            t => match route_one(agent, t, scope, project, dry_run) {
                Ok(one) => one,
                Err(why) => return Err((said.text, why)),
            },
        };
        said = said.and(one);
    }
    Ok(said)
}

/// What a switch does to its file: a `Target` without its path.
enum Change {
    Json(Vec<Add>),
    File(&'static str),
    Block(String),
    Toml(Vec<&'static str>, &'static str, &'static str),
}

impl Change {
    /// The file `target` names and what to do to it; `Err`: a `Target::None`'s reason.
    fn of(target: Target) -> Result<(PathBuf, Change), String> {
        Ok(match target {
            Target::None(why) => return Err(why),
            Target::Json { path, adds } => (path, Change::Json(adds)),
            Target::File { path, text } => (path, Change::File(text)),
            Target::Block { path, text } => (path, Change::Block(text)),
            Target::Toml {
                path,
                table,
                key,
                value,
            } => (path, Change::Toml(table, key, value)),
        })
    }
}

/// What the user may do instead when a switch's file is left unchanged.
const OR_ELSE: &str = "turn the agent's own edit tools off by hand (docs/agents.md says where)";

/// Writes one switch of `agent` (`target` is not `Target::None`).
fn route_one(
    agent: Agent,
    target: Target,
    scope: Scope,
    project: &Path,
    dry_run: bool,
) -> Result<Said, String> {
    let name = agent.name();
    let (path, change) = match Change::of(target) {
        Ok(found) => found,
        Err(why) => return Ok(Said::left(format!("{name}: {why}\n"))),
    };
    // A project's file must stay inside the project (`--project` targets are all the project's).
    // (Codex's user file, where it reads no project file, is the user's own.)
    let inside = (scope == Scope::Project && path.starts_with(project)).then_some(project);
    let (path, before) = load(&path, inside, OR_ELSE)?;
    let shown = path.display().to_string();
    let old = before.as_deref().unwrap_or("");
    let mut notes = String::new();
    let (after, wrote) = changed(change, before.as_deref(), &shown, &mut notes)?;
    if before.as_deref() == Some(after.as_str()) || (before.is_none() && wrote.is_empty()) {
        // Nothing to write: all there already, or a setting of the user's stands in the way.
        if notes.is_empty() {
            return Ok(Said::left(format!(
                "{name}: edits already routed through multiedit in {shown}\n"
            )));
        }
        return Ok(Said::left(format!(
            "{name}: edits not routed through multiedit in {shown}:\n{notes}"
        )));
    }
    writable(&path, OR_ELSE)?;
    let verb = if before.is_some() {
        "updated"
    } else {
        "created"
    };
    if dry_run {
        return Ok(Said::wrote(format!(
            "{name}: would have {verb} {shown} (edits routed through multiedit):\n{}{notes}",
            line_diff(old, &after)
        )));
    }
    write_recorded(name, &path, before.as_deref(), &after, wrote, project)?;
    Ok(Said::wrote(format!(
        "{name}: {verb} {shown} (edits routed through multiedit):\n{}{notes}",
        line_diff(old, &after)
    )))
}

/// The text of a switch's file (`shown`) once `change` is made to it (`before`; `None`: not there
/// yet), and what setup wrote into it; a setting of the user's that stands in the way is left, and
/// said in `notes`.
fn changed(
    change: Change,
    before: Option<&str>,
    shown: &str,
    notes: &mut String,
) -> Result<(String, Vec<Wrote>), String> {
    let old = before.unwrap_or("");
    let refused = |why: String| format!("{shown} {why}; left unchanged. Or {OR_ELSE}");
    Ok(match change {
        Change::Json(adds) => {
            let mut text = old.to_string();
            let mut wrote = Vec::new();
            for add in &adds {
                match add_json(&text, add).map_err(refused)? {
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
        Change::File(text) => match before {
            None => (text.to_string(), vec![Wrote::File { text: text.to_string() }]),
            Some(t) if t == text => (t.to_string(), Vec::new()),
            Some(_) => return Err(format!("{shown} exists and is not the policy multiedit writes; left unchanged. Or {OR_ELSE}")),
        },
        Change::Block(text) if old.contains(&text) => (old.to_string(), Vec::new()),
        Change::Block(text) => {
            let sep = if old.is_empty() || old.ends_with("\n\n") { "" } else if old.ends_with('\n') { "\n" } else { "\n\n" };
            let crlf = old.contains("\r\n");
            (format!("{old}{}", eol(format!("{sep}{text}"), crlf)), vec![Wrote::Block { text: eol(text, crlf) }])
        }
        Change::Toml(table, key, value) => match add_toml(old, &table, key, value).map_err(refused)? {
            Added::Changed(new, w) => (new, vec![w]),
            Added::Already => (old.to_string(), Vec::new()),
            Added::Left(why) => {
                notes.push_str(&format!("  {why}; left as it is\n"));
                (old.to_string(), Vec::new())
            }
        },
    })
}

/// Writes `after` in place of `before` (`None`: no file) at `path`, and records what setup wrote
/// there for the undo. The record is read first, so a record that cannot be trusted leaves the file
/// as it was.
fn write_recorded(
    name: &str,
    path: &Path,
    before: Option<&str>,
    after: &str,
    wrote: Vec<Wrote>,
    project: &Path,
) -> Result<(), String> {
    let shown = path.display();
    let (records_at, mut records) = read_records()?;
    let folders = missing_folders(path);
    let approved = wrote
        .iter()
        .any(|w| matches!(w, Wrote::List { path, .. } if path == &["enabledMcpjsonServers"]))
        .then(|| mcp_json_command(project))
        .flatten();
    write_atomic(path, after).map_err(|e| format!("cannot write {shown} ({e}); left unchanged"))?;
    let splice = splice_back(before.unwrap_or(""), after);
    records.note(
        Record {
            agent: name.to_string(),
            file: path.to_path_buf(),
            created: before.is_none(),
            folders,
            after_sha256: sha256(after),
            undo: if before.is_none() {
                Vec::new()
            } else {
                vec![splice]
            },
            wrote,
            approved,
        },
        before.map(sha256),
    );
    let verb = if before.is_some() {
        "updated"
    } else {
        "created"
    };
    write_records(&records_at, &records)
        .map_err(|e| format!("{shown} was {verb}, but what it holds of setup's could not be recorded for the undo: {e}"))
}

/// The command the project's `.mcp.json` runs for multiedit, as `program arg...`.
pub(crate) fn mcp_json_command(project: &Path) -> Option<String> {
    let text = crate::disk::read_text_capped(&project.join(".mcp.json")).ok()?;
    let entry = value_at(&text, &["mcpServers", SERVER_NAME])?;
    let (program, args) = entry_command(Agent::ClaudeCode, &entry)?;
    Some(
        std::iter::once(program)
            .chain(args)
            .collect::<Vec<_>>()
            .join(" "),
    )
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
