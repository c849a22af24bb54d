//! The language servers multiedit starts itself where no editor holds a plan's files
//! (`server/src/language_servers/`), end to end with real servers (clangd, typescript-language-server,
//! pyright; rust-analyzer and gopls where they run) and a fake one that fails on purpose: symbol
//! edits, overloads, a rename across three files, the diagnostics delta of an edit that breaks a call
//! and one that fixes it, `multiedit_symbols` and a session's server kept, nothing started in a
//! project the user has not allowed, and a server that crashes, hangs or never answers refusing the
//! plan with nothing written. The tests that start servers take turns (`headless::turn`).

use crate::support::disk::snapshot;
use crate::support::headless::{self, children, Project};
use crate::support::mcp::Raw;

use serde_json::{json, Value};

const CALC_C: &str = "\
#include <stdio.h>

int add(int a, int b) {
    return a + b;
}

int main(void) {
    printf(\"%d\\n\", add(1, 2));
    return 0;
}
";

fn raw(p: &Project) -> Raw {
    let env = p.env();
    let env: Vec<(&str, &std::path::Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    Raw::start(&p.root, &[], &env)
}

fn sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn structured(r: &Value) -> &Value {
    &r["structuredContent"]
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn clangd_replaces_a_body_and_inserts_by_symbol_then_reports_what_an_edit_broke_and_what_fixed_it()
{
    if !headless::clangd("clangd_replaces_a_body") {
        return;
    }
    let _turn = headless::turn();
    let p = Project::new(&[("calc.c", CALC_C)], &[]);
    let calc = p.file("calc.c");
    p.allow();
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [
        {"symbol": "add", "replace": "body", "new_string": "int sum = a + b;\nreturn sum;"},
        {"symbol": "add", "insert": "after", "new_string": "\nint twice(int x) {\n    return add(x, x);\n}"},
    ]}));
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        r["message"],
        format!(
            "Applied 2 edits to {}:\n1. Replaced the body of function add (lines 3-5)\n2. Inserted after function add (lines 3-5)",
            calc.display()
        )
    );
    assert_eq!(
        p.read("calc.c"),
        CALC_C
            .replace(
                "    return a + b;\n",
                "    int sum = a + b;\n    return sum;\n"
            )
            .replace(
                "    return sum;\n}\n",
                "    return sum;\n}\n\nint twice(int x) {\n    return add(x, x);\n}\n"
            )
    );
    // A symbol plan reports what it did to the diagnostics: nothing broken.
    assert_eq!(r["diagnostics_text"], "No new errors.");
    // An edit that breaks a call, then one that fixes it.
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [{"old_string": "add(1, 2)", "new_string": "add(1)"}], "diagnostics": "errors"}));
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        r["diagnostics_text"],
        "New errors: calc.c:13:25 Too few arguments to function call, expected 2, have 1  calc.c:3:5: note: 'add' declared here (clang typecheck_call_too_few_args)"
    );
    let introduced = &r["diagnostics"]["introduced"][0];
    assert_eq!(
        (
            &introduced["line"],
            &introduced["severity"],
            &introduced["source"]
        ),
        (&json!(13), &json!("error"), &json!("clang"))
    );
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [{"old_string": "add(1)", "new_string": "add(1, 2)"}], "diagnostics": "errors"}));
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        r["diagnostics_text"],
        "No new errors.\nResolved: calc.c:13:28 Too few arguments to function call, expected 2, have 1  calc.c:3:5: note: 'add' declared here (clang typecheck_call_too_few_args)"
    );
    assert_eq!(r["diagnostics"]["pending"], json!([]));
}

#[test]
fn clangd_overloads_are_refused_as_ambiguous_and_one_is_chosen_by_its_place() {
    if !headless::clangd("clangd_overloads") {
        return;
    }
    let _turn = headless::turn();
    let text = "\
int add(int a, int b) {
    return a + b;
}

