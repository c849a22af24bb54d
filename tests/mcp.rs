//! `multiedit mcp` driven by a real MCP client: the official Python SDK (`mcp` on PyPI) runs
//! `tests/mcp/client.py` against the built binary over stdio. `.ci/run` installs the SDK into
//! `~/.cache/multiedit/mcp-venv` (or set MULTIEDIT_MCP_PYTHON to a Python that has it). Without it the
//! client test is skipped with a message, except under CI=true, where it must run.
//!
//! Also: the plan schema is written once (`server/schema/plan.schema.json`); the VS Code extension's
//! two copies must equal it. Likewise the patch schema (`server/schema/patch.schema.json`) and the
//! extension's `multiedit_patch` language-model tool.

use crate::support::mcp as mcp_support;
use crate::support::report as report_support;

use std::path::Path;
use std::process::Command;

use mcp_support::{root, Raw};
use serde_json::{json, Value};

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The schema file `server/schema/<name>`, checked to be the one the binary serves.
fn canonical(name: &str, served: &str) -> Value {
    let canonical = json(&root().join("server/schema").join(name));
    assert_eq!(
        serde_json::from_str::<Value>(served).unwrap(),
        canonical,
        "the binary's schema is server/schema/{name}"
    );
    canonical
}

/// The inputSchema of the extension's language-model tool `name` (extension-vscode/package.json).
fn extension_tool_schema(name: &str) -> Value {
    let package = json(&root().join("extension-vscode/package.json"));
    let tools = package["contributes"]["languageModelTools"]
        .as_array()
        .expect("languageModelTools");
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("the {name} language-model tool"))["inputSchema"]
        .clone()
}

#[test]
fn the_extension_uses_the_canonical_plan_schema() {
    let canonical = canonical("plan.schema.json", multiedit::mcp::schema::PLAN_SCHEMA);
    let fix = "copy server/schema/plan.schema.json over it (the schema is written once)";
    assert_eq!(
        json(&root().join("extension-vscode/schemas/multiedit-plan.schema.json")),
        canonical,
        "extension-vscode/schemas/multiedit-plan.schema.json differs from server/schema/plan.schema.json: {fix}"
    );
    // The two properties the VS Code tool adds are decided in the editor and never reach the engine:
    // `review` (the Refactor Preview) and `format_edits` (the user's formatter, run by the extension).
    let schema = vscode_only(
        &extension_tool_schema("multiedit"),
        &["review", "format_edits"],
    );
    assert_eq!(
        schema, canonical,
        "extension-vscode/package.json's multiedit tool inputSchema differs from server/schema/plan.schema.json: {fix}"
    );
}

/// `schema` without the VS Code tool's own boolean options `names`, each checked to be there.
fn vscode_only(schema: &Value, names: &[&str]) -> Value {
    let mut schema = schema.clone();
    for name in names {
        let option = schema["properties"]
            .as_object_mut()
            .and_then(|p| p.remove(*name));
        assert_eq!(
            option.map(|r| r["type"].clone()),
            Some(Value::from("boolean")),
            "the tool's {name} option"
        );
    }
    schema
}

#[test]
fn the_extension_uses_the_canonical_symbols_schema() {
    let canonical = canonical(
        "symbols.schema.json",
        multiedit::mcp::schema::SYMBOLS_SCHEMA,
    );
    assert_eq!(
        extension_tool_schema("multiedit_symbols"),
        canonical,
        "extension-vscode/package.json's multiedit_symbols tool inputSchema differs from server/schema/symbols.schema.json: copy it over"
    );
}

#[test]
fn the_extension_uses_the_canonical_patch_schema() {
    let canonical = canonical("patch.schema.json", multiedit::mcp::schema::PATCH_SCHEMA);
    // The same object as the MCP tool's, `preview` and `file_path` included (the extension sends them
    // to multiedit.preview and the server), but for the editor's own `format_edits`.
    assert_eq!(
        vscode_only(&extension_tool_schema("multiedit_patch"), &["format_edits"]),
        canonical,
        "extension-vscode/package.json's multiedit_patch tool inputSchema differs from server/schema/patch.schema.json: \
         copy server/schema/patch.schema.json over it (the schema is written once)"
    );
}

