//! `multiedit mcp` for the tests, two ways. A Python with the official MCP SDK (`mcp` on PyPI), for
//! tests that drive it as an agent does: `.ci/run` installs it into `~/.cache/multiedit/mcp-venv`;
//! MULTIEDIT_MCP_PYTHON names another. Without one a test is skipped with a message, except under
//! CI=true, where it fails. And `Raw`, JSON lines on its stdio, for what no SDK would send and for tests
//! that need no SDK.
#![allow(dead_code)]

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The Python to use, or None after saying why the test is skipped (a panic under CI=true).
pub fn python(test: &str) -> Option<PathBuf> {
    let candidate = match std::env::var_os("MULTIEDIT_MCP_PYTHON") {
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".cache/multiedit/mcp-venv/bin/python")),
    };
    let usable = candidate.filter(|p| {
        Command::new(p)
            .args(["-c", "import mcp"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if usable.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{test}: CI=true but the MCP Python SDK is missing: run .ci/run (it creates ~/.cache/multiedit/mcp-venv)"
        );
        eprintln!(
            "\n*** SKIPPED {test}: no Python with the `mcp` package. Create it with\n***   \
             python3 -m venv ~/.cache/multiedit/mcp-venv && ~/.cache/multiedit/mcp-venv/bin/pip install mcp\n"
        );
    }
    usable
}

/// One tool call through `tests/mcp/call.py`: {"is_error", "text", "structured"}.
pub fn call(python: &Path, tool: &str, plan: &Value, env: &[(&str, &Path)]) -> Value {
    let mut cmd = Command::new(python);
    cmd.arg(root().join("tests/mcp/call.py"))
        .arg(env!("CARGO_BIN_EXE_multiedit"))
        .arg(tool)
        .arg(plan.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run tests/mcp/call.py");
    assert!(
        out.status.success(),
        "call.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "call.py printed {:?}: {e}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// `multiedit mcp ARGS` started in `cwd` (as an agent starts it: it edits only there unless ARGS say
/// more) with the environment `env` added, spoken to in raw lines: newline-delimited JSON-RPC.
pub struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl Raw {
    pub fn start(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Raw {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_multiedit"));
        cmd.arg("mcp")
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let v = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC: {line:?}: {e}"));
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let mut raw = Raw {
            child,
            stdin: Some(stdin),
            lines,
        };
        raw.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}));
        assert_eq!(raw.next()["id"], 0);
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes the server's input, as a client that is done does, and waits (at most 20 s) for it to
    /// exit; returns whether it did.
    pub fn close(&mut self) -> bool {
        self.stdin.take();
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn send(&mut self, v: &Value) {
        self.send_bytes(format!("{v}\n").as_bytes());
    }

    /// The next message, failing the test after 60 s (so a hang fails rather than blocks it).
    pub fn next(&mut self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer within 60 s")
    }

    /// A tools/call; returns its whole `result` (`content`, `isError`, `structuredContent`).
    pub fn call_result(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}));
        let a = self.next();
        assert_eq!(a["id"], id, "{a}");
        a["result"].clone()
    }

    /// A tools/call; returns (isError, text).
    pub fn call(&mut self, id: i64, tool: &str, arguments: Value) -> (bool, String) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}));
        let a = self.next();
        assert_eq!(a["id"], id, "{a}");
        let text = a["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a tool result: {a}"))
            .to_string();
        (a["result"]["isError"] == true, text)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