double add(double a, double b) {
    return a + b;
}
";
    let p = Project::new(&[("calc.cpp", text)], &[]);
    let calc = p.file("calc.cpp");
    p.allow();
    let before = snapshot(&p.root);
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [{"symbol": "add", "replace": "body", "new_string": "return 0;"}]}));
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["error"]["kind"], "symbol_ambiguous");
    assert_eq!(
        r["error"]["message"],
        format!(
            "Found 2 symbols named add in {}, but a symbol edit must name one: name it by its place among them (add[0] is \
             the first in the file).\nSymbol: add",
            calc.display()
        )
    );
    assert_eq!(
        r["error"]["hint"],
        "The symbols it names:\nadd[0]: function (lines 1-3): int (int, int)\nadd[1]: function (lines 5-7): double (double, double)"
    );
    assert_eq!(snapshot(&p.root), before, "nothing written");
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [{"symbol": "add[1]", "replace": "body", "new_string": "return a * b;"}]}));
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        p.read("calc.cpp"),
        text.replacen("    return a + b;\n}\n", "    return a * b;\n}\n", 2)
            .replacen("    return a * b;\n}\n", "    return a + b;\n}\n", 1)
    );
}

const STORE: &str = "\
export class Store {
  total = 0;

  add(amount: number): number {
    this.total += amount;
    return this.total;
  }

  scale(x: number): number {
    return x * 2;
  }
}

export function report(store: Store): string {
  return `total ${store.total}`;
}
";
const USE_A: &str =
    "import { Store } from './store';\n\nexport const a = new Store();\nexport const first: number = a.total;\n";
const USE_B: &str = "import { Store, report } from './store';\n\nexport function show(s: Store): string {\n  return report(s) + s.total;\n}\n";
const TSCONFIG: &str = "{\"compilerOptions\": {\"target\": \"es2020\", \"module\": \"commonjs\", \"strict\": true}, \"include\": [\"*.ts\"]}\n";

fn ts_project() -> Project {
    Project::new(
        &[
            ("tsconfig.json", TSCONFIG),
            ("store.ts", STORE),
            ("use-a.ts", USE_A),
            ("use-b.ts", USE_B),
        ],
        &[headless::node24(), headless::npm_servers()],
    )
}

/// The plan tests/vscode/symbols.mjs sends through VS Code: a rename across three files, a method body
/// (with an error TypeScript reports) and a function inserted after another.
fn ts_plan(p: &Project) -> Value {
    json!({
        "rename": {"file_path": p.file("store.ts"), "symbol": "Store/total", "new_name": "sum"},
        "file_path": p.file("store.ts"),
        "edits": [
            {"symbol": "Store/scale", "replace": "body", "new_string": "return x * 3 + missing;"},
            {"symbol": "report", "insert": "after", "new_string": "\nexport function twice(store: Store): number {\n  return store.sum * 2;\n}"},
        ],
    })
}

#[test]
fn typescript_renames_across_three_files_with_a_body_and_an_insert_in_one_write() {
    if !headless::typescript("typescript_renames_across_three_files") {
        return;
    }
    let _turn = headless::turn();
    let p = ts_project();
    p.allow();
    let (code, r) = p.apply(&ts_plan(&p));
    assert_eq!(code, 0, "{r}");
    let (store, a, b) = (p.file("store.ts"), p.file("use-a.ts"), p.file("use-b.ts"));
    assert_eq!(
        r["message"],
        format!(
            "Renamed total to sum: 6 occurrences in 3 files.\n\nApplied 3 edits to {}:\n- Renamed total to sum (4 occurrences)\n\
             1. Replaced the body of method Store/scale (lines 9-11)\n2. Inserted after function report (lines 14-16)\n\n\
             Applied 1 edit to {}:\n- Renamed total to sum (1 occurrence)\n\nApplied 1 edit to {}:\n- Renamed total to sum (1 occurrence)",
            store.display(),
            a.display(),
            b.display()
        )
    );
    assert_eq!(
        r["rename"],
        json!({"old_name": "total", "new_name": "sum", "occurrences": 6, "files": [
            {"file_path": store, "occurrences": 4}, {"file_path": a, "occurrences": 1}, {"file_path": b, "occurrences": 1}]})
    );
    assert_eq!(p.read("store.ts"), ts_after_store());
    assert_eq!(p.read("use-a.ts"), USE_A.replace("a.total", "a.sum"));
    assert_eq!(p.read("use-b.ts"), USE_B.replace("s.total", "s.sum"));
    assert_eq!(
        r["diagnostics_text"],
        "New errors: store.ts:10:20 Cannot find name 'missing'. (typescript 2304)\n\
         No diagnostics update for use-a.ts, use-b.ts after the edit: taken as unchanged."
    );
}