/// Most agents send every tool definition with every request (Gemini CLI, OpenCode, Codex once
/// loaded): `tools/list` stays under 8 KB, about 2,000 tokens. It was 23.9 KB when each of two tools
/// carried the whole plan schema.
#[test]
fn tools_list_stays_within_its_budget() {
    const BUDGET: usize = 8 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let mut raw = Raw::start(dir.path(), &[], &[]);
    raw.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let answer = raw.next();
    let tools = answer["result"]["tools"].as_array().expect("a tool list");
    let sizes: Vec<String> = tools
        .iter()
        .map(|t| {
            format!(
                "{} {} bytes",
                t["name"].as_str().unwrap_or("?"),
                t.to_string().len()
            )
        })
        .collect();
    let total = answer.to_string().len();
    eprintln!("tools/list: {total} bytes ({})", sizes.join(", "));
    assert_eq!(tools.len(), 6, "{sizes:?}");
    assert!(
        total <= BUDGET,
        "tools/list is {total} bytes, past its budget of {BUDGET}: {}",
        sizes.join(", ")
    );
}

#[test]
fn a_real_mcp_client_over_stdio() {
    let Some(python) = mcp_support::python("the MCP client test") else {
        return;
    };
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
    assert!(
        out.status.success(),
        "tests/mcp/client.py failed:\n{stdout}"
    );
}

