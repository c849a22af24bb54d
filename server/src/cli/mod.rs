//! The command line: `multiedit apply`, `lsp`, `mcp`, `setup`, `doctor`, `completions`.
//!
//! Parsed with clap (derive): every subcommand and flag is declared once here, with the help text a
//! newcomer reads. Usage errors exit 2, like `apply`'s I/O errors; their first line names the bad
//! argument.

mod agent_state;
mod agents;
mod apply;
mod config_file;
pub(crate) mod doctor;
mod hook;
mod route;
pub(crate) mod setup;

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::process::{err, out};

#[derive(Parser)]
#[command(
    name = "multiedit",
    version,
    about = "Apply MultiEdit edit plans: exact find-and-replace edits to files, all or nothing",
    long_about = "Apply MultiEdit edit plans: exact find-and-replace edits to files, all or nothing.\n\n\
        A plan names a file and a list of edits (old_string -> new_string). Either every edit applies \
        or nothing is written. Run it from the command line (apply), inside an editor (lsp) or for an \
        AI agent (mcp; `multiedit setup` adds it to the agents you use).",
    after_help = "Start with `multiedit apply --help`, or `multiedit setup --help` to connect your agents.",
    arg_required_else_help = true,
    disable_help_subcommand = false
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Apply a plan to files on disk
    #[command(long_about = "Apply a plan to files on disk.\n\n\
        Exits 0 when the plan was applied, 1 when it was refused (nothing written), 2 on a usage or I/O error.")]
    Apply(ApplyArgs),
    /// Run the language server on standard input/output (started by an editor)
    #[command(
        long_about = "Run the language server on standard input/output (--stdio is accepted and implied).\n\n\
        Logs go to the editor (window/logMessage) at their level, up to --log-level (default debug: all); \
        standard error carries only failures that cannot reach the editor.\n\
        Commands: multiedit.apply and multiedit.preview, each taking one plan or one patch \
        ({\"patch\": TEXT, \"format\", \"root\", \"match\", \"file_path\"}) and optionally the call's options \
        ({\"review\", \"agent\", \"diagnostics\"}). See docs/protocol.md.\n\
        Initialization options: {\"allowOutsideWorkspace\": false, \"applyEditTimeoutMs\": 10000, \"bridge\": true, \
        \"review\": \"never\", \"diagnostics\": false}"
    )]
    Lsp(LspArgs),
    /// Run the MCP server on standard input/output (started by an AI agent)
    #[command(
        long_about = "Run a Model Context Protocol server on standard input/output with five tools: \
        multiedit (apply a plan), multiedit_preview (its diff, nothing changed), multiedit_patch (a unified \
        diff, an apply_patch envelope or SEARCH/REPLACE blocks), multiedit_read (files as the editor holds \
        them), multiedit_write (create a file or replace its whole text) and multiedit_symbols (a file's outline \
        from the editor's language servers).\n\n\
        Agents start it themselves: `multiedit setup` writes their configuration, or add it by hand, \
        e.g. `claude mcp add multiedit -- multiedit mcp`.\n\n\
        It edits only inside the folder it was started in (the agent's project), whether through an editor \
        or on disk, unless given other folders with --root or told --allow-outside. Plans never touch a \
        .git folder unless told --allow-dot-git; patches never do. The files where agents' permissions, MCP \
        servers and hooks are configured (.claude/, .mcp.json, .vscode/ and others: docs/guarantees.md) are \
        written only through an editor that asks the user, unless told --allow-agent-config."
    )]
    Mcp(McpArgs),
    /// Add `multiedit mcp` to your AI agents' MCP configuration
    #[command(
        long_about = "Add `multiedit mcp` to your AI agents' MCP configuration.\n\n\
        Writes each agent's configuration file so that it runs this binary (its absolute path) with the \
        argument `mcp`, keeping every other server and setting in the file. With --project (the default) \
        the files go in the current folder where the agent reads them (.mcp.json, .cursor/mcp.json, \
        .vscode/mcp.json, .gemini/settings.json, opencode.json); with --user in your home folder. Codex CLI \
        only reads ~/.codex/config.toml. A file that cannot be changed safely (JSON with comments, a file \
        that does not parse) is left untouched and named in an error; the other agents are still set up.\n\n\
        With --route-edits, each agent's own file-editing tools are turned off too, so that its edits go \
        through multiedit (see docs/agents.md for what each agent gets); --undo-route-edits takes that back.\n\n\
        Exits 0 when every file was written (or already right), 1 when one was refused, 2 on a usage error."
    )]
    Setup(setup::SetupArgs),
    /// Check the installation: this binary, editors on the bridge, configured agents
    #[command(
        long_about = "Check the installation: the binary and its version, the editors running \
        `multiedit lsp` that `multiedit mcp` can reach (and why one cannot be reached), and the agents \
        configured to run `multiedit mcp`, with whether each configuration points at a binary that exists, \
        and whether each agent's edits go through multiedit or around it (its own edit tools).\n\n\
        Exits 0 when no problem was found, 1 otherwise."
    )]
    Doctor,
    /// Claude Code's PreToolUse hook for multiedit's tools (written by `setup --route-edits`)
    #[command(hide = true)]
    Hook {
        /// The agent that runs the hook
        #[arg(value_parser = ["claude-code"])]
        agent: String,
    },
    /// Print a shell completion script
    #[command(long_about = "Print a shell completion script, e.g.\n  \
        multiedit completions bash > ~/.local/share/bash-completion/completions/multiedit\n  \
        multiedit completions zsh > ~/.zfunc/_multiedit\n  \
        multiedit completions fish > ~/.config/fish/completions/multiedit.fish")]
    Completions {
        /// The shell to complete in
        shell: clap_complete::Shell,
    },
}

