//! Which language server multiedit starts for a file, and where it finds it: one table of servers by
//! file type, each program looked for on PATH (absolute folders only: a relative entry would be the
//! project) and, for those npm installs, in the project's own `node_modules/.bin`. Never downloaded.
//! The command and its arguments can be set in the user's configuration file
//! (`$XDG_CONFIG_HOME/multiedit/language-servers.json`) and in the project's
//! (`.multiedit/language-servers.json`), the project's read only once the user allowed language
//! servers for the project (`consent.rs`): it names a program multiedit runs, so the gate keeps
//! agents from writing it (`gate.rs`, `PROTECTED`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// One language server of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spec {
    /// Its key in the configuration files (`"servers": {"typescript": ...}`).
    pub(crate) key: &'static str,
    /// Its program, looked for on PATH.
    pub(crate) program: &'static str,
    pub(crate) args: &'static [&'static str],
    /// The languages it serves, for refusals ("TypeScript and JavaScript").
    pub(crate) languages: &'static str,
    /// File extensions and the LSP language id of each.
    pub(crate) files: &'static [(&'static str, &'static str)],
    /// npm installs it: also looked for in the project's `node_modules/.bin`.
    pub(crate) npm: bool,
    /// How a user installs it, for refusals.
    pub(crate) install: &'static str,
}

/// The table. docs/agents.md ("Language servers without an editor") lists it, with what each server
/// may run of a project and the options multiedit sets (`options.rs`).
pub(crate) const SERVERS: &[Spec] = &[
    Spec {
        key: "typescript",
        program: "typescript-language-server",
        args: &["--stdio"],
        languages: "TypeScript and JavaScript",
        files: &[
            ("ts", "typescript"),
            ("mts", "typescript"),
            ("cts", "typescript"),
            ("tsx", "typescriptreact"),
            ("js", "javascript"),
            ("mjs", "javascript"),
            ("cjs", "javascript"),
            ("jsx", "javascriptreact"),
        ],
        npm: true,
        install: "npm install -g typescript-language-server typescript",
    },
    Spec {
        key: "pyright",
        program: "pyright-langserver",
        args: &["--stdio"],
        languages: "Python",
        files: &[("py", "python"), ("pyi", "python")],
        npm: true,
        install: "npm install -g pyright",
    },
    Spec {
        key: "rust-analyzer",
        program: "rust-analyzer",
        args: &[],
        languages: "Rust",
        files: &[("rs", "rust")],
        npm: false,
        install: "rustup component add rust-analyzer",
    },
    Spec {
        key: "gopls",
        program: "gopls",
        args: &[],
        languages: "Go",
        files: &[("go", "go")],
        npm: false,
        install: "go install golang.org/x/tools/gopls@latest",
    },
    Spec {
        key: "clangd",
        program: "clangd",
        args: &[],
        languages: "C, C++ and Objective-C",
        files: &[
            ("c", "c"),
            ("h", "c"),
            ("cc", "cpp"),
            ("cpp", "cpp"),
            ("cxx", "cpp"),
            ("c++", "cpp"),
            ("hh", "cpp"),
            ("hpp", "cpp"),
            ("hxx", "cpp"),
            ("h++", "cpp"),
            ("ipp", "cpp"),
            ("m", "objective-c"),
            ("mm", "objective-cpp"),
        ],
        npm: false,
        install: "apt-get install clangd (or your system's clangd package)",
    },
];

/// The languages of the table, for refusals: "TypeScript and JavaScript, Python, ...".
pub(crate) fn languages() -> String {
    SERVERS
        .iter()
        .map(|s| s.languages)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The server for a file, by its extension (letter case ignored), with the file's language id.
pub(crate) fn for_file(path: &Path) -> Option<(&'static Spec, &'static str)> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    SERVERS.iter().find_map(|s| {
        s.files
            .iter()
            .find(|(e, _)| *e == ext)
            .map(|(_, id)| (s, *id))
    })
}

