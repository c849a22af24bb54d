//! A real third-party client: Neovim's built-in LSP client attaches `multiedit lsp`, runs
//! `multiedit.apply` on an open buffer with unsaved changes, and one `u` must undo the whole batch.
//!
//! Skipped (with a message) when `nvim` is not installed, except under CI=true, where it must run.

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const SCRIPT: &str = r#"
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

  local plan = {
    file_path = file,
    edits = {
      { old_string = 'line one', new_string = 'LINE ONE' },
      { old_string = 'two, unsaved', new_string = 'two, edited' },
      { old_string = 'line three', new_string = 'LINE THREE' },
    },
  }
  local done = false
  local function handler(e, r)
    results.error = e and (e.message or vim.inspect(e)) or nil
    results.message = r and r.message or nil
    done = true
  end
  local params = { command = 'multiedit.apply', arguments = { plan } }
  if vim.fn.has('nvim-0.11') == 1 then
    client:request('workspace/executeCommand', params, handler, buf)
  else
    client.request('workspace/executeCommand', params, handler, buf)
  end
  assert(vim.wait(15000, function() return done end, 20), 'no answer to multiedit.apply')
  undo_break()
  results.after = lines(buf)
  vim.cmd('normal! u')
  results.undone = lines(buf)
  results.modified = vim.bo[buf].modified
  vim.lsp.stop_client(client_id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
end)

results.ok = ok
if not ok then results.failure = tostring(err) end
local f = assert(io.open(out, 'w'))
f:write(vim.fn.json_encode(results))
f:close()
vim.cmd('qa!')
"#;

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap_or(&Vec::new()).iter().map(|l| l.as_str().unwrap_or("").to_string()).collect()
}

#[test]
fn neovim_applies_the_plan_as_one_undo_step() {
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if Command::new("nvim").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_err() {
        assert!(!in_ci, "CI=true but nvim is not installed: install Debian's neovim package");
        eprintln!("SKIPPED neovim_applies_the_plan_as_one_undo_step: nvim is not installed (apt-get install neovim)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("notes.txt");
    let on_disk = "😀 line one\nline two\nline three 🎉\n";
    fs::write(&file, on_disk).unwrap();
    let script = root.join("drive.lua");
    fs::write(&script, SCRIPT).unwrap();
    let out = root.join("results.json");

    let mut child = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("MULTIEDIT_BIN", env!("CARGO_BIN_EXE_multiedit"))
        .env("MULTIEDIT_FILE", &file)
        .env("MULTIEDIT_ROOT", &root)
        .env("MULTIEDIT_OUT", &out)
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nvim");
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let text = fs::read_to_string(&out).unwrap_or_else(|e| panic!("no results from nvim ({e}); stderr:\n{stderr}"));
    let r: Value = serde_json::from_str(&text).unwrap();
    eprintln!("nvim results: {r}");
    assert_eq!(r["ok"], true, "the script failed: {}\nstderr:\n{stderr}", r["failure"]);
    assert!(r["error"].is_null(), "multiedit.apply was refused: {}", r["error"]);

    let before = ["😀 line one", "line two, unsaved", "line three 🎉"];
    assert_eq!(strings(&r["before"]), before);
    assert_eq!(strings(&r["after"]), ["😀 LINE ONE", "line two, edited", "LINE THREE 🎉"], "the buffer after the command");
    assert!(r["message"].as_str().is_some_and(|m| m.starts_with("Applied 3 edits to")), "{}", r["message"]);
    assert_eq!(strings(&r["undone"]), before, "one `u` undoes the whole batch and only it");
    assert_eq!(r["modified"], true, "the unsaved change is still there");
    assert_eq!(fs::read_to_string(&file).unwrap(), on_disk, "the editor, not the server, owns the buffer");
}
