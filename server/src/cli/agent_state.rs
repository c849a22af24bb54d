//! What an agent itself would say of a multiedit entry that `doctor` found in a project's file, before
//! it runs it: Claude Code runs a server of `.mcp.json` only once the user approved it, and Gemini CLI
//! runs no server of a folder it does not trust. Read from the files the agents read (their CLIs answer
//! too slowly and need their own setup to ask them), each with the command that fixes it. Setup writes
//! neither the trust (the user's to give) nor, without `--route-edits`, the approval.

use std::path::Path;

use serde_json::Value;

use super::agents::{home, Agent, SERVER_NAME};
use super::route::{approved_command, CLAUDE_LOCAL};

/// The problem an agent would report with the entry in `file` (a project's), with its fix.
pub(crate) fn problem(agent: Agent, file: &Path, command: &str, project: &Path) -> Option<String> {
    match agent {
        Agent::ClaudeCode if file == project.join(".mcp.json") => claude_approval(project, command),
        Agent::Gemini if file == project.join(".gemini/settings.json") => gemini_trust(project),
        _ => None,
    }
}

/// Claude Code's approval of the project's multiedit server: the settings that enable or disable a
/// server of `.mcp.json`, the project's own first, then the user's (`~/.claude/settings.json`, and the
/// project's entry in `~/.claude.json`, where its prompt keeps the answer).
fn claude_approval(project: &Path, command: &str) -> Option<String> {
    let home = home().ok()?;
    let read = |p: &Path| {
        crate::disk::read_text_capped(p)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    };
    let mut sources: Vec<(String, Value)> = Vec::new();
    for f in [
        project.join(CLAUDE_LOCAL),
        project.join(".claude/settings.json"),
        home.join(".claude/settings.json"),
    ] {
        if let Some(v) = read(&f) {
            sources.push((f.display().to_string(), v));
        }
    }
    if let Some(v) = read(&home.join(".claude.json")) {
        let key = project.display().to_string();
        if let Some(entry) = v.get("projects").and_then(|p| p.get(&key)) {
            sources.push((
                format!(
                    "{} (projects entry of this folder)",
                    home.join(".claude.json").display()
                ),
                entry.clone(),
            ));
        }
    }
    let lists = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|s| s == SERVER_NAME))
    };
    let mcp = project.join(".mcp.json");
    if let Some((f, _)) = sources
        .iter()
        .find(|(_, v)| lists(v, "disabledMcpjsonServers"))
    {
        return Some(format!(
            "disabled: {f} lists multiedit in disabledMcpjsonServers, so Claude Code does not run the server of {} \
             (`claude mcp list` does not show it connected). Fix: remove it from that list.",
            mcp.display()
        ));
    }
    let approved = sources.iter().find(|(_, v)| {
        lists(v, "enabledMcpjsonServers")
            || v.get("enableAllProjectMcpServers") == Some(&Value::Bool(true))
    });
    match approved {
        None => Some(format!(
            "approval pending: Claude Code runs a server of {} only once you approved it, and it was not approved \
             (`claude mcp list` says \"Pending approval\"). Fix: start claude in this folder and approve multiedit, or \
             run `multiedit setup claude-code --route-edits`, which approves it in {CLAUDE_LOCAL}.",
            mcp.display()
        )),
        // Setup's approval was for the command it saw; a change of the entry since (a pull, a teammate's
        // commit) would run something else on it.
        Some((f, _)) => {
            let local = project.join(CLAUDE_LOCAL);
            let was = approved_command(&local)?;
            (was != command && *f == local.display().to_string()).then(|| {
                format!(
                    "approval for another command: setup approved multiedit in {f} when {} ran `{was}`; it now runs \
                     `{command}`, and Claude Code runs that on the same approval. Fix: check the change, then run \
                     `multiedit setup claude-code --undo-route-edits` and `multiedit setup claude-code --route-edits` \
                     to approve this command.",
                    mcp.display()
                )
            })
        }
    }
}

/// Gemini CLI's trust of the project folder: with folder trust on (its default), a folder that
/// `~/.gemini/trustedFolders.json` does not trust has its servers disabled.
fn gemini_trust(project: &Path) -> Option<String> {
    match std::env::var("GEMINI_CLI_TRUST_WORKSPACE").as_deref() {
        Ok("true") => return None,
        Ok("false") => {}
        _ => {}
    }
    let home = home().ok()?;
    let read = |p: &Path| {
        crate::disk::read_text_capped(p)
            .ok()
            .and_then(|t| super::route::jsonc(&t))
    };
    let settings = read(&home.join(".gemini/settings.json"));
    let enabled = settings
        .as_ref()
        .and_then(|s| s.pointer("/security/folderTrust/enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if !enabled {
        return None;
    }
    let trusted_at = home.join(".gemini/trustedFolders.json");
    let real = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let mut best: Option<(usize, String)> = None;
    if let Some(Value::Object(rules)) = read(&trusted_at) {
        for (path, level) in rules {
            let level = level.as_str().unwrap_or_default().to_string();
            let rule = Path::new(&path);
            let folder = if level == "TRUST_PARENT" {
                rule.parent().unwrap_or(rule)
            } else {
                rule
            };
            let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
            if real.starts_with(&folder) && best.as_ref().is_none_or(|(n, _)| path.len() > *n) {
                best = Some((path.len(), level));
            }
        }
    }
    match best.map(|(_, l)| l).as_deref() {
        Some("TRUST_FOLDER") | Some("TRUST_PARENT") => None,
        _ => Some(format!(
            "untrusted folder: Gemini CLI runs no server of {} in a folder it does not trust (`gemini mcp list` says \
             \"Disabled\"). Fix: start gemini in this folder and trust it, or add \"{}\": \"TRUST_FOLDER\" to {}.",
            project.join(".gemini/settings.json").display(),
            real.display(),
            trusted_at.display()
        )),
    }
}
