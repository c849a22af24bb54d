//! The one gate: whether whoever asks may read or write a path. Every front end (`multiedit apply`, the
//! language server's commands, the MCP tools, the bridge) asks it, so none keeps a list of its own.
//!
//! Three rules, in this order, each judged on the path as written and as the kernel resolves it, below
//! the folder that holds it (`Folders`; the whole path where none does):
//! 1. multiedit's own private folders (journals, the bridge's tokens): nobody, ever (`disk::private`);
//! 2. `.git`, by git's own reading of a component (`formats::git_path`): never for an agent, unless
//!    the user allowed it (`--allow-dot-git`, `allowDotGit`); a person's plan may (patches never may,
//!    which their parser refuses);
//! 3. the files where an agent's permissions, MCP servers and hooks or an editor's automatic tasks are
//!    configured (`PROTECTED`): readable, but an agent's write needs the user: asked once with the diff
//!    where an editor can ask, refused with the switch that lifts it where none can.
//!
//! Who asks: an agent is everything that arrives over MCP or the bridge, and a language-server plan that
//! carries an `agent` option (VS Code's language-model tool, `@multiedit`); a person is the palette and
//! `multiedit apply`. An agent's own shell is outside what multiedit can judge (docs/guarantees.md).

use std::path::{Component, Path, PathBuf};

use crate::paths::{self, Folders};
use crate::refusal::{Kind, Refusal};

/// Who sent a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    /// Someone at the keyboard: the palette, `multiedit apply`.
    Person,
    /// An AI agent: MCP, the bridge, a language-server plan with an `agent` option.
    Agent,
}

/// What the user let agents do beyond the default (the server's flags and settings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Allow {
    /// Write inside `.git` (`multiedit mcp --allow-dot-git`, initialization option `allowDotGit`).
    #[serde(default)]
    pub(crate) dot_git: bool,
    /// Write the protected configuration files without being asked (`--allow-agent-config`,
    /// initialization option `allowAgentConfig`).
    #[serde(default)]
    pub(crate) agent_config: bool,
}

impl Allow {
    /// Nothing beyond the default.
    pub(crate) fn is_none(&self) -> bool {
        *self == Allow::default()
    }

    /// Either side's permission: what the sender's server and the editor's each allow.
    pub(crate) fn or(self, other: Allow) -> Allow {
        Allow {
            dot_git: self.dot_git || other.dot_git,
            agent_config: self.agent_config || other.agent_config,
        }
    }
}

/// What a request does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read it (a read, an outline): nothing is written.
    Read,
    /// Check an edit of it without making it (a dry run, a preview): judged as a read, worded as the
    /// edit it previews.
    Preview,
    /// Write, create, delete or move it.
    Write,
}

impl Access {
    /// How a refusal says what was not done: "Cannot edit …. Nothing was changed." or "Cannot read ….
    /// Nothing was read.".
    pub(crate) fn words(self) -> (&'static str, &'static str) {
        match self {
            Access::Read => ("read", "read"),
            Access::Write | Access::Preview => ("edit", "changed"),
        }
    }
}

/// A protected file an agent's write reaches: its name as the request gave it, and what it configures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Protected {
    pub(crate) name: String,
    /// The path below the project's folder (`.claude/settings.json`), or `~/…` for a home dotfile.
    pub(crate) shown: String,
    pub(crate) holds: &'static str,
}

/// One protected name: a folder (every file below it) or a file, compared without letter case (macOS
/// and Windows read `.Claude` as `.claude`), and what it configures. The list and the reasons for what is
/// in and out are in docs/guarantees.md ("Protected paths").
struct Rule {
    name: &'static str,
    folder: bool,
    holds: &'static str,
}

