//! Whether each agent's edits go through multiedit, as `doctor` asks: every file the agent reads, in
//! the order it gives them precedence.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::json::{jsonc, value_at};
use super::rules::{targets, Target, AGENTS_MD_BLOCK, CLAUDE_DENIED, GEMINI_DENIED};
use crate::cli::agents::{codex_home, home, Agent, Scope};

/// Whether an agent's edits go through multiedit, as `doctor` tells it.
pub(crate) enum Routed {
    /// Its built-in editing is off: where.
    Yes(String),
    /// Off for some of it only: what is still on, and where.
    Partly(String),
    /// On: why, when a file of the user's turns it on again (`None`: nothing turns it off).
    No(Option<String>),
}

/// Whether an agent's edits go through multiedit, reading every file the agent reads, in the order it
/// gives them precedence; `Err` for an agent with no switch (why).
pub(crate) fn routed(agent: Agent, project: &Path) -> Result<Routed, String> {
    match agent {
        Agent::ClaudeCode => claude_routed(project),
        Agent::Opencode => opencode_routed(project),
        Agent::Gemini => gemini_routed(),
        Agent::Codex => Err(codex_asked(project)?),
        Agent::Cursor | Agent::Vscode => Err(
            match targets(agent, Scope::Project, project, false, "", false)?.pop() {
                Some(Target::None(why)) => why,
                _ => String::new(),
            },
        ),
    }
}

/// Claude Code's deny rules for Edit and Write, in the project's local and shared settings and the
/// user's.
fn claude_routed(project: &Path) -> Result<Routed, String> {
    let files = [
        project.join(".claude/settings.local.json"),
        project.join(".claude/settings.json"),
        home()?.join(".claude/settings.json"),
    ];
    let (whole, some) = claude_denials(&files);
    let wheres: Vec<String> = whole
        .iter()
        .map(|(t, f)| format!("{t} in {}", f.display()))
        .collect();
    let missing: Vec<&str> = CLAUDE_DENIED
        .iter()
        .copied()
        .filter(|t| !whole.iter().any(|(d, _)| d == t))
        .collect();
    if missing.is_empty() {
        return Ok(Routed::Yes(format!(
            "Edit and Write denied ({})",
            wheres.join(", ")
        )));
    }
    if whole.is_empty() && some.is_empty() {
        return Ok(Routed::No(None));
    }
    let on: Vec<String> = missing
        .iter()
        .map(|t| match some.iter().find(|(s, ..)| s == t) {
            Some((_, rule, f)) => format!(
                "{t} is denied only where {rule} in {} reaches, and writes everywhere else",
                f.display()
            ),
            None => format!("{t} is not denied"),
        })
        .collect();
    let denied = if wheres.is_empty() {
        String::new()
    } else {
        format!("{} denied; ", wheres.join(", "))
    };
    Ok(Routed::Partly(format!("{denied}{}", on.join("; "))))
}

