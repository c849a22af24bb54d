//! A real third-party client: Neovim's built-in LSP client attaches `multiedit lsp`, runs
//! `multiedit.apply` on an open buffer with unsaved changes, and one `u` must undo the whole batch.
//!
//! Skipped (with a message) when `nvim` is not installed, except under CI=true, where it must run.

#[path = "nvim_support/mod.rs"]
mod nvim_support;

const MIDDLE: &str = r#"
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
"#;

#[test]
fn neovim_applies_the_plan_as_one_undo_step() {
    if !nvim_support::available("neovim_applies_the_plan_as_one_undo_step") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let nvim = nvim_support::start(&root, MIDDLE, &[]);
    let file = nvim.file.clone();
    let r = nvim.results();
    assert!(r["error"].is_null(), "multiedit.apply was refused: {}", r["error"]);
    assert!(r["message"].as_str().is_some_and(|m| m.starts_with("Applied 3 edits to")), "{}", r["message"]);
    nvim_support::assert_one_undo_step(&r, &file);
}