/// How long a server may take to start (spawned and `initialize` answered), and to answer one
/// request, unless its configuration says otherwise.
pub(crate) const START: Duration = Duration::from_secs(20);
pub(crate) const ANSWER: Duration = Duration::from_secs(15);

/// What one configuration file says of one server.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Override {
    command: Option<String>,
    args: Option<Vec<String>>,
    start_timeout_ms: Option<u64>,
    request_timeout_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    servers: BTreeMap<String, Override>,
}

/// The server as it will run: the program found, its arguments, and its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program {
    pub(crate) spec: &'static Spec,
    pub(crate) path: PathBuf,
    pub(crate) args: Vec<String>,
    /// Where it was found or set, for `doctor` and the log: "on PATH", "in the project's
    /// node_modules/.bin", "as /home/me/.config/multiedit/language-servers.json names it".
    pub(crate) from: String,
    pub(crate) start: Duration,
    pub(crate) answer: Duration,
}

/// Why no program runs for a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Missing {
    /// Not on PATH (nor in the project's `node_modules/.bin`): the places looked in.
    NotFound { program: String, looked: String },
    /// A configuration file that cannot be used, and why.
    BadConfig(String),
}

/// The user's configuration file.
pub(crate) fn user_config() -> Option<PathBuf> {
    crate::paths::user_dir("XDG_CONFIG_HOME", ".config")
        .map(|d| d.join("multiedit/language-servers.json"))
}

/// A project's configuration file (read only once the project is allowed language servers).
pub(crate) fn project_config(root: &Path) -> PathBuf {
    root.join(".multiedit/language-servers.json")
}

/// The file's entry for `spec`, if the file exists; `Err` says why it cannot be used.
fn read_override(file: &Path, spec: &Spec) -> Result<Option<Override>, String> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{} cannot be read ({e})", file.display())),
    };
    let config: ConfigFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a language servers configuration ({e}); it takes {{\"servers\": {{\"clangd\": {{\"command\": \
             \"/path/to/clangd\", \"args\": [...], \"startTimeoutMs\": 20000, \"requestTimeoutMs\": 15000}}}}}}",
            file.display()
        )
    })?;
    if let Some(unknown) = config
        .servers
        .keys()
        .find(|k| !SERVERS.iter().any(|s| s.key == k.as_str()))
    {
        return Err(format!(
            "{} names the server \"{unknown}\", which multiedit does not start; it knows {}",
            file.display(),
            SERVERS.iter().map(|s| s.key).collect::<Vec<_>>().join(", ")
        ));
    }
    let entry = config.servers.get(spec.key).cloned();
    if let Some(command) = entry.as_ref().and_then(|o| o.command.as_deref()) {
        if command.is_empty() || (command.contains('/') && !Path::new(command).is_absolute()) {
            return Err(format!(
                "{} gives {} the command \"{command}\": a command is a program's name (looked for on PATH) or an \
                 absolute path",
                file.display(),
                spec.key
            ));
        }
    }
    Ok(entry)
}

/// The absolute folders of PATH: a relative entry (`.`, or an empty one) would look in the current
/// folder, which may be the project.
fn path_folders() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.is_absolute())
        .collect()
}

fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// A program name looked up on PATH.
pub(crate) fn on_path(program: &str) -> Option<PathBuf> {
    path_folders()
        .into_iter()
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

/// The program that runs for `spec` in the project at `root`: the configuration's command (the
/// project's file over the user's, `allowed`: the project's is read at all), else the table's on
/// PATH, else (npm's) in the project's `node_modules/.bin`.
pub(crate) fn find(spec: &'static Spec, root: &Path, allowed: bool) -> Result<Program, Missing> {
    let mut chosen = Override::default();
    let mut named_in = None;
    let files = user_config()
        .into_iter()
        .chain(allowed.then(|| project_config(root)));
    for file in files {
        if let Some(o) = read_override(&file, spec).map_err(Missing::BadConfig)? {
            if o.command.is_some() || o.args.is_some() {
                named_in = Some(file.display().to_string());
            }
            chosen = Override {
                command: o.command.or(chosen.command),
                args: o.args.or(chosen.args),
                start_timeout_ms: o.start_timeout_ms.or(chosen.start_timeout_ms),
                request_timeout_ms: o.request_timeout_ms.or(chosen.request_timeout_ms),
            };
        }
    }
    let command = chosen.command.as_deref().unwrap_or(spec.program);
    let args = chosen
        .args
        .clone()
        .unwrap_or_else(|| spec.args.iter().map(|a| a.to_string()).collect());
    let local = root.join("node_modules/.bin").join(command);
    let (path, from) = if Path::new(command).is_absolute() {
        let p = PathBuf::from(command);
        if !executable(&p) {
            return Err(Missing::NotFound {
                program: command.to_string(),
                looked: format!(
                    "{} (named in {})",
                    p.display(),
                    named_in.as_deref().unwrap_or("a configuration file")
                ),
            });
        }
        let from = format!(
            "as {} names it",
            named_in.as_deref().unwrap_or("a configuration file")
        );
        (p, from)
    } else if let Some(p) = on_path(command) {
        (p, "on PATH".to_string())
    } else if spec.npm && executable(&local) {
        (local, "in the project's node_modules/.bin".to_string())
    } else {
        let looked = if spec.npm {
            format!("on PATH or in {}", local.parent().unwrap_or(root).display())
        } else {
            "on PATH".to_string()
        };
        return Err(Missing::NotFound {
            program: command.to_string(),
            looked,
        });
    };
    let from = match (&named_in, Path::new(command).is_absolute()) {
        (Some(file), false) => format!("{from}, as {file} names it"),
        _ => from,
    };
    Ok(Program {
        spec,
        path,
        args,
        from,
        start: chosen.start_timeout_ms.map_or(START, Duration::from_millis),
        answer: chosen
            .request_timeout_ms
            .map_or(ANSWER, Duration::from_millis),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_type_has_its_server_and_language_id() {
        let of = |p: &str| for_file(Path::new(p)).map(|(s, id)| (s.program, id));
        assert_eq!(
            of("/p/a.ts"),
            Some(("typescript-language-server", "typescript"))
        );
        assert_eq!(
            of("/p/A.TSX"),
            Some(("typescript-language-server", "typescriptreact"))
        );
        assert_eq!(of("/p/a.py"), Some(("pyright-langserver", "python")));
        assert_eq!(of("/p/a.rs"), Some(("rust-analyzer", "rust")));
        assert_eq!(of("/p/a.go"), Some(("gopls", "go")));
        assert_eq!(of("/p/a.hpp"), Some(("clangd", "cpp")));
        assert_eq!(of("/p/notes.txt"), None);
        assert_eq!(of("/p/Makefile"), None);
    }

    #[test]
    fn a_configuration_file_is_read_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("language-servers.json");
        let clangd = &SERVERS[4];
        std::fs::write(&file, r#"{"servers": {"clangd": {"command": "/opt/clangd", "args": ["--log=error"], "startTimeoutMs": 500}}}"#).unwrap();
        let o = read_override(&file, clangd).unwrap().unwrap();
        assert_eq!(
            (o.command.as_deref(), o.start_timeout_ms),
            (Some("/opt/clangd"), Some(500))
        );
        std::fs::write(&file, r#"{"servers": {"clang": {}}}"#).unwrap();
        assert!(read_override(&file, clangd)
            .unwrap_err()
            .contains("names the server \"clang\", which multiedit does not start; it knows typescript, pyright, rust-analyzer, gopls, clangd"));
        std::fs::write(
            &file,
            r#"{"servers": {"clangd": {"command": "bin/clangd"}}}"#,
        )
        .unwrap();
        assert!(read_override(&file, clangd)
            .unwrap_err()
            .contains("a command is a program's name (looked for on PATH) or an absolute path"));
        std::fs::write(&file, r#"{"servers": {"clangd": {"cmd": "x"}}}"#).unwrap();
        assert!(read_override(&file, clangd)
            .unwrap_err()
            .contains("is not a language servers configuration"));
        assert_eq!(
            read_override(&dir.path().join("none.json"), clangd),
            Ok(None)
        );
    }
}