/// store.ts once the plan of `ts_plan` applied: what VS Code makes of it too (tests/vscode/symbols.mjs).
fn ts_after_store() -> String {
    STORE
        .replace("total", "sum")
        .replace("return `sum ${store.sum}`", "return `total ${store.sum}`")
        .replace("    return x * 2;\n", "    return x * 3 + missing;\n")
        + "\nexport function twice(store: Store): number {\n  return store.sum * 2;\n}\n"
}

#[test]
fn typescript_refusals_keep_their_kinds_and_words_and_change_nothing() {
    if !headless::typescript("typescript_refusals") {
        return;
    }
    let _turn = headless::turn();
    let p = ts_project();
    p.allow();
    let store = p.file("store.ts");
    let before = snapshot(&p.root);
    for (plan, kind, message) in [
        (
            json!({"rename": {"file_path": store, "line": 4, "column": 15, "new_name": "num"}}),
            "rename_refused",
            "The language server refused the rename of number to num (it said: You cannot rename this element.). Nothing was changed.".to_string(),
        ),
        (
            json!({"rename": {"file_path": store, "symbol": "Store/total", "new_name": "total"}}),
            "unchanged",
            "The rename of total to total changes nothing: the new name is the name it has. Nothing was changed.".to_string(),
        ),
        (
            json!({"file_path": store, "edits": [{"symbol": "Store/scal", "replace": "body", "new_string": "return 0;"}]}),
            "symbol_not_found",
            "Symbol not found in file.\nSymbol: Store/scal".to_string(),
        ),
        (
            json!({"file_path": p.file("notes.txt"), "edits": [{"symbol": "notes", "replace": "whole", "new_string": "x"}]}),
            "no_language_server",
            format!(
                "No language server for {}: multiedit starts none for .txt files (it starts one for TypeScript and \
                 JavaScript; Python; Rust; Go; C, C++ and Objective-C). Nothing was changed. Address the text with old_string.",
                p.file("notes.txt").display()
            ),
        ),
    ] {
        let (code, r) = p.apply(&plan);
        assert_eq!(
            (code, r["error"]["kind"].as_str(), r["error"]["message"].as_str()),
            (1, Some(kind), Some(message.as_str())),
            "{r}"
        );
    }
    assert_eq!(snapshot(&p.root), before, "nothing written");
}

#[test]
fn pyright_replaces_a_method_and_reports_the_call_it_broke() {
    if !headless::pyright("pyright_replaces_a_method")
        || !headless::typescript("pyright_replaces_a_method")
    {
        return;
    }
    let _turn = headless::turn();
    let text = "\
class Calculator:
    def add(self, a: int, b: int) -> int:
        return a + b


def main() -> None:
    print(Calculator().add(1, 2))
";
    let p = Project::new(
        &[("calc.py", text)],
        &[headless::node24(), headless::npm_servers()],
    );
    let calc = p.file("calc.py");
    p.allow();
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [
        {"symbol": "Calculator/add", "replace": "whole", "new_string": "def add(self, a: int, b: int) -> int:\n    return a - b"},
        {"old_string": "add(1, 2)", "new_string": "add(1)"},
    ]}));
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        p.read("calc.py"),
        text.replace("return a + b", "return a - b")
            .replace("add(1, 2)", "add(1)")
    );
    assert_eq!(
        r["diagnostics_text"],
        "New errors: calc.py:7:11 Argument missing for parameter \"b\" (Pyright reportCallIssue)"
    );
}