/// What `claude_denials` finds: the tools denied outright, each with the first file that denies it,
/// and those denied for some paths, each with the first such rule and its file.
type ClaudeDenials = (
    Vec<(&'static str, PathBuf)>,
    Vec<(&'static str, String, PathBuf)>,
);

/// Per tool of `CLAUDE_DENIED`: where `files` deny it outright, else a rule that denies it for some
/// paths only.
fn claude_denials(files: &[PathBuf]) -> ClaudeDenials {
    let mut whole: Vec<(&str, PathBuf)> = Vec::new();
    let mut some: Vec<(&str, String, PathBuf)> = Vec::new();
    for f in files {
        let Some(Value::Array(list)) = crate::disk::read_text_capped(f)
            .ok()
            .and_then(|t| value_at(&t, &["permissions", "deny"]))
        else {
            continue;
        };
        for tool in CLAUDE_DENIED {
            for rule in list.iter().filter_map(Value::as_str) {
                let everywhere =
                    rule == tool || rule == format!("{tool}(*)") || rule == format!("{tool}(**)");
                if everywhere && !whole.iter().any(|(t, _)| *t == tool) {
                    whole.push((tool, f.clone()));
                } else if rule.starts_with(&format!("{tool}("))
                    && !some.iter().any(|(t, ..)| *t == tool)
                {
                    some.push((tool, rule.to_string(), f.clone()));
                }
            }
        }
    }
    (whole, some)
}

/// OpenCode's `permission.edit`: in each folder its opencode.jsonc wins over its opencode.json; the
/// project's over the user's.
fn opencode_routed(project: &Path) -> Result<Routed, String> {
    let mut files = Vec::new();
    for scope in [Scope::Project, Scope::User] {
        let (f, _) = Agent::Opencode.config_path(scope, project)?;
        files.push(f.with_extension("jsonc"));
        files.push(f);
    }
    for f in &files {
        let Some(v) = crate::disk::read_text_capped(f)
            .ok()
            .and_then(|t| jsonc(&t))
        else {
            continue;
        };
        let edit = match &v["permission"] {
            Value::String(all) => Some(Value::from(all.as_str())),
            p => p.get("edit").cloned(),
        };
        // The nearest file that sets it decides.
        if let Some(edit) = edit {
            return Ok(if edit == "deny" {
                Routed::Yes(format!("permission.edit is \"deny\" in {}", f.display()))
            } else {
                Routed::No(Some(format!(
                    "{} sets permission.edit to {edit}, and OpenCode takes it over the other files",
                    f.display()
                )))
            });
        }
    }
    Ok(Routed::No(None))
}

/// Codex CLI has no switch: whether an AGENTS.md it reads asks it to edit with multiedit.
fn codex_asked(project: &Path) -> Result<String, String> {
    let asked = [project.join("AGENTS.md"), codex_home()?.join("AGENTS.md")]
        .into_iter()
        .find(|f| {
            crate::disk::read_text_capped(f)
                .is_ok_and(|t| t.contains(AGENTS_MD_BLOCK.lines().next().unwrap_or_default()))
        });
    Ok(match asked {
        Some(f) => format!("Codex CLI has no switch for apply_patch; {} asks it to edit with multiedit (an instruction, not enforced)", f.display()),
        None => "Codex CLI has no switch for apply_patch: its edits go around multiedit (--agents-md asks it in AGENTS.md)".into(),
    })
}

/// The rule of a Gemini CLI policy that decides for one tool: the tool, its priority, its decision
/// and its file.
type GeminiRule = (&'static str, f64, String, PathBuf);

/// Gemini CLI's user policies (`~/.gemini/policies/*.toml`): for replace and write_file, the rule of
/// the highest priority that holds in every mode decides, as its policy engine decides.
fn gemini_routed() -> Result<Routed, String> {
    let files = gemini_policies()?;
    let strongest = gemini_strongest(&files);
    let denied: Vec<&GeminiRule> = strongest.iter().filter(|s| s.2 == "deny").collect();
    if denied.len() == GEMINI_DENIED.len() {
        let mut found: Vec<String> = denied.iter().map(|s| s.3.display().to_string()).collect();
        found.dedup();
        return Ok(Routed::Yes(format!(
            "replace and write_file denied by {}",
            found.join(", ")
        )));
    }
    let winners: Vec<String> = strongest
        .iter()
        .filter(|s| s.2 != "deny")
        .map(|(t, p, d, f)| format!("{} gives {t} {d:?} at priority {p}", f.display()))
        .collect();
    if winners.is_empty() {
        return Ok(match denied.first() {
            None => Routed::No(None),
            Some((t, _, _, f)) => {
                Routed::Partly(format!("only {t} is denied (by {})", f.display()))
            }
        });
    }
    let over = if files.iter().any(|f| f.ends_with("multiedit.toml")) {
        ", above the deny that setup wrote"
    } else {
        ""
    };
    Ok(Routed::No(Some(format!("{}{over}", winners.join("; ")))))
}

/// The user's policy files, `~/.gemini/policies/*.toml`, in name order.
fn gemini_policies() -> Result<Vec<PathBuf>, String> {
    let dir = home()?.join(".gemini/policies");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Per tool of `GEMINI_DENIED`: the strongest rule of `files` that holds in every mode (the first of
/// the highest priority).
fn gemini_strongest(files: &[PathBuf]) -> Vec<GeminiRule> {
    let mut strongest: Vec<GeminiRule> = Vec::new();
    for f in files {
        let Some(doc) = crate::disk::read_text_capped(f)
            .ok()
            .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        else {
            continue;
        };
        let rules = doc.get("rule").and_then(|r| r.as_array_of_tables());
        for rule in rules.into_iter().flatten() {
            let Some((decision, priority, names)) = gemini_rule(rule) else {
                continue;
            };
            for tool in GEMINI_DENIED {
                if !names.iter().any(|n| *n == tool || *n == "*") {
                    continue;
                }
                let this = (tool, priority, decision.to_string(), f.clone());
                match strongest.iter_mut().find(|(t, ..)| *t == tool) {
                    Some(s) if s.1 >= priority => {}
                    Some(s) => *s = this,
                    None => strongest.push(this),
                }
            }
        }
    }
    strongest
}

/// A policy rule's decision, priority and tool names (`*`: every tool), if it holds in every mode
/// (no condition) and decides.
fn gemini_rule(rule: &toml_edit::Table) -> Option<(&str, f64, Vec<&str>)> {
    let conditions = [
        "argsPattern",
        "commandPrefix",
        "commandRegex",
        "mcpName",
        "modes",
        "subagent",
        "interactive",
    ];
    let decision = rule.get("decision").and_then(|d| d.as_str())?;
    if conditions.iter().any(|k| rule.get(k).is_some()) {
        return None;
    }
    let priority = rule
        .get("priority")
        .and_then(|p| p.as_integer().map(|i| i as f64).or_else(|| p.as_float()))
        .unwrap_or(0.0);
    let names: Vec<&str> = match rule.get("toolName") {
        Some(t) => t
            .as_str()
            .map(|s| vec![s])
            .or_else(|| {
                t.as_array()
                    .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            })
            .unwrap_or_default(),
        None => vec!["*"],
    };
    Some((decision, priority, names))
}
