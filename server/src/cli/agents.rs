//! The agents `setup`, `route` and `doctor` know: their names, where each keeps its MCP configuration
//! (per project and per user), in which format, and the binary the entries run.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The name the server is given in every configuration.
pub(crate) const SERVER_NAME: &str = "multiedit";

/// An agent that can run MCP servers, and where it reads their configuration.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Vscode,
    Opencode,
}

pub(crate) const AGENTS: [Agent; 6] = [
    Agent::ClaudeCode,
    Agent::Codex,
    Agent::Gemini,
    Agent::Cursor,
    Agent::Vscode,
    Agent::Opencode,
];

#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Scope {
    Project,
    User,
}

pub(crate) enum Format {
    /// A JSON object whose member `key` holds the servers by name.
    Json { key: &'static str },
    /// TOML with `[mcp_servers.NAME]` tables.
    Toml,
}

/// The user's home folder: HOME, and on Windows USERPROFILE when HOME is unset (the agents' own
/// user files live under it there too: `%USERPROFILE%\\.claude.json`, `.gemini`, `.cursor`, `.codex`).
pub(super) fn home() -> Result<PathBuf, String> {
    let var = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
    };
    let found = if cfg!(windows) {
        var("HOME").or_else(|| var("USERPROFILE"))
    } else {
        var("HOME")
    };
    found.ok_or_else(|| {
        let names = if cfg!(windows) {
            "HOME nor USERPROFILE is"
        } else {
            "HOME is not"
        };
        format!("{names} set to an absolute path, so the user's configuration cannot be found")
    })
}

/// VS Code's user folder: `%APPDATA%\\Code\\User` on Windows, `~/Library/Application Support/Code/User`
/// on macOS, `$XDG_CONFIG_HOME/Code/User` elsewhere.
fn vscode_user() -> Result<PathBuf, String> {
    if cfg!(windows) {
        return match std::env::var_os("APPDATA").map(PathBuf::from) {
            Some(d) if d.is_absolute() => Ok(d.join("Code").join("User")),
            _ => Err(
                "APPDATA is not set to an absolute path, so VS Code's user folder cannot be found"
                    .into(),
            ),
        };
    }
    if cfg!(target_os = "macos") {
        return Ok(home()?.join("Library/Application Support/Code/User"));
    }
    Ok(config_home()?.join("Code/User"))
}

pub(super) fn config_home() -> Result<PathBuf, String> {
    match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(d) if d.is_absolute() => Ok(d),
        _ => Ok(home()?.join(".config")),
    }
}

impl Agent {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Vscode => "vscode",
            Agent::Opencode => "opencode",
        }
    }

    pub(crate) fn format(self) -> Format {
        match self {
            Agent::ClaudeCode | Agent::Gemini | Agent::Cursor => Format::Json { key: "mcpServers" },
            Agent::Vscode => Format::Json { key: "servers" },
            Agent::Opencode => Format::Json { key: "mcp" },
            Agent::Codex => Format::Toml,
        }
    }

    /// The file this agent reads for `scope`, and the scope it really is (Codex CLI has only a
    /// user file). Project files are relative to `project`.
    pub(crate) fn config_path(
        self,
        scope: Scope,
        project: &Path,
    ) -> Result<(PathBuf, Scope), String> {
        let p = |rel: &str| Ok((project.join(rel), Scope::Project));
        match (self, scope) {
            // A project's .codex/config.toml is read once Codex trusts the project; else the user's.
            (Agent::Codex, Scope::Project) if codex_trusts(project) => p(".codex/config.toml"),
            (Agent::Codex, _) => Ok((codex_home()?.join("config.toml"), Scope::User)),
            (Agent::ClaudeCode, Scope::Project) => p(".mcp.json"),
            (Agent::Gemini, Scope::Project) => p(".gemini/settings.json"),
            (Agent::Cursor, Scope::Project) => p(".cursor/mcp.json"),
            (Agent::Vscode, Scope::Project) => p(".vscode/mcp.json"),
            (Agent::Opencode, Scope::Project) => p("opencode.json"),
            (Agent::ClaudeCode, Scope::User) => Ok((home()?.join(".claude.json"), Scope::User)),
            (Agent::Gemini, Scope::User) => {
                Ok((home()?.join(".gemini/settings.json"), Scope::User))
            }
            (Agent::Cursor, Scope::User) => Ok((home()?.join(".cursor/mcp.json"), Scope::User)),
            (Agent::Vscode, Scope::User) => Ok((vscode_user()?.join("mcp.json"), Scope::User)),
            (Agent::Opencode, Scope::User) => {
                Ok((config_home()?.join("opencode/opencode.json"), Scope::User))
            }
        }
    }

    /// The server's entry for a JSON configuration, starting from the entry already there (whose
    /// other members, `env` say, are kept).
    pub(super) fn json_entry(self, exe: &str, existing: Option<&Value>) -> Value {
        let mut entry = match existing {
            Some(Value::Object(m)) => m.clone(),
            _ => serde_json::Map::new(),
        };
        match self {
            Agent::Opencode => {
                entry.insert("type".into(), json!("local"));
                entry.insert("command".into(), json!([exe, "mcp"]));
                entry.insert("enabled".into(), json!(true));
            }
            _ => {
                if matches!(self, Agent::ClaudeCode | Agent::Vscode) {
                    entry.insert("type".into(), json!("stdio"));
                }
                entry.insert("command".into(), json!(exe));
                entry.insert("args".into(), json!(["mcp"]));
            }
        }
        Value::Object(entry)
    }
}

