//! Driving headless Neovim in tests: a Lua script opens a file, changes it without saving, attaches
//! `multiedit lsp` with Neovim's built-in client, lets a test-specific middle hand a plan over,
//! then records the buffer, presses `u` once and records it again, all into a JSON file.
//!
//! Skipped (with a message) when `nvim` is not installed, except under CI=true, where it must run.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The file as it is on disk; the script changes line two in the buffer only.
pub const ON_DISK: &str = "😀 line one\nline two\nline three 🎉\n";
pub const BEFORE: [&str; 3] = ["😀 line one", "line two, unsaved", "line three 🎉"];
pub const AFTER: [&str; 3] = ["😀 LINE ONE", "line two, edited", "LINE THREE 🎉"];

const HEAD: &str = r#"
local bin, file, root, out = os.getenv('MULTIEDIT_BIN'), os.getenv('MULTIEDIT_FILE'),
  os.getenv('MULTIEDIT_ROOT'), os.getenv('MULTIEDIT_OUT')
local results = {}

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function undo_break()
  -- Setting 'undolevels' to itself closes the current undo block.
  vim.cmd('let &undolevels = &undolevels')
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  -- An unsaved change that the plan depends on.
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'line two, unsaved' })
  undo_break()
  results.before = lines(buf)

  local initialized = false
  local config = {
    name = 'multiedit',
    cmd = { bin, 'lsp' },
    root_dir = root,
    on_init = function() initialized = true end,
  }
  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config)
  else
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(buf, client_id)
  end
  assert(client_id, 'the client did not start')
  assert(vim.wait(15000, function() return initialized end, 20), 'the server did not initialize')
  local client = vim.lsp.get_client_by_id(client_id)
  results.encoding = client.offset_encoding
"#;

const TAIL: &str = r#"
  undo_break()
  results.after = lines(buf)
  vim.cmd('normal! u')
  results.undone = lines(buf)
  results.modified = vim.bo[buf].modified
  vim.lsp.stop_client(client_id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
end)
"#;

/// The end of every script: `ok`, `err` (from the pcall around its work) and `results` written to
/// `MULTIEDIT_OUT` (`out`), then Neovim quits.
pub const FINISH: &str = r#"
results.ok = ok
if not ok then results.failure = tostring(err) end
local f = assert(io.open(out, 'w'))
f:write(vim.fn.json_encode(results))
f:close()
vim.cmd('qa!')
"#;

/// Put in a script where it has made `results`: `recorded(handlers)` wraps each of multiedit's handlers
/// so that every answer it gives is kept in `results.answers`, which `Nvim::results` checks against
/// the server's own wire types.
const RECORDED: &str = r#"
results.answers = {}
local function recorded(handlers)
  local out = {}
  for method, handler in pairs(handlers) do
    out[method] = function(err, params, ctx)
      local answer = handler(err, params, ctx)
      table.insert(results.answers, { method = method, answer = answer })
      return answer
    end
  end
  return out
end
"#;

/// Each answer a Neovim handler gave (`results.answers`) has the shape of the server's type for it
/// (`multiedit::protocol::ext`): read into that type and written back, it is the same JSON, so a field the
/// type lacks, one of the wrong type, or an entry a lenient reading would skip fails the test.
pub fn check_answers(r: &Value) {
    use multiedit::protocol::ext::{
        ApproveAnswer, DiagnosticsAnswer, RenameAnswer, SaveAnswer, SymbolsAnswer,
    };
    fn same<T: serde::de::DeserializeOwned + serde::Serialize>(method: &str, answer: &Value) {
        let typed: T = serde_json::from_value(answer.clone()).unwrap_or_else(|e| {
            panic!("Neovim's answer to {method} is not the server's type ({e}): {answer}")
        });
        assert_eq!(
            bare(&serde_json::to_value(typed).unwrap()),
            bare(answer),
            "Neovim's answer to {method}, read as the server's type and written back"
        );
    }
    /// `v` without members that say nothing (`[]`, `null`), which a type may leave out when it writes.
    fn bare(v: &Value) -> Value {
        match v {
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(_, x)| !x.is_null() && x.as_array().is_none_or(|a| !a.is_empty()))
                    .map(|(k, x)| (k.clone(), bare(x)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(bare).collect()),
            other => other.clone(),
        }
    }
    for a in r["answers"].as_array().into_iter().flatten() {
        let (method, answer) = (a["method"].as_str().unwrap_or_default(), &a["answer"]);
        match method {
            "multiedit/approve" => same::<ApproveAnswer>(method, answer),
            "multiedit/save" => same::<SaveAnswer>(method, answer),
            "multiedit/diagnostics" => same::<DiagnosticsAnswer>(method, answer),
            "multiedit/symbols" => same::<SymbolsAnswer>(method, answer),
            "multiedit/rename" => same::<RenameAnswer>(method, answer),
            other => panic!("an answer to {other}, which multiedit does not send"),
        }
    }
}

