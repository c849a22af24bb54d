//! `setup --route-edits`: each switch written into its file, and recorded for the undo.

use std::path::{Path, PathBuf};

use crate::result::sha256;

use super::json::value_at;
use super::record::{read_records, splice_back, write_records, Record, Wrote};
use super::rules::{targets, Add, Target};
use super::splice::{add_json, add_toml, Added};
use crate::cli::agents::{entry_command, Agent, Scope, SERVER_NAME};
use crate::cli::config_file::{eol, line_diff, load, writable, write_atomic};

/// Turns the agent's edits to multiedit: writes its switches (or says there is none). `Ok` says what
/// was done; `Err` what was done before a switch was left, and what was left and why.
pub(crate) fn route(
    agent: Agent,
    scope: Scope,
    project: &Path,
    agents_md: bool,
    command: &str,
    dry_run: bool,
) -> Result<String, (String, String)> {
    let all = targets(agent, scope, project, agents_md, command, false)
        .map_err(|why| (String::new(), why))?;
    let only_none = all.iter().all(|t| matches!(t, Target::None(_)));
    let mut said = String::new();
    for t in all {
        match t {
            Target::None(why) if only_none => {
                said.push_str(&format!("{}: edits not routed: {why}\n", agent.name()))
            }
            Target::None(why) => said.push_str(&format!("{}: {why}\n", agent.name())),
            t => match route_one(agent, t, scope, project, dry_run) {
                Ok(one) => said.push_str(&one),
                Err(why) => return Err((said, why)),
            },
        }
    }
    Ok(said)
}

/// Writes one switch of `agent` (`target` is not `Target::None`).
fn route_one(
    agent: Agent,
    target: Target,
    scope: Scope,
    project: &Path,
    dry_run: bool,
) -> Result<String, String> {
    let name = agent.name();
    enum Whole {
        Json(Vec<Add>),
        File(&'static str),
        Block(String),
        Toml(Vec<&'static str>, &'static str, &'static str),
    }
    let (path, whole) = match target {
        Target::None(why) => return Ok(format!("{name}: {why}\n")),
        Target::Json { path, adds } => (path, Whole::Json(adds)),
        Target::File { path, text } => (path, Whole::File(text)),
        Target::Block { path, text } => (path, Whole::Block(text)),
        Target::Toml {
            path,
            table,
            key,
            value,
        } => (path, Whole::Toml(table, key, value)),
    };
    let or_else = "turn the agent's own edit tools off by hand (docs/agents.md says where)";
    // A project's file must stay inside the project (`--project` targets are all the project's).
    // (Codex's user file, where it reads no project file, is the user's own.)
    let inside = (scope == Scope::Project && path.starts_with(project)).then_some(project);
    let (path, before) = load(&path, inside, or_else)?;
    let shown = path.display().to_string();
    let old = before.as_deref().unwrap_or("");
    let mut notes = String::new();
    let (after, wrote) = match whole {
        Whole::Json(adds) => {
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
        Whole::File(text) => match &before {
            None => (text.to_string(), vec![Wrote::File { text: text.to_string() }]),
            Some(t) if t == text => (t.clone(), Vec::new()),
            Some(_) => return Err(format!("{shown} exists and is not the policy multiedit writes; left unchanged. Or {or_else}")),
        },
        Whole::Block(text) if old.contains(&text) => (old.to_string(), Vec::new()),
        Whole::Block(text) => {
            let sep = if old.is_empty() || old.ends_with("\n\n") { "" } else if old.ends_with('\n') { "\n" } else { "\n\n" };
            let crlf = old.contains("\r\n");
            (format!("{old}{}", eol(format!("{sep}{text}"), crlf)), vec![Wrote::Block { text: eol(text, crlf) }])
        }
        Whole::Toml(table, key, value) => match add_toml(old, &table, key, value).map_err(|why| format!("{shown} {why}; left unchanged. Or {or_else}"))? {
            Added::Changed(new, w) => (new, vec![w]),
            Added::Already => (old.to_string(), Vec::new()),
            Added::Left(why) => {
                notes.push_str(&format!("  {why}; left as it is\n"));
                (old.to_string(), Vec::new())
            }
        },
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
    let approved = wrote
        .iter()
        .any(|w| matches!(w, Wrote::List { path, .. } if path == &["enabledMcpjsonServers"]))
        .then(|| mcp_json_command(project))
        .flatten();
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
            if approved.is_some() {
                r.approved = approved;
            }
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
            approved,
        }),
    }
    write_records(&records_at, &records)
        .map_err(|e| format!("{shown} was {verb}, but what it holds of setup's could not be recorded for the undo: {e}"))?;
    Ok(format!(
        "{name}: {verb} {shown} (edits routed through multiedit):\n{}{notes}",
        line_diff(old, &after)
    ))
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
