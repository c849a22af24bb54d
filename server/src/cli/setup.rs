//! `multiedit setup [AGENT...] [--project|--user] [--dry-run] [--route-edits]`: adds `multiedit mcp`
//! to AI agents' MCP configuration files, merging with what is there; `--route-edits` hands over to
//! `route`. Where each agent keeps its files is `agents`; how a file is changed without losing a byte
//! of the user's is `config_file`.

use std::path::Path;
use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use clap::Args;

use super::agents::{command, Agent, Format, Scope, AGENTS};
use super::config_file::{line_diff, load, merge_json, merge_toml, writable, write_atomic, Said};
use crate::process::{err, out};

#[derive(Args)]
pub(crate) struct SetupArgs {
    /// The agents to set up (default: all)
    #[arg(value_name = "AGENT", value_parser = agent_names())]
    agents: Vec<String>,
    /// Write the project's files, in the current folder (the default; Codex CLI has only a user file)
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// Write the files in your home folder, for every project
    #[arg(long)]
    user: bool,
    /// Write nothing; print what would change
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Also turn off each agent's own file-editing tools, so that its edits go through multiedit
    /// (Claude Code: Edit and Write; Gemini CLI, with --user: replace and write_file; OpenCode: edit,
    /// write and apply_patch). Codex CLI, Cursor and VS Code have no such switch: setup says so
    #[arg(long, conflicts_with = "undo_route_edits")]
    route_edits: bool,
    /// Take back what --route-edits wrote (only what is still as it wrote it); the MCP entries stay
    #[arg(long)]
    undo_route_edits: bool,
    /// With --route-edits for Codex CLI: write an instruction to edit with multiedit's tools into
    /// AGENTS.md (Codex has no switch to turn apply_patch off)
    #[arg(long)]
    agents_md: bool,
    /// Let multiedit start language servers for this project (the current folder) where no editor
    /// holds its files, for symbol edits, renames, outlines and diagnostics through `multiedit apply`
    /// and `multiedit mcp`. A language server can run the project's own code (build scripts, plugins,
    /// its toolchain): allow it only for a project you trust. Recorded in your state folder, never in
    /// the project; writes no agent configuration
    #[arg(long, conflicts_with_all = ["no_language_servers", "agents", "user", "route_edits", "undo_route_edits", "agents_md"])]
    language_servers: bool,
    /// Take that back: multiedit starts no language server for this project
    #[arg(long, conflicts_with_all = ["agents", "user", "route_edits", "undo_route_edits", "agents_md"])]
    no_language_servers: bool,
}

/// The AGENT values: every agent's name (`Agent::name`, the one list of them), then `all`.
fn agent_names() -> PossibleValuesParser {
    PossibleValuesParser::new(AGENTS.iter().map(|a| a.name()).chain(["all"]))
}

