//! `multiedit mcp` driven by a real MCP client: the official Python SDK (`mcp` on PyPI) runs
//! `tests/mcp/client.py` against the built binary over stdio. `.ci/run` installs the SDK into
//! `~/.cache/multiedit/mcp-venv` (or set MULTIEDIT_MCP_PYTHON to a Python that has it). Without it the
//! client test is skipped with a message, except under CI=true, where it must run.
//!
//! Also: the plan schema is written once (`server/schema/plan.schema.json`); the VS Code extension's
//! two copies must equal it. Likewise the patch schema (`server/schema/patch.schema.json`) and the
//! extension's `multiedit_patch` language-model tool.

#[path = "mcp_support/mod.rs"]
mod mcp_support;
#[path = "report_support/mod.rs"]
mod report_support;

use std::path::Path;
use std::process::Command;

use mcp_support::root;
use serde_json::Value;

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_extension_uses_the_canonical_plan_schema() {
    let canonical = json(&root().join("server/schema/plan.schema.json"));
    assert_eq!(
        serde_json::from_str::<Value>(multiedit::mcp::schema::PLAN_SCHEMA).unwrap(),
        canonical,
        "the binary's schema is the file"
    );
    let fix = "copy server/schema/plan.schema.json over it (the schema is written once)";
    assert_eq!(
        json(&root().join("extension-vscode/schemas/multiedit-plan.schema.json")),
        canonical,
        "extension-vscode/schemas/multiedit-plan.schema.json differs from server/schema/plan.schema.json: {fix}"
    );
    let package = json(&root().join("extension-vscode/package.json"));
    let tools = package["contributes"]["languageModelTools"].as_array().expect("languageModelTools");
    let tool = tools.iter().find(|t| t["name"] == "multiedit").expect("the multiedit language-model tool");
    // The one property the VS Code tool adds: `review` is decided in the editor (the Refactor Preview)
    // and never reaches the engine.
    let mut schema = tool["inputSchema"].clone();
    let review = schema["properties"].as_object_mut().and_then(|p| p.remove("review"));
    assert_eq!(review.map(|r| r["type"].clone()), Some(Value::from("boolean")), "the tool's review option");
    assert_eq!(
        schema, canonical,
        "extension-vscode/package.json's multiedit tool inputSchema differs from server/schema/plan.schema.json: {fix}"
    );
}

#[test]
fn the_extension_uses_the_canonical_patch_schema() {
    let canonical = json(&root().join("server/schema/patch.schema.json"));
    assert_eq!(
        serde_json::from_str::<Value>(multiedit::mcp::schema::PATCH_SCHEMA).unwrap(),
        canonical,
        "the binary's schema is the file"
    );
    let package = json(&root().join("extension-vscode/package.json"));
    let tools = package["contributes"]["languageModelTools"].as_array().expect("languageModelTools");
    let tool = tools.iter().find(|t| t["name"] == "multiedit_patch").expect("the multiedit_patch language-model tool");
    // The same object as the MCP tool's, `preview` included: the extension sends it to multiedit.preview.
    assert_eq!(
        tool["inputSchema"], canonical,
        "extension-vscode/package.json's multiedit_patch tool inputSchema differs from server/schema/patch.schema.json: \
         copy server/schema/patch.schema.json over it (the schema is written once)"
    );
}

#[test]
fn a_real_mcp_client_over_stdio() {
    let Some(python) = mcp_support::python("the MCP client test") else { return };
    let work = tempfile::tempdir().unwrap();
    let out = Command::new(&python)
        .arg(root().join("tests/mcp/client.py"))
        .arg(env!("CARGO_BIN_EXE_multiedit"))
        .arg(root().join("server/schema/plan.schema.json"))
        .arg(work.path())
        .output()
        .expect("run tests/mcp/client.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "tests/mcp/client.py failed:\n{stdout}");
}

/// `multiedit_patch` (no editor: on disk) reports each file as `multiedit apply --json` does, and
/// sets the mode.
#[test]
fn the_patch_tool_reports_files_as_the_command_line_json_does() {
    use std::os::unix::fs::PermissionsExt;
    let Some(python) = mcp_support::python("the MCP same-report test") else { return };
    let work = tempfile::tempdir().unwrap();
    let (root, runtime) = (work.path().canonicalize().unwrap().join("mcp"), work.path().join("runtime"));
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&runtime).unwrap();
    let patch = report_support::fixture(&root);
    let cli = report_support::cli_json(work.path(), &patch);
    let args = serde_json::json!({"patch": patch, "root": root});
    let r = mcp_support::call(&python, "multiedit_patch", &args, &[("XDG_RUNTIME_DIR", &runtime)]);
    assert_eq!(r["structured"]["applied_in"], "disk", "{r}");
    assert_eq!(report_support::rooted(&r["structured"]["files"], &root), cli);
    let mode = std::fs::metadata(root.join("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111 & !umask_of_this_process(), "run.sh is executable");
}

/// The umask, as `/proc` shows it.
fn umask_of_this_process() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().find_map(|l| l.strip_prefix("Umask:")).map(|v| u32::from_str_radix(v.trim(), 8).unwrap()).unwrap()
}