#[test]
fn mcp_keeps_its_started_server_for_the_session_and_gives_outlines_on_disk() {
    if !headless::clangd("mcp_keeps_its_started_server") {
        return;
    }
    let _turn = headless::turn();
    let p = Project::new(&[("calc.c", CALC_C)], &[]);
    let calc = p.file("calc.c");
    p.allow();
    let mut mcp = raw(&p);
    let r = mcp.call_result(1, "multiedit_symbols", json!({"file_path": calc}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        text(&r),
        format!(
            "{}: 2 symbols, as clangd gives them (kind, name path for a plan's \"symbol\", lines):\nfunction add  (lines 3-5)  \
             int (int, int)\nfunction main  (lines 7-10)  int (void)\nFrom a language server multiedit started for this \
             project (no editor holds the file).",
            calc.display()
        )
    );
    let servers = children(mcp.pid());
    // Debian's clangd runs as clangd.main.
    assert!(
        servers.len() == 1 && servers[0].1.starts_with("clangd"),
        "{servers:?}"
    );
    let r = mcp.call_result(
        2,
        "multiedit",
        json!({"file_path": calc, "edits": [
            {"symbol": "add", "replace": "body", "new_string": "return a - b;"},
            {"old_string": "add(1, 2)", "new_string": "add(1)"},
        ]}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        text(&r),
        format!(
            "Applied 2 edits to {}:\n1. Replaced the body of function add (lines 3-5)\n2. Replaced \"add(1, 2)\" with \"add(1)\"\n\n\
             Written to disk: no editor is running multiedit lsp with the bridge on.\nNew sha256: {}\nNew errors: calc.c:8:25 Too \
             few arguments to function call, expected 2, have 1  calc.c:3:5: note: 'add' declared here (clang \
             typecheck_call_too_few_args)",
            calc.display(),
            sha256(&p.read("calc.c"))
        )
    );
    assert_eq!(structured(&r)["applied_in"], "disk");
    assert_eq!(structured(&r)["diagnostics"]["available"], true);
    // The same server answered both: kept for the session.
    assert_eq!(children(mcp.pid()), servers);
    assert!(mcp.close(), "multiedit mcp exits when its client is done");
    assert!(!headless::alive(servers[0].0), "its server ends with it");
}

/// Fake servers under every program name of the table, each noting its start in `marker`.
fn fakes(p: &Project, marker: &std::path::Path) -> std::path::PathBuf {
    let bin = p.state.with_file_name("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in [
        "typescript-language-server",
        "pyright-langserver",
        "rust-analyzer",
        "gopls",
        "clangd",
    ] {
        let script = bin.join(name);
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nFAKE_LSP_MARKER={} exec python3 {} \"$@\"\n",
                marker.display(),
                headless::fake_server().display()
            ),
        )
        .unwrap();
        let mut perms = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&script, perms).unwrap();
    }
    bin
}

#[test]
fn a_project_not_allowed_starts_nothing_and_its_refusals_say_how_to_allow_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let probe = Project::new(&[], &[]);
    let bin = fakes(&probe, &marker);
    let p = Project::new(
        &[
            ("calc.c", CALC_C),
            ("store.ts", STORE),
            // The project's own configuration names a server too: never read before it is allowed.
            (
                ".multiedit/language-servers.json",
                &json!({"servers": {"clangd": {"command": bin.join("clangd")}}}).to_string(),
            ),
        ],
        std::slice::from_ref(&bin),
    );
    let (calc, store) = (p.file("calc.c"), p.file("store.ts"));
    let before = snapshot(&p.root);
    let allow = |what: &str| {
        format!(
            "{what} is resolved by the language servers of an editor running multiedit lsp, or by one multiedit starts \
             itself, which it does only for a project whose user allowed it (a language server can run the project's own \
             code), and {root} is not allowed. Nothing was changed. To allow it, run `multiedit setup --language-servers` in \
             {root}; or open the project in an editor with multiedit (VS Code with the MultiEdit extension, Neovim with \
             multiedit lsp and its symbols handler) and send the plan through it; or address the text with old_string.",
            root = p.root.display()
        )
    };
    for (plan, message) in [
        (
            json!({"file_path": calc, "edits": [{"old_string": "int main", "new_string": "int main"}, {"symbol": "add", "replace": "body", "new_string": "return 0;"}]}),
            allow("Edit 2 names the symbol add, which"),
        ),
        (
            json!({"rename": {"file_path": store, "symbol": "Store/total", "new_name": "sum"}}),
            allow("The rename to sum"),
        ),
    ] {
        let (code, r) = p.apply(&plan);
        assert_eq!(
            (
                code,
                r["error"]["kind"].as_str(),
                r["error"]["message"].as_str()
            ),
            (1, Some("needs_editor"), Some(message.as_str())),
            "{r}"
        );
    }
    // A plan that asks for diagnostics is written, and says none was compared.
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [{"old_string": "add(1, 2)", "new_string": "add(2, 1)"}], "diagnostics": "errors"}));
    assert_eq!((code, r.get("diagnostics")), (0, None), "{r}");
    std::fs::write(&calc, CALC_C).unwrap();
    // Through multiedit mcp too.
    let mut mcp = raw(&p);
    let r = mcp.call_result(1, "multiedit_symbols", json!({"file_path": calc}));
    assert_eq!(structured(&r)["kind"], "needs_editor", "{r}");
    assert!(
        text(&r).starts_with(&format!(
            "The outline of {} comes from the language servers of an editor running multiedit lsp, and none was reached: ",
            calc.display()
        )),
        "{r}"
    );
    assert!(
        text(&r).ends_with(&format!(
            "multiedit starts one itself only for a project whose user allowed it (a language server can run the project's \
             own code), and {root} is not allowed. Nothing was read. To allow it, run `multiedit setup --language-servers` in \
             {root}; or open the project in VS Code with the MultiEdit extension, or in Neovim with multiedit lsp and its \
             symbols handler, then ask again.",
            root = p.root.display()
        )),
        "{r}"
    );
    let r = mcp.call_result(2, "multiedit", json!({"file_path": calc, "edits": [{"symbol": "add", "replace": "body", "new_string": "return 0;"}]}));
    assert_eq!(
        (
            structured(&r)["kind"].as_str(),
            structured(&r)["message"].as_str()
        ),
        (
            Some("needs_editor"),
            Some(allow("Edit 1 names the symbol add, which").as_str())
        ),
        "{r}"
    );
    let r = mcp.call_result(3, "multiedit", json!({"file_path": calc, "edits": [{"old_string": "add(1, 2)", "new_string": "add(2, 1)"}]}));
    assert!(
        text(&r).contains(". No diagnostics: no editor checked the change.\nNew sha256: "),
        "{r}"
    );
    std::fs::write(&calc, CALC_C).unwrap();
    assert!(children(mcp.pid()).is_empty(), "no process started");
    assert!(mcp.close());
    assert!(
        !marker.exists(),
        "no language server was started: {:?}",
        std::fs::read_to_string(&marker)
    );
    assert_eq!(snapshot(&p.root), before, "every file as it was");
    // Allowed, the project's own configuration names the server: it starts (the fake one).
    p.allow();
    let (code, r) = p.apply(&json!({"file_path": calc, "edits": [{"symbol": "add", "replace": "whole", "new_string": "int add(int a, int b) { return 0; }"}]}));
    assert_eq!(code, 0, "{r}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 1);
}

