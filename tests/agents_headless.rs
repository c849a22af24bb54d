//! The agent CLIs' own headless runs after `multiedit setup --route-edits`, offline: each CLI talks to
//! a stand-in for its model's API on the loopback (it records every request, and answers with the tool
//! calls a test scripts), in a network namespace with only loopback when this process may make one
//! (`unshare(CLONE_NEWNET)`, as `unshare -n` does; CI runs as root), else with the CLIs' telemetry and
//! update checks turned off by their settings. Per CLI and mode: the tools it declares to the model
//! (multiedit's in, its own edit tools out), whether an edit lands through multiedit where the
//! agent's own edit tool would have landed (and not where it would have asked), and that the tool
//! result the model receives (the stand-in sees it in the next request) holds the sentences multiedit
//! writes for it ("Written to disk: ..."), which Claude Code and Codex take from the structured result.
//!
//! A CLI that is not installed (tests/agents/install.sh) is skipped with a message, and fails the test
//! under CI=true.
#![cfg(unix)]

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod support;
use support::agents::{agent_bin, path_with};

fn bin() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_multiedit"))
        .canonicalize()
        .unwrap()
}

/// Puts this test's thread (and so the stand-in it starts and the CLI it spawns) in a network
/// namespace of its own with only loopback, up. Says which isolation the run has.
fn isolate() -> String {
    // SAFETY: unshare and setns change only this thread's network namespace; the file descriptor is
    // this function's own and closed before it returns.
    unsafe {
        let before = libc::open(
            c"/proc/thread-self/ns/net".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if before < 0 {
            return "loopback-only settings (no /proc/thread-self/ns/net)".into();
        }
        if libc::unshare(libc::CLONE_NEWNET) != 0 {
            libc::close(before);
            return format!(
                "loopback-only settings (unshare(CLONE_NEWNET): {})",
                std::io::Error::last_os_error()
            );
        }
        let up = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !up {
            libc::setns(before, libc::CLONE_NEWNET);
            libc::close(before);
            return "loopback-only settings (ip link set lo up failed in a new network namespace)"
                .into();
        }
        libc::close(before);
    }
    "a network namespace with only loopback".into()
}

/// One request the stand-in received: its path and body.
struct Seen {
    path: String,
    body: Value,
}

/// Which API the stand-in speaks.
#[derive(Clone, Copy, PartialEq)]
enum Api {
    /// Claude Code: POST /v1/messages, streamed as server-sent events.
    Anthropic,
    /// Gemini CLI: :streamGenerateContent (events) and :generateContent (its router, JSON).
    Gemini,
    /// OpenCode's OpenAI-compatible provider: /v1/chat/completions, streamed.
    Chat,
    /// Codex: /v1/responses, streamed.
    Responses,
}

/// A stand-in for a model's API on 127.0.0.1: answers request N (N = the tool results the request
/// carries) with the N-th scripted tool call, then with the text "done". Stops when dropped.
struct Standin {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

/// A scripted tool call: its name, its arguments and, for the Responses API, the item's type and
/// fields of its own (`namespace`).
#[derive(Clone)]
struct Call {
    name: &'static str,
    args: Value,
    item: &'static str,
    extra: Value,
}

fn call(name: &'static str, args: Value) -> Call {
    Call {
        name,
        args,
        item: "function_call",
        extra: json!({}),
    }
}

impl Standin {
    fn start(api: Api, script: Vec<Call>) -> Standin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen2, stop2) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(240);
            while !stop2.load(Ordering::Relaxed) && Instant::now() < deadline {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let (seen, script) = (seen2.clone(), script.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, api, &script, &seen);
                });
            }
        });
        Standin { port, seen, stop }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request's body as text, in the order they came.
    fn bodies(&self) -> Vec<(String, String)> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| (s.path.clone(), s.body.to_string()))
            .collect()
    }

    /// The tools each request declared, by name (each API's own shape).
    fn declared(&self) -> Vec<Vec<String>> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .map(|s| {
                let mut names = Vec::new();
                for t in s.body["tools"].as_array().into_iter().flatten() {
                    for f in t["functionDeclarations"].as_array().into_iter().flatten() {
                        names.extend(f["name"].as_str().map(str::to_string));
                    }
                    for n in [&t["name"], &t["function"]["name"], &t["type"]] {
                        if let Some(n) = n.as_str() {
                            names.push(n.to_string());
                            break;
                        }
                    }
                }
                names
            })
            .collect()
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How many tool results a request carries: which step of the script it is at.
fn results_in(body: &Value) -> usize {
    let mut n = 0;
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            n += 1;
        }
        n += m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["type"] == "tool_result")
            .count();
    }
    for c in body["contents"].as_array().into_iter().flatten() {
        n += c["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p.get("functionResponse").is_some())
            .count();
    }
    for i in body["input"].as_array().into_iter().flatten() {
        if i["type"].as_str().is_some_and(|t| t.ends_with("_output")) {
            n += 1;
        }
    }
    n
}

