//! Projects for the tests of the language servers multiedit starts itself (`tests/language_servers.rs`):
//! a folder with its own state and configuration folders (so the user's own records are never read or
//! written), a PATH with the servers the test needs, and `multiedit apply`, `setup`, `doctor` and `mcp`
//! run in it. The real servers: clangd from Debian, typescript-language-server and pyright from npm
//! (`tests/language-servers/install.sh`) on the Node 24 of `tests/agents/install.sh`; a test without
//! its server is skipped with a message, or fails under CI=true.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use serde_json::Value;

/// The tests that start real servers take turns: two cores, shared.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

fn cache(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(default))
}

/// Where `tests/language-servers/install.sh` puts the npm servers' programs.
pub fn npm_servers() -> PathBuf {
    cache(
        "MULTIEDIT_LANGUAGE_SERVERS_DIR",
        ".cache/multiedit/language-servers",
    )
    .join("node_modules/.bin")
}

/// Where `tests/agents/install.sh` puts Node 24.
pub fn node24() -> PathBuf {
    cache("MULTIEDIT_AGENTS_DIR", ".cache/multiedit/agents").join("node_modules/.bin")
}

/// The fake server (`tests/language-servers/fake_server.py`).
pub fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("tests/language-servers/fake_server.py")
}

/// Skips (or, under CI=true, fails) the test when `what` is missing.
fn present(ok: bool, test: &str, what: &str, fix: &str) -> bool {
    if ok {
        return true;
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| v == "true"),
        "{test}: CI=true but {what} is missing: {fix}"
    );
    eprintln!("SKIPPED {test}: {what} is missing ({fix})");
    false
}

/// Whether `program --version` runs (found in `dirs`, else on PATH).
fn runs(program: &str, dirs: &[PathBuf]) -> bool {
    let path = std::env::join_paths(dirs.iter().cloned().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    Command::new(program)
        .arg("--version")
        .env("PATH", path)
        .output()
        .is_ok_and(|o| o.status.success())
}

pub fn clangd(test: &str) -> bool {
    present(
        runs("clangd", &[]),
        test,
        "clangd",
        "apt-get install clangd",
    )
}

pub fn typescript(test: &str) -> bool {
    present(
        npm_servers().join("typescript-language-server").exists()
            && runs("node", &[node24()])
            && runs("typescript-language-server", &[node24(), npm_servers()]),
        test,
        "typescript-language-server on Node 24",
        "bash tests/agents/install.sh && bash tests/language-servers/install.sh",
    )
}

pub fn pyright(test: &str) -> bool {
    present(
        npm_servers().join("pyright-langserver").exists(),
        test,
        "pyright",
        "bash tests/language-servers/install.sh",
    )
}

/// rust-analyzer and gopls have no offline package here: used where they run, else skipped with a
/// message, even under CI.
pub fn optional(program: &str, test: &str) -> bool {
    if runs(program, &[]) {
        return true;
    }
    eprintln!(
        "SKIPPED {test}: {program} does not run here (no offline package: install it to run this test)"
    );
    false
}

/// A project in a temporary folder, with its own state and configuration folders.
pub struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub state: PathBuf,
    pub config: PathBuf,
    /// PATH for everything the test runs: the servers' folders first.
    pub path: OsString,
}

impl Project {
    /// `files` (relative name, text) in a fresh project (a git repository's folder), with `bins` put
    /// first on PATH.
    pub fn new(files: &[(&str, &str)], bins: &[PathBuf]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        for (name, text) in files {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let state = base.join("state");
        let config = base.join("config");
        std::fs::create_dir_all(&config).unwrap();
        let path = std::env::join_paths(bins.iter().cloned().chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .unwrap();
        Project {
            _dir: dir,
            root,
            state,
            config,
            path,
        }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap()
    }

    /// `multiedit ARGS` in the project, with its folders and PATH.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_multiedit"));
        c.args(args)
            .current_dir(&self.root)
            .env("XDG_STATE_HOME", &self.state)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("PATH", &self.path);
        c
    }

    /// The environment `multiedit mcp` gets (for `support::mcp::Raw`).
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("XDG_STATE_HOME", self.state.clone()),
            ("XDG_CONFIG_HOME", self.config.clone()),
            ("PATH", PathBuf::from(&self.path)),
        ]
    }

    /// `multiedit setup --language-servers` in the project.
    pub fn allow(&self) -> String {
        let out = self
            .command(&["setup", "--language-servers"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// The user's `language-servers.json`.
    pub fn user_config(&self, config: &Value) {
        let dir = self.config.join("multiedit");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("language-servers.json"), config.to_string()).unwrap();
    }

    /// `multiedit apply --json` of `plan`: its exit code and result.
    pub fn apply(&self, plan: &Value) -> (i32, Value) {
        let out = self.apply_with(plan, &["--json"]);
        let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
        (out.status.code().unwrap_or(-1), v)
    }

    /// `multiedit apply ARGS PLAN`, the plan in a file outside the project.
    pub fn apply_with(&self, plan: &Value, args: &[&str]) -> Output {
        let file = self.state.with_file_name("plan.json");
        std::fs::write(&file, plan.to_string()).unwrap();
        let mut a = vec!["apply"];
        a.extend_from_slice(args);
        let file = file.display().to_string();
        a.push(&file);
        self.command(&a).output().unwrap()
    }
}

/// The processes whose parent is `pid`, with their command names.
pub fn children(pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((comm, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let ppid = rest.split(' ').nth(1).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            let name = comm.split_once(" (").map(|(_, n)| n).unwrap_or("");
            out.push((child, name.to_string()));
        }
    }
    out
}

/// Whether process `pid` is still there (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
}