#[test]
fn a_server_that_crashes_hangs_or_never_answers_leaves_the_plan_refused_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let p = Project::new(&[("calc.c", CALC_C)], &[]);
    let bin = fakes(&p, &marker);
    p.user_config(&json!({"servers": {"clangd": {"command": bin.join("clangd"), "startTimeoutMs": 1000, "requestTimeoutMs": 1000}}}));
    p.allow();
    let calc = p.file("calc.c");
    let plan = json!({"file_path": calc, "edits": [{"symbol": "add", "replace": "body", "new_string": "return 0;"}]});
    let before = snapshot(&p.root);
    let fake = bin.join("clangd");
    for (mode, kind, message, starts) in [
        (
            "exit-at-start",
            "no_language_server",
            format!(
                "clangd ({}) exited as it started, before it answered initialize (it said: fake server: cannot start here). \
                 Nothing was changed. Check that it runs, or name another command in {}; or address the text with old_string.",
                fake.display(),
                p.config.join("multiedit/language-servers.json").display()
            ),
            1,
        ),
        (
            "no-initialize",
            "no_language_server",
            format!(
                "clangd ({}) did not answer initialize within 1 s for {}, so it was stopped. Nothing was changed. A large \
                 project may need longer: set startTimeoutMs for it in {}; or address the text with old_string.",
                fake.display(),
                p.root.display(),
                p.config.join("multiedit/language-servers.json").display()
            ),
            1,
        ),
        (
            "crash-on-symbols",
            "no_language_server",
            format!(
                "clangd ({}) exited while answering textDocument/documentSymbol for {}, and again once started anew (it said: \
                 fake server: segmentation fault in documentSymbol). Nothing was changed. Address the text with old_string, or \
                 try again once it is fixed.",
                fake.display(),
                calc.display()
            ),
            2,
        ),
        (
            "hang-on-symbols",
            "not_applied",
            format!(
                "clangd did not answer textDocument/documentSymbol for {} within 1 s (it may still be loading the project). \
                 Nothing was changed; try again.",
                calc.display()
            ),
            1,
        ),
    ] {
        let _ = std::fs::remove_file(&marker);
        let mut c = p.command(&["apply", "--json", "-"]);
        c.env("FAKE_LSP_MODE", mode)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let started = std::time::Instant::now();
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(plan.to_string().as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (out.status.code(), r["error"]["kind"].as_str(), r["error"]["message"].as_str()),
            (Some(1), Some(kind), Some(message.as_str())),
            "{mode}: {r}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{mode}: bounded");
        let pids = std::fs::read_to_string(&marker).unwrap();
        assert_eq!(pids.lines().count(), starts, "{mode}: started {starts} times");
        for pid in pids.lines() {
            // Killed with its process group; once orphaned it is reaped by init, a moment later.
            let pid = pid.parse().unwrap();
            let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while headless::alive(pid) && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            assert!(!headless::alive(pid), "{mode}: the server is gone");
        }
        assert_eq!(snapshot(&p.root), before, "{mode}: nothing written");
    }
}