const PROTECTED: &[Rule] = &[
    Rule {
        name: ".claude",
        folder: true,
        holds: "Claude Code's settings, permissions, hooks and agents",
    },
    Rule {
        name: ".mcp.json",
        folder: false,
        holds: "the MCP servers Claude Code starts for this project",
    },
    Rule {
        name: ".gemini",
        folder: true,
        holds: "Gemini CLI's settings, MCP servers and policies",
    },
    Rule {
        name: ".codex",
        folder: true,
        holds: "Codex's configuration and MCP servers",
    },
    Rule {
        name: ".cursor",
        folder: true,
        holds: "Cursor's rules, hooks and MCP servers",
    },
    Rule {
        name: "opencode.json",
        folder: false,
        holds: "OpenCode's permissions and MCP servers",
    },
    Rule {
        name: "opencode.jsonc",
        folder: false,
        holds: "OpenCode's permissions and MCP servers",
    },
    Rule {
        name: ".opencode",
        folder: true,
        holds: "OpenCode's agents, commands and plugins",
    },
    Rule {
        name: ".vscode",
        folder: true,
        holds: "VS Code's settings, tasks (some run when the folder opens) and MCP servers",
    },
    Rule {
        name: ".zed",
        folder: true,
        holds: "Zed's settings, including what its agent may run",
    },
    Rule {
        name: ".husky",
        folder: true,
        holds: "git hooks that Husky has git run",
    },
    Rule {
        name: ".devcontainer",
        folder: true,
        holds: "the dev container's set-up, whose initializeCommand runs on this machine",
    },
    Rule {
        name: ".multiedit",
        folder: true,
        holds: "the language servers multiedit starts for this project (the programs it runs)",
    },
];

/// `.github/` folders whose files an agent runs as its own: VS Code always asks before an agent edits
/// them, whatever its settings.
const GITHUB_PROTECTED: &[Rule] = &[
    Rule {
        name: "agents",
        folder: true,
        holds: "GitHub Copilot's custom agents",
    },
    Rule {
        name: "hooks",
        folder: true,
        holds: "GitHub Copilot's hooks, commands it runs",
    },
];

const WORKSPACE_FILE: Rule = Rule {
    name: ".code-workspace",
    folder: false,
    holds: "a VS Code workspace's settings and tasks",
};

const HOME_DOTFILE: &str =
    "your home folder's own configuration (shell, SSH, agents), outside the project";

/// The gate for one request: who sent it, what the user allowed, and the folders its paths are judged
/// below (`None`: anywhere, `--allow-outside`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate<'a> {
    pub(crate) who: Who,
    pub(crate) allow: Allow,
    pub(crate) folders: Option<&'a Folders>,
}

/// How to lift a rule, in the words of the front end that refuses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptOut {
    pub(crate) dot_git: &'static str,
    pub(crate) agent_config: &'static str,
}

/// `multiedit mcp`'s switches.
pub(crate) const MCP_OPT_OUT: OptOut = OptOut {
    dot_git: "To allow it, start the server as `multiedit mcp --allow-dot-git`, in the agent's MCP configuration.",
    agent_config: "If the user wants it, they can make the change themselves, or start the server as `multiedit mcp \
                   --allow-agent-config` in the agent's MCP configuration (or run it where an editor running multiedit \
                   holds the project, which asks them).",
};

/// The language server's settings, for a plan from an agent through the bridge: either side's switch.
pub(crate) const BRIDGE_OPT_OUT: OptOut = OptOut {
    dot_git: "To allow it, start the agent's server as `multiedit mcp --allow-dot-git`, or set the editor's \
              initialization option {\"allowDotGit\": true} (in VS Code: the setting multiedit.allowDotGit).",
    agent_config: "If the user wants it, they can make the change themselves, or start the agent's server as \
                   `multiedit mcp --allow-agent-config`, or set the editor's initialization option \
                   {\"allowAgentConfig\": true} (in VS Code: the setting multiedit.allowAgentConfig).",
};

/// `multiedit apply`'s: the user's own plan may name such files itself; what a language server's
/// rename reaches is judged for them.
pub(crate) const CLI_OPT_OUT: OptOut = OptOut {
    dot_git: "A plan run with `multiedit apply` may name a file inside .git itself, but a rename may not reach one.",
    agent_config: "Name the file in the plan itself to change it.",
};

