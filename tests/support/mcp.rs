//! A Python with the official MCP SDK (`mcp` on PyPI), for tests that drive `multiedit mcp` as an
//! agent does. `.ci/run` installs it into `~/.cache/multiedit/mcp-venv`; MULTIEDIT_MCP_PYTHON names
//! another. Without one a test is skipped with a message, except under CI=true, where it fails.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The Python to use, or None after saying why the test is skipped (a panic under CI=true).
pub fn python(test: &str) -> Option<PathBuf> {
    let candidate = match std::env::var_os("MULTIEDIT_MCP_PYTHON") {
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/multiedit/mcp-venv/bin/python")),
    };
    let usable = candidate.filter(|p| Command::new(p).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success()));
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
    cmd.arg(root().join("tests/mcp/call.py")).arg(env!("CARGO_BIN_EXE_multiedit")).arg(tool).arg(plan.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run tests/mcp/call.py");
    assert!(out.status.success(), "call.py failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("call.py printed {:?}: {e}", String::from_utf8_lossy(&out.stdout)))
}