#[test]
fn malformed_requests_are_answered_with_the_right_json_rpc_error() {
    let work = tempfile::tempdir().unwrap();
    let mut raw = Raw::start(work.path(), &[], &[]);
    let cases: [(&[u8], Value, i64, &str); 7] = [
        (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[{"name":"multiedit"}]}"#, 1.into(), -32602,
         "Invalid params: the params of tools/call must be an object (MCP passes parameters by name), not an array"),
        (br#"{"jsonrpc":"2.0","id":"two","method":"tools/list","params":[]}"#, "two".into(), -32602,
         "Invalid params: the params of tools/list must be an object (MCP passes parameters by name), not an array"),
        (br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"multiedit","arguments":"{\"file_path\": \"/x\"}"}}"#, 3.into(), -32602,
         "Invalid params: the `arguments` of tools/call must be an object holding the tool's input, not a string"),
        (br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"multiedit","arguments":[1,2]}}"#, 4.into(), -32602,
         "Invalid params: the `arguments` of tools/call must be an object holding the tool's input, not an array"),
        (br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#, 5.into(), -32602,
         "Invalid params: the params of tools/call do not fit: missing field `name`"),
        (b"{\"jsonrpc\":\"2.0\",\"id\":6,", 6.into(), -32700, "Parse error: the line is not JSON (EOF while parsing a value at line 1 column 24)"),
        (b"not json", Value::Null, -32700, "Parse error: the line is not JSON (expected ident at line 1 column 2)"),
    ];
    for (line, id, code, message) in cases {
        raw.send_bytes(&[line, b"\n"].concat());
        let a = raw.next();
        assert_eq!(
            a,
            serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    // A line over the limit (64 MiB): an error answer with the id read from its start, not silence.
    let mut big = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"multiedit","arguments":{"file_path":""#.to_vec();
    big.resize(big.len() + (65 << 20), b'a');
    big.extend_from_slice(b"\"}}}\n");
    raw.send_bytes(&big);
    let a = raw.next();
    assert_eq!(a["id"], 7, "{a}");
    assert_eq!(a["error"]["code"], -32600, "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid Request: the message is longer than 67108864 bytes"),
        "{a}"
    );
    // Nested past serde_json's limit (128 levels): a parse error with its id, the session kept.
    for (k, depth) in [127usize, 128, 5_000].into_iter().enumerate() {
        let id = 20 + k as i64;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"multiedit","arguments":{{"edits":{}{}}}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        raw.send_bytes(format!("{line}\n").as_bytes());
        let a = raw.next();
        assert_eq!(
            (a["id"].as_i64(), a["error"]["code"].as_i64()),
            (Some(id), Some(-32700)),
            "{a}"
        );
        assert!(
            a["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Parse error: the line is not JSON (recursion limit exceeded"),
            "{a}"
        );
    }
    // And the server goes on: a plan in its folder is applied.
    let f = work.path().join("a.txt");
    std::fs::write(&f, "alpha\n").unwrap();
    let (is_error, text) = raw.call(8, "multiedit", serde_json::json!({"file_path": f, "edits": [{"old_string": "alpha", "new_string": "beta"}]}));
    assert!(!is_error, "{text}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "beta\n");
}

#[test]
fn the_mcp_server_edits_only_inside_the_folder_it_was_started_in_unless_told() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let (proj, other) = (top.join("proj"), top.join("other"));
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    std::fs::create_dir(&other).unwrap();
    let secret = other.join("secret.txt");
    std::fs::write(&secret, "secret\n").unwrap();
    std::os::unix::fs::symlink(&other, proj.join("sub/out")).unwrap();
    let p = proj.display().to_string();
    let opt_out = "Nothing was changed. By default it edits only inside the folder it was started in (the agent's project). \
                   To allow more, start it as `multiedit mcp --root DIR` (once per folder) or `multiedit mcp --allow-outside`, \
                   in the agent's MCP configuration.";
    let change = serde_json::json!([{"old_string": "secret", "new_string": "pwned"}]);
    let mut raw = Raw::start(&proj, &[], &[]);
    let s = secret.display().to_string();
    for (id, (tool, arguments, message)) in [
        ("multiedit", serde_json::json!({"file_path": s, "edits": change}),
         format!("Cannot edit {s}: it lies outside the folders this MCP server may edit ({p}). {opt_out}")),
        ("multiedit_preview", serde_json::json!({"file_path": format!("{p}/../other/secret.txt"), "edits": change}),
         format!("Cannot edit {p}/../other/secret.txt: it lies outside the folders this MCP server may edit ({p}) (it resolves to {s}, symbolic links followed). {opt_out}")),
        ("multiedit", serde_json::json!({"file_path": format!("{p}/sub/out/secret.txt"), "edits": change}),
         format!("Cannot edit {p}/sub/out/secret.txt: it lies outside the folders this MCP server may edit ({p}) (it resolves to {s}, symbolic links followed). {opt_out}")),
        // Through a folder that does not exist: the system refuses it, and so does the server.
        ("multiedit", serde_json::json!({"file_path": format!("{p}/missing/../sub/out/new.txt"), "edits": [{"old_string": "", "new_string": "x"}]}),
         format!("Cannot edit {p}/missing/../sub/out/new.txt: {p}/missing does not exist, and the `..` after it cannot be resolved \
                  (the system refuses a path through a missing folder), so it cannot be shown to lie inside the folders this MCP \
                  server may edit ({p}). {opt_out}")),
        ("multiedit_patch", serde_json::json!({"patch": "--- a/../other/secret.txt\n+++ b/../other/secret.txt\n@@ -1 +1 @@\n-secret\n+pwned\n"}),
         format!("Cannot edit {s}: it lies outside the folders this MCP server may edit ({p}). {opt_out}")),
    ]
    .into_iter()
    .enumerate()
    {
        let (is_error, text) = raw.call(id as i64 + 1, tool, arguments);
        assert!(is_error, "{text}");
        assert!(text.starts_with(&message), "{tool}:\n{text}\nexpected:\n{message}");
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "secret\n");
    assert!(!proj.join("missing").exists() && !other.join("new.txt").exists());
    drop(raw);
    // Told: another folder with --root, or anywhere with --allow-outside.
    for (args, new) in [
        (vec!["--root", other.to_str().unwrap()], "one"),
        (vec!["--allow-outside"], "two"),
    ] {
        let mut raw = Raw::start(&proj, &args, &[]);
        let old = std::fs::read_to_string(&secret).unwrap();
        let (is_error, text) = raw.call(1, "multiedit", serde_json::json!({"file_path": s, "edits": [{"old_string": old.trim(), "new_string": new}]}));
        assert!(!is_error, "{args:?}: {text}");
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            format!("{new}\n")
        );
    }
}

/// A scratch folder holding `mcp/` (the files a tool edits, on disk) and `runtime/` (an
/// `XDG_RUNTIME_DIR` where no editor is registered).
fn on_disk_folders() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let (root, runtime) = (
        work.path().canonicalize().unwrap().join("mcp"),
        work.path().join("runtime"),
    );
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&runtime).unwrap();
    (work, root, runtime)
}