/// The language server's settings.
pub(crate) const LSP_OPT_OUT: OptOut = OptOut {
    dot_git: "To allow it, set the initialization option {\"allowDotGit\": true} (in VS Code: the setting \
              multiedit.allowDotGit).",
    agent_config: "If the user wants it, they can make the change themselves, or set the initialization option \
                   {\"allowAgentConfig\": true} (in VS Code: the setting multiedit.allowAgentConfig).",
};

impl Gate<'_> {
    /// Judges each path `names` gives (as the request names them) for `access`: `Err` with the refusal of
    /// the first that may not be touched at all; else the protected files an agent's write reaches, which
    /// need the user (`ask_or_refuse`). `opt_out`: how the front end's user lifts a rule.
    pub(crate) fn judge<'n>(
        &self,
        access: Access,
        names: impl IntoIterator<Item = &'n str>,
        opt_out: &OptOut,
    ) -> Result<Vec<Protected>, Refusal> {
        let mut protected = Vec::new();
        for name in names {
            let path = paths::to_path(name)?;
            crate::disk::private::refuse_path(name, &path, access.words())?;
            if self.who == Who::Person {
                continue;
            }
            if !self.allow.dot_git {
                if let Some((component, why)) = self.dot_git(&path) {
                    let words = access.words();
                    return Err(git_refusal(name, &component, why, opt_out.dot_git, words));
                }
            }
            if access == Access::Write && !self.allow.agent_config {
                let readings = readings(&path);
                if let Some(p) = readings.iter().find_map(|r| self.protected(name, r)) {
                    protected.push(p);
                }
            }
        }
        Ok(protected)
    }

    /// Refuses the files a rename reaches (`names`, those the plan did not name itself) inside `.git`,
    /// whoever sent it, unless the user allowed `.git`: the language server chose them, not the sender.
    pub(crate) fn refuse_reached<'n>(
        &self,
        names: impl IntoIterator<Item = &'n str>,
        opt_out: &OptOut,
    ) -> Result<(), Refusal> {
        if self.allow.dot_git {
            return Ok(());
        }
        let mut inside = Vec::new();
        for name in names {
            if self.dot_git(&paths::to_path(name)?).is_some() {
                inside.push(name);
            }
        }
        if inside.is_empty() {
            return Ok(());
        }
        Err(Refusal::new(
            Kind::OutsideWorkspace,
            format!(
                "The rename also edits {} inside a .git folder, which the language server's rename reached and \
                 multiedit does not edit for it: a planted hook or setting there makes git run commands. Nothing was \
                 changed. {}",
                inside.join(", "),
                opt_out.dot_git
            ),
        )
        .in_file(inside[0]))
    }

    /// The component by which `path` (as written, or resolved) lies inside `.git` below its folder, and
    /// why git reads it so.
    fn dot_git(&self, path: &Path) -> Option<(String, &'static str)> {
        readings(path).iter().find_map(|reading| {
            let below = self.below(reading).unwrap_or(reading);
            multiedit_engine::formats::git_path::refused_component(&below.to_string_lossy())
                .map(|(c, why)| (c.to_string(), why))
        })
    }

    /// `reading` below the deepest folder that holds it; `None` when none does.
    fn below<'p>(&self, reading: &'p Path) -> Option<&'p Path> {
        self.folders?
            .as_slice()
            .iter()
            .filter(|f| reading.starts_with(f))
            .max_by_key(|f| f.as_os_str().len())
            .and_then(|f| reading.strip_prefix(f).ok())
    }

    /// The rule `reading` (a path `name` is read as) falls under, if any.
    fn protected(&self, name: &str, reading: &Path) -> Option<Protected> {
        let found = |shown: &Path, holds: &'static str| Protected {
            name: name.to_string(),
            shown: shown.display().to_string(),
            holds,
        };
        if let Some(below) = self.below(reading) {
            return rule_of(below).map(|holds| found(below, holds));
        }
        // Outside every folder (only with --allow-outside): the user's home dotfiles are theirs.
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        if let Some(in_home) = home.as_deref().and_then(|h| reading.strip_prefix(h).ok()) {
            if let Some(Component::Normal(first)) = in_home.components().next() {
                if first.to_string_lossy().starts_with('.') {
                    return Some(found(&Path::new("~").join(in_home), HOME_DOTFILE));
                }
            }
        }
        rule_of(reading).map(|holds| found(reading, holds))
    }
}

