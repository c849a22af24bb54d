//! Each agent's switch: where `--route-edits` turns its own edit tools off, for a scope, and what it
//! writes there (or why there is none).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cli::agents::{codex_home, home, Agent, Scope, SERVER_NAME};

/// Claude Code's built-in tools that edit text files. NotebookEdit stays: multiedit refuses notebooks.
/// Claude Code 2.1 has no MultiEdit tool and warns that a rule naming it "matches no known tool".
pub(crate) const CLAUDE_DENIED: [&str; 2] = ["Edit", "Write"];
/// Gemini CLI's tools that edit files (`replace` is its edit tool).
pub(crate) const GEMINI_DENIED: [&str; 2] = ["replace", "write_file"];

/// The Gemini CLI policy multiedit owns, whole. Its own edit tools are denied in every mode; multiedit's
/// read-only tools run without asking, as its read_file does; multiedit's edit tools run without
/// asking in `auto_edit`, as its replace and write_file do there (its own write.toml), and otherwise get
/// what Gemini gives any MCP tool: asked interactively, allowed in `yolo`, and in a headless run of the
/// default mode left out, as replace is.
pub(crate) const GEMINI_POLICY: &str = "\
# Written by `multiedit setup gemini --user --route-edits`: Gemini CLI's own file-editing tools are
# turned off, so that its edits go through the multiedit MCP server (the editor's buffers, review, one
# undo, diagnostics), and multiedit's tools are asked for where replace was asked for and run without
# asking where it ran without asking. `multiedit setup gemini --user --undo-route-edits` removes this file.
[[rule]]
toolName = [\"replace\", \"write_file\"]
decision = \"deny\"
priority = 900
denyMessage = \"Edit files with the multiedit tools (multiedit, multiedit_patch, multiedit_write).\"

[[rule]]
mcpName = \"multiedit\"
toolName = [\"multiedit_read\", \"multiedit_preview\", \"multiedit_symbols\"]
decision = \"allow\"
priority = 50

[[rule]]
mcpName = \"multiedit\"
toolName = [\"multiedit\", \"multiedit_patch\", \"multiedit_write\"]
decision = \"allow\"
priority = 15
modes = [\"autoEdit\"]
";

/// The hook `--route-edits` gives Claude Code (`multiedit hook claude-code`, `hook.rs`): it lets
/// multiedit's tools run without asking where Claude Code's Edit would have run without asking.
pub(crate) const CLAUDE_HOOK_MATCHER: &str = "mcp__multiedit__.*";

/// Claude Code's hook entry for `PreToolUse`, running `command`.
pub(crate) fn claude_hook(command: &str) -> Value {
    json!({"matcher": CLAUDE_HOOK_MATCHER, "hooks": [{"type": "command", "command": format!("{command} hook claude-code")}]})
}

/// What Codex CLI's server entry gets: its tools run without asking, under approval policy `never` too
/// (`codex exec`); in its read-only sandbox `multiedit mcp` refuses to write (Codex tells it the
/// sandbox with each call), as apply_patch is refused there.
pub(crate) const CODEX_APPROVAL: (&str, &str) = ("default_tools_approval_mode", "approve");

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
    /// A block appended to a Markdown file (or an ignore file).
    Block { path: PathBuf, text: String },
    /// A key set in a TOML table that must be there already (`table`: its keys from the top).
    Toml {
        path: PathBuf,
        table: Vec<&'static str>,
        key: &'static str,
        value: &'static str,
    },
    /// No switch: why, and what the user may do.
    None(String),
}

/// One thing to add to a JSON file: strings into the array at `path` (made if missing), or the string
/// member at `path` set (left alone when the user has set it otherwise).
#[derive(Clone, Debug)]
pub(crate) enum Add {
    List {
        path: &'static [&'static str],
        items: Vec<Value>,
    },
    Member {
        path: &'static [&'static str],
        value: &'static str,
    },
}

/// The switches of `agent` for `scope`, each in its file (or why there is none). `agents_md`: Codex's
/// instruction was asked for; `command`: how the agent's files name this binary (`agents::command`);
/// `undo`: for the undo, every file routing may have written, whatever it holds now.
pub(crate) fn targets(
    agent: Agent,
    scope: Scope,
    project: &Path,
    agents_md: bool,
    command: &str,
    undo: bool,
) -> Result<Vec<Target>, String> {
    Ok(match agent {
        Agent::ClaudeCode => {
            let deny = Add::List { path: &["permissions", "deny"], items: CLAUDE_DENIED.iter().map(|t| json!(t)).collect() };
            // Where Edit ran without asking (acceptEdits, an allow rule), multiedit's edit tools do too.
            let hook = Add::List { path: &["hooks", "PreToolUse"], items: vec![claude_hook(command)] };
            match scope {
                // The user's own file for this project (kept out of git, below), not the team's
                // .claude/settings.json. It also approves the project's multiedit server, which Claude
                // Code otherwise asks about once: a routed agent without it could not edit.
                Scope::Project => {
                    let mut all = vec![Target::Json {
                        path: project.join(".claude/settings.local.json"),
                        adds: vec![deny, hook, Add::List { path: &["enabledMcpjsonServers"], items: vec![json!(SERVER_NAME)] }],
                    }];
                    all.extend(git_exclude(project, CLAUDE_LOCAL, undo));
                    all
                }
                Scope::User => vec![Target::Json { path: home()?.join(".claude/settings.json"), adds: vec![deny, hook] }],
            }
        }
        Agent::Opencode => {
            let (path, _) = agent.config_path(scope, project)?;
            vec![Target::Json { path, adds: vec![Add::Member { path: &["permission", "edit"], value: "deny" }] }]
        }
        Agent::Gemini => vec![match scope {
            Scope::User => Target::File { path: home()?.join(".gemini/policies/multiedit.toml"), text: GEMINI_POLICY },
            Scope::Project => Target::None(
                "Gemini CLI has no switch for one project that it reads without a warning (it warns at every start \
                 that tools.exclude is deprecated, and it ignores a project's .gemini/policies/). Run `multiedit \
                 setup gemini --user --route-edits` to write a policy in ~/.gemini/policies/ that turns off \
                 replace and write_file in every project."
                    .into(),
            ),
        }],
        Agent::Codex => {
            let (path, _) = agent.config_path(scope, project)?;
            let mut all = vec![Target::Toml {
                path,
                table: vec!["mcp_servers", SERVER_NAME],
                key: CODEX_APPROVAL.0,
                value: CODEX_APPROVAL.1,
            }];
            if agents_md || undo {
                let path = match scope {
                    Scope::Project => project.join("AGENTS.md"),
                    Scope::User => codex_home()?.join("AGENTS.md"),
                };
                all.push(Target::Block { path, text: AGENTS_MD_BLOCK.to_string() });
            } else {
                all.push(Target::None(
                    "Codex CLI has no setting that turns off apply_patch (and it runs apply_patch given to its shell too). \
                     With --agents-md, setup writes an instruction into AGENTS.md that asks the model to edit with \
                     multiedit's tools; the model may still use apply_patch."
                        .into(),
                ));
            }
            all
        }
        Agent::Cursor => vec![Target::None("Cursor has no setting in a file that turns off its own edit tool; its edits still go around multiedit.".into())],
        Agent::Vscode => vec![Target::None(
            "VS Code's agent mode has no setting in a file that turns off its own edit tools; pick the tools in the \
             chat's tool picker (Configure Tools), where the MultiEdit extension's tools are offered."
                .into(),
        )],
    })
}

/// Claude Code's settings of this user for a project, which stay out of git.
pub(crate) const CLAUDE_LOCAL: &str = ".claude/settings.local.json";

/// The lines that keep `file` (relative to the project) out of git in this clone only: the
/// repository's `info/exclude`, which is never committed. Claude Code keeps its
/// `.claude/settings.local.json` out of git through an ignore rule too (it writes the rule in the
/// user's global git ignore file); setup touches nothing outside the project. None when the project
/// is not in a git work tree, git is missing, the file is ignored already (`undo`: whatever it is
/// now), or the exclude file lies outside the project (a linked work tree).
fn git_exclude(project: &Path, file: &str, undo: bool) -> Option<Target> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(project)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
    };
    let at = git(&["rev-parse", "--git-path", "info/exclude"]).filter(|o| o.status.success())?;
    let at = String::from_utf8(at.stdout).ok()?;
    let path = project.join(at.trim_end_matches(['\n', '\r']));
    if !path.starts_with(project) {
        return None;
    }
    if !undo && git(&["check-ignore", "-q", file]).is_some_and(|o| o.status.success()) {
        return None;
    }
    Some(Target::Block {
        path,
        text: format!(
            "# {file}: this user's settings for the project, kept out of git (multiedit setup --route-edits; \
             --undo-route-edits removes these lines)\n/{file}\n"
        ),
    })
}