/// `multiedit_patch` (no editor: on disk) reports each file as `multiedit apply --json` does, and
/// sets the mode.
#[test]
fn the_patch_tool_reports_files_as_the_command_line_json_does() {
    use std::os::unix::fs::PermissionsExt;
    let Some(python) = mcp_support::python("the MCP same-report test") else {
        return;
    };
    let (work, root, runtime) = on_disk_folders();
    let patch = report_support::fixture(&root);
    let cli = report_support::cli_json(work.path(), &patch);
    let args = serde_json::json!({"patch": patch, "root": root});
    let r = mcp_support::call(
        &python,
        "multiedit_patch",
        &args,
        &[("XDG_RUNTIME_DIR", &runtime)],
    );
    assert_eq!(r["structured"]["applied_in"], "disk", "{r}");
    assert_eq!(
        report_support::rooted(
            &report_support::hashes_checked(&r["structured"]["files"], |p: &std::path::Path| {
                std::fs::read_to_string(p).unwrap()
            }),
            &root
        ),
        cli
    );
    let mode = std::fs::metadata(root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o111,
        0o111 & !umask_of_this_process(),
        "run.sh is executable"
    );
}

/// `multiedit` (no editor: on disk) gives as `structuredContent` the result `multiedit apply --json`
/// gives for the same plan, adding only where it was applied and the text a model reads (which
/// Claude Code and Codex show their model instead of the text content).
#[test]
fn the_plan_tool_gives_the_command_line_json() {
    let Some(python) = mcp_support::python("the MCP same-result test") else {
        return;
    };
    let (work, root, runtime) = on_disk_folders();
    let cli = report_support::cli_plan_json(work.path());
    let r = mcp_support::call(
        &python,
        "multiedit",
        &report_support::plan_fixture(&root),
        &[("XDG_RUNTIME_DIR", &runtime)],
    );
    assert_eq!(r["structured"]["applied_in"], "disk", "{r}");
    assert!(
        r["structured"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("\n\nWritten to disk: ")),
        "{r}"
    );
    assert_eq!(
        report_support::without(
            &report_support::rooted(
                &report_support::hashes_checked(&r["structured"], |p: &std::path::Path| {
                    std::fs::read_to_string(p).unwrap()
                }),
                &root
            ),
            &["applied_in", "text"],
            &[]
        ),
        cli
    );
    assert_eq!(
        std::fs::read_to_string(root.join("made.txt")).unwrap(),
        "made\n"
    );
}

/// The umask, as `/proc` shows it.
fn umask_of_this_process() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
        .unwrap()
}

/// Roo Code sends a file's path beside its SEARCH/REPLACE blocks: `multiedit_patch` takes it as
/// `file_path` (relative to `root`, here the server's folder), for blocks that name no file; given with
/// a format that names its own files, it is refused, never ignored.
#[test]
fn the_patch_tool_takes_the_blocks_file_beside_them() {
    let (_work, root, runtime) = on_disk_folders();
    std::fs::write(root.join("view.ts"), "let a = 1;\nlet b = 2;\n").unwrap();
    let mut raw = Raw::start(
        &root,
        &[],
        &[("XDG_RUNTIME_DIR", &runtime), ("XDG_STATE_HOME", &runtime)],
    );
    let blocks = "<<<<<<< SEARCH\n:start_line:2\n-------\nlet b = 2;\n=======\nlet b = 3;\n>>>>>>> REPLACE\n";
    let (is_error, text) = raw.call(
        1,
        "multiedit_patch",
        serde_json::json!({"patch": blocks, "file_path": "view.ts"}),
    );
    assert!(!is_error, "{text}");
    assert!(
        text.contains("1. Applied SEARCH/REPLACE block 1 (view.ts, start line 2)"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("view.ts")).unwrap(),
        "let a = 1;\nlet b = 3;\n"
    );
    let diff = "--- a/view.ts\n+++ b/view.ts\n@@ -1 +1 @@\n-let a = 1;\n+let a = 0;\n";
    let (is_error, text) = raw.call(
        2,
        "multiedit_patch",
        serde_json::json!({"patch": diff, "file_path": "view.ts"}),
    );
    assert!(is_error, "{text}");
    assert!(text.starts_with("InputValidationError: file_path (view.ts) names the file of SEARCH/REPLACE blocks that name none, but the text is a unified diff"), "{text}");
    assert_eq!(
        std::fs::read_to_string(root.join("view.ts")).unwrap(),
        "let a = 1;\nlet b = 3;\n"
    );
}