/// What the protected file `below` (a path below a project's folder) configures, if it is one.
fn rule_of(below: &Path) -> Option<&'static str> {
    let parts: Vec<String> = below
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let last = parts.len().checked_sub(1)?;
    for (i, part) in parts.iter().enumerate() {
        // A folder rule holds for the files below the folder, a file rule for the file itself.
        let is_last = i == last;
        if let Some(rule) = PROTECTED
            .iter()
            .find(|r| r.folder != is_last && same_name(part, r.name))
        {
            return Some(rule.holds);
        }
        if same_name(part, ".github") && i + 1 < last {
            if let Some(rule) = GITHUB_PROTECTED
                .iter()
                .find(|r| same_name(&parts[i + 1], r.name))
            {
                return Some(rule.holds);
            }
        }
        if is_last && part.to_ascii_lowercase().ends_with(WORKSPACE_FILE.name) {
            return Some(WORKSPACE_FILE.holds);
        }
    }
    None
}

/// A path as written (its `..` taken textually, as an editor reads a URI) and as the kernel resolves it.
fn readings(path: &Path) -> Vec<PathBuf> {
    [Some(paths::lexical(path)), paths::real_path(path).ok()]
        .into_iter()
        .flatten()
        .collect()
}

/// Names compared as macOS and Windows compare them by default: without letter case.
fn same_name(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// The refusal of a path inside `.git` for an agent; `(verb, done)` as `Access::words` gives them.
fn git_refusal(
    name: &str,
    component: &str,
    why: &str,
    opt_out: &str,
    (verb, done): (&str, &str),
) -> Refusal {
    Refusal::new(
        Kind::OutsideWorkspace,
        format!(
            "Cannot {verb} {name}: it lies inside a .git folder (its component `{component}` {why}). An agent's \
             plan may not change git's own files, where a planted hook or setting makes git run commands. \
             Nothing was {done}. {opt_out}"
        ),
    )
    .in_file(name)
}

/// The refusal of an agent's write to protected files where nobody can be asked (`opt_out`: the front
/// end's switch).
pub(crate) fn refuse_protected(protected: &[Protected], opt_out: &OptOut) -> Refusal {
    let names: Vec<&str> = protected.iter().map(|p| p.name.as_str()).collect();
    let one = protected.len() == 1;
    Refusal::new(
        Kind::Protected,
        format!(
            "Cannot edit {}: {} {}. An agent may not change {} on its own: {} what the agent and the editor may \
             run, and no editor is here to ask the user. Nothing was changed. {}",
            names.join(", "),
            if one { "it holds" } else { "they hold" },
            held(protected),
            if one { "such a file" } else { "such files" },
            if one { "it decides" } else { "they decide" },
            opt_out.agent_config
        ),
    )
    .in_file(&protected[0].name)
}

/// What the protected files hold, each said once.
fn held(protected: &[Protected]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for p in protected {
        if !out.contains(&p.holds) {
            out.push(p.holds);
        }
    }
    out.join("; ")
}

/// Why the user is asked, for the approval an editor shows: "An agent's change to .claude/settings.json,
/// which holds Claude Code's settings, permissions, hooks and agents: an agent may not change it
/// without you."
pub(crate) fn ask_reason(protected: &[Protected]) -> String {
    let shown: Vec<&str> = protected.iter().map(|p| p.shown.as_str()).collect();
    let one = protected.len() == 1;
    format!(
        "This change writes {}, which {} {}. An agent may not change {} without you: {} what it and the editor may run.",
        shown.join(", "),
        if one { "holds" } else { "hold" },
        held(protected),
        if one { "such a file" } else { "such files" },
        if one { "it decides" } else { "they decide" },
    )
}
