//! `multiedit hook claude-code`: the PreToolUse hook `setup --route-edits` gives Claude Code for
//! multiedit's tools (`route::claude_hook`), so that routing keeps what the user's permission mode
//! meant. Claude Code's `acceptEdits` mode and an allow rule for `Edit` let its own Edit run without
//! asking; they do not cover an MCP tool, so a routed agent would be asked (or, in `claude -p`, denied)
//! for every edit. The hook reads the mode Claude Code hands it (`permission_mode`) and allows
//! multiedit's edit tools where Edit ran without asking, and its read-only tools (as Read) always;
//! elsewhere it says nothing, and Claude Code asks as it asks for Edit.
//!
//! It reads one JSON object on standard input and answers on standard output; whatever it cannot read
//! gets no answer (exit 0), which leaves the decision to Claude Code.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};

use super::agents::{home, SERVER_NAME};
use crate::process::out;

/// multiedit's tools that change nothing: they run without asking, as Claude Code's Read does.
const READ_ONLY: [&str; 3] = ["multiedit_read", "multiedit_preview", "multiedit_symbols"];

/// Claude Code's modes where its Edit runs without asking.
const EDITS_WITHOUT_ASKING: [&str; 2] = ["acceptEdits", "bypassPermissions"];

pub(crate) fn run() -> ExitCode {
    let mut input = String::new();
    if std::io::stdin()
        .take(1 << 20)
        .read_to_string(&mut input)
        .is_err()
    {
        return ExitCode::SUCCESS;
    }
    let Ok(event) = serde_json::from_str::<Value>(&input) else {
        return ExitCode::SUCCESS;
    };
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .or_else(|| event.get("cwd").and_then(Value::as_str).map(PathBuf::from));
    if let Some(why) = decide(&event, project.as_deref()) {
        let answer = json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": why,
        }});
        out(&format!("{answer}\n"));
    }
    ExitCode::SUCCESS
}

/// Why the tool call may run without asking, or `None` (Claude Code decides).
pub(crate) fn decide(event: &Value, project: Option<&Path>) -> Option<String> {
    let tool = event.get("tool_name")?.as_str()?;
    let tool = tool.strip_prefix(&format!("mcp__{SERVER_NAME}__"))?;
    if READ_ONLY.contains(&tool) {
        return Some(format!(
            "multiedit: {tool} changes nothing, and runs without asking as Claude Code's Read does"
        ));
    }
    let mode = event
        .get("permission_mode")
        .and_then(Value::as_str)
        .unwrap_or("default");
    if EDITS_WITHOUT_ASKING.contains(&mode) {
        return Some(format!(
            "multiedit: Claude Code's {mode} mode lets Edit run without asking, and multiedit's edits too"
        ));
    }
    // dontAsk and plan never let an edit run without a rule for it; auto has its own classifier.
    if mode != "default" {
        return None;
    }
    let rule = edit_allowed(project)?;
    Some(format!(
        "multiedit: {rule} lets Edit run without asking, and multiedit's edits too"
    ))
}

/// The settings file that allows Edit everywhere (`Edit`, `Edit(*)`, `Edit(**)`), as "the allow rule
/// Edit in FILE". A rule for some paths only (`Edit(src/**)`) is not taken: multiedit's plans name
/// their files inside the call, where such a rule does not reach.
fn edit_allowed(project: Option<&Path>) -> Option<String> {
    let mut files = Vec::new();
    if let Some(p) = project {
        files.push(p.join(".claude/settings.local.json"));
        files.push(p.join(".claude/settings.json"));
    }
    if let Ok(h) = home() {
        files.push(h.join(".claude/settings.json"));
    }
    files.into_iter().find_map(|f| {
        let text = crate::disk::read_text_capped(&f).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        let rule = v["permissions"]["allow"]
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .find(|r| matches!(*r, "Edit" | "Edit(*)" | "Edit(**)"))?
            .to_string();
        Some(format!("the allow rule {rule} in {}", f.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, mode: &str) -> Value {
        json!({"tool_name": tool, "permission_mode": mode, "hook_event_name": "PreToolUse", "tool_input": {}})
    }

    #[test]
    fn edits_run_without_asking_where_edit_did() {
        let none = Some(Path::new("/nonexistent-multiedit-project"));
        for mode in ["acceptEdits", "bypassPermissions"] {
            assert_eq!(
                decide(&call("mcp__multiedit__multiedit", mode), none).as_deref(),
                Some(format!("multiedit: Claude Code's {mode} mode lets Edit run without asking, and multiedit's edits too").as_str())
            );
        }
        for mode in ["default", "plan", "dontAsk", "auto"] {
            assert_eq!(
                decide(&call("mcp__multiedit__multiedit_write", mode), none),
                None,
                "{mode}"
            );
        }
        assert!(decide(&call("mcp__multiedit__multiedit_read", "plan"), none).is_some());
        assert_eq!(
            decide(&call("mcp__other__multiedit", "acceptEdits"), none),
            None
        );
        assert_eq!(
            decide(&json!({"permission_mode": "acceptEdits"}), none),
            None
        );
    }

    #[test]
    fn an_allow_rule_for_edit_everywhere_counts_and_one_for_some_paths_does_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        let settings = dir.path().join(".claude/settings.json");
        std::fs::write(&settings, r#"{"permissions": {"allow": ["Edit(src/**)"]}}"#).unwrap();
        let call = call("mcp__multiedit__multiedit_patch", "default");
        assert_eq!(decide(&call, Some(dir.path())), None);
        std::fs::write(
            &settings,
            r#"{"permissions": {"allow": ["Bash(ls)", "Edit"]}}"#,
        )
        .unwrap();
        assert_eq!(
            decide(&call, Some(dir.path())),
            Some(format!(
                "multiedit: the allow rule Edit in {} lets Edit run without asking, and multiedit's edits too",
                settings.display()
            ))
        );
    }
}