#[test]
fn doctor_and_setup_say_which_servers_start_and_why_and_agents_may_not_write_the_projects_configuration(
) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let probe = Project::new(&[], &[]);
    let bin = fakes(&probe, &marker);
    let p = Project::new(
        &[(
            ".multiedit/language-servers.json",
            &json!({"servers": {"clangd": {"command": bin.join("clangd")}}}).to_string(),
        )],
        std::slice::from_ref(&bin),
    );
    let doctor = || String::from_utf8(p.command(&["doctor"]).output().unwrap().stdout).unwrap();
    let section = |d: &str| {
        d.split("\nLanguage servers multiedit starts where no editor holds the files")
            .nth(1)
            .and_then(|s| s.split("\n\n").next())
            .unwrap()
            .to_string()
    };
    let record = p.state.join("multiedit/language-servers.json");
    let fake = |name: &str| bin.join(name).display().to_string();
    assert_eq!(
        section(&doctor()),
        format!(
            " (for {root}):\n  not allowed: none starts for {root} until you run `multiedit setup --language-servers` in it (a \
             language server can run the project's own code: allow it only for a project you trust)\n  TypeScript and \
             JavaScript: would start `{ts} --stdio` (found on PATH), which finds no TypeScript beside it and would use the \
             project's own node_modules/typescript\n  Python: would start `{py} --stdio` (found on PATH)\n  Rust: would start \
             `{ra}` (found on PATH)\n  Go: would start `{go}` (found on PATH)\n  C, C++ and Objective-C: would start `{c}` \
             (found on PATH)",
            root = p.root.display(),
            ts = fake("typescript-language-server"),
            py = fake("pyright-langserver"),
            ra = fake("rust-analyzer"),
            go = fake("gopls"),
            c = fake("clangd"),
        )
    );
    let said = p.allow();
    assert!(
        said.starts_with(&format!(
            "Language servers: allowed for {} (recorded in {}).\n",
            p.root.display(),
            record.display()
        )),
        "{said}"
    );
    assert!(
        said.ends_with(&format!(
            "  C, C++ and Objective-C: starts `{}` (found as {} names it)\n",
            fake("clangd"),
            p.file(".multiedit/language-servers.json").display()
        )),
        "{said}"
    );
    assert!(section(&doctor()).contains(&format!(
        "  allowed for {} (recorded in {})",
        p.root.display(),
        record.display()
    )));
    // The record is this user's alone.
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&record).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let out = p
        .command(&["setup", "--no-language-servers"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(section(&doctor()).contains(&format!(
        "  not allowed: `multiedit setup --no-language-servers` was run for {} (recorded in {}); none starts",
        p.root.display(),
        record.display()
    )));
    // An agent may not change which programs multiedit runs for the project.
    let mut mcp = raw(&p);
    let config = p.file(".multiedit/language-servers.json");
    let r = mcp.call_result(
        1,
        "multiedit_write",
        json!({"file_path": config, "content": "{}"}),
    );
    assert_eq!(structured(&r)["kind"], "protected", "{r}");
    assert!(structured(&r)["message"]
        .as_str()
        .unwrap()
        .contains("the language servers multiedit starts for this project (the programs it runs)"));
    assert!(mcp.close());
    assert!(!marker.exists(), "doctor and setup start nothing");
}

#[test]
fn rust_analyzer_and_gopls_replace_a_body_where_they_run() {
    let cases = [
        (
            "rust-analyzer",
            vec![
                ("Cargo.toml", "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
                ("src/main.rs", "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    println!(\"{}\", add(1, 2));\n}\n"),
            ],
            "src/main.rs",
            "a - b",
        ),
        (
            "gopls",
            vec![
                ("go.mod", "module calc\n\ngo 1.20\n"),
                ("main.go", "package main\n\nfunc add(a int, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n\tprintln(add(1, 2))\n}\n"),
            ],
            "main.go",
            "return a - b",
        ),
    ];
    for (program, files, file, body) in cases {
        if !headless::optional(
            program,
            "rust_analyzer_and_gopls_replace_a_body_where_they_run",
        ) {
            continue;
        }
        let _turn = headless::turn();
        let p = Project::new(&files, &[]);
        p.allow();
        let before = files.iter().find(|(n, _)| *n == file).unwrap().1;
        let (code, r) = p.apply(&json!({"file_path": p.file(file), "edits": [{"symbol": "add", "replace": "body", "new_string": body}]}));
        assert_eq!(code, 0, "{program}: {r}");
        assert_eq!(p.read(file), before.replace("a + b", "a - b"), "{program}");
    }
}

#[test]
fn a_rename_that_reaches_dot_git_or_outside_the_folders_is_refused_naming_what_it_reached() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let p = Project::new(&[("calc.c", CALC_C), (".git/config", "[core]\n")], &[]);
    let bin = fakes(&p, &marker);
    p.user_config(&json!({"servers": {"clangd": {"command": bin.join("clangd")}}}));
    p.allow();
    let outside = dir.path().canonicalize().unwrap().join("elsewhere.c");
    std::fs::write(&outside, CALC_C).unwrap();
    let calc = p.file("calc.c");
    let git = p.file(".git/config");
    let before = snapshot(&p.root);
    let uri = |path: &std::path::Path| format!("file://{}", path.display());
    let plan = json!({"rename": {"file_path": calc, "line": 3, "column": 5, "new_name": "sum"}});
    let mut mcp = {
        let mut env = p.env();
        env.push(("FAKE_LSP_ALSO", std::path::PathBuf::from(uri(&git))));
        let env: Vec<(&str, &std::path::Path)> =
            env.iter().map(|(k, v)| (*k, v.as_path())).collect();
        Raw::start(&p.root, &[], &env)
    };
    let r = mcp.call_result(1, "multiedit", plan.clone());
    assert_eq!(
        (structured(&r)["kind"].as_str(), structured(&r)["message"].as_str()),
        (
            Some("outside_workspace"),
            Some(format!(
                "The rename also edits {} inside a .git folder, which the language server's rename reached and multiedit does \
                 not edit for it: a planted hook or setting there makes git run commands. Nothing was changed. To allow it, \
                 start the server as `multiedit mcp --allow-dot-git`, in the agent's MCP configuration.",
                git.display()
            ).as_str())
        ),
        "{r}"
    );
    assert!(mcp.close());
    let mut mcp = {
        let mut env = p.env();
        env.push(("FAKE_LSP_ALSO", std::path::PathBuf::from(uri(&outside))));
        let env: Vec<(&str, &std::path::Path)> =
            env.iter().map(|(k, v)| (*k, v.as_path())).collect();
        Raw::start(&p.root, &[], &env)
    };
    let r = mcp.call_result(1, "multiedit", plan);
    assert_eq!(
        (structured(&r)["kind"].as_str(), structured(&r)["message"].as_str()),
        (
            Some("outside_workspace"),
            Some(format!(
                "The rename to sum also edits {} outside the folders multiedit may edit here ({}), where the language server's \
                 rename reached. Nothing was changed. Rename it where every file it reaches may be edited, or address the text \
                 with old_string.",
                outside.display(),
                p.root.display()
            ).as_str())
        ),
        "{r}"
    );
    assert!(mcp.close());
    assert_eq!(snapshot(&p.root), before, "nothing written");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), CALC_C);
}

