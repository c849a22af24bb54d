//! `multiedit setup` and `multiedit doctor` as a user runs them: on a throwaway home and project
//! folder, the files written parse, keep what was there, point at this binary; what cannot be merged
//! safely is refused and left byte for byte unchanged.
#![cfg(unix)]

mod support;
use crate::support::agents::{agent_bin, path_with};
use crate::support::lsp as lsp_support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use lsp_support::{Editor, Options};
use serde_json::{json, Value};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    runtime: PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project, runtime) = (root.join("home"), root.join("project"), root.join("run"));
    for d in [&home, &project, &runtime] {
        fs::create_dir(d).unwrap();
    }
    fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).unwrap();
    Env {
        _dir: dir,
        home,
        project,
        runtime,
    }
}

impl Env {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("CODEX_HOME")
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .output()
            .unwrap()
    }

    /// The folder holding the home, the project and anything a test puts beside them (outside both).
    fn root(&self) -> &Path {
        self.home.parent().unwrap()
    }

    /// Every name, type, mode, owner and byte under `root()`: home, project, state folder, outside.
    fn everything(&self) -> support::disk::Snapshot {
        support::disk::snapshot(self.root())
    }

    /// Every file under the home and project folders, with its bytes.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        for root in [&self.home, &self.project] {
            walk(root, &mut files);
        }
        files.sort();
        files
    }

    /// The snapshot without multiedit's own state (the record of what `--route-edits` wrote), and
    /// with every folder (an empty one too).
    fn configs(&self) -> (Vec<(PathBuf, Vec<u8>)>, Vec<PathBuf>) {
        let state = self.home.join(".local/state");
        let files = self
            .snapshot()
            .into_iter()
            .filter(|(p, _)| !p.starts_with(&state))
            .collect();
        let mut folders = Vec::new();
        for root in [&self.home, &self.project] {
            folders_in(root, &mut folders);
        }
        folders.retain(|d| !d.starts_with(&state) && !state.starts_with(d));
        folders.sort();
        (files, folders)
    }
}

fn folders_in(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if fs::symlink_metadata(&p).unwrap().is_dir() {
            out.push(p.clone());
            folders_in(&p, out);
        }
    }
}

fn walk(dir: &Path, files: &mut Vec<(PathBuf, Vec<u8>)>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let meta = fs::symlink_metadata(&p).unwrap();
        if meta.file_type().is_symlink() {
            // A link is recorded as where it points (it may point nowhere).
            files.push((
                p.clone(),
                fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            ));
        } else if meta.is_dir() {
            walk(&p, files);
        } else {
            files.push((p.clone(), fs::read(&p).unwrap()));
        }
    }
}

fn bin() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_multiedit"))
        .canonicalize()
        .unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_at(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The project files of each JSON agent, with the key holding their servers.
fn project_files(e: &Env) -> Vec<(PathBuf, &'static str)> {
    vec![
        (e.project.join(".mcp.json"), "mcpServers"),
        (e.project.join(".gemini/settings.json"), "mcpServers"),
        (e.project.join(".cursor/mcp.json"), "mcpServers"),
        (e.project.join(".vscode/mcp.json"), "servers"),
        (e.project.join("opencode.json"), "mcp"),
    ]
}

/// The program and arguments an entry runs (OpenCode: one `command` array).
fn command_of(entry: &Value) -> Vec<String> {
    let mut cmd: Vec<String> = match &entry["command"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|s| s.as_str().unwrap().to_string()).collect(),
        other => panic!("no command: {other}"),
    };
    if let Some(args) = entry.get("args") {
        cmd.extend(
            args.as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string()),
        );
    }
    cmd
}