pub(crate) fn run(args: &SetupArgs) -> ExitCode {
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    let agents = chosen(args);
    // The command the files run: multiedit as PATH finds it, or this binary's absolute path (said why).
    let (exe, note) = match command() {
        Ok(c) => c,
        Err(e) => {
            err(&format!("multiedit setup: {e}\n"));
            return ExitCode::from(2);
        }
    };
    let mut wrote = false;
    let project = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            err(&format!(
                "multiedit setup: cannot read the current folder ({e})\n"
            ));
            return ExitCode::from(2);
        }
    };
    if args.language_servers || args.no_language_servers {
        return language_servers(&project, args.language_servers, args.dry_run);
    }
    // The record the undo acts on must be this user's alone, before anything is written.
    if args.route_edits || args.undo_route_edits {
        if let Err(why) = super::route::records_trusted() {
            err(&format!("multiedit setup: {why}\n"));
            return ExitCode::from(1);
        }
    }
    let mut refused = false;
    for agent in agents {
        match set_up(agent, scope, &project, &exe, args) {
            Ok(said) => {
                wrote |= said.wrote;
                out(&said.text)
            }
            Err(why) => {
                refused = true;
                err(&format!("{}: {why}\n", agent.name()));
            }
        }
    }
    // Said once, after what was written, when a file now names this binary by its absolute path.
    if let (Some(note), true, false) = (note, wrote, args.undo_route_edits) {
        err(&format!("multiedit setup: note: {note}\n"));
    }
    if refused {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The agents named (none, or `all`: every one), in `AGENTS`' order.
fn chosen(args: &SetupArgs) -> Vec<Agent> {
    if args.agents.is_empty() || args.agents.iter().any(|t| t == "all") {
        AGENTS.to_vec()
    } else {
        AGENTS
            .iter()
            .copied()
            .filter(|a| args.agents.iter().any(|t| t == a.name()))
            .collect()
    }
}

/// What `args` ask of one agent: its MCP entry, then its edits routed (`--route-edits`), or what
/// routing wrote taken back (`--undo-route-edits`). `Ok` says what was done; `Err` why the rest was
/// left, once what was done before it is printed.
fn set_up(
    agent: Agent,
    scope: Scope,
    project: &Path,
    exe: &str,
    args: &SetupArgs,
) -> Result<Said, String> {
    if args.undo_route_edits {
        // What an undo writes names no binary: no note follows it.
        return super::route::undo(agent, scope, project, args.agents_md, args.dry_run)
            .map(Said::left)
            .map_err(|(done, why)| {
                out(&done);
                why
            });
    }
    let said = setup_one(agent, scope, project, exe, args.dry_run, args.route_edits)?;
    if !args.route_edits {
        return Ok(said);
    }
    match super::route::route(agent, scope, project, args.agents_md, exe, args.dry_run) {
        Ok(routed) => Ok(said.and(routed)),
        Err((done, why)) => {
            out(&format!("{}{done}", said.text));
            Err(why)
        }
    }
}

/// `--language-servers` (`allow`) or `--no-language-servers`: records the choice for `project`, then
/// says what would start there.
fn language_servers(project: &Path, allow: bool, dry_run: bool) -> ExitCode {
    use crate::language_servers::{consent, status};
    let choice = if allow { "allowed" } else { "not allowed" };
    if dry_run {
        let real = crate::paths::real_path(project).unwrap_or_else(|_| project.to_path_buf());
        out(&format!(
            "Language servers: would be {choice} for {} (recorded in {}); nothing written\n",
            real.display(),
            consent::record_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "the state folder".into())
        ));
        return ExitCode::SUCCESS;
    }
    match consent::record(project, allow) {
        Ok((record, real)) => {
            let (lines, _) = status::describe(project);
            // Its first line says what was just recorded.
            let lines: String = lines.lines().skip(1).map(|l| format!("{l}\n")).collect();
            out(&format!(
                "Language servers: {choice} for {} (recorded in {}).\n{lines}",
                real.display(),
                record.display()
            ));
            ExitCode::SUCCESS
        }
        Err(why) => {
            err(&format!("multiedit setup: {why}; nothing was recorded\n"));
            ExitCode::from(1)
        }
    }
}

/// Sets one agent up; `Ok` says what was done (or would be, with `dry_run`).
/// `approved`: routing follows, which approves the project's server itself (`route/rules.rs`).
fn setup_one(
    agent: Agent,
    scope: Scope,
    project: &Path,
    exe: &str,
    dry_run: bool,
    approved: bool,
) -> Result<Said, String> {
    let (path, real_scope) = agent.config_path(scope, project)?;
    let by_hand = format!("the server by hand: it runs {exe} with the argument mcp");
    // A project's file must stay inside the project, links followed; the user's own are theirs.
    let inside = (real_scope == Scope::Project).then_some(project);
    let (path, before) = load(&path, inside, &format!("add {by_hand}"))?;
    let shown = path.display().to_string();
    let old = before.as_deref().unwrap_or("");
    let after = match agent.format() {
        Format::Json { key } => merge_json(old, key, |existing| agent.json_entry(exe, existing)),
        Format::Toml => merge_toml(old, exe),
    }
    .map_err(|why| format!("{shown} {why}; left unchanged. Add {by_hand}"))?;
    let note = if scope == Scope::Project && real_scope == Scope::User {
        " (Codex CLI reads a project's .codex/config.toml only once it trusts the project, and it does not trust \
         this one)"
    } else {
        ""
    };
    if before.as_deref() == Some(after.as_str()) {
        return Ok(Said::left(format!(
            "{}: {shown} already runs {exe} mcp{note}\n",
            agent.name()
        )));
    }
    writable(&path, &format!("add {by_hand}"))?;
    let verb = if before.is_some() {
        "updated"
    } else {
        "created"
    };
    if dry_run {
        let mut said = format!("{}: would have {verb} {shown}{note}:\n", agent.name());
        said.push_str(&line_diff(old, &after));
        return Ok(Said::wrote(said));
    }
    write_atomic(&path, &after)
        .map_err(|e| format!("cannot write {shown} ({e}); left unchanged"))?;
    let mut said = format!("{}: {verb} {shown}{note}:\n", agent.name());
    said.push_str(&line_diff(old, &after));
    if agent == Agent::ClaudeCode && real_scope == Scope::Project && !approved {
        said.push_str(
            "  Claude Code asks once before it runs a server of .mcp.json: start claude in this folder and approve \
             multiedit (or add it to enabledMcpjsonServers in ~/.claude/settings.json).\n",
        );
    }
    Ok(Said::wrote(said))
}