/// One server's figures through `multiedit mcp` (a release build when run as the README of
/// docs/performance.md says): the first outline (the server started cold), a warm outline, a warm
/// rename (previewed), and a warm one-file symbol edit with its diagnostics delta, alternately breaking
/// and fixing a call; for each, the whole tool call as the client times it, and the delta's own
/// waits as the result gives them.
fn figures_of(
    name: &str,
    p: &Project,
    file: &str,
    rename: Value,
    edits: [Value; 2],
) -> Vec<String> {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let mut mcp = raw(p);
    let mut id = 0;
    let mut call = |tool: &str, args: Value| {
        id += 1;
        let t = std::time::Instant::now();
        let r = mcp.call_result(id, tool, args);
        assert_eq!(r["isError"], false, "{name} {tool}: {r}");
        (ms(t.elapsed()), r)
    };
    let outline = json!({"file_path": p.file(file)});
    let (cold, _) = call("multiedit_symbols", outline.clone());
    let symbols = median(
        (0..7)
            .map(|_| call("multiedit_symbols", outline.clone()).0)
            .collect(),
    );
    let renames = median(
        (0..7)
            .map(|_| call("multiedit_preview", rename.clone()).0)
            .collect(),
    );
    let mut edit = Vec::new();
    let mut published = Vec::new();
    let mut waited = Vec::new();
    for k in 0..8 {
        let (t, r) = call("multiedit", edits[k % 2].clone());
        let d = &r["structuredContent"]["diagnostics"];
        assert_eq!(d["available"], true, "{name}: {r}");
        // The first pair warms the server's check of the edited file.
        if k >= 2 {
            edit.push(t);
            waited.push(d["waited_ms"].as_f64().unwrap_or(0.0));
            published.push(d["published_ms"].as_f64().unwrap_or(f64::NAN));
        }
    }
    assert!(mcp.close());
    vec![format!(
        "| {name} | {cold:.0} ms | {symbols:.1} ms | {renames:.1} ms | {:.0} ms (published {:.0} ms, settled {:.0} ms after the write) |",
        median(edit),
        median(published),
        median(waited)
    )]
}