#[test]
fn setup_all_writes_every_agent_keeping_what_was_there() {
    let e = env();
    // What the user had: another server and unknown keys; Codex's TOML with comments.
    fs::write(e.project.join(".mcp.json"), "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"other-server\", \"args\": []}\n  },\n  \"zzz\": [1, 2]\n}\n").unwrap();
    fs::create_dir(e.project.join(".vscode")).unwrap();
    fs::write(
        e.project.join(".vscode/mcp.json"),
        r#"{"inputs": [], "servers": {"db": {"type": "stdio", "command": "db-mcp"}}}"#,
    )
    .unwrap();
    fs::write(
        e.project.join("opencode.json"),
        "{\n\t\"$schema\": \"https://opencode.ai/config.json\",\n\t\"theme\": \"x\"\n}\n",
    )
    .unwrap();
    fs::create_dir(e.home.join(".codex")).unwrap();
    let codex_before = "# my Codex settings\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"other-server\" # keep me\n";
    fs::write(e.home.join(".codex/config.toml"), codex_before).unwrap();

    let o = e.run(&["setup", "all", "--project"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    let exe = bin().to_str().unwrap().to_string();
    for (path, key) in project_files(&e) {
        let v = json_at(&path);
        let entry = &v[key]["multiedit"];
        assert_eq!(
            command_of(entry),
            [exe.as_str(), "mcp"],
            "{}: {v}",
            path.display()
        );
        assert!(Path::new(&command_of(entry)[0]).is_file());
        assert!(out(&o).contains(&path.display().to_string()), "{}", out(&o));
    }
    let claude = json_at(&e.project.join(".mcp.json"));
    assert_eq!(
        claude["mcpServers"]["other"],
        json!({"command": "other-server", "args": []})
    );
    assert_eq!(claude["zzz"], json!([1, 2]));
    let vscode = json_at(&e.project.join(".vscode/mcp.json"));
    assert_eq!(
        vscode["servers"]["db"],
        json!({"type": "stdio", "command": "db-mcp"})
    );
    assert_eq!(vscode["inputs"], json!([]));
    assert_eq!(vscode["servers"]["multiedit"]["type"], "stdio");
    let opencode = json_at(&e.project.join("opencode.json"));
    assert_eq!(opencode["theme"], "x");
    assert_eq!(opencode["mcp"]["multiedit"]["type"], "local");
    assert_eq!(opencode["mcp"]["multiedit"]["enabled"], true);
    // The text before our entry is kept as it was, tabs and all.
    assert!(fs::read_to_string(e.project.join("opencode.json")).unwrap().starts_with("{\n\t\"$schema\": \"https://opencode.ai/config.json\",\n\t\"theme\": \"x\",\n\t\"mcp\": {"));

    let codex = fs::read_to_string(e.home.join(".codex/config.toml")).unwrap();
    assert!(
        codex.starts_with(codex_before),
        "comments and the other server kept:\n{codex}"
    );
    let doc: toml_edit::DocumentMut = codex.parse().unwrap();
    assert_eq!(
        doc["mcp_servers"]["multiedit"]["command"].as_str(),
        Some(exe.as_str())
    );
    assert_eq!(
        doc["mcp_servers"]["multiedit"]["args"]
            .as_array()
            .unwrap()
            .get(0)
            .unwrap()
            .as_str(),
        Some("mcp")
    );
    assert_eq!(
        doc["mcp_servers"]["other"]["command"].as_str(),
        Some("other-server")
    );

    // Twice: nothing changes, and it says so.
    let before = e.snapshot();
    let o = e.run(&["setup", "all", "--project"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(e.snapshot(), before);
    assert_eq!(out(&o).matches("already runs").count(), 6, "{}", out(&o));
}

#[test]
fn user_scope_writes_the_home_files() {
    let e = env();
    fs::write(
        e.home.join(".claude.json"),
        "{\"numStartups\": 3, \"projects\": {}}",
    )
    .unwrap();
    let o = e.run(&["setup", "claude-code", "gemini", "opencode", "--user"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let claude = json_at(&e.home.join(".claude.json"));
    assert_eq!(claude["numStartups"], 3);
    assert_eq!(command_of(&claude["mcpServers"]["multiedit"])[1], "mcp");
    assert!(json_at(&e.home.join(".gemini/settings.json"))["mcpServers"]["multiedit"].is_object());
    assert!(
        json_at(&e.home.join(".config/opencode/opencode.json"))["mcp"]["multiedit"].is_object()
    );
    assert!(
        fs::read_dir(&e.project).unwrap().next().is_none(),
        "nothing in the project"
    );
}

#[test]
fn dry_run_writes_nothing_and_prints_the_change() {
    let e = env();
    fs::write(e.project.join(".mcp.json"), "{\"mcpServers\": {}}").unwrap();
    let before = e.snapshot();
    let o = e.run(&["setup", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(e.snapshot(), before);
    assert!(
        out(&o).contains("would have updated") && out(&o).contains("would have created"),
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains("+ ") && out(&o).contains(bin().to_str().unwrap()),
        "{}",
        out(&o)
    );
}

#[test]
fn files_it_cannot_merge_safely_are_refused_unchanged() {
    let e = env();
    fs::create_dir(e.project.join(".vscode")).unwrap();
    let jsonc = "{\n  // my servers\n  \"servers\": {\n    \"db\": {\"command\": \"db-mcp\"}, /* keep */\n  }\n}\n";
    fs::write(e.project.join(".vscode/mcp.json"), jsonc).unwrap();
    let broken = "{\"mcpServers\": {\"other\": ";
    fs::write(e.project.join(".mcp.json"), broken).unwrap();
    fs::create_dir(e.project.join(".cursor")).unwrap();
    fs::write(e.project.join(".cursor/mcp.json"), "[]").unwrap();
    fs::create_dir(e.home.join(".codex")).unwrap();
    fs::write(e.home.join(".codex/config.toml"), "model = \n").unwrap();

    let o = e.run(&["setup", "all"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert_eq!(
        fs::read_to_string(e.project.join(".vscode/mcp.json")).unwrap(),
        jsonc
    );
    assert_eq!(
        fs::read_to_string(e.project.join(".mcp.json")).unwrap(),
        broken
    );
    assert_eq!(
        fs::read_to_string(e.project.join(".cursor/mcp.json")).unwrap(),
        "[]"
    );
    assert_eq!(
        fs::read_to_string(e.home.join(".codex/config.toml")).unwrap(),
        "model = \n"
    );
    let said = err(&o);
    assert!(
        said.contains("vscode: ") && said.contains("comments"),
        "{said}"
    );
    assert!(
        said.contains("claude-code: ") && said.contains("is not valid JSON"),
        "{said}"
    );
    assert!(
        said.contains("cursor: ") && said.contains("does not hold a JSON object"),
        "{said}"
    );
    assert!(
        said.contains("codex: ") && said.contains("not valid TOML"),
        "{said}"
    );
    assert_eq!(said.matches("left unchanged").count(), 4, "{said}");
    // The others were set up all the same; no temporary file is left behind.
    assert!(
        json_at(&e.project.join(".gemini/settings.json"))["mcpServers"]["multiedit"].is_object()
    );
    assert!(json_at(&e.project.join("opencode.json"))["mcp"]["multiedit"].is_object());
    assert!(e
        .snapshot()
        .iter()
        .all(|(p, _)| !p.to_string_lossy().contains(".multiedit-setup-")));
}

#[test]
fn an_existing_entry_is_updated_keeping_its_other_settings() {
    let e = env();
    fs::write(e.project.join(".mcp.json"), r#"{"mcpServers": {"multiedit": {"command": "/gone/multiedit", "args": ["mcp"], "env": {"A": "1"}}}}"#).unwrap();
    let o = e.run(&["doctor"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a configuration pointing at a missing binary is a problem: {}",
        out(&o)
    );
    assert!(
        out(&o).contains("/gone/multiedit mcp (MISSING"),
        "{}",
        out(&o)
    );
    let o = e.run(&["setup", "claude-code"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v = json_at(&e.project.join(".mcp.json"));
    assert_eq!(v["mcpServers"]["multiedit"]["env"], json!({"A": "1"}));
    assert_eq!(
        command_of(&v["mcpServers"]["multiedit"]),
        [bin().to_str().unwrap(), "mcp"]
    );
}

#[test]
fn doctor_lists_the_editors_on_the_bridge_and_the_agents() {
    let e = env();
    // The servers started below inherit XDG_RUNTIME_DIR; no other test of this file reads it.
    std::env::set_var("XDG_RUNTIME_DIR", &e.runtime);
    let o = e.run(&["doctor"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(
        out(&o).contains(&format!(
            "multiedit {}\n  binary: {}",
            env!("CARGO_PKG_VERSION"),
            bin().display()
        )),
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains("none (run `multiedit setup`"),
        "{}",
        out(&o)
    );

    let ws = e.project.clone();
    let mut ed = Editor::start(Options::new(&ws));
    let entry = e.runtime.join(format!("multiedit/{}.json", ed.pid()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !entry.exists() {
        assert!(Instant::now() < deadline, "the server never registered");
        ed.drain(Duration::from_millis(50));
    }
    // An entry whose process is gone, and one that others could have written.
    let reg = e.runtime.join("multiedit");
    let mine = std::process::id();
    fs::write(reg.join(format!("{mine}.json")), "{}").unwrap();
    fs::set_permissions(
        reg.join(format!("{mine}.json")),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let dead = 5_000_000;
    fs::write(reg.join(format!("{dead}.json")), "{}").unwrap();
    fs::set_permissions(
        reg.join(format!("{dead}.json")),
        fs::Permissions::from_mode(0o600),
    )
    .unwrap();

    assert_eq!(
        e.run(&["setup", "claude-code", "codex"]).status.code(),
        Some(0)
    );
    let o = e.run(&["doctor"]);
    let said = out(&o);
    // Claude Code has not been told it may run the project's server: what `claude mcp list` says.
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "  claude-code: approval pending: Claude Code runs a server of {} only once you approved it, and it was not \
             approved (`claude mcp list` says \"Pending approval\"). Fix: start claude in this folder and approve \
             multiedit, or run `multiedit setup claude-code --route-edits`, which approves it in \
             .claude/settings.local.json.\n",
            e.project.join(".mcp.json").display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "(multiedit lsp pid {}): {}",
            ed.pid(),
            ws.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("not reachable: the editor at pid {dead} is gone")),
        "{said}"
    );
    assert!(
        said.contains(&format!("not reachable: ignored the editor at pid {mine}"))
            && said.contains("mode 0644"),
        "{said}"
    );
    let exe = bin().display().to_string();
    assert!(
        said.contains(&format!(
            "claude-code: {} runs {exe} mcp (ok)",
            e.project.join(".mcp.json").display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "codex: {} runs {exe} mcp (ok)",
            e.home.join(".codex/config.toml").display()
        )),
        "{said}"
    );
    assert!(said.contains("\n1 problem found.\n"), "{said}");
    assert!(ed.shutdown().success());
}

/// Runs `AGENT mcp list` in the project, offline, on the throwaway home.
fn mcp_list(e: &Env, agents: &Path, agent: &str) -> Output {
    Command::new(agent)
        .args(["mcp", "list"])
        .current_dir(&e.project)
        .env("HOME", &e.home)
        .env("PATH", path_with(agents))
        .env_remove("XDG_CONFIG_HOME")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// `text` without terminal colour codes (some CLIs colour even into a pipe).
fn plain(text: &str) -> String {
    let mut said = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ parameters final-letter
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            said.push(c);
        }
    }
    said
}

#[test]
fn gemini_cli_connects_after_setup() {
    let Some(agents) = agent_bin("gemini") else {
        return;
    };
    let e = env();
    fs::create_dir(e.project.join(".gemini")).unwrap();
    fs::write(
        e.project.join(".gemini/settings.json"),
        r#"{"ui": {"theme": "Default"}}"#,
    )
    .unwrap();
    assert_eq!(e.run(&["setup", "gemini"]).status.code(), Some(0));
    assert_eq!(
        json_at(&e.project.join(".gemini/settings.json"))["ui"],
        json!({"theme": "Default"})
    );
    let o = mcp_list(&e, &agents, "gemini");
    let exe = bin().display().to_string();
    // Gemini CLI prints the list on standard error.
    let said = plain(&format!("{}{}", out(&o), err(&o)));
    assert!(
        said.contains(&format!("✓ multiedit: {exe} mcp (stdio) - Connected")),
        "{said}"
    );
}

#[test]
fn opencode_connects_after_setup() {
    let Some(agents) = agent_bin("opencode") else {
        return;
    };
    let e = env();
    assert_eq!(e.run(&["setup", "opencode"]).status.code(), Some(0));
    let o = mcp_list(&e, &agents, "opencode");
    let said = plain(&out(&o));
    assert!(said.contains("✓ multiedit connected"), "{said}{}", err(&o));
    assert!(said.contains(&format!("{} mcp", bin().display())), "{said}");
}

#[test]
fn claude_code_connects_after_setup() {
    let Some(agents) = agent_bin("claude") else {
        return;
    };
    let e = env();
    let path = path_with(&agents);
    let claude = |e: &Env| {
        Command::new("claude")
            .args(["mcp", "list"])
            .current_dir(&e.project)
            .env("HOME", &e.home)
            .env("PATH", &path)
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let exe = bin().display().to_string();

    // Project scope: .mcp.json, which Claude Code runs once the user has approved the server (here in
    // their settings, as answering its prompt would).
    assert_eq!(
        e.run(&["setup", "claude-code", "--project"]).status.code(),
        Some(0)
    );
    let o = claude(&e);
    assert!(
        out(&o).contains(&format!("multiedit: {exe} mcp - ⏸ Pending approval")),
        "{}{}",
        out(&o),
        err(&o)
    );
    fs::create_dir_all(e.home.join(".claude")).unwrap();
    fs::write(
        e.home.join(".claude/settings.json"),
        r#"{"enabledMcpjsonServers": ["multiedit"]}"#,
    )
    .unwrap();
    let o = claude(&e);
    assert!(
        out(&o).contains(&format!("multiedit: {exe} mcp - ✔ Connected")),
        "{}{}",
        out(&o),
        err(&o)
    );

    // User scope: ~/.claude.json, which Claude Code itself has written by now; its keys are kept.
    let e = env();
    let _ = claude(&e);
    let before = json_at(&e.home.join(".claude.json"));
    assert_eq!(
        e.run(&["setup", "claude-code", "--user"]).status.code(),
        Some(0)
    );
    let after = json_at(&e.home.join(".claude.json"));
    for (k, v) in before.as_object().unwrap() {
        assert_eq!(&after[k], v, "{k}");
    }
    let o = claude(&e);
    assert!(
        out(&o).contains(&format!("multiedit: {exe} mcp - ✔ Connected")),
        "{}{}",
        out(&o),
        err(&o)
    );
}

/// Codex CLI's `codex mcp list` only prints its configuration; its app server starts each configured
/// MCP server and answers `mcpServerStatus/list` with the tools it got from it (offline, no account).
#[test]
fn codex_cli_connects_after_setup() {
    use std::io::{BufRead, BufReader, Write};
    let Some(agents) = agent_bin("codex") else {
        return;
    };
    let e = env();
    assert_eq!(
        e.run(&["setup", "codex"]).status.code(),
        Some(0),
        "codex reads only ~/.codex/config.toml"
    );
    let mut child = Command::new("codex")
        .args(["app-server", "--disable", "plugins"])
        .current_dir(&e.project)
        .env("HOME", &e.home)
        .env_remove("CODEX_HOME")
        .env_remove("OPENAI_API_KEY")
        .env("PATH", path_with(&agents))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "multiedit-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "mcpServerStatus/list", "params": {}}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if v["id"] == 2 {
                    let _ = tx.send(v);
                    return;
                }
            }
        }
    });
    let answer = rx.recv_timeout(std::time::Duration::from_secs(90));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer.expect("codex app-server answered mcpServerStatus/list");
    let servers = answer["result"]["data"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    let ours = servers
        .iter()
        .find(|s| s["name"] == "multiedit")
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(ours["serverInfo"]["name"], "multiedit", "{ours}");
    let mut tools: Vec<&str> = ours["tools"]
        .as_object()
        .unwrap_or_else(|| panic!("{ours}"))
        .keys()
        .map(String::as_str)
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        [
            "multiedit",
            "multiedit_patch",
            "multiedit_preview",
            "multiedit_read",
            "multiedit_symbols",
            "multiedit_write"
        ]
    );
}

#[test]
fn read_only_files_and_dangling_links_are_left_and_named_and_crlf_is_kept() {
    let e = env();
    let exe = bin().display().to_string();
    // A read-only file (mode 0444): left as it is, even by root, who could rename over it.
    let locked = e.project.join(".mcp.json");
    let locked_text = "{\"mcpServers\": {}}\n";
    fs::write(&locked, locked_text).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o444)).unwrap();
    // A link to a file of the project that does not exist (a submodule not checked out, say). One
    // that leads outside the project is refused as such, existing or not (the tests below).
    fs::create_dir(e.project.join(".cursor")).unwrap();
    let link = e.project.join(".cursor/mcp.json");
    let target = e.project.join("shared/cursor-mcp.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    // CRLF files, JSON and TOML.
    fs::create_dir(e.project.join(".vscode")).unwrap();
    let vscode = e.project.join(".vscode/mcp.json");
    let vscode_before =
        "{\r\n  \"servers\": {\r\n    \"db\": {\"command\": \"db-mcp\"}\r\n  }\r\n}\r\n";
    fs::write(&vscode, vscode_before).unwrap();
    fs::create_dir(e.home.join(".codex")).unwrap();
    let codex = e.home.join(".codex/config.toml");
    let codex_before = "# my Codex settings\r\nmodel = \"o3\"\r\n";
    fs::write(&codex, codex_before).unwrap();

    let o = e.run(&["setup", "all"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let said = err(&o);
    let by_hand = format!("add the server by hand: it runs {exe} with the argument mcp");
    assert!(
        said.contains(&format!(
            "claude-code: {} is read-only (mode 0444); left unchanged. Make it writable and run setup again, or {by_hand}\n",
            locked.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "cursor: {} is a symbolic link to {}, which does not exist; left unchanged. Create the file it points to (or \
             remove the link) and run setup again, or {by_hand}\n",
            link.display(),
            target.display()
        )),
        "{said}"
    );
    assert_eq!(fs::read_to_string(&locked).unwrap(), locked_text);
    assert_eq!(
        fs::metadata(&locked).unwrap().permissions().mode() & 0o777,
        0o444
    );
    assert_eq!(
        fs::read_link(&link).unwrap(),
        target,
        "the link is still a link to the same place"
    );
    assert!(!target.exists() && !e.project.join("shared").exists());
    // The CRLF files: the entry added, every line break still CRLF, the old text kept.
    for (path, key) in [(&vscode, "servers"), (&codex, "")] {
        let text = fs::read_to_string(path).unwrap();
        assert_eq!(
            text.matches('\n').count(),
            text.matches("\r\n").count(),
            "{}: {text:?}",
            path.display()
        );
        assert!(text.contains(&exe), "{text:?}");
        if !key.is_empty() {
            assert_eq!(
                command_of(&json_at(path)[key]["multiedit"]),
                [exe.as_str(), "mcp"]
            );
            assert!(
                text.starts_with(
                    "{\r\n  \"servers\": {\r\n    \"db\": {\"command\": \"db-mcp\"},\r\n"
                ),
                "{text:?}"
            );
        } else {
            assert!(text.starts_with(codex_before), "{text:?}");
        }
    }
    // The others were set up; a dry run says the same about the two files and writes nothing.
    assert!(
        json_at(&e.project.join(".gemini/settings.json"))["mcpServers"]["multiedit"].is_object()
    );
    let before = e.snapshot();
    let o = e.run(&["setup", "claude-code", "cursor", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("is read-only (mode 0444)") && err(&o).contains("is a symbolic link to"),
        "{}",
        err(&o)
    );
    assert_eq!(e.snapshot(), before);
}

/// What each agent's own configuration holds of `--route-edits`, checked as the agent reads it.
fn deny_of(path: &Path) -> Vec<String> {
    json_at(path)["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn route_edits_turns_off_the_agents_own_editing_and_the_undo_gives_back_every_byte() {
    let e = env();
    // What the user had: their own Claude Code rules, an OpenCode file with other settings, an AGENTS.md.
    fs::create_dir(e.project.join(".claude")).unwrap();
    let claude_local = e.project.join(".claude/settings.local.json");
    fs::write(&claude_local, "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\"],\n    \"deny\": [\n      \"Read(.env)\"\n    ]\n  }\n}\n").unwrap();
    fs::write(e.project.join("opencode.json"), "{\n\t\"$schema\": \"https://opencode.ai/config.json\",\n\t\"permission\": {\"bash\": \"ask\"}\n}\n").unwrap();
    fs::write(
        e.project.join("AGENTS.md"),
        "# Project\n\nRun `make test`.\n",
    )
    .unwrap();
    assert_eq!(e.run(&["setup", "all"]).status.code(), Some(0));
    let connected = e.configs();

    let o = e.run(&["setup", "all", "--route-edits", "--agents-md"]);
    let said = out(&o);
    assert_eq!(o.status.code(), Some(0), "{said}{}", err(&o));
    assert_eq!(
        deny_of(&claude_local),
        ["Read(.env)", "Edit", "Write"],
        "NotebookEdit stays: multiedit refuses notebooks"
    );
    assert_eq!(
        json_at(&claude_local)["enabledMcpjsonServers"],
        json!(["multiedit"])
    );
    assert_eq!(
        json_at(&claude_local)["permissions"]["allow"],
        json!(["Bash(ls)"])
    );
    // Where Edit ran without asking, multiedit's edits do too: a hook that reads Claude Code's mode.
    assert_eq!(
        json_at(&claude_local)["hooks"],
        json!({"PreToolUse": [{"matcher": "mcp__multiedit__.*", "hooks": [{"type": "command", "command": format!("{} hook claude-code", bin().display())}]}]})
    );
    // Codex runs multiedit's tools without asking (`codex exec` never asks); multiedit mcp refuses to
    // write in its read-only sandbox.
    let codex = fs::read_to_string(e.home.join(".codex/config.toml")).unwrap();
    assert!(
        codex.ends_with("args = [\"mcp\"]\ndefault_tools_approval_mode = \"approve\"\n"),
        "{codex}"
    );
    assert!(
        !e.project.join(".claude/settings.json").exists(),
        "the team's file is not touched"
    );
    assert_eq!(
        json_at(&e.project.join("opencode.json"))["permission"],
        json!({"bash": "ask", "edit": "deny"})
    );
    let agents_md = fs::read_to_string(e.project.join("AGENTS.md")).unwrap();
    assert!(
        agents_md.starts_with("# Project\n\nRun `make test`.\n\n<!-- multiedit: route edits"),
        "{agents_md}"
    );
    assert!(agents_md.contains("multiedit_write"), "{agents_md}");
    // Agents with no switch for one project are named, with why; nothing is written for them.
    assert!(said.contains("gemini: edits not routed: Gemini CLI has no switch for one project that it reads without a warning"), "{said}");
    assert!(
        said.contains("cursor: edits not routed: Cursor has no setting in a file"),
        "{said}"
    );
    assert!(
        said.contains("vscode: edits not routed: VS Code's agent mode has no setting in a file"),
        "{said}"
    );
    assert!(!e.project.join(".gemini/policies").exists() && !e.home.join(".gemini").exists());

    // Twice: nothing changes.
    let routed = e.snapshot();
    let o = e.run(&["setup", "all", "--route-edits", "--agents-md"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(e.snapshot(), routed);
    assert_eq!(
        out(&o)
            .matches("edits already routed through multiedit")
            .count(),
        4,
        "{}",
        out(&o)
    );

    // A dry run of the undo writes nothing; the undo gives back every file as it was, byte for byte.
    let o = e.run(&["setup", "all", "--undo-route-edits", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(e.snapshot(), routed);
    let o = e.run(&["setup", "all", "--undo-route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        out(&o)
            .matches("(as it was before setup, byte for byte)")
            .count(),
        4,
        "{}",
        out(&o)
    );
    assert_eq!(e.configs(), connected, "{}", out(&o));
    let o = e.run(&["setup", "all", "--undo-route-edits"]);
    assert_eq!(e.configs(), connected);
    assert!(
        out(&o).contains("claude-code: nothing to undo in"),
        "{}",
        out(&o)
    );
}

#[test]
fn files_setup_made_for_routing_go_with_the_undo_and_a_rule_that_was_there_stays() {
    let e = env();
    // The user already denied Edit: setup adds only Write, and the undo takes back only Write.
    fs::create_dir_all(e.home.join(".claude")).unwrap();
    let user_claude = e.home.join(".claude/settings.json");
    fs::write(&user_claude, r#"{"permissions": {"deny": ["Edit"]}}"#).unwrap();
    let before = e.configs();
    let o = e.run(&[
        "setup",
        "claude-code",
        "gemini",
        "opencode",
        "codex",
        "--user",
        "--route-edits",
        "--agents-md",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert_eq!(deny_of(&user_claude), ["Edit", "Write"]);
    let policy = e.home.join(".gemini/policies/multiedit.toml");
    let rules: toml_edit::DocumentMut = fs::read_to_string(&policy).unwrap().parse().unwrap();
    assert_eq!(rules["rule"][0]["decision"].as_str(), Some("deny"));
    assert_eq!(
        rules["rule"][0]["toolName"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect::<Vec<_>>(),
        ["replace", "write_file"]
    );
    assert_eq!(
        json_at(&e.home.join(".config/opencode/opencode.json"))["permission"]["edit"],
        "deny"
    );
    assert!(fs::read_to_string(e.home.join(".codex/AGENTS.md"))
        .unwrap()
        .starts_with("<!-- multiedit: route edits"));
    // The record of what was written is this user's alone.
    let record = e.home.join(".local/state/multiedit/routes.json");
    assert_eq!(
        fs::metadata(&record).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let o = e.run(&[
        "setup",
        "claude-code",
        "gemini",
        "opencode",
        "codex",
        "--user",
        "--undo-route-edits",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        fs::read_to_string(&user_claude).unwrap(),
        r#"{"permissions": {"deny": ["Edit"]}}"#
    );
    assert!(
        !e.home.join(".gemini/policies").exists(),
        "the folder setup made for the policy goes too"
    );
    assert!(
        out(&o).contains(&format!(
            "gemini: removed {}, which setup had made",
            policy.display()
        )),
        "{}",
        out(&o)
    );
    // The MCP entries stay: only the routing is taken back.
    let (files, _) = e.configs();
    let (was, _) = &before;
    let mcp_files: Vec<&PathBuf> = files
        .iter()
        .map(|(p, _)| p)
        .filter(|p| !was.iter().any(|(q, _)| q == *p))
        .collect();
    assert_eq!(
        mcp_files,
        [
            &e.home.join(".claude.json"),
            &e.home.join(".codex/config.toml"),
            &e.home.join(".config/opencode/opencode.json"),
            &e.home.join(".gemini/settings.json")
        ]
    );
    assert!(json_at(&e.home.join(".config/opencode/opencode.json"))
        .get("permission")
        .is_none());
}

#[test]
fn the_undo_leaves_a_rule_the_user_edited_and_says_so() {
    let e = env();
    assert_eq!(
        e.run(&["setup", "claude-code", "opencode", "--route-edits"])
            .status
            .code(),
        Some(0)
    );
    let claude_local = e.project.join(".claude/settings.local.json");
    let text = fs::read_to_string(&claude_local)
        .unwrap()
        .replace("\"Write\"", "\"Write(src/**)\"");
    fs::write(&claude_local, text).unwrap();
    let opencode = e.project.join("opencode.json");
    fs::write(
        &opencode,
        fs::read_to_string(&opencode)
            .unwrap()
            .replace("\"deny\"", "\"ask\""),
    )
    .unwrap();

    let o = e.run(&["setup", "claude-code", "opencode", "--undo-route-edits"]);
    let said = out(&o);
    assert_eq!(o.status.code(), Some(0), "{said}{}", err(&o));
    assert_eq!(
        deny_of(&claude_local),
        ["Write(src/**)"],
        "Edit taken back, the edited rule left"
    );
    assert!(said.contains("\"Write\" is no longer in permissions.deny as setup wrote it (changed or removed): nothing taken back for it"), "{said}");
    assert_eq!(json_at(&opencode)["permission"]["edit"], "ask");
    assert!(
        said.contains(
            "permission.edit is now \"ask\", not the \"deny\" setup wrote: left as it is"
        ),
        "{said}"
    );
}

#[test]
fn routing_leaves_a_file_it_cannot_change_safely_and_names_it() {
    let e = env();
    fs::create_dir(e.project.join(".claude")).unwrap();
    let jsonc = "{\n  // mine\n  \"permissions\": {}\n}\n";
    fs::write(e.project.join(".claude/settings.local.json"), jsonc).unwrap();
    fs::write(e.project.join("opencode.json"), "{\"permission\": \"ask\"}").unwrap();
    let o = e.run(&["setup", "claude-code", "opencode", "--route-edits"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert_eq!(
        fs::read_to_string(e.project.join(".claude/settings.local.json")).unwrap(),
        jsonc
    );
    assert!(
        err(&o).contains("claude-code: ")
            && err(&o).contains("settings.local.json is not plain JSON")
            && err(&o).contains("left unchanged"),
        "{}",
        err(&o)
    );
    // OpenCode's `permission` set for every tool at once is the user's: left, and said.
    assert!(out(&o).contains(&format!("opencode: edits not routed through multiedit in {}:\n  permission is not an object (\"ask\"); left as it is\n", e.project.join("opencode.json").display())), "{}", out(&o));
    assert_eq!(
        json_at(&e.project.join("opencode.json"))["permission"],
        "ask"
    );
}

/// A stand-in for a model's API on the loopback: it records every request's path and body and answers
/// each with an error, so that an agent started against it shows which tools it would offer its model,
/// offline. Stops when dropped.
struct FakeModel {
    addr: std::net::SocketAddr,
    seen: std::sync::Arc<Mutex<Vec<(String, String)>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

use std::sync::Mutex;

impl FakeModel {
    fn start() -> FakeModel {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (seen2, stop2) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(300);
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let path = first.split(' ').nth(1).unwrap_or_default().to_string();
                seen2
                    .lock()
                    .unwrap()
                    .push((path, String::from_utf8_lossy(&body).into_owned()));
                let answer = r#"{"error":{"code":400,"message":"a test stand-in, not a model","status":"INVALID_ARGUMENT"}}"#;
                let mut stream = stream;
                let _ = write!(stream, "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}", answer.len());
            }
        });
        FakeModel { addr, seen, stop }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The function names of every request that declared tools (Gemini's API).
    fn gemini_tools(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        let mut names: Vec<String> = Vec::new();
        for (_, body) in seen.iter() {
            let Ok(v) = serde_json::from_str::<Value>(body) else {
                continue;
            };
            for t in v["tools"].as_array().into_iter().flatten() {
                for f in t["functionDeclarations"].as_array().into_iter().flatten() {
                    let name = f["name"].as_str().unwrap().to_string();
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
        }
        names
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Gemini CLI with edits routed: its policy (the user's policy folder) is read without a warning, its
/// model is offered multiedit's tools and neither replace nor write_file; after the undo, they are back.
#[test]
fn gemini_cli_offers_multiedit_and_not_its_own_editing_after_route_edits() {
    let Some(agents) = agent_bin("gemini") else {
        return;
    };
    let e = env();
    let o = e.run(&["setup", "gemini", "--user", "--route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // Signing in is the one setting a run against the stand-in needs: an API key, sent to it alone.
    let settings = e.home.join(".gemini/settings.json");
    let text = fs::read_to_string(&settings).unwrap().replacen(
        '{',
        "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},",
        1,
    );
    fs::write(&settings, text).unwrap();
    let offered = |e: &Env| {
        let model = FakeModel::start();
        let o = Command::new("gemini")
            .args(["-p", "hi", "-o", "stream-json", "--approval-mode", "yolo"])
            .current_dir(&e.project)
            .env("HOME", &e.home)
            .env("PATH", path_with(&agents))
            .env_remove("XDG_CONFIG_HOME")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("GEMINI_API_KEY", "test")
            .env("GOOGLE_GEMINI_BASE_URL", model.url())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (model.gemini_tools(), plain(&err(&o)))
    };
    let (tools, said) = offered(&e);
    for ours in [
        "mcp_multiedit_multiedit",
        "mcp_multiedit_multiedit_patch",
        "mcp_multiedit_multiedit_read",
        "mcp_multiedit_multiedit_write",
    ] {
        assert!(
            tools.iter().any(|t| t == ours),
            "{ours} offered: {tools:?}\n{said}"
        );
    }
    assert!(
        !tools.iter().any(|t| t == "replace" || t == "write_file"),
        "{tools:?}"
    );
    assert!(tools.iter().any(|t| t == "read_file"), "{tools:?}");
    assert!(
        !said.contains("Policy file")
            && !said.contains("deprecated")
            && !said.contains("Unrecognized"),
        "{said}"
    );

    assert_eq!(
        e.run(&["setup", "gemini", "--user", "--undo-route-edits"])
            .status
            .code(),
        Some(0)
    );
    let (tools, _) = offered(&e);
    assert!(
        tools.iter().any(|t| t == "replace") && tools.iter().any(|t| t == "write_file"),
        "back after the undo: {tools:?}"
    );
}

/// OpenCode with edits routed: its own listing of the build agent's tools has edit and write off,
/// multiedit connected; after the undo they are on again.
#[test]
fn opencode_lists_its_editing_off_after_route_edits() {
    let Some(agents) = agent_bin("opencode") else {
        return;
    };
    let e = env();
    assert_eq!(
        e.run(&["setup", "opencode", "--route-edits"]).status.code(),
        Some(0)
    );
    let opencode = |e: &Env, args: &[&str]| {
        Command::new("opencode")
            .args(args)
            .current_dir(&e.project)
            .env("HOME", &e.home)
            .env("PATH", path_with(&agents))
            .env_remove("XDG_CONFIG_HOME")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let tools = |e: &Env| {
        let o = opencode(e, &["debug", "agent", "build"]);
        let v: Value = serde_json::from_str(&out(&o))
            .unwrap_or_else(|x| panic!("{x}: {}{}", out(&o), err(&o)));
        assert!(
            !plain(&err(&o)).to_lowercase().contains("warn"),
            "{}",
            err(&o)
        );
        (v["tools"]["edit"].clone(), v["tools"]["write"].clone())
    };
    assert_eq!(tools(&e), (json!(false), json!(false)));
    let o = opencode(&e, &["mcp", "list"]);
    assert!(
        plain(&out(&o)).contains("✓ multiedit connected"),
        "{}{}",
        out(&o),
        err(&o)
    );
    assert_eq!(
        e.run(&["setup", "opencode", "--undo-route-edits"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(tools(&e), (json!(true), json!(true)));
}

/// Claude Code with edits routed: its session's first message lists its tools and servers, before any
/// request to a model: multiedit connected with its tools, Edit and Write gone, NotebookEdit kept, and
/// its debug log says nothing against the settings written.
#[test]
fn claude_code_offers_multiedit_and_not_its_own_editing_after_route_edits() {
    let Some(agents) = agent_bin("claude") else {
        return;
    };
    let e = env();
    let o = e.run(&["setup", "claude-code", "--route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let session = |e: &Env| {
        let log = e.home.join("claude-debug.txt");
        let _ = fs::remove_file(&log);
        let o = Command::new("claude")
            .args([
                "-p",
                "hi",
                "--output-format",
                "stream-json",
                "--verbose",
                "--debug-file",
            ])
            .arg(&log)
            .current_dir(&e.project)
            .env("HOME", &e.home)
            .env("PATH", path_with(&agents))
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let first = out(&o)
            .lines()
            .next()
            .map(str::to_string)
            .unwrap_or_default();
        let init: Value =
            serde_json::from_str(&first).unwrap_or_else(|x| panic!("{x}: {}{}", out(&o), err(&o)));
        assert_eq!(init["subtype"], "init", "{init}");
        let tools: Vec<String> = init["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        (
            tools,
            init["mcp_servers"].clone(),
            fs::read_to_string(&log).unwrap_or_default(),
        )
    };
    let (tools, servers, log) = session(&e);
    assert!(
        !tools.iter().any(|t| t == "Edit" || t == "Write"),
        "{tools:?}"
    );
    assert!(
        tools.iter().any(|t| t == "NotebookEdit") && tools.iter().any(|t| t == "Read"),
        "{tools:?}"
    );
    for ours in [
        "mcp__multiedit__multiedit",
        "mcp__multiedit__multiedit_patch",
        "mcp__multiedit__multiedit_read",
        "mcp__multiedit__multiedit_write",
    ] {
        assert!(tools.iter().any(|t| t == ours), "{ours}: {tools:?}");
    }
    assert_eq!(
        servers,
        json!([{"name": "multiedit", "status": "connected", "source": "project"}])
    );
    let complaints: Vec<&str> = log
        .lines()
        .filter(|l| {
            (l.contains("[WARN]") || l.contains("[ERROR]"))
                && (l.contains("ettings") || l.contains("ermission") || l.contains("rule"))
        })
        .collect();
    assert!(complaints.is_empty(), "{complaints:#?}");

    assert_eq!(
        e.run(&["setup", "claude-code", "--undo-route-edits"])
            .status
            .code(),
        Some(0)
    );
    let (tools, _, _) = session(&e);
    assert!(
        tools.iter().any(|t| t == "Edit") && tools.iter().any(|t| t == "Write"),
        "back after the undo: {tools:?}"
    );
}

/// `multiedit doctor` tells, per agent connected, whether its edits go through multiedit or around it.
#[test]
fn doctor_says_whose_edits_go_through_multiedit() {
    let e = env();
    assert_eq!(
        e.run(&["setup", "claude-code", "gemini", "opencode", "codex"])
            .status
            .code(),
        Some(0)
    );
    let said = out(&e.run(&["doctor"]));
    assert!(
        said.contains(
            "Their edits (through multiedit, or around it with the agent's own tools):\n"
        ),
        "{said}"
    );
    assert!(said.contains("  claude-code: around multiedit: its own edit tools are on (`multiedit setup claude-code --route-edits` turns them off)\n"), "{said}");
    assert!(said.contains("  gemini: around multiedit: its own edit tools are on (`multiedit setup gemini --user --route-edits` turns them off)\n"), "{said}");
    assert!(said.contains("  codex: around multiedit: Codex CLI has no switch for apply_patch: its edits go around multiedit (--agents-md asks it in AGENTS.md)\n"), "{said}");

    assert_eq!(
        e.run(&[
            "setup",
            "claude-code",
            "opencode",
            "codex",
            "--route-edits",
            "--agents-md"
        ])
        .status
        .code(),
        Some(0)
    );
    assert_eq!(
        e.run(&["setup", "gemini", "--user", "--route-edits"])
            .status
            .code(),
        Some(0)
    );
    // Gemini CLI runs the project's servers once the folder is trusted (setup leaves that to the user).
    fs::write(
        e.home.join(".gemini/trustedFolders.json"),
        json!({e.project.display().to_string(): "TRUST_FOLDER"}).to_string(),
    )
    .unwrap();
    let o = e.run(&["doctor"]);
    let said = out(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    let local = e
        .project
        .join(".claude/settings.local.json")
        .display()
        .to_string();
    assert!(said.contains(&format!("  claude-code: routed through multiedit: Edit and Write denied (Edit in {local}, Write in {local})\n")), "{said}");
    assert!(
        said.contains(&format!(
            "  opencode: routed through multiedit: permission.edit is \"deny\" in {}\n",
            e.project.join("opencode.json").display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "  gemini: routed through multiedit: replace and write_file denied by {}\n",
            e.home.join(".gemini/policies/multiedit.toml").display()
        )),
        "{said}"
    );
    assert!(said.contains(&format!("  codex: around multiedit: Codex CLI has no switch for apply_patch; {} asks it to edit with multiedit (an instruction, not enforced)\n", e.project.join("AGENTS.md").display())), "{said}");
}

/// What setup says when a link of the project leads a file out of it, `or_else` as each caller gives it.
fn leads_out(
    file: &Path,
    link: &Path,
    to: &str,
    project: &Path,
    lands: &Path,
    or_else: &str,
) -> String {
    let what = if file == link {
        format!("{} is a symbolic link", file.display())
    } else {
        format!(
            "{} is inside {}, a symbolic link",
            file.display(),
            link.display()
        )
    };
    format!(
        "{what} to {to}, which leads outside the project ({}); setup does not write through such a link (a cloned \
         repository may hold one to make setup change a file of yours elsewhere), so nothing was read or written at \
         {}. Remove the link and run setup again (setup then makes the file in the project), or {or_else}",
        project.display(),
        lands.display()
    )
}

const ROUTE_BY_HAND: &str =
    "turn the agent's own edit tools off by hand (docs/agents.md says where)";

fn by_hand() -> String {
    format!(
        "add the server by hand: it runs {} with the argument mcp",
        bin().display()
    )
}

/// A cloned repository's `.claude/settings.local.json` is a link to a file of the user's outside it:
/// `setup --route-edits` (and its dry run) refuses it, naming the link and where it leads, and nothing
/// anywhere changes (before: the user's file was rewritten with setup's rules).
#[test]
fn route_edits_never_writes_through_a_project_file_that_links_outside() {
    let e = env();
    let theirs = e.root().join("dotfiles/claude-settings.json");
    fs::create_dir(e.root().join("dotfiles")).unwrap();
    fs::write(
        &theirs,
        "{\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]}\n}\n",
    )
    .unwrap();
    fs::create_dir(e.project.join(".claude")).unwrap();
    let link = e.project.join(".claude/settings.local.json");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    // Connected first: only the routing is left to do.
    assert_eq!(e.run(&["setup", "claude-code"]).status.code(), Some(0));
    let before = e.everything();
    for dry in [true, false] {
        let mut args = vec!["setup", "claude-code", "--route-edits"];
        if dry {
            args.push("--dry-run");
        }
        let o = e.run(&args);
        assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
        assert_eq!(
            err(&o),
            format!(
                "claude-code: {}\n",
                leads_out(
                    &link,
                    &link,
                    &theirs.display().to_string(),
                    &e.project,
                    &theirs,
                    ROUTE_BY_HAND
                )
            )
        );
        assert_eq!(
            out(&o),
            format!(
                "claude-code: {} already runs {} mcp\n",
                e.project.join(".mcp.json").display(),
                bin().display()
            )
        );
        assert_eq!(e.everything(), before, "nothing anywhere changed");
    }
}

/// `.mcp.json`, `opencode.json` and `AGENTS.md` shipped as links to the user's own files outside the
/// project (`~/.claude.json`, OpenCode's user configuration, `~/.bashrc` by a relative link): each is
/// refused and named, the others go on, exit 1, and nothing anywhere changes (before: all three
/// outside files were rewritten).
#[test]
fn setup_never_writes_through_project_files_that_link_outside() {
    let e = env();
    let claude_json = e.home.join(".claude.json");
    fs::write(&claude_json, "{\"numStartups\": 3, \"mcpServers\": {}}\n").unwrap();
    let opencode_user = e.home.join(".config/opencode/opencode.json");
    fs::create_dir_all(opencode_user.parent().unwrap()).unwrap();
    fs::write(&opencode_user, "{\"theme\": \"x\"}\n").unwrap();
    let bashrc = e.home.join(".bashrc");
    fs::write(&bashrc, "export PATH=$HOME/bin:$PATH\n").unwrap();
    let mcp = e.project.join(".mcp.json");
    let opencode = e.project.join("opencode.json");
    let agents_md = e.project.join("AGENTS.md");
    std::os::unix::fs::symlink(&claude_json, &mcp).unwrap();
    std::os::unix::fs::symlink(&opencode_user, &opencode).unwrap();
    std::os::unix::fs::symlink("../home/.bashrc", &agents_md).unwrap();
    // Codex CLI's own file is the user's: connected and routed first (its server's approval), so that
    // only AGENTS.md is left.
    assert_eq!(e.run(&["setup", "codex"]).status.code(), Some(0));
    assert_eq!(
        e.run(&["setup", "codex", "--route-edits"]).status.code(),
        Some(0)
    );
    let before = e.everything();
    for dry in [true, false] {
        let mut args = vec![
            "setup",
            "claude-code",
            "opencode",
            "codex",
            "--project",
            "--route-edits",
            "--agents-md",
        ];
        if dry {
            args.push("--dry-run");
        }
        let o = e.run(&args);
        assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
        let s = |p: &Path| p.display().to_string();
        assert_eq!(
            err(&o),
            format!(
                "claude-code: {}\ncodex: {}\nopencode: {}\n",
                leads_out(
                    &mcp,
                    &mcp,
                    &s(&claude_json),
                    &e.project,
                    &claude_json,
                    &by_hand()
                ),
                leads_out(
                    &agents_md,
                    &agents_md,
                    "../home/.bashrc",
                    &e.project,
                    &bashrc,
                    ROUTE_BY_HAND
                ),
                leads_out(
                    &opencode,
                    &opencode,
                    &s(&opencode_user),
                    &e.project,
                    &opencode_user,
                    &by_hand()
                ),
            )
        );
        let codex = e.home.join(".codex/config.toml");
        assert_eq!(
            out(&o),
            format!(
                "codex: {} already runs {} mcp (Codex CLI reads a project's .codex/config.toml only once it trusts the \
                 project, and it does not trust this one)\n\
                 codex: edits already routed through multiedit in {}\n",
                codex.display(),
                bin().display(),
                codex.display(),
            )
        );
        assert_eq!(e.everything(), before, "nothing anywhere changed");
    }
}

/// A project folder that is a link to a folder outside (`.claude` -> a folder elsewhere, `.gemini` ->
/// the user's `~/.gemini`): setup, its routing and its undo refuse every file in it, naming the folder,
/// and nothing anywhere changes (before: the files there were read and rewritten).
#[test]
fn a_project_folder_that_links_outside_is_refused_for_setup_routing_and_undo() {
    let e = env();
    let elsewhere = e.root().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("settings.local.json"), "{}\n").unwrap();
    let gemini_user = e.home.join(".gemini");
    fs::create_dir(&gemini_user).unwrap();
    fs::write(
        gemini_user.join("settings.json"),
        "{\"ui\": {\"theme\": \"Default\"}}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, e.project.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&gemini_user, e.project.join(".gemini")).unwrap();
    // A link to a folder outside that is not there (yet): refused all the same.
    let nowhere = e.root().join("not-yet");
    std::os::unix::fs::symlink(&nowhere, e.project.join(".vscode")).unwrap();
    assert_eq!(e.run(&["setup", "claude-code"]).status.code(), Some(0));
    let before = e.everything();
    let local = e.project.join(".claude/settings.local.json");
    let gemini = e.project.join(".gemini/settings.json");
    let o = e.run(&["setup", "claude-code", "gemini", "vscode", "--route-edits"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert_eq!(
        err(&o),
        format!(
            "claude-code: {}\ngemini: {}\nvscode: {}\n",
            leads_out(
                &local,
                &e.project.join(".claude"),
                &elsewhere.display().to_string(),
                &e.project,
                &elsewhere.join("settings.local.json"),
                ROUTE_BY_HAND
            ),
            leads_out(
                &gemini,
                &e.project.join(".gemini"),
                &gemini_user.display().to_string(),
                &e.project,
                &gemini_user.join("settings.json"),
                &by_hand()
            ),
            leads_out(
                &e.project.join(".vscode/mcp.json"),
                &e.project.join(".vscode"),
                &nowhere.display().to_string(),
                &e.project,
                &nowhere.join("mcp.json"),
                &by_hand()
            ),
        )
    );
    assert_eq!(e.everything(), before, "nothing anywhere changed");
    let o = e.run(&["setup", "claude-code", "--undo-route-edits"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert_eq!(
        err(&o),
        format!(
            "claude-code: {}\n",
            leads_out(
                &local,
                &e.project.join(".claude"),
                &elsewhere.display().to_string(),
                &e.project,
                &elsewhere.join("settings.local.json"),
                "take back what setup wrote there by hand"
            )
        )
    );
    assert_eq!(out(&o), "");
    assert_eq!(e.everything(), before, "nothing anywhere changed");
}

/// Links of the project that stay inside it are followed, as the kernel follows them: `.mcp.json` ->
/// `config/mcp.json` and `.claude` -> `tools/claude` are written where they lead, the links stay
/// links, and the undo gives every byte back.
#[test]
fn links_inside_the_project_that_stay_inside_are_followed() {
    let e = env();
    fs::create_dir_all(e.project.join("config")).unwrap();
    fs::create_dir_all(e.project.join("tools/claude")).unwrap();
    let shared = e.project.join("config/mcp.json");
    fs::write(
        &shared,
        "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("config/mcp.json", e.project.join(".mcp.json")).unwrap();
    std::os::unix::fs::symlink("tools/claude", e.project.join(".claude")).unwrap();
    let before = e.configs();
    let o = e.run(&["setup", "claude-code", "--route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    let v = json_at(&shared);
    assert_eq!(v["mcpServers"]["other"], json!({"command": "x"}));
    assert_eq!(
        command_of(&v["mcpServers"]["multiedit"]),
        [bin().to_str().unwrap(), "mcp"]
    );
    let local = e.project.join("tools/claude/settings.local.json");
    assert_eq!(deny_of(&local), ["Edit", "Write"]);
    assert!(
        out(&o).contains(&format!("claude-code: updated {}:", shared.display())),
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains(&format!(
            "claude-code: created {} (edits routed",
            local.display()
        )),
        "{}",
        out(&o)
    );
    assert_eq!(
        fs::read_link(e.project.join(".mcp.json")).unwrap(),
        Path::new("config/mcp.json")
    );
    assert_eq!(
        fs::read_link(e.project.join(".claude")).unwrap(),
        Path::new("tools/claude")
    );
    let o = e.run(&["setup", "claude-code", "--undo-route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert_eq!(
        out(&o),
        format!(
            "claude-code: removed {}, which setup had made\n",
            local.display()
        )
    );
    // The MCP entry stays (only routing is undone); every other byte is as it was.
    let (files, folders) = e.configs();
    let (was_files, was_folders) = before;
    assert_eq!(folders, was_folders);
    let others = |f: &[(PathBuf, Vec<u8>)]| -> Vec<(PathBuf, Vec<u8>)> {
        f.iter().filter(|(p, _)| *p != shared).cloned().collect()
    };
    assert_eq!(others(&files), others(&was_files));
}

/// The user's own dotfiles kept as links (`~/.claude.json` -> a dotfiles repository beside the home,
/// `~/.claude` and `~/.config` -> folders there) are written through, as before: the links stay, the
/// files they lead to get the entries and rules, made there when missing; the undo finds what it
/// wrote there and gives it back.
#[test]
fn user_dotfile_links_are_still_written_through() {
    let e = env();
    let dotfiles = e.root().join("dotfiles");
    fs::create_dir_all(dotfiles.join("claude")).unwrap();
    fs::create_dir_all(dotfiles.join("config")).unwrap();
    let claude_json = dotfiles.join("claude.json");
    fs::write(&claude_json, "{\"numStartups\": 3}\n").unwrap();
    std::os::unix::fs::symlink("../dotfiles/claude.json", e.home.join(".claude.json")).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("claude"), e.home.join(".claude")).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("config"), e.home.join(".config")).unwrap();
    let links =
        || [".claude.json", ".claude", ".config"].map(|l| fs::read_link(e.home.join(l)).unwrap());
    let were = links();
    let o = e.run(&[
        "setup",
        "claude-code",
        "opencode",
        "--user",
        "--route-edits",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert_eq!(links(), were, "the links are still the same links");
    let v = json_at(&claude_json);
    assert_eq!(v["numStartups"], 3);
    assert_eq!(command_of(&v["mcpServers"]["multiedit"])[1], "mcp");
    let settings = dotfiles.join("claude/settings.json");
    assert_eq!(deny_of(&settings), ["Edit", "Write"]);
    let opencode = dotfiles.join("config/opencode/opencode.json");
    assert_eq!(json_at(&opencode)["permission"]["edit"], "deny");
    let routed = fs::read(&opencode).unwrap();
    let said = out(&o);
    assert!(
        said.contains(&format!("claude-code: updated {}:", claude_json.display())),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "claude-code: created {} (edits routed",
            settings.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("opencode: created {}:", opencode.display())),
        "{said}"
    );

    let o = e.run(&[
        "setup",
        "claude-code",
        "opencode",
        "--user",
        "--undo-route-edits",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    let said = out(&o);
    assert!(
        said.contains(&format!(
            "claude-code: removed {}, which setup had made\n",
            settings.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "opencode: restored {} (as it was before setup, byte for byte)",
            opencode.display()
        )),
        "{said}"
    );
    assert!(!settings.exists());
    assert!(json_at(&opencode).get("permission").is_none());
    assert_ne!(fs::read(&opencode).unwrap(), routed);
    assert_eq!(links(), were);

    // A dotfile link to a file not there yet is left and named, as before.
    fs::create_dir(e.home.join(".cursor")).unwrap();
    let cursor = e.home.join(".cursor/mcp.json");
    std::os::unix::fs::symlink("../../dotfiles/cursor-mcp.json", &cursor).unwrap();
    let before = e.everything();
    let o = e.run(&["setup", "cursor", "--user"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert_eq!(
        err(&o),
        format!(
            "cursor: {} is a symbolic link to ../../dotfiles/cursor-mcp.json, which does not exist; left unchanged. \
             Create the file it points to (or remove the link) and run setup again, or {}\n",
            cursor.display(),
            by_hand()
        )
    );
    assert_eq!(e.everything(), before);
}

/// The refusal of a record (`routes.json`) or its folder that another user could have written.
fn untrusted(routes: &Path, why: &str, fix: &str) -> String {
    format!(
        "multiedit setup: {} cannot be trusted: {why}. Another user could have written it, and --undo-route-edits \
         rewrites and removes files on its word, so setup did not use it and wrote nothing. {fix}\n",
        routes.display()
    )
}

/// Runs the undo, its dry run and a new routing against an untrusted record: each refused with
/// `said`, exit 1, nothing on stdout, and nothing anywhere changed; `doctor` names the problem.
fn all_refused(e: &Env, said: &str) {
    let before = e.everything();
    for args in [
        &["setup", "claude-code", "opencode", "--undo-route-edits"][..],
        &[
            "setup",
            "claude-code",
            "opencode",
            "--undo-route-edits",
            "--dry-run",
        ],
        &["setup", "claude-code", "opencode", "--route-edits"],
        &["setup", "codex", "--route-edits", "--agents-md"],
    ] {
        let o = e.run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}{}", out(&o), err(&o));
        assert_eq!(err(&o), said, "{args:?}");
        assert_eq!(out(&o), "", "{args:?}");
        assert_eq!(e.everything(), before, "{args:?}: nothing anywhere changed");
    }
    let o = e.run(&["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let problem = said
        .strip_prefix("multiedit setup: ")
        .unwrap()
        .replace(
            ", and --undo-route-edits rewrites and removes files on its word, so setup did not use it and wrote nothing.",
            ", so setup --route-edits and --undo-route-edits refuse to use it.",
        );
    assert!(
        out(&o).contains(&format!(
            "\nWhat --route-edits wrote, for its undo:\n  {problem}"
        )),
        "{}",
        out(&o)
    );
    assert_eq!(e.everything(), before);
}

/// `routes.json` in a state folder that others may write (mode 0777, 0770), a record of mode 0666, a
/// state folder that is a link: the undo (which deletes and rewrites the user's files on the
/// record's word), its dry run and a new routing are refused before anything is written, with the
/// fix; `doctor` says it. Made private again, the undo works.
#[test]
fn a_routes_record_others_could_have_written_is_refused_and_nothing_is_written() {
    let e = env();
    let o = e.run(&["setup", "claude-code", "opencode", "--route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    let state = e.home.join(".local/state/multiedit");
    let routes = state.join("routes.json");
    let chmod =
        |p: &Path, mode: u32| fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
    for mode in [0o777, 0o770, 0o702] {
        chmod(&state, mode);
        all_refused(
            &e,
            &untrusted(
                &routes,
                &format!("{} has mode {mode:04o}, which lets other users in (0700 is required)", state.display()),
                &format!(
                    "Make the folder yours alone (chmod 700 {}), check that routes.json names only files setup wrote, \
                     and run setup again.",
                    state.display()
                ),
            ),
        );
    }
    chmod(&state, 0o700);
    chmod(&routes, 0o666);
    all_refused(
        &e,
        &untrusted(
            &routes,
            &format!("{} has mode 0666, which lets other users in (0600 is required)", routes.display()),
            &format!(
                "Make it yours alone (chmod 600 {}), check that it names only files setup wrote, and run setup again.",
                routes.display()
            ),
        ),
    );
    chmod(&routes, 0o600);
    // The state folder a link (to a private folder): not the folder itself, so not trusted.
    let moved = e.home.join(".local/state/elsewhere");
    fs::rename(&state, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &state).unwrap();
    all_refused(
        &e,
        &untrusted(
            &routes,
            &format!("{} is a symbolic link, not a folder", state.display()),
            &format!(
                "Move {} away (setup then makes its own, closed to others) and run setup again.",
                state.display()
            ),
        ),
    );
    fs::remove_file(&state).unwrap();
    fs::rename(&moved, &state).unwrap();
    // Private again: the undo goes ahead.
    let o = e.run(&["setup", "claude-code", "opencode", "--undo-route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(!e.project.join(".claude/settings.local.json").exists());
}

/// A state folder, or a `routes.json`, owned by another user (uid 65534): refused as above, with the
/// fix for a folder that is not the user's. Needs root to give a file away; skipped otherwise (the
/// modes above are the unprivileged cases).
#[test]
fn a_routes_record_of_another_users_is_refused_and_nothing_is_written() {
    if !support::disk::is_root() {
        eprintln!("skipped: only root can give the state folder to another user");
        return;
    }
    let e = env();
    let o = e.run(&["setup", "claude-code", "opencode", "--route-edits"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    let state = e.home.join(".local/state/multiedit");
    let routes = state.join("routes.json");
    let uid = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        fs::symlink_metadata(p).unwrap().uid()
    };
    let me = uid(&state);
    std::os::unix::fs::lchown(&state, Some(65534), None).unwrap();
    all_refused(
        &e,
        &untrusted(
            &routes,
            &format!(
                "{} is owned by uid 65534, not by this user (uid {me})",
                state.display()
            ),
            &format!(
                "Move {} away (setup then makes its own, closed to others) and run setup again.",
                state.display()
            ),
        ),
    );
    std::os::unix::fs::lchown(&state, Some(me), None).unwrap();
    std::os::unix::fs::lchown(&routes, Some(65534), None).unwrap();
    all_refused(
        &e,
        &untrusted(
            &routes,
            &format!(
                "{} is owned by uid 65534, not by this user (uid {me})",
                routes.display()
            ),
            &format!("Move {} away and run setup again.", routes.display()),
        ),
    );
}

/// `multiedit doctor` says what each agent itself would say, and the fix: a Claude Code approval
/// pending or given by setup for another command, a folder Gemini CLI does not trust (which `gemini
/// mcp list` shows as Disabled), an `opencode.jsonc` that wins over the `opencode.json` setup wrote, a
/// user's Gemini policy above setup's, and a deny list that covers Write for some paths only.
#[test]
fn doctor_reads_every_file_the_agents_read_and_says_what_they_would() {
    let e = env();
    let p = |rel: &str| e.project.join(rel).display().to_string();
    let h = |rel: &str| e.home.join(rel).display().to_string();
    assert_eq!(
        e.run(&[
            "setup",
            "claude-code",
            "gemini",
            "opencode",
            "--route-edits"
        ])
        .status
        .code(),
        Some(0)
    );
    assert_eq!(
        e.run(&["setup", "gemini", "--user", "--route-edits"])
            .status
            .code(),
        Some(0)
    );
    let o = e.run(&["doctor"]);
    let said = out(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!(
        "  gemini: untrusted folder: Gemini CLI runs no server of {} in a folder it does not trust (`gemini mcp list` says \
         \"Disabled\"). Fix: start gemini in this folder and trust it, or add \"{}\": \"TRUST_FOLDER\" to {}.\n",
        p(".gemini/settings.json"),
        e.project.display(),
        h(".gemini/trustedFolders.json")
    )), "{said}");
    assert!(said.contains("\n1 problem found.\n"), "{said}");
    // Gemini CLI itself says so.
    if let Some(agents) = agent_bin("gemini") {
        let o = Command::new("gemini")
            .args(["mcp", "list"])
            .current_dir(&e.project)
            .env("HOME", &e.home)
            .env("PATH", path_with(&agents))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let listed = plain(&format!("{}{}", out(&o), err(&o)));
        assert!(
            listed.contains("multiedit") && listed.contains("Disabled"),
            "{listed}"
        );
    }
    fs::write(
        e.home.join(".gemini/trustedFolders.json"),
        json!({e.project.display().to_string(): "TRUST_FOLDER"}).to_string(),
    )
    .unwrap();

    // Each agent's own files, read as the agent reads them.
    fs::write(
        e.project.join("opencode.jsonc"),
        "// mine\n{\n  \"permission\": {\"edit\": \"allow\"},\n}\n",
    )
    .unwrap();
    fs::write(
        e.home.join(".gemini/policies/mine.toml"),
        "[[rule]]\ntoolName = \"replace\"\ndecision = \"allow\"\npriority = 950\n",
    )
    .unwrap();
    let local = e.project.join(".claude/settings.local.json");
    let text = fs::read_to_string(&local)
        .unwrap()
        .replace("\"Write\"", "\"Write(src/**)\"");
    fs::write(&local, text).unwrap();
    // A teammate's commit changes the command of the server setup approved.
    let mcp = e.project.join(".mcp.json");
    let text = fs::read_to_string(&mcp)
        .unwrap()
        .replace(&bin().display().to_string(), "/elsewhere/multiedit");
    fs::write(&mcp, text).unwrap();
    let said = out(&e.run(&["doctor"]));
    let l = local.display().to_string();
    for line in [
        format!(
            "  claude-code: approval for another command: setup approved multiedit in {l} when {} ran `{} mcp`; it now \
             runs `/elsewhere/multiedit mcp`, and Claude Code runs that on the same approval. Fix: check the change, \
             then run `multiedit setup claude-code --undo-route-edits` and `multiedit setup claude-code --route-edits` \
             to approve this command.\n",
            mcp.display(),
            bin().display()
        ),
        format!(
            "  claude-code: partly through multiedit: Edit in {l} denied; Write is denied only where Write(src/**) in \
             {l} reaches, and writes everywhere else (`multiedit setup claude-code --route-edits` turns the rest off)\n"
        ),
        format!(
            "  opencode: around multiedit: {} sets permission.edit to \"allow\", and OpenCode takes it over the other \
             files (make it \"deny\" there, or remove it and run `multiedit setup opencode --route-edits`)\n",
            p("opencode.jsonc")
        ),
        format!(
            "  gemini: around multiedit: {} gives replace \"allow\" at priority 950, above the deny that setup wrote \
             (lower that rule's priority below the deny's, or remove it)\n",
            h(".gemini/policies/mine.toml")
        ),
    ] {
        assert!(said.contains(&line), "{line}\n{said}");
    }
}