fn serve(
    stream: std::net::TcpStream,
    api: Api,
    script: &[Call],
    seen: &Mutex<Vec<Seen>>,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let path = first.split(' ').nth(1).unwrap_or_default().to_string();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let step = results_in(&body);
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let next = script.get(step).filter(|_| has_tools);
    let (kind, answer) = answer(api, &path, &body, next, step);
    seen.lock().unwrap().push(Seen { path, body });
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    )?;
    stream.flush()
}

/// The answer to one request: a content type and the body.
fn answer(
    api: Api,
    path: &str,
    body: &Value,
    next: Option<&Call>,
    step: usize,
) -> (&'static str, String) {
    let sse = "text/event-stream";
    let event = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        format!("event: {name}\ndata: {data}\n\n")
    };
    match api {
        Api::Anthropic => {
            let mut out = event(
                "message_start",
                json!({"message": {"id": format!("msg_{step}"), "type": "message", "role": "assistant",
                    "model": body["model"], "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            );
            let (block, delta, stop) = match next {
                Some(c) => (
                    json!({"type": "tool_use", "id": format!("toolu_{step}"), "name": c.name, "input": {}}),
                    json!({"type": "input_json_delta", "partial_json": c.args.to_string()}),
                    "tool_use",
                ),
                None => (
                    json!({"type": "text", "text": ""}),
                    json!({"type": "text_delta", "text": "done"}),
                    "end_turn",
                ),
            };
            out += &event(
                "content_block_start",
                json!({"index": 0, "content_block": block}),
            );
            out += &event("content_block_delta", json!({"index": 0, "delta": delta}));
            out += &event("content_block_stop", json!({"index": 0}));
            out += &event(
                "message_delta",
                json!({"delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 1}}),
            );
            out += &event("message_stop", json!({}));
            (sse, out)
        }
        Api::Gemini => {
            let part = match next {
                Some(c) => json!({"functionCall": {"name": c.name, "args": c.args}}),
                // Its model router asks for a small JSON answer; the turn's last answer is text.
                None if body["tools"].is_null() => {
                    json!({"text": json!({"reasoning": "a stand-in", "model_choice": "flash"}).to_string()})
                }
                None => json!({"text": "done"}),
            };
            let c = json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}});
            if path.contains(":streamGenerateContent") {
                (sse, format!("data: {c}\r\n\r\n"))
            } else {
                ("application/json", c.to_string())
            }
        }
        Api::Chat => {
            let chunk = |delta: Value, finish: Value| {
                let c = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
                format!("data: {c}\n\n")
            };
            let mut out = match next {
                Some(c) => {
                    chunk(
                        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": format!("call_{step}"), "type": "function",
                        "function": {"name": c.name, "arguments": c.args.to_string()}}]}),
                        Value::Null,
                    ) + &chunk(json!({}), json!("tool_calls"))
                }
                None => {
                    chunk(json!({"role": "assistant", "content": "done"}), Value::Null)
                        + &chunk(json!({}), json!("stop"))
                }
            };
            out += "data: [DONE]\n\n";
            (sse, out)
        }
        Api::Responses => {
            let id = format!("resp_{step}");
            let mut out = event("response.created", json!({"response": {"id": id}}));
            let item = match next {
                Some(c) if c.item == "tool_search_call" => {
                    json!({"type": "tool_search_call", "call_id": format!("call_{step}"), "id": format!("ts_{step}"),
                        "status": "completed", "execution": "client", "arguments": c.args})
                }
                Some(c) => {
                    let mut item = json!({"type": c.item, "name": c.name, "arguments": c.args.to_string(),
                        "call_id": format!("call_{step}"), "id": format!("fc_{step}"), "status": "completed"});
                    for (k, v) in c.extra.as_object().into_iter().flatten() {
                        item[k] = v.clone();
                    }
                    item
                }
                None => {
                    json!({"type": "message", "role": "assistant", "id": "m", "content": [{"type": "output_text", "text": "done", "annotations": []}]})
                }
            };
            out += &event(
                "response.output_item.done",
                json!({"output_index": 0, "item": item}),
            );
            out += &event(
                "response.completed",
                json!({"response": {"id": id, "usage": {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}}}),
            );
            (sse, out)
        }
    }
}