#[test]
#[ignore = "figures for docs/performance.md: cargo test --release --test it language_servers::figures -- --ignored --nocapture"]
fn figures() {
    let _turn = headless::turn();
    let mut rows = vec![
        "| server | cold start: first outline | warm outline | warm rename (preview) | warm one-file symbol edit with its delta |".to_string(),
        "|---|---|---|---|---|".to_string(),
    ];
    if headless::clangd("figures") {
        let p = Project::new(&[("calc.c", CALC_C)], &[]);
        p.allow();
        let calc = p.file("calc.c");
        rows.extend(figures_of(
            "clangd",
            &p,
            "calc.c",
            json!({"rename": {"file_path": calc, "symbol": "add", "new_name": "sum"}}),
            [
                json!({"file_path": calc, "edits": [{"symbol": "main", "replace": "body", "new_string": "printf(\"%d\\n\", add(1));\nreturn 0;"}]}),
                json!({"file_path": calc, "edits": [{"symbol": "main", "replace": "body", "new_string": "printf(\"%d\\n\", add(1, 2));\nreturn 0;"}]}),
            ],
        ));
    }
    if headless::typescript("figures") {
        let p = ts_project();
        p.allow();
        let store = p.file("store.ts");
        rows.extend(figures_of(
            "typescript-language-server",
            &p,
            "store.ts",
            json!({"rename": {"file_path": store, "symbol": "Store/total", "new_name": "sum"}}),
            [
                json!({"file_path": store, "edits": [{"symbol": "Store/scale", "replace": "body", "new_string": "return x * 3 + missing;"}]}),
                json!({"file_path": store, "edits": [{"symbol": "Store/scale", "replace": "body", "new_string": "return x * 2;"}]}),
            ],
        ));
    }
    if headless::pyright("figures") && headless::typescript("figures") {
        let text = "class Calculator:\n    def add(self, a: int, b: int) -> int:\n        return a + b\n\n\ndef main() -> None:\n    print(Calculator().add(1, 2))\n";
        let p = Project::new(
            &[("calc.py", text)],
            &[headless::node24(), headless::npm_servers()],
        );
        p.allow();
        let calc = p.file("calc.py");
        rows.extend(figures_of(
            "pyright",
            &p,
            "calc.py",
            json!({"rename": {"file_path": calc, "symbol": "Calculator/add", "new_name": "plus"}}),
            [
                json!({"file_path": calc, "edits": [{"symbol": "main", "replace": "whole", "new_string": "def main() -> None:\n    print(Calculator().add(1))"}]}),
                json!({"file_path": calc, "edits": [{"symbol": "main", "replace": "whole", "new_string": "def main() -> None:\n    print(Calculator().add(1, 2))"}]}),
            ],
        ));
    }
    println!("\n{}\n", rows.join("\n"));
}