#[derive(Args)]
struct ApplyArgs {
    /// Write nothing; print a unified diff of what would change
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Print a JSON result object instead of text
    #[arg(long)]
    json: bool,
    /// What PLAN holds; auto tells a JSON plan, a unified diff, an apply_patch envelope and
    /// SEARCH/REPLACE blocks apart
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = ["auto", "plan", "diff", "apply-patch", "search-replace"])]
    format: String,
    /// The folder a patch's relative paths start from (default: the current folder); no file
    /// outside it is touched (for a JSON plan too, when given)
    #[arg(long, value_name = "DIR")]
    root: Option<std::path::PathBuf>,
    /// Let a patch (or a plan given with --root) touch files outside the root folder
    #[arg(long)]
    allow_outside: bool,
    /// exact (the default), or tolerant, which also matches hunks and edits whose whitespace,
    /// indentation or quotes differ from the file, when the result is certain. A JSON plan that names
    /// its own "match" must name the same
    #[arg(long = "match", value_name = "MATCH", value_parser = ["exact", "tolerant"])]
    matching: Option<String>,
    /// The file SEARCH/REPLACE blocks edit when they name none (as Roo Code sends it beside its
    /// blocks): relative to the root folder, or absolute
    #[arg(long, value_name = "PATH")]
    file_path: Option<String>,
    /// The plan or patch: a file, or - for standard input
    #[arg(value_name = "PLAN")]
    plan: String,
}

#[derive(Args)]
struct McpArgs {
    /// A folder plans may edit in, instead of the current folder (repeat for several)
    #[arg(long, value_name = "DIR")]
    root: Vec<std::path::PathBuf>,
    /// Let plans edit files anywhere this user may write
    #[arg(long, conflicts_with = "root")]
    allow_outside: bool,
    /// Let plans edit files inside .git folders (hooks, config: what makes git run commands); patches
    /// never may, as with git apply
    #[arg(long)]
    allow_dot_git: bool,
    /// Let plans write the files where agents' permissions, MCP servers and hooks and editors' tasks
    /// are configured (.claude/, .mcp.json, .vscode/, ...: docs/guarantees.md) without the user
    #[arg(long)]
    allow_agent_config: bool,
}

