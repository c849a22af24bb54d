//! `multiedit doctor`: what is installed and connected, and what is not and why.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use super::agents::{entry_command, this_binary, Agent, Format, Scope, AGENTS, SERVER_NAME};
use super::route::Routed;
#[cfg(unix)]
use crate::bridge::registry;
use crate::process::out;

pub(crate) fn run() -> ExitCode {
    let mut problems = 0;
    let mut said = String::new();

    said.push_str(&format!("multiedit {}\n", env!("CARGO_PKG_VERSION")));
    match this_binary() {
        Ok(exe) => said.push_str(&format!("  binary: {exe}\n")),
        Err(e) => {
            problems += 1;
            said.push_str(&format!("  binary: {e}\n"));
        }
    }

    said.push_str("\nEditors on the bridge (running multiedit lsp, reachable by multiedit mcp):\n");
    editors(&mut said);

    let project = std::env::current_dir().ok();
    if let Some(project) = &project {
        // What multiedit would start itself where no editor holds a plan's files.
        said.push_str(&format!(
            "\nLanguage servers multiedit starts where no editor holds the files (for {}):\n",
            project.display()
        ));
        let (lines, problem) = crate::language_servers::status::describe(project);
        said.push_str(&lines);
        problems += usize::from(problem);
    }

    said.push_str("\nAgents configured to run multiedit mcp:\n");
    let mut seen = Vec::new();
    let mut any = false;
    let mut connected: Vec<Agent> = Vec::new();
    for agent in AGENTS {
        for scope in [Scope::Project, Scope::User] {
            let Some(project) = &project else { continue };
            let Ok((path, _)) = agent.config_path(scope, project) else {
                continue;
            };
            if seen.contains(&path) {
                continue;
            }
            seen.push(path.clone());
            match check(agent, &path) {
                Check::Absent => {}
                Check::NotConfigured => {}
                Check::Configured {
                    program,
                    args,
                    exists,
                } => {
                    any = true;
                    if !connected.contains(&agent) {
                        connected.push(agent);
                    }
                    let state = if exists {
                        "ok"
                    } else {
                        "MISSING: no such binary"
                    };
                    if !exists {
                        problems += 1;
                    }
                    let cmd = std::iter::once(program)
                        .chain(args)
                        .collect::<Vec<_>>()
                        .join(" ");
                    said.push_str(&format!(
                        "  {}: {} runs {cmd} ({state})\n",
                        agent.name(),
                        path.display()
                    ));
                    // What the agent itself would say before it runs it: an approval, a trust.
                    if let Some(why) = super::agent_state::problem(agent, &path, &cmd, project) {
                        problems += 1;
                        said.push_str(&format!("  {}: {why}\n", agent.name()));
                    }
                }
                Check::Unchecked(why) => {
                    said.push_str(&format!(
                        "  {}: {} could not be checked: it {why}\n",
                        agent.name(),
                        path.display()
                    ));
                }
                Check::Unreadable(why) => {
                    problems += 1;
                    said.push_str(&format!("  {}: {} {why}\n", agent.name(), path.display()));
                }
            }
        }
    }
    if !any {
        said.push_str("  none (run `multiedit setup` to add multiedit to your agents)\n");
    }
    if let (false, Some(project)) = (connected.is_empty(), &project) {
        said.push_str(
            "\nTheir edits (through multiedit, or around it with the agent's own tools):\n",
        );
        for agent in connected {
            let name = agent.name();
            let user = if agent == Agent::Gemini {
                " --user"
            } else {
                ""
            };
            match super::route::routed(agent, project) {
                Ok(Routed::Yes(how)) => {
                    said.push_str(&format!("  {name}: routed through multiedit: {how}\n"))
                }
                Ok(Routed::Partly(how)) => said.push_str(&format!(
                    "  {name}: partly through multiedit: {how} (`multiedit setup {name}{user} --route-edits` turns the rest off)\n"
                )),
                Ok(Routed::No(None)) => said.push_str(&format!(
                    "  {name}: around multiedit: its own edit tools are on (`multiedit setup {name}{user} --route-edits` turns them off)\n"
                )),
                Ok(Routed::No(Some(why))) => {
                    let fix = match agent {
                        Agent::Gemini => "lower that rule's priority below the deny's, or remove it",
                        _ => "make it \"deny\" there, or remove it and run `multiedit setup opencode --route-edits`",
                    };
                    said.push_str(&format!("  {name}: around multiedit: {why} ({fix})\n"))
                }
                Err(why) => said.push_str(&format!("  {name}: around multiedit: {why}\n")),
            }
        }
    }
    // The record `setup --undo-route-edits` acts on, when another user could have written it.
    if let Some(why) = super::route::records_problem() {
        problems += 1;
        said.push_str(&format!(
            "\nWhat --route-edits wrote, for its undo:\n  {why}\n"
        ));
    }
    if problems > 0 {
        said.push_str(&format!(
            "\n{problems} problem{} found.\n",
            if problems == 1 { "" } else { "s" }
        ));
    } else {
        said.push_str("\nNo problem found.\n");
    }
    out(&said);
    if problems > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

enum Check {
    Absent,
    NotConfigured,
    Configured {
        program: String,
        args: Vec<String>,
        exists: bool,
    },
    Unreadable(String),
    /// Not plain JSON: perhaps JSON with comments, which some agents (VS Code) read.
    Unchecked(String),
}

fn check(agent: Agent, path: &Path) -> Check {
    let text = match crate::disk::read_text_capped(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Check::Absent,
        Err(e) => return Check::Unreadable(format!("cannot be read ({e})")),
    };
    let entry: Option<Value> = match agent.format() {
        Format::Json { key } => {
            if text.trim().is_empty() {
                return Check::NotConfigured;
            }
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => v.get(key).and_then(|s| s.get(SERVER_NAME)).cloned(),
                Err(e) => return Check::Unchecked(format!("is not plain JSON ({e})")),
            }
        }
        Format::Toml => match text.parse::<toml_edit::DocumentMut>() {
            Ok(doc) => doc
                .get("mcp_servers")
                .and_then(|s| s.get(SERVER_NAME))
                .and_then(|e| e.as_table_like())
                .map(|t| {
                    let mut v = serde_json::Map::new();
                    if let Some(c) = t.get("command").and_then(|c| c.as_str()) {
                        v.insert("command".into(), c.into());
                    }
                    if let Some(a) = t.get("args").and_then(|a| a.as_array()) {
                        v.insert(
                            "args".into(),
                            a.iter()
                                .filter_map(|s| s.as_str())
                                .map(Value::from)
                                .collect(),
                        );
                    }
                    Value::Object(v)
                }),
            Err(e) => {
                return Check::Unreadable(format!(
                    "is not valid TOML ({})",
                    e.to_string().trim().replace('\n', " ")
                ))
            }
        },
    };
    let Some(entry) = entry else {
        return Check::NotConfigured;
    };
    match entry_command(agent, &entry) {
        Some((program, args)) => {
            let exists = if program.contains('/') {
                Path::new(&program).is_file()
            } else {
                // A bare name is looked up on PATH, as the agent will.
                std::env::var_os("PATH")
                    .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(&program).is_file()))
            };
            Check::Configured {
                program,
                args,
                exists,
            }
        }
        None => Check::Unreadable(format!("has a {SERVER_NAME} entry without a command")),
    }
}

/// The editors on the bridge, and why one cannot be reached.
#[cfg(unix)]
fn editors(said: &mut String) {
    let dir = registry::folder();
    match registry::scan(&dir) {
        Ok(scan) => {
            if scan.entries.is_empty() {
                said.push_str(&format!("  none in {}\n", dir.display()));
            }
            for e in &scan.entries {
                let folders: Vec<String> =
                    e.folders.iter().map(|f| f.display().to_string()).collect();
                let folders = if folders.is_empty() {
                    "no workspace folder".to_string()
                } else {
                    folders.join(", ")
                };
                said.push_str(&format!(
                    "  {} (multiedit lsp pid {}): {folders}\n",
                    e.editor, e.pid
                ));
            }
            for note in &scan.notes {
                said.push_str(&format!("  not reachable: {note}\n"));
            }
        }
        Err(why) => said.push_str(&format!("  none: {why}\n")),
    }
}

#[cfg(not(unix))]
fn editors(said: &mut String) {
    said.push_str("  none: the bridge needs Unix domain sockets; on this platform (named pipes planned) multiedit mcp writes to disk\n");
}
