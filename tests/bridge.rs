//! The bridge end to end: `multiedit::bridge::route`, called from this process as `multiedit mcp`
//! calls it, hands plans to real `multiedit lsp` servers (the scripted editor of `lsp_support`, and
//! Neovim) through the registry and the socket.
//!
//! `route` reads `XDG_RUNTIME_DIR`, and the servers inherit it: each test takes the lock, points it
//! at a fresh folder, and only then starts servers, so tests never see each other's registry.
//!
//! Unix only, like the bridge (elsewhere `route` answers NoEditor and servers do not listen).
#![cfg(unix)]

mod support;
use crate::support::lsp as lsp_support;
use crate::support::mcp as mcp_support;
use crate::support::nvim as nvim_support;
use crate::support::report as report_support;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lsp_support::{Answer, Editor, Options};
use multiedit::bridge::{route, Intent, Routed};
use multiedit::engine;
use multiedit::refusal::{Kind, Refusal};
use multiedit::result::PlanResult;
use serde_json::{json, Value};

static LOCK: Mutex<()> = Mutex::new(());

struct Env {
    _lock: MutexGuard<'static, ()>,
    _dir: tempfile::TempDir,
    /// The workspace folder the editors open.
    ws: PathBuf,
    /// `$XDG_RUNTIME_DIR/multiedit`.
    registry: PathBuf,
}

fn setup() -> Env {
    let lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let runtime = root.join("run");
    fs::create_dir(&runtime).unwrap();
    fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).unwrap();
    // Safe enough here: the lock keeps the other tests of this binary from running meanwhile.
    std::env::set_var("XDG_RUNTIME_DIR", &runtime);
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    Env {
        _lock: lock,
        _dir: dir,
        ws,
        registry: runtime.join("multiedit"),
    }
}

impl Env {
    fn entry_path(&self, pid: u32) -> PathBuf {
        self.registry.join(format!("{pid}.json"))
    }

    fn entry(&self, pid: u32) -> Value {
        serde_json::from_slice(&fs::read(self.entry_path(pid)).unwrap()).unwrap()
    }

    /// `a.txt` in the workspace, holding `disk`, and a server whose editor has it open with `buffer`
    /// (made sure to have arrived: the socket and the editor's pipe are two ways in).
    fn with_open(&self, disk: &str, buffer: &str) -> (Editor, PathBuf) {
        let a = self.ws.join("a.txt");
        fs::write(&a, disk).unwrap();
        let mut ed = self.start(Options::new(&self.ws));
        ed.open(&a, buffer);
        ed.assert_server_agrees(&a);
        (ed, a)
    }

    /// Starts a server and waits until its bridge is registered.
    fn start(&self, opts: Options) -> Editor {
        let mut ed = Editor::start(opts);
        let path = self.entry_path(ed.pid());
        ed.serve_until(Answer::Apply, |_| path.exists().then_some(()));
        ed
    }
}

fn plan(path: &Path, old: &str, new: &str) -> Value {
    json!({"file_path": path, "edits": [{"old_string": old, "new_string": new}]})
}

fn route_now(plan: &Value, files: &[PathBuf], preview: bool) -> Routed<PlanResult> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(route(
        plan,
        files,
        if preview {
            Intent::Preview
        } else {
            Intent::Apply
        },
        None,
    ))
}

/// Calls `route` on another thread while `ed` acts as the editor, answering with `answer`.
fn route_via(
    ed: &mut Editor,
    plan: &Value,
    files: &[PathBuf],
    preview: bool,
    answer: Answer,
) -> Routed<PlanResult> {
    let (tx, rx) = mpsc::channel();
    let (plan, files) = (plan.clone(), files.to_vec());
    std::thread::spawn(move || {
        let _ = tx.send(route_now(&plan, &files, preview));
    });
    ed.serve_until(answer, |_| rx.try_recv().ok())
}

/// Calls an MCP tool as an agent does (the official Python SDK, `vars` its environment) on another thread
/// while `ed` acts as the editor; the tool's result.
fn tool_via(
    ed: &mut Editor,
    python: &Path,
    tool: &'static str,
    args: &Value,
    vars: &[(&'static str, &'static str)],
) -> Value {
    let (tx, rx) = mpsc::channel();
    let (python, args, vars) = (python.to_path_buf(), args.clone(), vars.to_vec());
    std::thread::spawn(move || {
        let vars: Vec<(&str, &Path)> = vars.iter().map(|(k, v)| (*k, Path::new(v))).collect();
        tx.send(mcp_support::call(&python, tool, &args, &vars))
    });
    ed.serve_until(Answer::Apply, |_| rx.try_recv().ok())
}

/// Calls the MCP tool `multiedit` as an agent does (the official Python SDK, `vars` its environment) on
/// another thread while `ed` acts as the editor; the tool's result.
fn mcp_via(
    ed: &mut Editor,
    python: &Path,
    plan: &Value,
    vars: &[(&'static str, &'static str)],
) -> Value {
    let (tx, rx) = mpsc::channel();
    let (python, plan, vars) = (python.to_path_buf(), plan.clone(), vars.to_vec());
    std::thread::spawn(move || {
        let vars: Vec<(&str, &Path)> = vars.iter().map(|(k, v)| (*k, Path::new(v))).collect();
        tx.send(mcp_support::call(&python, "multiedit", &plan, &vars))
    });
    ed.serve_until(Answer::Apply, |_| rx.try_recv().ok())
}

fn no_editor(r: Routed<PlanResult>) -> String {
    match r {
        Routed::NoEditor { reason } => reason,
        other => panic!("expected NoEditor, got {other:?}"),
    }
}

fn editor_result(r: Routed<PlanResult>) -> (String, Value) {
    match r {
        Routed::Answered { editor, answer } => (editor, answer.to_value()),
        other => panic!("expected the editor's result, got {other:?}"),
    }
}