/// The command a configuration entry runs, as program and arguments, if it has one.
pub(crate) fn entry_command(agent: Agent, entry: &Value) -> Option<(String, Vec<String>)> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    match agent {
        Agent::Opencode => {
            let mut cmd = strings(entry.get("command")?)?;
            if cmd.is_empty() {
                return None;
            }
            let program = cmd.remove(0);
            Some((program, cmd))
        }
        _ => {
            let program = entry.get("command")?.as_str()?.to_string();
            let args = entry.get("args").and_then(strings).unwrap_or_default();
            Some((program, args))
        }
    }
}

/// The absolute, canonical path of the running binary: what the configurations run.
pub(crate) fn this_binary() -> Result<String, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the path of this binary ({e})"))?;
    let exe = std::fs::canonicalize(&exe)
        .map_err(|e| format!("cannot resolve {} ({e})", exe.display()))?;
    exe.into_os_string()
        .into_string()
        .map_err(|_| "the path of this binary is not UTF-8".to_string())
}

/// How the agents' files name this binary, and why, when not by its name: `multiedit` when the user's
/// PATH finds this very binary under that name (a team's committed `.mcp.json` or `opencode.json`
/// then works for everyone with multiedit on PATH, and an upgrade in place keeps it working), else the
/// absolute path of this binary, which stops working when it moves (a `cargo clean`, an upgrade to
/// another folder).
pub(crate) fn command() -> Result<(String, Option<String>), String> {
    let exe = this_binary()?;
    let name = format!("{SERVER_NAME}{}", std::env::consts::EXE_SUFFIX);
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .filter(|d| d.is_absolute())
            .map(|d| d.join(&name))
            .find(|c| c.is_file())
    });
    let why = match found {
        Some(found)
            if std::fs::canonicalize(&found).is_ok_and(|f| f.as_os_str() == exe.as_str()) =>
        {
            return Ok((SERVER_NAME.to_string(), None))
        }
        Some(found) => format!(
            "the {SERVER_NAME} your PATH finds first ({}) is another binary than this one",
            found.display()
        ),
        None => format!("{SERVER_NAME} is not on your PATH"),
    };
    let note = format!(
        "{why}, so the files name this binary by its absolute path, {exe}, which stops working if it moves (a cargo \
         clean, an upgrade elsewhere). Put this binary on PATH as {SERVER_NAME} and run setup again to name it so."
    );
    Ok((exe, Some(note)))
}

/// Codex CLI's folder: `CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home() -> Result<PathBuf, String> {
    match std::env::var_os("CODEX_HOME").map(PathBuf::from) {
        Some(d) if d.is_absolute() => Ok(d),
        _ => Ok(home()?.join(".codex")),
    }
}

/// Whether Codex CLI trusts `project` (`[projects."PATH"] trust_level = "trusted"` in the user's
/// config.toml, for the project or a folder above it), and so reads its `.codex/config.toml`.
pub(crate) fn codex_trusts(project: &Path) -> bool {
    let Ok(home) = codex_home() else { return false };
    let Some(doc) = crate::disk::read_text_capped(&home.join("config.toml"))
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
    else {
        return false;
    };
    let real = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let Some(projects) = doc.get("projects").and_then(|p| p.as_table_like()) else {
        return false;
    };
    // The nearest folder named decides.
    projects
        .iter()
        .filter_map(|(path, t)| {
            let folder = std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
            let level = t.get("trust_level")?.as_str()?.to_string();
            real.starts_with(&folder)
                .then_some((folder.as_os_str().len(), level))
        })
        .max_by_key(|(n, _)| *n)
        .is_some_and(|(_, level)| level == "trusted")
}