#[derive(Args)]
struct LspArgs {
    /// The most detailed log level sent to the editor
    #[arg(long, value_name = "LEVEL", ignore_case = true)]
    log_level: Option<LogLevel>,
    /// Talk over standard input/output (the only transport; accepted because editors pass it)
    #[arg(long, hide = true)]
    stdio: bool,
    /// The editor's process id (passed by vscode-languageclient; unused)
    #[arg(long = "clientProcessId", hide = true, value_name = "PID")]
    client_process_id: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogLevel {
    Error,
    #[value(alias = "warning")]
    Warn,
    Info,
    #[value(alias = "trace", alias = "log")]
    Debug,
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return parse_error(e),
    };
    match cli.command {
        Command::Apply(a) => apply::run(apply::Args {
            dry_run: a.dry_run,
            json: a.json,
            plan: a.plan,
            format: crate::formats::Format::from_name(&a.format),
            root: a.root,
            allow_outside: a.allow_outside,
            matching: a.matching.map(|m| {
                if m == "tolerant" {
                    crate::engine::Matching::Tolerant
                } else {
                    crate::engine::Matching::Exact
                }
            }),
            file_path: a.file_path,
        }),
        Command::Lsp(a) => {
            let level = a.log_level.map(|l| match l {
                LogLevel::Error => 1,
                LogLevel::Warn => 2,
                LogLevel::Info => 3,
                LogLevel::Debug => 4,
            });
            crate::lsp::run(level)
        }
        Command::Mcp(a) => crate::mcp::run(crate::mcp::Options {
            roots: a.root,
            allow_outside: a.allow_outside,
            allow_dot_git: a.allow_dot_git,
            allow_agent_config: a.allow_agent_config,
        }),
        Command::Setup(a) => setup::run(&a),
        Command::Doctor => doctor::run(),
        Command::Hook { .. } => hook::run(),
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "multiedit", &mut buf);
            out(&String::from_utf8_lossy(&buf));
            ExitCode::SUCCESS
        }
    }
}

/// `--help` and `--version` print to standard output and exit 0. Errors exit 2 with a first line of
/// our own naming the argument (`multiedit lsp: unknown argument --bogus`), then clap's tips and usage.
fn parse_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            out(&e.render().to_string());
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let rendered = e.render().to_string();
    let cmd = match std::env::args().nth(1) {
        Some(sub) if Cli::command().find_subcommand(&sub).is_some() => format!("multiedit {sub}"),
        _ => "multiedit".to_string(),
    };
    let string = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let first = match e.kind() {
        ErrorKind::UnknownArgument => string(ContextKind::InvalidArg).map(|a| {
            if a.starts_with('-') {
                format!("{cmd}: unknown argument {a}")
            } else {
                format!("{cmd}: unexpected argument {a}")
            }
        }),
        ErrorKind::MissingRequiredArgument => match e.get(ContextKind::InvalidArg) {
            Some(ContextValue::Strings(missing)) if missing.iter().any(|m| m == "<PLAN>") => {
                Some("multiedit: missing PLAN (a JSON file, or - for standard input)".to_string())
            }
            _ => None,
        },
        ErrorKind::InvalidValue => {
            let arg = string(ContextKind::InvalidArg).unwrap_or_default();
            let name = arg.split(' ').next().unwrap_or_default().to_string();
            match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(valid)) => {
                    let given = string(ContextKind::InvalidValue).unwrap_or_default();
                    Some(format!(
                        "{cmd}: {name} takes one of {}, not {given:?}",
                        valid.join(", ")
                    ))
                }
                _ => None,
            }
        }
        _ => None,
    };
    match first {
        // clap's own first line ("error: ...") says the same; keep its tips and usage.
        Some(line) => {
            let rest = rendered.split_once("\n\n").map(|(_, r)| r).unwrap_or("");
            err(&format!("{line}\n\n{rest}"));
        }
        None => err(&rendered),
    }
    ExitCode::from(2)
}