/// Whether the test can run; says why not when it cannot.
pub fn available(test: &str) -> bool {
    installed("nvim", "neovim", test)
}

/// Whether both Neovim and clangd (a language server that works offline) are installed.
pub fn available_with_clangd(test: &str) -> bool {
    available(test) && installed("clangd", "clangd", test)
}

/// Whether `program` runs; if not, the test is skipped, and under CI=true (where .ci/run installs
/// Debian's `package`) it fails.
fn installed(program: &str, package: &str, test: &str) -> bool {
    if Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
    {
        return true;
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| v == "true"),
        "CI=true but {program} is not installed: install Debian's {package} package"
    );
    eprintln!("SKIPPED {test}: {program} is not installed (apt-get install {package})");
    false
}

pub struct Nvim {
    child: Child,
    pub file: PathBuf,
    out: PathBuf,
}

/// Starts Neovim on `root/notes.txt` (written as `ON_DISK`), running the script with `middle` (Lua
/// with `buf`, `client`, `results` in scope) between attaching the server and the undo. `env` is
/// passed to Neovim and so to the server.
pub fn start(root: &Path, middle: &str, env: &[(&str, &Path)]) -> Nvim {
    let file = root.join("notes.txt");
    fs::write(&file, ON_DISK).unwrap();
    run(root, &format!("{HEAD}{middle}{TAIL}{FINISH}"), &file, env)
}

/// Runs a whole Lua script in headless Neovim, with `MULTIEDIT_BIN`, `MULTIEDIT_FILE`, `MULTIEDIT_ROOT`
/// and `MULTIEDIT_OUT` (where it writes its results as JSON, see `FINISH`) set, and `env`.
pub fn run(root: &Path, script_text: &str, file: &Path, env: &[(&str, &Path)]) -> Nvim {
    let script = root.join("drive.lua");
    fs::write(&script, script_text.replace("RECORDED_LUA_MARK", RECORDED)).unwrap();
    let out = root.join("results.json");
    let mut cmd = Command::new("nvim");
    cmd.args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("MULTIEDIT_BIN", env!("CARGO_BIN_EXE_multiedit"))
        .env("MULTIEDIT_FILE", file)
        .env("MULTIEDIT_ROOT", root)
        .env("MULTIEDIT_OUT", &out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nvim");
    Nvim {
        child,
        file: file.to_path_buf(),
        out,
    }
}

impl Nvim {
    /// Whether the script has finished (written its results).
    pub fn finished(&self) -> bool {
        self.out.exists()
    }

    /// Waits for Neovim to quit and returns the script's results, checking that it ran to the end.
    pub fn results(mut self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(90);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("nvim did not finish within 90 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let output = self.child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let text = fs::read_to_string(&self.out)
            .unwrap_or_else(|e| panic!("no results from nvim ({e}); stderr:\n{stderr}"));
        let r: Value = serde_json::from_str(&text).unwrap();
        eprintln!("nvim results: {r}");
        assert_eq!(
            r["ok"], true,
            "the script failed: {}\nstderr:\n{stderr}",
            r["failure"]
        );
        check_answers(&r);
        r
    }
}

/// Checks the buffer before, after the plan, and after one `u`, and that the disk was left alone.
pub fn assert_one_undo_step(r: &Value, file: &Path) {
    assert_eq!(strings(&r["before"]), BEFORE);
    assert_eq!(strings(&r["after"]), AFTER, "the buffer after the plan");
    assert_eq!(
        strings(&r["undone"]),
        BEFORE,
        "one `u` undoes the whole batch and only it"
    );
    assert_eq!(r["modified"], true, "the unsaved change is still there");
    assert_eq!(
        fs::read_to_string(file).unwrap(),
        ON_DISK,
        "the editor, not the server, owns the buffer"
    );
}

pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|l| l.as_str().unwrap_or("").to_string())
        .collect()
}

/// The plan both tests hand over, as Lua and as JSON.
pub const PLAN_EDITS: [(&str, &str); 3] = [
    ("line one", "LINE ONE"),
    ("two, unsaved", "two, edited"),
    ("line three", "LINE THREE"),
];