fn refused(r: Routed<PlanResult>) -> Refusal {
    match r {
        Routed::Refused { refusal, .. } => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The result `multiedit.apply` must give: the engine's, with the version the edit was checked against,
/// and, the test editor being one that cannot save, its edit not on disk.
fn engine_result(plan: &Value, text: &str, version: i32) -> Value {
    let parsed = engine::plan_from_value(plan).unwrap();
    let outcome = engine::apply_plan(&parsed, &[Some(text)]).unwrap();
    let mut expected = multiedit::result::PlanResult::of(&outcome).to_value();
    expected["files"][0]["version"] = json!(version);
    expected["files"][0]["on_disk"] = json!("no_save_support");
    // The editor keeps the plan's text: its hash.
    expected["files"][0]["sha256"] = json!(report_support::sha256(&outcome.files[0].text));
    let name = std::path::Path::new(parsed.files[0].file_path.as_str())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    expected["on_disk_text"] = json!(format!(
        "{name} was not saved: multiedit test editor cannot save a file on request (it does not answer multiedit/save), so \
         this edit is in its buffer only, not on disk: tests, compilers and git will not see it until the file is saved."
    ));
    expected
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o777
}

#[test]
fn a_dirty_buffer_is_edited_in_the_editor_not_on_disk() {
    let env = setup();
    let buffer = "fn main() {\n    let old = 1; // 😀\n}\n";
    let (mut ed, a) = env.with_open("what is on disk\n", buffer);

    // The registry: a private folder, a private socket and entry, what a caller needs.
    let entry = env.entry(ed.pid());
    assert_eq!(entry["pid"], ed.pid());
    assert_eq!(entry["editor"], "multiedit test editor");
    assert_eq!(entry["folders"], json!([env.ws]));
    assert_eq!(
        entry["socket"],
        json!(env.registry.join(format!("{}.sock", ed.pid())))
    );
    assert_eq!(entry["token"].as_str().unwrap().len(), 64);
    assert_eq!(entry["apply_edit_timeout_ms"], 10_000);
    assert_eq!(mode(&env.registry), 0o700);
    assert_eq!(mode(&env.entry_path(ed.pid())), 0o600);
    assert_eq!(mode(Path::new(entry["socket"].as_str().unwrap())), 0o600);

    let p = json!({"file_path": a, "edits": [
        {"old_string": "let old = 1;", "new_string": "let new = 2;"},
        {"old_string": "main", "new_string": "start"},
    ]});
    let expected = engine_result(&p, buffer, 1);
    let (editor, result) = editor_result(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert_eq!(
        editor,
        format!("multiedit test editor (multiedit lsp pid {})", ed.pid())
    );
    assert_eq!(
        result, expected,
        "the result multiedit.apply gives, the engine's"
    );
    assert_eq!(ed.edits_seen.len(), 1, "exactly one workspace/applyEdit");
    assert_eq!(
        ed.edits_seen[0]["edit"]["documentChanges"][0]["textDocument"]["version"],
        1
    );
    assert_eq!(ed.text(&a), "fn start() {\n    let new = 2; // 😀\n}\n");
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        "what is on disk\n",
        "the disk is the editor's business"
    );
    ed.assert_server_agrees(&a);
    let bridge_log: Vec<String> = ed
        .logged()
        .into_iter()
        .filter(|m| m.starts_with("bridge"))
        .collect();
    assert!(
        bridge_log.iter().any(|m| m.contains("listening at")),
        "{bridge_log:?}"
    );
    assert!(
        bridge_log
            .iter()
            .any(|m| m.contains("multiedit.apply from process") && m.ends_with("done")),
        "{bridge_log:?}"
    );

    // A shutdown takes the entry and the socket away.
    let socket = PathBuf::from(entry["socket"].as_str().unwrap());
    let pid = ed.pid();
    assert!(ed.shutdown().success());
    assert!(!env.entry_path(pid).exists() && !socket.exists());
    let reason = no_editor(route_now(&p, &[a], false));
    assert!(
        reason.starts_with("no editor is running multiedit lsp with the bridge on"),
        "{reason}"
    );
}

/// What `route` brings back from the editor is the result `multiedit apply --json` gives for the same
/// plan (tolerant tiers, a skipped edit, a created file), plus each file's version.
#[test]
fn the_bridge_brings_back_the_command_line_json() {
    let env = setup();
    let cli = report_support::cli_plan_json(env._dir.path());
    let mut ed = env.start(Options::new(&env.ws));
    let plan = report_support::plan_fixture(&env.ws);
    let files = [env.ws.join("p.txt"), env.ws.join("made.txt")];
    let (_, result) = editor_result(route_via(&mut ed, &plan, &files, false, Answer::Apply));
    assert_eq!(
        report_support::without(
            &report_support::rooted(
                &report_support::hashes_checked(&result, |p: &std::path::Path| {
                    std::fs::read_to_string(p).unwrap()
                }),
                &env.ws
            ),
            &["on_disk_text"],
            &["version", "on_disk"]
        ),
        cli
    );
    assert_eq!(ed.edits_seen.len(), 1, "one WorkspaceEdit");
}

#[test]
fn a_preview_through_the_bridge_applies_nothing() {
    let env = setup();
    let (mut ed, a) = env.with_open("alpha\n", "alpha beta\n");
    let p = plan(&a, "beta", "gamma");
    let (_, result) = editor_result(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        true,
        Answer::Apply,
    ));
    let direct = ed.preview(p.clone()).unwrap();
    assert_eq!(
        result, direct,
        "the same answer as multiedit.preview from the editor"
    );
    assert!(
        result["diff"].as_str().unwrap().contains("+alpha gamma"),
        "{result}"
    );
    assert!(
        ed.edits_seen.is_empty(),
        "a preview sends nothing to the editor"
    );
    assert_eq!(ed.text(&a), "alpha beta\n");
    ed.assert_server_agrees(&a);
}

#[test]
fn refusals_come_back_exactly() {
    let env = setup();
    let (mut ed, a) = env.with_open("one\ntwo\n", "one\n\ttwo\n");

    // Refused by the engine: the exact refusal, hint included, that the editor's own command gets.
    let p = plan(&a, "    two", "three");
    let refusal = refused(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    let engine_refusal = engine::apply_plan(
        &engine::plan_from_value(&p).unwrap(),
        &[Some("one\n\ttwo\n")],
    )
    .unwrap_err();
    // The buffer is not the disk's text, so the hint also says so, and how to read what the editor has.
    let hint = format!(
        "{}\nThe editor holds unsaved changes to this file that the disk lacks, and the plan was checked against the editor's \
         text: read it as the editor has it (the multiedit_read tool) before writing old_string.",
        engine_refusal.hint.clone().unwrap()
    );
    assert_eq!(
        refusal,
        Refusal::from(engine_refusal)
            .in_file(&a.display().to_string())
            .with_hint(Some(hint))
    );
    assert_eq!(refusal.kind, engine::Kind::NotFound);
    assert!(
        refusal
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("line 2")),
        "{refusal:?}"
    );
    let direct = ed.apply(p).unwrap_err();
    assert_eq!(serde_json::to_value(&refusal).unwrap(), direct["data"]);

    // Refused by the editor (applied: false): not_applied, nothing changed.
    let p = plan(&a, "one", "ONE");
    let refusal = refused(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        false,
        Answer::Refuse,
    ));
    assert_eq!(refusal.kind, engine::Kind::NotApplied);
    assert!(
        refusal.message.contains("did not apply the change"),
        "{refusal:?}"
    );

    // Outside the workspace: the same confinement as for the editor's commands. No editor holds the
    // file, so nothing is sent at all.
    let outside = env.ws.parent().unwrap().join("outside.txt");
    fs::write(&outside, "one\n").unwrap();
    let reason = no_editor(route_now(
        &plan(&outside, "one", "1"),
        std::slice::from_ref(&outside),
        false,
    ));
    assert!(
        reason.starts_with(&format!("no editor has {} open", outside.display())),
        "{reason}"
    );
    // A plan whose file list (given by the caller) says otherwise still meets the server's check.
    let refusal = refused(route_via(
        &mut ed,
        &plan(&outside, "one", "1"),
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert_eq!(refusal.kind, Kind::OutsideWorkspace);
    assert_eq!(fs::read_to_string(&outside).unwrap(), "one\n");
    assert_eq!(
        ed.edits_seen.len(),
        1,
        "only the plan the editor refused reached it"
    );
}

/// Sends raw bytes on a server's socket and returns the answer line ("" if none).
fn raw(socket: &Path, bytes: &[u8], close_write: bool) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(bytes).unwrap();
    if close_write {
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line
}

#[test]
fn wrong_tokens_and_malformed_requests_are_refused_and_the_server_goes_on() {
    let env = setup();
    let (mut ed, a) = env.with_open("alpha\n", "alpha\n");
    let entry = env.entry(ed.pid());
    let socket = PathBuf::from(entry["socket"].as_str().unwrap());
    let p = plan(&a, "alpha", "beta");

    let wrong = format!(
        "{}\n",
        json!({"token": "0".repeat(64), "plan": p, "intent": "apply"})
    );
    let answer: Value = serde_json::from_str(&raw(&socket, wrong.as_bytes(), false)).unwrap();
    assert_eq!(answer, json!({"ok": false, "error": "wrong token"}));
    // Logged to the editor as a warning (stderr carries only failures that cannot reach the editor).
    ed.serve_until(Answer::Apply, ed_logged_wrong_token);

    for (bytes, expect) in [
        (&b"not json\n"[..], "malformed request"),
        (b"{}\n", "missing field"),
        (b"[1, 2]\n", "malformed request"),
        (
            br#"{"token": "x", "plan": {}, "intent": "apply", "intnet": "read"}"#,
            "cut short",
        ),
    ] {
        let answer: Value = serde_json::from_str(&raw(&socket, bytes, true)).unwrap();
        assert_eq!(answer["ok"], false, "{answer}");
        assert!(
            answer["error"].as_str().unwrap().contains(expect),
            "{answer} for {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    let typo = format!(
        "{}\n",
        json!({"token": entry["token"], "plan": p, "intnet": "preview"})
    );
    let answer: Value = serde_json::from_str(&raw(&socket, typo.as_bytes(), true)).unwrap();
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("unknown field `intnet`"),
        "a misspelt intent must not apply: {answer}"
    );
    let unknown = format!(
        "{}\n",
        json!({"token": entry["token"], "plan": p, "intent": "delete"})
    );
    let answer: Value = serde_json::from_str(&raw(&socket, unknown.as_bytes(), true)).unwrap();
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("unknown variant `delete`"),
        "an unknown intent is refused: {answer}"
    );
    // A line over the limit is refused after the limit, not read whole.
    let mut big = vec![b' '; 65 << 20];
    big.push(b'\n');
    let mut s = UnixStream::connect(&socket).unwrap();
    let _ = s.write_all(&big);
    let mut line = String::new();
    let _ = BufReader::new(s).read_line(&mut line);
    assert!(line.contains("longer than"), "{line:?}");

    assert!(ed.edits_seen.is_empty(), "none of that reached the editor");
    assert_eq!(ed.text(&a), "alpha\n");
    // And the server still serves, the editor and the bridge alike.
    editor_result(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert_eq!(ed.text(&a), "beta\n");
    ed.assert_server_agrees(&a);
}

fn ed_logged_wrong_token(ed: &Editor) -> Option<()> {
    ed.logged()
        .iter()
        .any(|m| m.contains("refused a plan from process") && m.contains("wrong token"))
        .then_some(())
}

#[test]
fn a_registry_open_to_others_is_ignored_and_said() {
    let env = setup();
    let a = env.ws.join("a.txt");
    fs::write(&a, "alpha\n").unwrap();
    let mut ed = env.start(Options::new(&env.ws));
    let p = plan(&a, "alpha", "beta");
    let socket = PathBuf::from(env.entry(ed.pid())["socket"].as_str().unwrap());

    fs::set_permissions(&socket, fs::Permissions::from_mode(0o666)).unwrap();
    let reason = no_editor(route_now(&p, std::slice::from_ref(&a), false));
    assert!(
        reason.contains(&format!(
            "ignored the editor at pid {}: {} has mode 0666",
            ed.pid(),
            socket.display()
        )),
        "{reason}"
    );
    fs::set_permissions(&socket, fs::Permissions::from_mode(0o600)).unwrap();

    // A folder open to others: no editor can be trusted, nor can a disk write behind one be ruled out.
    fs::set_permissions(&env.registry, fs::Permissions::from_mode(0o755)).unwrap();
    let r = env.registry.display();
    match route_now(&p, std::slice::from_ref(&a), false) {
        Routed::Blind { refusal } => assert_eq!(
            (refusal.kind.as_str(), refusal.message.as_str()),
            ("not_applied", format!(
                "Cannot apply the plan: the editors' bridge folder {r} cannot be trusted ({r} has mode 0755, which lets other \
                 users in (0700 is required)), so multiedit cannot see whether an editor holds these files with unsaved \
                 changes, and it writes nothing behind one. Nothing was changed. Remove {r} if it is not yours, or set \
                 XDG_RUNTIME_DIR to a private folder (mode 0700) for the editor and the agent alike."
            ).as_str())
        ),
        other => panic!("expected Blind, got {other:?}"),
    }
    fs::set_permissions(&env.registry, fs::Permissions::from_mode(0o700)).unwrap();

    // A server that finds the folder open to others does not listen in it.
    fs::set_permissions(&env.registry, fs::Permissions::from_mode(0o750)).unwrap();
    let mut other = Editor::start(Options::new(&env.ws));
    let said = other.serve_until(Answer::Apply, said_bridge_off);
    assert!(said.contains("mode 0750"), "{said}");
    assert!(!env.entry_path(other.pid()).exists());
    fs::set_permissions(&env.registry, fs::Permissions::from_mode(0o700)).unwrap();

    assert!(ed.edits_seen.is_empty());
    editor_result(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        "beta\n",
        "a closed file is edited by the editor"
    );
}

fn said_bridge_off(ed: &Editor) -> Option<String> {
    ed.logged()
        .into_iter()
        .find(|m| m.starts_with("bridge off"))
}

#[test]
fn a_dead_editors_entry_is_removed_and_the_next_editor_tried() {
    let env = setup();
    let a = env.ws.join("a.txt");
    fs::write(&a, "alpha\n").unwrap();
    let p = plan(&a, "alpha", "beta");

    // Killed: it could not remove its entry.
    let mut dead = env.start(Options::new(&env.ws));
    let pid = dead.pid();
    let socket = PathBuf::from(env.entry(pid)["socket"].as_str().unwrap());
    dead.kill();
    assert!(env.entry_path(pid).exists() && socket.exists());
    let reason = no_editor(route_now(&p, std::slice::from_ref(&a), false));
    assert_eq!(reason, format!("no editor is running multiedit lsp with the bridge on; the editor at pid {pid} is gone, its entry was removed"));
    assert!(!env.entry_path(pid).exists() && !socket.exists());

    // A live process whose socket nobody listens on (its pid reused, say), more recently active than
    // the real editor: its entry is removed before anything is sent, and the real editor gets the plan.
    let mut ed = env.start(Options::new(&env.ws));
    let mut fake = env.entry(ed.pid());
    let me = std::process::id();
    let fake_socket = env.registry.join(format!("{me}.sock"));
    drop(UnixListener::bind(&fake_socket).unwrap());
    fs::set_permissions(&fake_socket, fs::Permissions::from_mode(0o600)).unwrap();
    fake["pid"] = json!(me);
    fake["socket"] = json!(fake_socket);
    fake["last_active_ms"] = json!(u64::MAX / 2);
    let fake_entry = env.entry_path(me);
    fs::write(&fake_entry, fake.to_string()).unwrap();
    fs::set_permissions(&fake_entry, fs::Permissions::from_mode(0o600)).unwrap();
    editor_result(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert!(
        !fake_entry.exists() && !fake_socket.exists(),
        "the dead socket's entry was removed"
    );
    assert_eq!(fs::read_to_string(&a).unwrap(), "beta\n");
    assert_eq!(ed.edits_seen.len(), 1);
}

#[test]
fn the_editor_can_turn_the_bridge_off() {
    let env = setup();
    let a = env.ws.join("a.txt");
    fs::write(&a, "alpha\n").unwrap();
    let mut opts = Options::new(&env.ws);
    opts.init_options = json!({"bridge": false});
    let mut ed = Editor::start(opts);
    let said = ed.serve_until(Answer::Apply, said_bridge_off);
    assert_eq!(
        said,
        "bridge off: the initialization option bridge is false"
    );
    assert!(!env.entry_path(ed.pid()).exists());
    assert!(!env.registry.join(format!("{}.sock", ed.pid())).exists());
    let reason = no_editor(route_now(
        &plan(&a, "alpha", "beta"),
        std::slice::from_ref(&a),
        false,
    ));
    assert!(
        reason.starts_with("no editor is running multiedit lsp with the bridge on"),
        "{reason}"
    );
    assert_eq!(fs::read_to_string(&a).unwrap(), "alpha\n");
}

#[test]
fn the_most_recently_active_editor_whose_folders_hold_every_file_gets_the_plan() {
    let env = setup();
    let other_ws = env.ws.parent().unwrap().join("other");
    fs::create_dir(&other_ws).unwrap();
    let (a, b) = (env.ws.join("a.txt"), other_ws.join("b.txt"));
    fs::write(&a, "alpha\n").unwrap();
    fs::write(&b, "beta\n").unwrap();
    let mut first = env.start(Options::new(&env.ws));
    let mut second = env.start(Options::new(&env.ws));
    first.open(&a, "alpha one\n");
    second.open(&a, "alpha two\n");
    second.assert_server_agrees(&a);
    // The second editor registered last; the first becomes the most recent once it works again.
    std::thread::sleep(Duration::from_millis(1100));
    first.change(&a, 0, 0, ">");
    first.assert_server_agrees(&a);
    assert!(
        env.entry(first.pid())["last_active_ms"].as_u64()
            > env.entry(second.pid())["last_active_ms"].as_u64()
    );
    let (editor, _) = editor_result(route_via(
        &mut first,
        &plan(&a, "one", "1"),
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert!(
        editor.ends_with(&format!("pid {})", first.pid())),
        "{editor}"
    );
    assert_eq!(first.text(&a), ">alpha 1\n");

    // A plan over two folders goes to the editor that has both, once it has both.
    let both = json!({"files": [
        {"file_path": a, "edits": [{"old_string": "alpha", "new_string": "ALPHA"}]},
        {"file_path": b, "edits": [{"old_string": "beta", "new_string": "BETA"}]},
    ]});
    let files = [a.clone(), b.clone()];
    let reason = no_editor(route_now(&both, &files, false));
    assert!(
        reason.starts_with(&format!(
            "no editor has {}, {} open: none of the 2",
            a.display(),
            b.display()
        )),
        "{reason}"
    );
    second.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": lsp_support::uri(&other_ws), "name": "other"}], "removed": []}}),
    );
    let entry = env.entry_path(second.pid());
    second.serve_until(Answer::Apply, |_| {
        let v: Value = serde_json::from_slice(&fs::read(&entry).ok()?).ok()?;
        (v["folders"].as_array()?.len() == 2).then_some(())
    });
    let (editor, _) = editor_result(route_via(&mut second, &both, &files, false, Answer::Apply));
    assert!(
        editor.ends_with(&format!("pid {})", second.pid())),
        "{editor}"
    );
    assert_eq!(second.text(&a), "ALPHA two\n");
    assert_eq!(fs::read_to_string(&b).unwrap(), "BETA\n");
}

fn rss_kib(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_thousand_plans_through_the_bridge_leave_the_servers_memory_flat() {
    let env = setup();
    let text: String = (0..2000)
        .map(|i| format!("line {i} of a document kept open\n"))
        .collect();
    let (mut ed, a) = env.with_open("on disk\n", &format!("value = 0\n{text}"));

    let (tx, rx) = mpsc::channel();
    let path = a.clone();
    let pid = ed.pid();
    const WARM: usize = 100;
    const TOTAL: usize = 1000;
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut warm_rss = 0;
        let start = Instant::now();
        for i in 0..TOTAL {
            if i == WARM {
                warm_rss = rss_kib(pid);
            }
            let p = plan(
                &path,
                &format!("value = {i}\n"),
                &format!("value = {}\n", i + 1),
            );
            let r = rt.block_on(route(&p, std::slice::from_ref(&path), Intent::Apply, None));
            let ok = matches!(r, Routed::Answered { .. });
            if tx.send((ok, format!("{r:?}"))).is_err() || !ok {
                return;
            }
        }
        let _ = tx.send((
            true,
            format!("done {warm_rss} {}", start.elapsed().as_millis()),
        ));
    });
    let mut n = 0;
    let summary = loop {
        let (ok, said) = ed.serve_until(Answer::Apply, |_| rx.try_recv().ok());
        assert!(ok, "call {n} failed: {said}");
        if said.starts_with("done") {
            break said;
        }
        n += 1;
    };
    assert_eq!(n, TOTAL);
    let parts: Vec<u64> = summary
        .split_whitespace()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let (warm, ms) = (parts[0], parts[1]);
    let end = rss_kib(pid);
    eprintln!(
        "bridge load: {TOTAL} plans applied in {ms} ms ({:.2} ms each); server RSS {warm} KiB after {WARM}, {end} KiB after {TOTAL} ({:+} KiB)",
        ms as f64 / TOTAL as f64,
        end as i64 - warm as i64
    );
    assert!(
        end <= warm + 2048,
        "the server's memory grew from {warm} KiB to {end} KiB over {} plans",
        TOTAL - WARM
    );
    assert_eq!(ed.edits_seen.len(), TOTAL, "one applyEdit per plan");
    assert!(ed.text(&a).starts_with(&format!("value = {TOTAL}\n")));
    ed.assert_server_agrees(&a);
}

/// Neovim's part: tell the test the server is up, then let the plan come through the bridge (Neovim
/// applies the server's workspace/applyEdit meanwhile) until the test says it is done.
const NVIM_MIDDLE: &str = r#"
  local f = assert(io.open(os.getenv('MULTIEDIT_READY'), 'w'))
  f:close()
  local done = os.getenv('MULTIEDIT_DONE')
  assert(vim.wait(60000, function() return vim.loop.fs_stat(done) ~= nil end, 20), 'the test never finished routing')
"#;

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a server has its entry in the bridge's registry.
fn has_entry(registry: &Path) -> bool {
    fs::read_dir(registry).is_ok_and(|d| {
        d.flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json"))
    })
}

/// Neovim with its file open, its server up and on the bridge (or finished early, which its results
/// then say); `done` lets it go once the test has sent its plan.
struct NvimOnBridge {
    nvim: nvim_support::Nvim,
    file: PathBuf,
    done: PathBuf,
    runtime: PathBuf,
    registry: PathBuf,
}

impl NvimOnBridge {
    fn start(env: &Env) -> NvimOnBridge {
        let (ready, done) = (env.ws.join("ready"), env.ws.join("done"));
        let runtime = env.registry.parent().unwrap().to_path_buf();
        let nvim = nvim_support::start(
            &env.ws,
            NVIM_MIDDLE,
            &[
                ("XDG_RUNTIME_DIR", &runtime),
                ("MULTIEDIT_READY", &ready),
                ("MULTIEDIT_DONE", &done),
            ],
        );
        let on = NvimOnBridge {
            file: nvim.file.clone(),
            nvim,
            done,
            runtime,
            registry: env.registry.clone(),
        };
        wait_for("nvim to start its server", || {
            ready.exists() || on.nvim.finished()
        });
        wait_for("the server's bridge entry", || {
            has_entry(&on.registry) || on.nvim.finished()
        });
        on
    }

    /// Runs `send` with the plan of nvim_support::PLAN_EDITS for the open file, unless Neovim has
    /// already finished; then lets Neovim go.
    fn send<T>(&self, send: impl FnOnce(&Value) -> T) -> Option<T> {
        let sent = (!self.nvim.finished()).then(|| {
            let edits: Vec<Value> = nvim_support::PLAN_EDITS
                .iter()
                .map(|(old, new)| json!({"old_string": old, "new_string": new}))
                .collect();
            send(&json!({"file_path": self.file, "edits": edits}))
        });
        fs::write(&self.done, "").unwrap();
        sent
    }
}

#[test]
fn neovim_applies_a_plan_from_the_bridge_as_one_undo_step() {
    if !nvim_support::available("neovim_applies_a_plan_from_the_bridge_as_one_undo_step") {
        return;
    }
    let env = setup();
    let on = NvimOnBridge::start(&env);
    let file = on.file.clone();
    let routed = on.send(|plan| route_now(plan, std::slice::from_ref(&file), false));
    let r = on.nvim.results();
    let (editor, result) = editor_result(routed.expect("routed"));
    assert!(editor.starts_with("Neovim (multiedit lsp pid "), "{editor}");
    assert!(
        result["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Applied 3 edits to")),
        "{result}"
    );
    nvim_support::assert_one_undo_step(&r, &file);
    assert!(
        !has_entry(&env.registry),
        "Neovim stopped the server, which removed its entry"
    );
}

/// The whole way an agent's edit takes: an MCP client (the official Python SDK) calls `multiedit mcp`,
/// which finds Neovim's server on the bridge; Neovim applies the plan to its modified buffer, and one
/// `u` takes it back. The file on disk is not written.
#[test]
fn an_mcp_call_edits_neovims_modified_buffer_as_one_undo_step() {
    let test = "an_mcp_call_edits_neovims_modified_buffer_as_one_undo_step";
    if !nvim_support::available(test) {
        return;
    }
    let Some(python) = mcp_support::python(test) else {
        return;
    };
    let env = setup();
    let on = NvimOnBridge::start(&env);
    let file = on.file.clone();
    let on_disk = fs::read(&file).unwrap();
    let answer = on.send(|plan| {
        mcp_support::call(
            &python,
            "multiedit",
            plan,
            &[("XDG_RUNTIME_DIR", on.runtime.as_path())],
        )
    });
    let r = on.nvim.results();
    let answer = answer.expect("the MCP call ran");
    assert_eq!(answer["is_error"], false, "{answer}");
    assert_eq!(answer["structured"]["applied_in"], "editor", "{answer}");
    let text = answer["text"].as_str().unwrap();
    assert!(text.starts_with("Applied 3 edits to"), "{text}");
    assert!(
        text.contains("Applied in the buffers of Neovim (multiedit lsp pid "),
        "{text}"
    );
    nvim_support::assert_one_undo_step(&r, &file);
    assert_eq!(
        fs::read(&file).unwrap(),
        on_disk,
        "the file on disk is untouched"
    );
}

/// The agent's name travels with its plan: an MCP client that calls itself Claude Code (as Claude Code
/// does in `initialize`) gets an edit labelled for it in the editor's undo stack; a client known only
/// by its program name gets the name people know it by.
#[test]
fn the_editor_labels_an_agents_edit_with_the_agents_name() {
    let test = "the_editor_labels_an_agents_edit_with_the_agents_name";
    let Some(python) = mcp_support::python(test) else {
        return;
    };
    let env = setup();
    let (mut ed, a) = env.with_open("on disk\n", "alpha beta\n");
    for (name, title, label) in [
        (
            "claude-code",
            Some("Claude Code"),
            "Claude Code: 1 edit to 1 file",
        ),
        ("codex-mcp-client", None, "Codex: 1 edit to 1 file"),
    ] {
        let mut vars = vec![("MCP_CLIENT_NAME", name)];
        vars.extend(title.map(|t| ("MCP_CLIENT_TITLE", t)));
        let answer = mcp_via(&mut ed, &python, &plan(&a, "alpha", name), &vars);
        assert_eq!(answer["is_error"], false, "{answer}");
        assert_eq!(ed.edits_seen.last().unwrap()["label"], label);
        ed.apply(json!({"file_path": a, "edits": [{"old_string": name, "new_string": "alpha"}]}))
            .expect("put back");
    }
    assert_eq!(ed.text(&a), "alpha beta\n");
    assert_eq!(fs::read_to_string(&a).unwrap(), "on disk\n");
}

/// An agent's plan through the bridge into an editor whose formatter runs on the edit before it answers
/// (VS Code with `multiedit.formatEdits`): the MCP result ends with the edited lines as they now read,
/// in its text and its structured content, so the agent's next old_string matches them.
#[test]
fn an_agent_gets_the_edited_lines_as_the_editors_formatter_left_them() {
    let test = "an_agent_gets_the_edited_lines_as_the_editors_formatter_left_them";
    let Some(python) = mcp_support::python(test) else {
        return;
    };
    let env = setup();
    let (mut ed, a) = env.with_open("on disk\n", "limit=10\n\nfactor=2\n");
    ed.formats = Some(lsp_support::format_statements);
    let answer = mcp_via(
        &mut ed,
        &python,
        &plan(&a, "limit=10", "limit=20; floor=1"),
        &[("MCP_CLIENT_NAME", "claude-code")],
    );
    assert_eq!(answer["is_error"], false, "{answer}");
    assert_eq!(ed.text(&a), "limit = 20;\nfloor = 1\n\nfactor = 2\n");
    let editor = answer["structured"]["editor"].as_str().unwrap();
    assert_eq!(
        answer["text"],
        format!(
            "Applied 1 edit to {a}:\n1. Replaced \"limit=10\" with \"limit=20; floor=1\"\n\nApplied in the buffers of {editor}.\n\
             a.txt was not saved: multiedit test editor cannot save a file on request (it does not answer multiedit/save), so \
             this edit is in its buffer only, not on disk: tests, compilers and git will not see it until the file is saved.\n\
             New sha256: {sha}\n\
             No diagnostics: the editor does not report them to multiedit.\n\nThe editor changed the edited lines after the edit \
             (its formatter, or a review). They now read (match these in your next old_string):\n{a}, lines 1-2:\nlimit = 20;\nfloor = 1",
            a = a.display(),
            // Of the text the editor holds, as its formatter left it.
            sha = report_support::sha256(ed.text(&a)),
        )
    );
    assert_eq!(
        answer["structured"]["now_reads"],
        json!([{"file_path": a, "first_line": 1, "last_line": 2, "text": "limit = 20;\nfloor = 1"}])
    );
    assert_eq!(fs::read_to_string(&a).unwrap(), "on disk\n");
}

/// A patch request (`{"patch", "root"}`, as `multiedit_patch` forwards it) through the bridge: the
/// editor's server parses it, the unsaved buffer is edited, the rename travels in the same edit.
#[test]
fn a_patch_through_the_bridge_edits_the_dirty_buffer_and_renames_in_one_edit() {
    let env = setup();
    let (mut ed, a) = env.with_open("on disk\n", "alpha\nunsaved beta\ngamma\n");
    let (old, new) = (env.ws.join("old.txt"), env.ws.join("new.txt"));
    fs::write(&old, "x\n").unwrap();
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-unsaved beta\n+BETA\n gamma\n\
                 diff --git a/old.txt b/new.txt\nsimilarity index 100%\nrename from old.txt\nrename to new.txt\n";
    let request = json!({"patch": patch, "root": env.ws});
    let files = [a.clone(), old.clone(), new.clone()];
    let (_, result) = editor_result(route_via(&mut ed, &request, &files, false, Answer::Apply));
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(ed.edits_seen.len(), 1, "one applyEdit");
    assert_eq!(ed.text(&a), "alpha\nBETA\ngamma\n");
    assert_eq!(fs::read_to_string(&a).unwrap(), "on disk\n");
    assert!(!old.exists() && fs::read_to_string(&new).unwrap() == "x\n");
}

/// An editor that stops its server with a signal (SIGTERM, or SIGINT/SIGHUP from a closed terminal)
/// leaves no registry entry or socket behind: the server removes them on its way out.
#[test]
fn a_server_stopped_by_a_signal_removes_its_socket_and_entry() {
    let env = setup();
    for signal in ["TERM", "INT", "HUP"] {
        let mut ed = env.start(Options::new(&env.ws));
        let pid = ed.pid();
        let socket = PathBuf::from(env.entry(pid)["socket"].as_str().unwrap());
        assert!(socket.exists());
        send_signal(pid, signal);
        wait_for(
            &format!("the server to remove its entry after SIG{signal}"),
            || !env.entry_path(pid).exists() && !socket.exists(),
        );
        let status = ed.wait_exit();
        assert_eq!(
            status.code(),
            Some(1),
            "an exit without shutdown is 1, as the protocol asks (SIG{signal})"
        );
        assert!(
            ed.stderr_text()
                .contains(&format!("stopped by SIG{signal}")),
            "{}",
            ed.stderr_text()
        );
    }
}

fn send_signal(pid: u32, sig: &str) {
    let sent = std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(sent.success());
}

/// The editor's server is alive but does not read (stopped here, as a server stuck in long work
/// would be): a plan too big for the socket's buffer cannot be handed over. Before, that was "no
/// editor could be reached", and `multiedit mcp` then wrote the file on disk behind the editor's
/// unsaved buffer. Now it is refused as busy, and nothing changes anywhere.
#[test]
fn a_busy_editor_gets_a_busy_refusal_never_a_write_behind_its_unsaved_buffer() {
    let env = setup();
    let buffer = "unsaved alpha\n";
    let (mut ed, a) = env.with_open("on disk alpha\n", buffer);
    let pid = ed.pid();
    std::env::set_var("MULTIEDIT_BRIDGE_SEND_TIMEOUT_MS", "300");
    send_signal(pid, "STOP");
    let big = plan(&a, "alpha", &"x".repeat(4 << 20));
    let routed = route_now(&big, std::slice::from_ref(&a), false);
    send_signal(pid, "CONT");
    std::env::remove_var("MULTIEDIT_BRIDGE_SEND_TIMEOUT_MS");
    let refusal = refused(routed);
    assert_eq!(refusal.kind, Kind::Busy);
    assert_eq!(
        refusal.message,
        format!(
            "The editor (multiedit test editor (multiedit lsp pid {pid})) has the files in its workspace but is busy: its \
             server did not read the plan within 300 ms. Nothing was changed, in the editor or on disk (it may hold \
             unsaved changes). Try again in a moment."
        )
    );
    assert_eq!(fs::read_to_string(&a).unwrap(), "on disk alpha\n");
    // Once it goes on, the half-sent plan is not carried out (no line break came), and the next works.
    let (_, result) = editor_result(route_via(
        &mut ed,
        &plan(&a, "alpha", "beta"),
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert_eq!(result["ok"], true);
    assert_eq!(
        ed.edits_seen.len(),
        1,
        "only the second plan reached the editor"
    );
    assert_eq!(ed.text(&a), "unsaved beta\n");
    assert_eq!(fs::read_to_string(&a).unwrap(), "on disk alpha\n");
    assert!(
        env.entry_path(pid).exists(),
        "a busy editor's entry is kept"
    );
}

/// Every slot of the server taken by plans (one waiting for the editor, the others for their turn):
/// the next plan is refused as busy at once, and nothing reaches the editor or the disk for it.
#[test]
fn a_server_with_every_slot_taken_answers_busy() {
    let env = setup();
    let a = env.ws.join("a.txt");
    fs::write(&a, "on disk\n").unwrap();
    let mut opts = Options::new(&env.ws);
    opts.init_options = json!({"applyEditTimeoutMs": 2000});
    let mut ed = env.start(opts);
    ed.open(&a, "alpha\n");
    ed.assert_server_agrees(&a);
    let (tx, rx) = mpsc::channel();
    for i in 0..8 {
        let (tx, a) = (tx.clone(), a.clone());
        std::thread::spawn(move || {
            let _ = tx.send(route_now(
                &plan(&a, "alpha", &format!("waiting {i}")),
                &[a],
                false,
            ));
        });
    }
    // The editor takes the first plan's applyEdit and answers nothing; the seven others wait their turn.
    ed.serve_until(Answer::Ignore, |ed| {
        (!ed.edits_seen.is_empty()).then_some(())
    });
    std::thread::sleep(Duration::from_millis(300));
    let refusal = refused(route_now(
        &plan(&a, "alpha", "ninth"),
        std::slice::from_ref(&a),
        false,
    ));
    assert_eq!(refusal.kind, Kind::Busy, "{refusal:?}");
    assert_eq!(
        refusal.message,
        "The editor's server is busy with 8 plans from outside the editor. Nothing was changed, in the editor or on \
         disk. Try again in a moment."
    );
    // The first runs out of time (whether it was applied is unknown to it: not_applied); the others
    // either get their turn and run out of time too, or are refused as busy while waiting for it.
    let mut kinds = Vec::new();
    for _ in 0..8 {
        let r = ed.serve_until(Answer::Ignore, |_| rx.try_recv().ok());
        kinds.push(refused(r).kind);
    }
    assert!(
        kinds.contains(&Kind::Engine(engine::Kind::NotApplied)),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .all(|k| matches!(k, Kind::Engine(engine::Kind::NotApplied) | Kind::Busy)),
        "{kinds:?}"
    );
    assert_eq!(
        ed.edits_seen.len(),
        kinds
            .iter()
            .filter(|k| **k == engine::Kind::NotApplied)
            .count(),
        "one applyEdit per plan that had its turn"
    );
    assert!(
        !ed.edits_seen
            .iter()
            .any(|e| e.to_string().contains("ninth")),
        "the ninth plan never reached the editor"
    );
    assert_eq!(ed.text(&a), "alpha\n");
    assert_eq!(fs::read_to_string(&a).unwrap(), "on disk\n");
}

/// A path through a folder that does not exist, then `..` and a link out of the workspace: no editor
/// is chosen for it (the system cannot resolve it), and an editor handed it anyway refuses it.
#[test]
fn a_path_through_a_missing_folder_is_routed_nowhere_and_refused_by_the_editor() {
    let env = setup();
    let (mut ed, a) = env.with_open("alpha\n", "alpha\n");
    let root = env.ws.parent().unwrap().to_path_buf();
    fs::create_dir(env.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(&root, env.ws.join("sub/up")).unwrap();
    let sneaky = env.ws.join("missing/../sub/up/planted.txt");
    let p = json!({"file_path": sneaky, "edits": [{"old_string": "", "new_string": "x"}]});
    let reason = no_editor(route_now(&p, std::slice::from_ref(&sneaky), false));
    assert_eq!(
        reason,
        format!(
            "{}: {} does not exist, and the `..` after it cannot be resolved (the system refuses a path through a missing \
             folder), so no editor can be chosen",
            sneaky.display(),
            env.ws.join("missing").display()
        )
    );
    let refusal = refused(route_via(
        &mut ed,
        &p,
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert_eq!(refusal.kind, Kind::OutsideWorkspace);
    assert!(
        refusal
            .message
            .contains("does not exist, and the `..` after it cannot be resolved"),
        "{refusal:?}"
    );
    assert!(ed.edits_seen.is_empty());
    assert!(!root.join("planted.txt").exists() && !env.ws.join("missing").exists());
}

/// `multiedit_read` through the official MCP SDK gives an agent the file as the editor holds it, its
/// unsaved text included, numbered as `cat -n` numbers lines, and says the disk is older; a refusal of a
/// plan written from the disk's text names the tool.
#[test]
fn an_agent_reads_the_editors_unsaved_text_and_is_told_the_disk_is_older() {
    let test = "an_agent_reads_the_editors_unsaved_text_and_is_told_the_disk_is_older";
    let Some(python) = mcp_support::python(test) else {
        return;
    };
    let env = setup();
    let buffer = "fn main() {\n    let typed = 1;\n}\n";
    let (mut ed, a) = env.with_open("fn main() {\n    let old = 1;\n}\n", buffer);
    let answer = tool_via(
        &mut ed,
        &python,
        "multiedit_read",
        &json!({"file_path": a}),
        &[],
    );
    assert_eq!(answer["is_error"], false, "{answer}");
    let editor = format!("multiedit test editor (multiedit lsp pid {})", ed.pid());
    let sha = answer["structured"]["files"][0]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(sha.len(), 64);
    assert_eq!(
        answer["text"],
        format!(
            "{} (as {editor} holds it, with changes that are not saved: the disk has an older text; 3 lines; sha256 {sha})\n     1\tfn main() {{\n     2\t    let typed = 1;\n     3\t}}\n",
            a.display()
        )
    );
    assert_eq!(answer["structured"]["files"][0]["source"], "editor");
    assert_eq!(answer["structured"]["files"][0]["differs_from_disk"], true);

    // A plan written from the disk's text: refused, and the hint says why and what to read.
    let refused = tool_via(
        &mut ed,
        &python,
        "multiedit",
        &plan(&a, "let old = 1;", "let new = 1;"),
        &[],
    );
    assert_eq!(refused["is_error"], true);
    let hint = refused["structured"]["hint"].as_str().unwrap();
    assert!(
        hint.ends_with(
            "The editor holds unsaved changes to this file that the disk lacks, and the plan was checked against the editor's \
             text: read it as the editor has it (the multiedit_read tool) before writing old_string."
        ),
        "{hint}"
    );
    assert_eq!(ed.text(&a), buffer, "nothing changed");
    assert!(ed.edits_seen.is_empty());
}

/// An agent's plan needs no approval by default (its own client asked the user); with `agentReview`
/// on, the editor asks once for the whole plan (`multiedit/approve`): discarded, approved, or left
/// undecided past the bound, each answered with what happened, and a withdrawn plan never applied.
#[test]
fn an_agents_plan_is_approved_once_declined_or_withdrawn_at_the_bound() {
    let env = setup();
    let a = env.ws.join("a.txt");
    let b = env.ws.join("b.txt");
    let two = |old: &str, new: &str| {
        json!({"files": [
            {"file_path": a, "edits": [{"old_string": old, "new_string": new}]},
            {"file_path": b, "edits": [{"old_string": old, "new_string": new}]},
        ]})
    };
    let files = [a.clone(), b.clone()];
    fs::write(&a, "alpha\n").unwrap();
    fs::write(&b, "alpha\n").unwrap();

    // Default: applied at once, nothing asked.
    let mut o = Options::new(&env.ws);
    o.approve = Some("discard");
    let mut ed = env.start(o);
    let (_, result) = editor_result(route_via(
        &mut ed,
        &two("alpha", "beta"),
        &files,
        false,
        Answer::Apply,
    ));
    assert_eq!(result["files"].as_array().unwrap().len(), 2);
    assert!(
        ed.approvals_seen.is_empty(),
        "no approval asked: {:?}",
        ed.approvals_seen
    );
    drop(ed);

    for (decision, text) in [
        ("discard", "The user discarded the change in the editor (MultiEdit: 2 edits to 2 files). Nothing was changed. Do not send it again unchanged: ask the user what they want instead."),
        ("never", "The user did not decide on the change within 300 ms, so it was withdrawn from the editor and will not be applied. Nothing was changed. Ask the user, then send the plan again if they want it."),
    ] {
        let mut o = Options::new(&env.ws);
        o.approve = Some(decision);
        o.init_options = json!({"agentReview": "always", "agentApprovalMs": 300});
        let mut ed = env.start(o);
        ed.open(&a, "beta\n");
        let refusal = refused(route_via(&mut ed, &two("beta", "gamma"), &files, false, Answer::Apply));
        assert_eq!(refusal.message, text, "{decision}");
        assert_eq!(refusal.kind, if decision == "discard" { Kind::Declined } else { Kind::Undecided });
        assert_eq!(ed.approvals_seen.len(), 1, "asked once");
        let asked = &ed.approvals_seen[0];
        assert_eq!(asked["label"], "MultiEdit: 2 edits to 2 files");
        assert_eq!(asked["timeoutMs"], 300);
        assert!(asked["edit"]["documentChanges"].as_array().is_some_and(|c| c.len() == 2), "the edit to show: {asked}");
        // Nothing was sent to apply, then or later.
        ed.drain(Duration::from_millis(500));
        assert!(ed.edits_seen.is_empty(), "{decision}: never applied");
        assert_eq!(ed.text(&a), "beta\n");
        assert_eq!(fs::read_to_string(&b).unwrap(), "beta\n");
    }

    let mut o = Options::new(&env.ws);
    o.approve = Some("apply");
    // An editor that waits long for its own reviews (as VS Code's extension does): an agent's is still bounded.
    o.init_options = json!({"agentReview": "always", "applyEditTimeoutMs": 1_800_000});
    let mut ed = env.start(o);
    let (_, result) = editor_result(route_via(
        &mut ed,
        &two("beta", "gamma"),
        &files,
        false,
        Answer::Apply,
    ));
    assert_eq!(ed.approvals_seen.len(), 1);
    assert_eq!(
        ed.approvals_seen[0]["timeoutMs"], 25_000,
        "the bound an agent's approval has"
    );
    assert_eq!(ed.edits_seen.len(), 1, "applied once, as approved");
    let annotations = &ed.edits_seen[0]["edit"]["changeAnnotations"];
    assert!(
        annotations.is_null()
            || !annotations
                .to_string()
                .contains("\"needsConfirmation\":true"),
        "no second review: {annotations}"
    );
    assert_eq!(result["files"][0]["edits_applied"], 1);
    assert_eq!(fs::read_to_string(&a).unwrap(), "gamma\n");
}

/// `multiedit_write` through the official MCP SDK, with an editor that holds the file: the new text
/// reaches the buffer as the one line that changed (one WorkspaceEdit, versioned), given the sha256
/// `multiedit_read` showed; a hash of the disk's text, behind the user's unsaved changes, is refused
/// and changes nothing; a new file in the editor's folder is created by the editor.
#[test]
fn an_agent_writes_a_whole_file_through_the_editor_with_the_hash_it_read() {
    let test = "an_agent_writes_a_whole_file_through_the_editor_with_the_hash_it_read";
    let Some(python) = mcp_support::python(test) else {
        return;
    };
    let env = setup();
    let text = "one\ntwo\nthree\n";
    let (mut ed, a) = env.with_open(text, text);
    let read = tool_via(
        &mut ed,
        &python,
        "multiedit_read",
        &json!({"file_path": a}),
        &[],
    );
    let sha = read["structured"]["files"][0]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let answer = tool_via(
        &mut ed,
        &python,
        "multiedit_write",
        &json!({"file_path": a, "content": "one\nTWO\nthree\n", "sha256": sha}),
        &[],
    );
    assert_eq!(answer["is_error"], false, "{answer}");
    assert_eq!(answer["structured"]["applied_in"], "editor", "{answer}");
    assert!(
        answer["text"].as_str().unwrap().starts_with(&format!(
            "Applied 1 edit to {}:\n1. Applied the new text (3 lines; changed: line 2)",
            a.display()
        )),
        "{answer}"
    );
    assert_eq!(ed.text(&a), "one\nTWO\nthree\n");
    // The sha256 of the text the editor now holds: the next write needs no read.
    let now = report_support::sha256(ed.text(&a));
    assert_eq!(answer["structured"]["files"][0]["sha256"], now, "{answer}");
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .contains(&format!("\nNew sha256: {now}\n")),
        "{answer}"
    );
    assert_eq!(ed.edits_seen.len(), 1, "one WorkspaceEdit");
    let change = &ed.edits_seen[0]["edit"]["documentChanges"][0];
    assert_eq!(
        change["textDocument"]["version"], 1,
        "versioned against the buffer it was checked with"
    );
    assert_eq!(change["edits"].as_array().unwrap().len(), 1, "{change}");
    assert_eq!(
        change["edits"][0]["range"],
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}),
        "only line 2"
    );
    assert_eq!(change["edits"][0]["newText"], "TWO\n");

    // The user types into the buffer without saving; a write made from the disk's text is refused.
    let disk_sha = {
        use sha2::Digest;
        sha2::Sha256::digest(fs::read(&a).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let typed = ed.text(&a).replace("one", "uno");
    let (start, end, new) = lsp_support::span_edit(ed.text(&a), &typed);
    let new = new.to_string();
    ed.change(&a, start, end, &new);
    ed.assert_server_agrees(&a);
    let on_disk = fs::read_to_string(&a).unwrap();
    let refused = tool_via(
        &mut ed,
        &python,
        "multiedit_write",
        &json!({"file_path": a, "content": "replaced\n", "sha256": disk_sha}),
        &[],
    );
    assert_eq!(refused["is_error"], true, "{refused}");
    assert_eq!(refused["structured"]["kind"], "stale");
    assert_eq!(
        refused["structured"]["message"],
        format!(
            "{} changed since you read it (or you read another text): the sha256 you gave is not of its text, which now has 3 lines. \
             Nothing was written.",
            a.display()
        )
    );
    let typed_sha = report_support::sha256(&typed);
    assert!(
        !refused.to_string().contains(&typed_sha),
        "the hash of the user's text is not given: {refused}"
    );
    assert_eq!(
        refused["structured"]["hint"],
        "The editor holds unsaved changes to this file that the disk lacks; the sha256 is of the text the user sees there. Read it with \
         multiedit_read (which shows the editor's unsaved changes too), then make your change to the text it shows and write that, \
         with the sha256 it shows."
    );
    assert_eq!(ed.text(&a), typed, "the buffer untouched");
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        on_disk,
        "the disk untouched"
    );
    assert_eq!(ed.edits_seen.len(), 1, "nothing more sent to the editor");

    // A new file in the editor's folder: created through it.
    let b = env.ws.join("b.txt");
    let created = tool_via(
        &mut ed,
        &python,
        "multiedit_write",
        &json!({"file_path": b, "content": "made\n"}),
        &[],
    );
    assert_eq!(created["is_error"], false, "{created}");
    assert_eq!(created["structured"]["applied_in"], "editor");
    assert_eq!(created["structured"]["files"][0]["created"], true);
    assert_eq!(ed.edits_seen.len(), 2);
    let ops = ed.edits_seen[1]["edit"]["documentChanges"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(ops[0]["kind"], "create", "{ops:?}");
    assert_eq!(ops[1]["edits"][0]["newText"], "made\n", "{ops:?}");
    assert!(ed.shutdown().success());
}

/// An agent's `multiedit_symbols` and a plan's rename reach the editor that holds the file through the
/// bridge: the outline comes from its language servers, the rename is applied in its buffers, counted.
#[test]
fn symbols_and_a_rename_through_the_bridge_come_from_the_editors_language_servers() {
    let env = setup();
    let Some(python) = mcp_support::python(
        "symbols_and_a_rename_through_the_bridge_come_from_the_editors_language_servers",
    ) else {
        return;
    };
    let a = env.ws.join("a.ts");
    let text = "export let total = 0;\nexport function bump() { total += 1; }\n";
    fs::write(&a, text).unwrap();
    let mut opts = Options::new(&env.ws);
    opts.symbols = true;
    opts.rename = true;
    let mut ed = env.start(opts);
    ed.open(&a, text);
    let at = |s: &str, i: usize| {
        lsp_support::position(
            text,
            text.match_indices(s).nth(i).unwrap().0,
            lsp_support::Enc::Utf16,
        )
    };
    let range = |s: &str, i: usize| json!({"start": at(s, i), "end": lsp_support::position(text, text.match_indices(s).nth(i).unwrap().0 + s.len(), lsp_support::Enc::Utf16)});
    ed.symbols.insert(lsp_support::uri(&a), json!([
        {"name": "total", "kind": 13, "range": range("total = 0", 0), "selectionRange": range("total", 0)},
        {"name": "bump", "kind": 12, "range": range("function bump() { total += 1; }", 0), "selectionRange": range("bump", 0)},
    ]));
    let (uri, t) = (lsp_support::uri(&a), text.to_string());
    ed.renames = Some(Box::new(move |p: &Value| {
        let edits: Vec<Value> = t
            .match_indices("total")
            .map(|(i, _)| json!({"range": {"start": lsp_support::position(&t, i, lsp_support::Enc::Utf16), "end": lsp_support::position(&t, i + 5, lsp_support::Enc::Utf16)}, "newText": p["newName"]}))
            .collect();
        json!({"edit": {"changes": {uri.clone(): edits}}, "placeholder": "total"})
    }));
    let outline = tool_via(
        &mut ed,
        &python,
        "multiedit_symbols",
        &json!({"file_path": a}),
        &[],
    );
    assert_eq!(outline["is_error"], false, "{outline}");
    assert_eq!(
        outline["text"],
        format!(
            "{}: 2 symbols, as the editor's language servers give them (kind, name path for a plan's \"symbol\", lines):\nvariable total  \
             (line 1)\nfunction bump  (line 2)\nFrom multiedit test editor (multiedit lsp pid {}).",
            a.display(),
            ed.pid()
        )
    );
    assert_eq!(outline["structured"]["symbols"][1]["path"], "bump");
    let r = tool_via(
        &mut ed,
        &python,
        "multiedit",
        &json!({"rename": {"file_path": a, "symbol": "total", "new_name": "sum"}}),
        &[],
    );
    assert_eq!(r["is_error"], false, "{r}");
    assert_eq!(r["structured"]["applied_in"], "editor");
    assert_eq!(r["structured"]["rename"]["occurrences"], 2);
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .starts_with("Renamed total to sum: 2 occurrences in 1 file.\n\n"),
        "{r}"
    );
    assert_eq!(ed.text(&a), text.replace("total", "sum"));
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        text,
        "the buffer is the editor's to save"
    );
}

/// The gate (`server/src/gate.rs`) on the bridge: a rename whose language-server edit reaches
/// `.git/config` is refused whoever sent it, naming the file; an agent's plan into
/// `.claude/settings.json` is refused by an editor that cannot ask (naming both switches), asked with
/// the reason by one that can, and let through by the agent's own server's `--allow-agent-config`.
#[test]
fn the_gate_holds_on_the_bridge_for_renames_and_agent_configuration() {
    let env = setup();
    let ws = env.ws.clone();
    let (a, git_config) = (ws.join("a.ts"), ws.join(".git/config"));
    fs::create_dir_all(ws.join(".git")).unwrap();
    fs::create_dir_all(ws.join(".claude")).unwrap();
    let a_text = "export let total = 0;\n";
    let config_text = "[alias]\n\ttotal = log\n";
    fs::write(&a, a_text).unwrap();
    fs::write(&git_config, config_text).unwrap();
    let settings = ws.join(".claude/settings.json");
    fs::write(&settings, "{}\n").unwrap();
    let before = crate::support::disk::snapshot(&ws);

    // A language server whose rename also edits git's config (as a workspace-wide rename could).
    let mut opts = Options::new(&ws);
    opts.symbols = true;
    opts.rename = true;
    let mut ed = env.start(opts);
    let texts = vec![(a.clone(), a_text), (git_config.clone(), config_text)];
    ed.renames = Some(Box::new(move |params: &Value| {
        let mut changes = serde_json::Map::new();
        for (path, text) in &texts {
            let edits: Vec<Value> = text
                .match_indices("total")
                .map(|(at, _)| json!({"range": {"start": lsp_support::position(text, at, lsp_support::Enc::Utf16), "end": lsp_support::position(text, at + 5, lsp_support::Enc::Utf16)}, "newText": params["newName"]}))
                .collect();
            changes.insert(lsp_support::uri(path), json!(edits));
        }
        json!({"edit": {"changes": changes}, "placeholder": "total"})
    }));
    let rename = json!({"rename": {"file_path": a, "line": 1, "column": 12, "new_name": "sum"}});
    let r = refused(route_via(
        &mut ed,
        &rename,
        std::slice::from_ref(&a),
        false,
        Answer::Apply,
    ));
    assert_eq!(r.kind, Kind::OutsideWorkspace);
    assert_eq!(
        r.message,
        format!(
            "The rename also edits {} inside a .git folder, which the language server's rename reached and multiedit \
             does not edit for it: a planted hook or setting there makes git run commands. Nothing was changed. To \
             allow it, start the agent's server as `multiedit mcp --allow-dot-git`, or set the editor's initialization \
             option {{\"allowDotGit\": true}} (in VS Code: the setting multiedit.allowDotGit).",
            git_config.display()
        )
    );
    // The palette's own rename is refused too: the language server chose the file, not the user.
    let e = ed.apply(rename.clone()).expect_err("refused");
    assert_eq!(e["data"]["kind"], "outside_workspace", "{e}");
    assert!(ed.edits_seen.is_empty(), "{:?}", ed.edits_seen);

    // An agent's plan into Claude Code's settings, to an editor that cannot ask.
    let open_up = json!({"file_path": settings, "edits": [{"old_string": "{}", "new_string": "{\"permissions\": {\"allow\": [\"Bash(*)\"]}}"}]});
    let r = refused(route_via(
        &mut ed,
        &open_up,
        std::slice::from_ref(&settings),
        false,
        Answer::Apply,
    ));
    assert_eq!(r.kind, Kind::Protected);
    assert_eq!(
        r.message,
        format!(
            "Cannot edit {}: it holds Claude Code's settings, permissions, hooks and agents. An agent may not change such \
             a file on its own: it decides what the agent and the editor may run, and no editor is here to ask the user. \
             Nothing was changed. If the user wants it, they can make the change themselves, or start the agent's server \
             as `multiedit mcp --allow-agent-config`, or set the editor's initialization option {{\"allowAgentConfig\": \
             true}} (in VS Code: the setting multiedit.allowAgentConfig).",
            settings.display()
        )
    );
    assert!(ed.edits_seen.is_empty());
    assert_eq!(
        crate::support::disk::snapshot(&ws),
        before,
        "nothing changed"
    );

    // The agent's own server started with --allow-agent-config: its flag travels with the plan.
    let (tx, rx) = mpsc::channel();
    let (cwd, plan) = (ws.clone(), open_up.clone());
    std::thread::spawn(move || {
        let mut mcp = mcp_support::Raw::start(&cwd, &["--allow-agent-config"], &[]);
        tx.send(mcp.call(1, "multiedit", plan))
    });
    let (is_error, text) = ed.serve_until(Answer::Apply, |_| rx.try_recv().ok());
    assert!(!is_error, "{text}");
    assert_eq!(ed.edits_seen.len(), 1);
    drop(ed);

    // An editor that can ask: asked once, with the reason, and the user's answer holds.
    let mut opts = Options::new(&ws);
    opts.approve = Some("apply");
    let mut ed = env.start(opts);
    let put_back = json!({"file_path": settings, "edits": [{"old_string": "{\"permissions\": {\"allow\": [\"Bash(*)\"]}}", "new_string": "{\"permissions\": {}}"}]});
    let (_, result) = editor_result(route_via(
        &mut ed,
        &put_back,
        std::slice::from_ref(&settings),
        false,
        Answer::Apply,
    ));
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(ed.approvals_seen.len(), 1);
    assert_eq!(
        ed.approvals_seen[0]["reason"],
        "This change writes .claude/settings.json, which holds Claude Code's settings, permissions, hooks and agents. An \
         agent may not change such a file without you: it decides what it and the editor may run."
    );
}
