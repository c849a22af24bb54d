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

use super::agents::{codex_home, home, Agent, Scope, SERVER_NAME};
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
    /// Claude Code: the command the project's `.mcp.json` ran when setup approved its multiedit server
    /// here (`enabledMcpjsonServers`); the approval is for that command only (`doctor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approved: Option<String>,
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
        items: Vec<Value>,
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
    /// The TOML key `key` of the table at `table` set to `value`.
    Toml {
        table: Vec<String>,
        key: String,
        value: String,
    },
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
    let (program, args) = super::agents::entry_command(Agent::ClaudeCode, &entry)?;
    Some(
        std::iter::once(program)
            .chain(args)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The command setup approved in Claude Code's `file` (`Record::approved`), if it did.
pub(crate) fn approved_command(file: &Path) -> Option<String> {
    let real = crate::paths::real_path(file).unwrap_or_else(|_| file.to_path_buf());
    let (_, records) = read_records().ok()?;
    records
        .routes
        .into_iter()
        .find(|r| r.file == real)?
        .approved
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
) -> Result<String, (String, String)> {
    let name = agent.name();
    let paths: Vec<PathBuf> = targets(agent, scope, project, agents_md, "", true)
        .map_err(|why| (String::new(), why))?
        .into_iter()
        .filter_map(|t| match t {
            Target::None(_) => None,
            Target::Json { path, .. }
            | Target::File { path, .. }
            | Target::Block { path, .. }
            | Target::Toml { path, .. } => Some(path),
        })
        .collect();
    if paths.is_empty() {
        return Ok(format!(
            "{name}: nothing to undo (setup writes no switch for it here)\n"
        ));
    }
    let mut said = String::new();
    let mut nothing = Vec::new();
    for path in paths {
        match undo_one(agent, scope, project, path, dry_run) {
            Ok(Ok(one)) => said.push_str(&one),
            Ok(Err(none)) => nothing.push(none),
            Err(why) => return Err((said, why)),
        }
    }
    if said.is_empty() {
        if let Some(first) = nothing.first() {
            said = first.clone();
        }
    }
    Ok(said)
}

/// Takes back what `route` wrote in `path`: `Ok(Ok(said))`, or `Ok(Err(said))` when there was no
/// record of it.
fn undo_one(
    agent: Agent,
    scope: Scope,
    project: &Path,
    path: PathBuf,
    dry_run: bool,
) -> Result<Result<String, String>, String> {
    let name = agent.name();
    // Nothing is read, written or removed through a link that leads out of the project (`load`).
    if scope == Scope::Project && path.starts_with(project) {
        inside_project(&path, project, "take back what setup wrote there by hand")?;
    }
    // Resolved as `load` resolved it when the record was made.
    let real = crate::paths::real_path(&path).unwrap_or(path.clone());
    let (records_at, mut records) = read_records()?;
    let Some(i) = records.routes.iter().position(|r| r.file == real) else {
        return Ok(Err(format!(
            "{name}: nothing to undo in {}: setup did not route its edits there\n",
            real.display()
        )));
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
        return Ok(Ok(format!("{name}: {shown} is gone; nothing to undo\n")));
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
    Ok(Ok(said))
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
                        "{item} is no longer in {} as setup wrote it (changed or removed): nothing taken back for it",
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
        Wrote::Toml { table, key, value } => {
            let dotted = format!("{}.{key}", table.join("."));
            match text.parse::<toml_edit::DocumentMut>() {
                Ok(mut doc) => {
                    let mut at = Some(doc.as_item_mut());
                    for k in table {
                        at = at.and_then(|i| i.get_mut(k.as_str()));
                    }
                    if let Some(t) = at.and_then(|t| t.as_table_like_mut()) {
                        match t.get(key).map(|v| v.as_str().map(str::to_string)) {
                            Some(Some(v)) if v == *value => {
                                t.remove(key);
                                text = doc.to_string();
                            }
                            Some(now) => left.push(format!(
                                "{dotted} is now {}, not the {value:?} setup wrote: left as it is",
                                now.map(|v| format!("{v:?}"))
                                    .unwrap_or_else(|| "another value".into())
                            )),
                            None => {}
                        }
                    }
                }
                Err(_) => left.push(format!(
                    "the file is no longer valid TOML: {dotted} left as it is"
                )),
            }
        }
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

/// The TOML text `text` with `key = value` set in the table at `table`, which must be there (setup
/// wrote it); a value of the user's there stays.
fn add_toml(text: &str, table: &[&str], key: &str, value: &str) -> Result<Added, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        format!(
            "is not valid TOML ({})",
            e.to_string().trim().replace('\n', " ")
        )
    })?;
    let dotted = format!("{}.{key}", table.join("."));
    let mut at = Some(doc.as_item_mut());
    for k in table {
        at = at.and_then(|i| i.get_mut(k));
    }
    let Some(t) = at.and_then(|t| t.as_table_like_mut()) else {
        return Ok(Added::Left(format!(
            "{} is not there yet (setup writes it first), so {dotted} was not set",
            table.join(".")
        )));
    };
    match t.get(key) {
        Some(v) if v.as_str() == Some(value) => return Ok(Added::Already),
        Some(v) => {
            return Ok(Added::Left(format!(
                "{dotted} is already set to {} (setup would set {value:?})",
                v.as_value()
                    .map(|v| v.to_string().trim().to_string())
                    .unwrap_or_default()
            )))
        }
        None => {}
    }
    t.insert(key, toml_edit::value(value));
    let mut new = doc.to_string();
    let crlf = text.contains("\r\n") && text.matches('\n').count() == text.matches("\r\n").count();
    if crlf {
        new = new.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    Ok(Added::Changed(
        new,
        Wrote::Toml {
            table: table.iter().map(|k| k.to_string()).collect(),
            key: key.to_string(),
            value: value.to_string(),
        },
    ))
}

/// The JSON text `text` (empty: a new file) with `add` made.
fn add_json(text: &str, add: &Add) -> Result<Added, String> {
    let (path, leaf) = match add {
        Add::List { path, items } => (*path, Value::Array(items.clone())),
        Add::Member { path, value } => (*path, Value::from(*value)),
    };
    let wrote = |made: Option<usize>, items: Vec<Value>| {
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
        Add::List { items, .. } => items.clone(),
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
                let missing: Vec<&Value> = items.iter().filter(|i| !present.contains(i)).collect();
                if missing.is_empty() {
                    return Ok(Added::Already);
                }
                let new = insert_elements(text, at, &elements, &missing);
                checked(
                    text,
                    new,
                    wrote(None, missing.iter().map(|v| (*v).clone()).collect()),
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
fn insert_elements(whole: &str, array: &str, elements: &[&RawValue], items: &[&Value]) -> String {
    let crlf = whole.contains("\r\n");
    let start = offset_in(whole, array);
    let quoted: Vec<String> = items.iter().map(|i| i.to_string()).collect();
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
fn remove_json(text: &str, keys: &[&str], item: Option<&Value>) -> Option<String> {
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
            .position(|e| serde_json::from_str::<Value>(e.get()).ok().as_ref() == Some(item))?;
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
        Agent::ClaudeCode => {
            let files = [
                project.join(".claude/settings.local.json"),
                project.join(".claude/settings.json"),
                home()?.join(".claude/settings.json"),
            ];
            // Per tool: where it is denied outright, else a rule that denies it for some paths only.
            let mut whole: Vec<(&str, PathBuf)> = Vec::new();
            let mut some: Vec<(&str, String, PathBuf)> = Vec::new();
            for f in &files {
                let Some(Value::Array(list)) = crate::disk::read_text_capped(f)
                    .ok()
                    .and_then(|t| value_at(&t, &["permissions", "deny"]))
                else {
                    continue;
                };
                for tool in CLAUDE_DENIED {
                    for rule in list.iter().filter_map(Value::as_str) {
                        let everywhere = rule == tool
                            || rule == format!("{tool}(*)")
                            || rule == format!("{tool}(**)");
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
        Agent::Opencode => {
            // In each folder its opencode.jsonc wins over its opencode.json; the project's over the
            // user's.
            let mut files = Vec::new();
            for scope in [Scope::Project, Scope::User] {
                let (f, _) = agent.config_path(scope, project)?;
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
        Agent::Gemini => gemini_routed(),
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
        Agent::Cursor | Agent::Vscode => Err(
            match targets(agent, Scope::Project, project, false, "", false)?.pop() {
                Some(Target::None(why)) => why,
                _ => String::new(),
            },
        ),
    }
}

/// Gemini CLI's user policies (`~/.gemini/policies/*.toml`): for replace and write_file, the rule of
/// the highest priority that holds in every mode decides, as its policy engine decides.
fn gemini_routed() -> Result<Routed, String> {
    let dir = home()?.join(".gemini/policies");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    // Per tool: the priority, decision and file of the strongest rule.
    let mut strongest: Vec<(&str, f64, String, PathBuf)> = Vec::new();
    for f in &files {
        let Some(doc) = crate::disk::read_text_capped(f)
            .ok()
            .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        else {
            continue;
        };
        let rules = doc.get("rule").and_then(|r| r.as_array_of_tables());
        for rule in rules.into_iter().flatten() {
            let conditions = [
                "argsPattern",
                "commandPrefix",
                "commandRegex",
                "mcpName",
                "modes",
                "subagent",
                "interactive",
            ];
            let Some(decision) = rule.get("decision").and_then(|d| d.as_str()) else {
                continue;
            };
            if conditions.iter().any(|k| rule.get(k).is_some()) {
                continue;
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
    let denied: Vec<&(&str, f64, String, PathBuf)> =
        strongest.iter().filter(|s| s.2 == "deny").collect();
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

/// A JSON-with-comments text (`//` and `/* */` comments, trailing commas) as a value, as OpenCode
/// reads its `.jsonc` files; `None` if it does not parse.
pub(crate) fn jsonc(text: &str) -> Option<Value> {
    let chars: Vec<char> = text.chars().collect();
    let mut plain: Vec<char> = Vec::with_capacity(chars.len());
    let (mut i, mut in_string) = (0, false);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if in_string {
            plain.push(c);
            if c == '\\' {
                plain.extend(next);
                i += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            plain.push(c);
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            plain.push(' ');
            continue;
        } else {
            plain.push(c);
        }
        i += 1;
    }
    // Trailing commas: a comma outside strings whose next non-space character closes a container.
    let mut out = String::with_capacity(plain.len());
    let mut in_string = false;
    let mut k = 0;
    while k < plain.len() {
        let c = plain[k];
        if in_string {
            out.push(c);
            if c == '\\' && k + 1 < plain.len() {
                out.push(plain[k + 1]);
                k += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == ',' {
            let after = plain[k + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(after, Some('}') | Some(']')) {
                out.push(c);
            }
        } else {
            in_string = c == '"';
            out.push(c);
        }
        k += 1;
    }
    serde_json::from_str(&out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(path: &'static [&'static str], items: &[&'static str]) -> Add {
        Add::List {
            path,
            items: items.iter().map(|i| json!(i)).collect(),
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

#[cfg(test)]
mod jsonc_tests {
    use super::jsonc;
    use serde_json::json;

    #[test]
    fn comments_and_trailing_commas_are_read_as_opencode_reads_them() {
        assert_eq!(
            jsonc("{\n  // mine\n  \"permission\": {\"edit\": \"allow\", /* x */},\n  \"url\": \"http://a//b\",\n}\n"),
            Some(json!({"permission": {"edit": "allow"}, "url": "http://a//b"}))
        );
        assert_eq!(jsonc(r#"{"a": "\",//"}"#), Some(json!({"a": "\",//"})));
        assert_eq!(jsonc("{"), None);
    }
}