/// A throwaway home and project, with a file to edit.
struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    file: PathBuf,
}

const BEFORE: &str = "hello world\n";
const AFTER: &str = "bye world\n";

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, project) = (root.join("home"), root.join("project"));
    fs::create_dir(&home).unwrap();
    fs::create_dir(&project).unwrap();
    let run = root.join("run");
    fs::create_dir(&run).unwrap();
    fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let file = project.join("a.txt");
    fs::write(&file, BEFORE).unwrap();
    Env {
        _dir: dir,
        home,
        project,
        file,
    }
}

impl Env {
    /// `multiedit ARGS` in the project, on the throwaway home.
    fn multiedit(&self, args: &[&str]) -> Output {
        let o = Command::new(bin())
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("CODEX_HOME")
            .env("XDG_RUNTIME_DIR", self.home.parent().unwrap().join("run"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        o
    }

    /// The agent CLI `program` with `args`, in the project, offline, on the throwaway home.
    fn agent(&self, agents: &Path, program: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let path = path_with(agents);
        let mut c = Command::new(agents.join(program));
        // PWD too: OpenCode takes its folder from it, not from the working directory.
        c.args(args)
            .current_dir(&self.project)
            .env("PWD", &self.project)
            .env("HOME", &self.home)
            .env("PATH", path)
            .env("XDG_RUNTIME_DIR", self.home.parent().unwrap().join("run"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .stdin(Stdio::null());
        for (k, v) in vars {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn reset(&self) {
        fs::write(&self.file, BEFORE).unwrap();
    }

    fn edited(&self) -> bool {
        fs::read_to_string(&self.file).unwrap() == AFTER
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The plan every run sends.
fn plan(e: &Env) -> Value {
    json!({"file_path": e.file, "edits": [{"old_string": "hello", "new_string": "bye"}]})
}

/// The sentence multiedit writes for a model after an edit on disk (`mcp/render.rs`).
const ON_DISK: &str = "Written to disk: ";

fn timed(what: &str, t0: Instant) {
    eprintln!("{what}: {:.1} s", t0.elapsed().as_secs_f64());
}

/// Claude Code `-p`: in `acceptEdits` mode Edit lands without asking, and after routing so does
/// multiedit (its hook reads the mode); in the default mode Edit would have asked, and `-p` cannot ask:
/// multiedit's call is denied as Edit's would be. Edit and Write are not declared; multiedit's tools
/// are (deferred: listed by name, loaded through ToolSearch).
#[test]
fn claude_code_edits_through_multiedit_in_accept_edits_mode_and_is_asked_in_default() {
    let Some(agents) = agent_bin("claude") else {
        return;
    };
    let t0 = Instant::now();
    let how = isolate();
    eprintln!("isolation: {how}");
    let e = env();
    e.multiedit(&["setup", "claude-code", "--route-edits"]);
    let run = |mode: &str| {
        let model = Standin::start(
            Api::Anthropic,
            vec![
                call(
                    "ToolSearch",
                    json!({"query": "select:mcp__multiedit__multiedit"}),
                ),
                call("mcp__multiedit__multiedit", plan(&e)),
            ],
        );
        let o = e.agent(
            &agents,
            "claude",
            &[
                "-p",
                "Change hello to bye in a.txt",
                "--permission-mode",
                mode,
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[
                ("ANTHROPIC_BASE_URL", &model.url()),
                ("ANTHROPIC_API_KEY", "a-stand-in"),
                ("DISABLE_TELEMETRY", "1"),
                ("DISABLE_AUTOUPDATER", "1"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ],
        );
        (model.bodies(), model.declared(), text(&o))
    };

    let (bodies, declared, said) = run("acceptEdits");
    assert!(e.edited(), "acceptEdits: the edit landed\n{said}");
    let first = declared
        .iter()
        .position(|d| !d.is_empty())
        .unwrap_or_else(|| panic!("no request declared tools\n{said}"));
    assert!(
        !declared[first].iter().any(|t| t == "Edit" || t == "Write"),
        "{:?}",
        declared[first]
    );
    for ours in [
        "mcp__multiedit__multiedit",
        "mcp__multiedit__multiedit_patch",
        "mcp__multiedit__multiedit_write",
        "mcp__multiedit__multiedit_read",
    ] {
        assert!(
            bodies[first].1.contains(&format!("{ours}\\n"))
                || bodies[first].1.contains(&format!("\"{ours}\"")),
            "{ours} listed in the first request"
        );
    }
    // The tool result it hands the model next (the structured result, with multiedit's text).
    let last = &bodies.last().unwrap().1;
    assert!(last.contains(ON_DISK), "{last}");
    assert!(
        last.contains("Applied 1 edit to ") && last.contains("\\\"text\\\":"),
        "{last}"
    );

    e.reset();
    let (bodies, _, said) = run("default");
    assert!(!e.edited(), "default: nothing was written\n{said}");
    let last = &bodies.last().unwrap().1;
    assert!(
        last.contains("requested permissions to use mcp__multiedit__multiedit")
            && !last.contains(ON_DISK),
        "{last}"
    );
    timed("claude code, two runs", t0);
}

/// Gemini CLI headless (`-p`), routed (`--user`: its policy folder): replace and write_file are
/// declared in no mode. In `auto_edit` and `yolo`, where replace ran without asking, multiedit's edit
/// tools are declared and the edit lands; in the default mode, where Gemini CLI declares no tool that
/// needs confirmation (replace neither, before routing), its edit tools are left out too, and its
/// read-only tools are declared.
#[test]
fn gemini_cli_declares_multiedit_where_replace_ran_and_its_edit_lands() {
    let Some(agents) = agent_bin("gemini") else {
        return;
    };
    let t0 = Instant::now();
    let how = isolate();
    eprintln!("isolation: {how}");
    let e = env();
    fs::create_dir(e.home.join(".gemini")).unwrap();
    fs::write(
        e.home.join(".gemini/settings.json"),
        "{\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}, \"privacy\": {\"usageStatisticsEnabled\": false}}\n",
    )
    .unwrap();
    e.multiedit(&["setup", "gemini", "--user"]);
    let run = |mode: &str| {
        let model = Standin::start(Api::Gemini, vec![call("mcp_multiedit_multiedit", plan(&e))]);
        let o = e.agent(
            &agents,
            "gemini",
            &[
                "-p",
                "Change hello to bye in a.txt",
                "-o",
                "stream-json",
                "--approval-mode",
                mode,
            ],
            &[
                ("GEMINI_API_KEY", "a-stand-in"),
                ("GOOGLE_GEMINI_BASE_URL", &model.url()),
                ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
            ],
        );
        let declared: Vec<String> = model.declared().into_iter().flatten().collect();
        (model.bodies(), declared, text(&o))
    };
    let has = |d: &[String], t: &str| d.iter().any(|x| x == t);

    // Before routing, the default mode of a headless run declares no edit tool at all.
    let (_, declared, said) = run("default");
    assert!(
        !has(&declared, "replace") && !has(&declared, "mcp_multiedit_multiedit"),
        "{declared:?}\n{said}"
    );
    assert!(!e.edited());

    e.multiedit(&["setup", "gemini", "--user", "--route-edits"]);
    for mode in ["auto_edit", "yolo"] {
        e.reset();
        let (bodies, declared, said) = run(mode);
        for ours in [
            "mcp_multiedit_multiedit",
            "mcp_multiedit_multiedit_patch",
            "mcp_multiedit_multiedit_write",
            "mcp_multiedit_multiedit_read",
        ] {
            assert!(
                has(&declared, ours),
                "{mode}: {ours} declared: {declared:?}"
            );
        }
        assert!(
            !has(&declared, "replace") && !has(&declared, "write_file"),
            "{mode}: {declared:?}"
        );
        assert!(e.edited(), "{mode}: the edit landed\n{said}");
        let last = &bodies.last().unwrap().1;
        assert!(last.contains(ON_DISK), "{mode}: {last}");
    }
    e.reset();
    let (_, declared, said) = run("default");
    assert!(
        has(&declared, "mcp_multiedit_multiedit_read")
            && !has(&declared, "mcp_multiedit_multiedit")
            && !has(&declared, "replace")
            && !has(&declared, "write_file"),
        "default: {declared:?}\n{said}"
    );
    assert!(!e.edited(), "{said}");
    timed("gemini cli, four runs", t0);
}

/// OpenCode `run` (its build agent, whose edits run without asking), routed: its edit, write and
/// apply_patch tools are not declared, multiedit's are, and the edit lands through multiedit.
#[test]
fn opencode_edits_through_multiedit_after_route_edits() {
    let Some(agents) = agent_bin("opencode") else {
        return;
    };
    let t0 = Instant::now();
    let how = isolate();
    eprintln!("isolation: {how}");
    let e = env();
    let model = Standin::start(Api::Chat, vec![call("multiedit_multiedit", plan(&e))]);
    let user = e.home.join(".config/opencode");
    fs::create_dir_all(&user).unwrap();
    fs::write(
        user.join("opencode.json"),
        json!({"provider": {"standin": {"npm": "@ai-sdk/openai-compatible", "name": "stand-in",
            "options": {"baseURL": format!("{}/v1", model.url()), "apiKey": "a-stand-in"},
            "models": {"m": {"name": "m", "tool_call": true}}}},
            "model": "standin/m", "autoupdate": false, "share": "disabled"})
        .to_string(),
    )
    .unwrap();
    e.multiedit(&["setup", "opencode", "--route-edits"]);
    let o = e.agent(
        &agents,
        "opencode",
        &["run", "Change hello to bye in a.txt"],
        &[
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ],
    );
    let said = text(&o);
    let declared: Vec<String> = model.declared().into_iter().flatten().collect();
    for ours in [
        "multiedit_multiedit",
        "multiedit_multiedit_patch",
        "multiedit_multiedit_write",
        "multiedit_multiedit_read",
    ] {
        assert!(
            declared.iter().any(|t| t == ours),
            "{ours}: {declared:?}\n{said}"
        );
    }
    assert!(
        !declared
            .iter()
            .any(|t| t == "edit" || t == "write" || t == "apply_patch"),
        "{declared:?}"
    );
    assert!(e.edited(), "{said}");
    let bodies = model.bodies();
    assert!(
        bodies.last().unwrap().1.contains(ON_DISK),
        "{}",
        bodies.last().unwrap().1
    );
    timed("opencode, one run", t0);
}

/// Codex `exec` (approval policy never) in a project it trusts, routed: setup writes the project's
/// `.codex/config.toml`, which Codex reads; multiedit's tools run without asking (its server's
/// `default_tools_approval_mode`). With `--sandbox workspace-write`, where apply_patch lands, the edit
/// lands through multiedit; in the read-only sandbox, where apply_patch is rejected, multiedit refuses
/// too (Codex tells it the sandbox with each call). apply_patch stays declared: Codex has no switch.
#[test]
fn codex_exec_edits_through_multiedit_where_apply_patch_would_land() {
    let Some(agents) = agent_bin("codex") else {
        return;
    };
    let t0 = Instant::now();
    let how = isolate();
    eprintln!("isolation: {how}");
    let e = env();
    let run = |sandbox: &[&str]| {
        let model = Standin::start(
            Api::Responses,
            vec![
                Call {
                    name: "tool_search",
                    args: json!({"query": "multiedit edit files", "limit": 8}),
                    item: "tool_search_call",
                    extra: json!({}),
                },
                Call {
                    extra: json!({"namespace": "mcp__multiedit"}),
                    ..call("multiedit", plan(&e))
                },
            ],
        );
        let config = e.home.join(".codex/config.toml");
        let text = fs::read_to_string(&config).unwrap();
        let port = text
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap()
            .to_string();
        fs::write(&config, text.replace(&port, &model.port.to_string())).unwrap();
        let mut args = vec!["exec", "--skip-git-repo-check"];
        args.extend(sandbox);
        args.push("Change hello to bye in a.txt");
        let o = e.agent(&agents, "codex", &args, &[("STANDIN_KEY", "a-stand-in")]);
        (model.bodies(), model.declared(), self::text(&o))
    };
    fs::create_dir(e.home.join(".codex")).unwrap();
    fs::write(
        e.home.join(".codex/config.toml"),
        "model = \"gpt-5.5\"\nmodel_provider = \"standin\"\ncheck_for_update_on_startup = false\n\n\
         [model_providers.standin]\nname = \"stand-in\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\n\
         env_key = \"STANDIN_KEY\"\n\n[analytics]\nenabled = false\n",
    )
    .unwrap();
    // A project Codex trusts: setup writes its .codex/config.toml, which Codex reads there.
    let user = e.home.join(".codex/config.toml");
    let mut text = fs::read_to_string(&user).unwrap();
    text.push_str(&format!(
        "\n[projects.{}]\ntrust_level = \"trusted\"\n",
        json!(e.project.display().to_string())
    ));
    fs::write(&user, text).unwrap();
    e.multiedit(&["setup", "codex", "--route-edits"]);
    let project = fs::read_to_string(e.project.join(".codex/config.toml")).unwrap();
    assert!(
        project.contains("[mcp_servers.multiedit]")
            && project.contains("default_tools_approval_mode = \"approve\""),
        "{project}"
    );
    assert!(!fs::read_to_string(&user).unwrap().contains("mcp_servers"));

    let (bodies, declared, said) = run(&["--sandbox", "workspace-write"]);
    assert!(e.edited(), "workspace-write: the edit landed\n{said}");
    assert!(
        declared[0].iter().any(|t| t == "tool_search"),
        "{:?}",
        declared[0]
    );
    // Its tool search hands the model multiedit's tools.
    let searched = &bodies[1].1;
    for ours in [
        "\"multiedit\"",
        "\"multiedit_patch\"",
        "\"multiedit_write\"",
        "\"multiedit_read\"",
    ] {
        assert!(
            searched.contains(&format!("\"name\":{ours}")),
            "{ours}: {searched}"
        );
    }
    let last = &bodies.last().unwrap().1;
    assert!(last.contains(ON_DISK), "{last}");

    e.reset();
    let (bodies, _, said) = run(&["--sandbox", "read-only"]);
    assert!(!e.edited(), "read-only: nothing was written\n{said}");
    let last = &bodies.last().unwrap().1;
    assert!(
        last.contains("Codex runs this session in its read-only sandbox")
            && !last.contains(ON_DISK),
        "{last}"
    );
    timed("codex, two runs", t0);
}
