//! The agent CLIs `tests/agents/install.sh` installs (Claude Code, Gemini CLI, OpenCode, Codex), for
//! the tests that run them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The folder of the installed agent CLIs' programs, or `None`: the test says it skipped (a failure
/// under CI=true, where they must be there).
pub fn agent_bin(name: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("MULTIEDIT_AGENTS_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/multiedit/agents")
        }
    };
    let bin = dir.join("node_modules/.bin");
    if bin.join(name).is_file() {
        return Some(bin);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{name} is not installed in {}: run tests/agents/install.sh",
        dir.display()
    );
    eprintln!(
        "skipped: {name} is not installed in {} (tests/agents/install.sh installs it)",
        dir.display()
    );
    None
}

/// PATH with the agent CLIs (and their Node) first.
pub fn path_with(agents: &Path) -> OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(agents.to_path_buf()).chain(std::env::split_paths(&rest)))
        .unwrap()
}
