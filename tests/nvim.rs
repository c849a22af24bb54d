//! A real third-party client: Neovim's built-in LSP client attaches `multiedit lsp`, runs
//! `multiedit.apply` on an open buffer with unsaved changes, and one `u` must undo the whole batch.
//!
//! Skipped (with a message) when `nvim` is not installed, except under CI=true, where it must run.

use crate::support::nvim as nvim_support;

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
    assert!(
        r["error"].is_null(),
        "multiedit.apply was refused: {}",
        r["error"]
    );
    assert!(
        r["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Applied 3 edits to")),
        "{}",
        r["message"]
    );
    nvim_support::assert_one_undo_step(&r, &file);
}

/// A C++ file with an error already in it (line 3) and a call that the plans break and fix (line 5,
/// after a non-ASCII character: columns go from Neovim's bytes through UTF-16 to characters).
const CALC_CPP: &str = "int add(int a, int b) { return a + b; }\n\nint already = \"not a number\";\n\nint total() { /* ü */ return add(1, 2); }\n";

const DIAGNOSTICS_SCRIPT: &str = r#"
local bin, file, root, out = os.getenv('MULTIEDIT_BIN'), os.getenv('MULTIEDIT_FILE'),
  os.getenv('MULTIEDIT_ROOT'), os.getenv('MULTIEDIT_OUT')
local results = {}
RECORDED_LUA_MARK
local function ms(t) return (vim.loop.hrtime() - t) / 1e6 end

local ok, err = pcall(function()
  -- As a user's configuration does it: the handler from editors/nvim on the runtimepath.
  vim.opt.runtimepath:append(os.getenv('MULTIEDIT_NVIM_RUNTIME'))
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local clangd = vim.lsp.start_client({ name = 'clangd', cmd = { 'clangd' }, root_dir = root })
  vim.lsp.buf_attach_client(buf, clangd)
  assert(vim.wait(60000, function()
    return #vim.diagnostic.get(buf, { severity = vim.diagnostic.severity.ERROR }) > 0
  end, 50), 'clangd published no error for the file')
  results.errors_before = vim.tbl_map(function(d) return d.message end, vim.diagnostic.get(buf))

  local initialized = false
  local id = vim.lsp.start_client({
    name = 'multiedit',
    cmd = { bin, 'lsp' },
    root_dir = root,
    init_options = { diagnostics = { settleMs = 20000 } },
    handlers = recorded({ ['multiedit/diagnostics'] = require('multiedit.diagnostics').handler }),
    on_init = function() initialized = true end,
  })
  vim.lsp.buf_attach_client(buf, id)
  assert(vim.wait(15000, function() return initialized end, 20), 'multiedit did not initialize')
  local client = vim.lsp.get_client_by_id(id)

  local function apply(plan, on_buf)
    local done, e, r = false, nil, nil
    client.request('workspace/executeCommand', { command = 'multiedit.apply', arguments = { plan } },
      function(er, res) e, r, done = er, res, true end, on_buf)
    assert(vim.wait(60000, function() return done end, 10), 'no answer to multiedit.apply')
    assert(not e, e and e.message)
    return r
  end

  local t = vim.loop.hrtime()
  local r = apply({ file_path = file, edits = { { old_string = 'add(1, 2)', new_string = 'add(1, "2")' } } }, buf)
  results.broken = { text = r.diagnostics_text, diagnostics = r.diagnostics, ms = ms(t) }
  t = vim.loop.hrtime()
  r = apply({ file_path = file, edits = { { old_string = 'add(1, "2")', new_string = 'add(1, 2)' } } }, buf)
  results.fixed = { text = r.diagnostics_text, ms = ms(t) }
  results.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  -- A buffer no language server checks: no wait.
  local notes = root .. '/notes.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(notes))
  local nbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(nbuf, id)
  t = vim.loop.hrtime()
  r = apply({ file_path = notes, edits = { { old_string = 'plain', new_string = 'PLAIN' } } }, nbuf)
  results.plain = { text = r.diagnostics_text, ms = ms(t) }
  vim.lsp.stop_client(id)
  vim.lsp.stop_client(clangd)
end)
"#;

#[test]
fn neovim_reports_the_errors_a_plan_introduced_and_resolved_with_clangd() {
    if !nvim_support::available_with_clangd(
        "neovim_reports_the_errors_a_plan_introduced_and_resolved_with_clangd",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("calc.cpp");
    std::fs::write(&file, CALC_CPP).unwrap();
    std::fs::write(root.join("notes.txt"), "plain text\n").unwrap();
    let runtime = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/nvim");
    let r = nvim_support::run(
        &root,
        &format!("{DIAGNOSTICS_SCRIPT}{}", nvim_support::FINISH),
        &file,
        &[("MULTIEDIT_NVIM_RUNTIME", &runtime)],
    )
    .results();
    eprintln!(
        "multiedit.apply round trips with diagnostics: broken {} ms, fixed {} ms, plain text {} ms",
        r["broken"]["ms"], r["fixed"]["ms"], r["plain"]["ms"]
    );
    assert!(
        r["errors_before"].to_string().contains("already")
            || r["errors_before"].to_string().contains("initialize"),
        "{}",
        r["errors_before"]
    );

    let broken = r["broken"]["text"].as_str().unwrap_or_default();
    assert!(broken.starts_with("New errors: calc.cpp:5:30 "), "{broken}");
    assert!(
        broken.contains("No matching function for call to 'add'"),
        "{broken}"
    );
    assert!(
        !broken.contains("calc.cpp:3:"),
        "the error already on line 3 is not reported: {broken}"
    );
    let introduced = &r["broken"]["diagnostics"]["introduced"];
    assert_eq!(introduced.as_array().map(Vec::len), Some(1), "{introduced}");
    assert_eq!(
        (
            introduced[0]["line"].as_u64(),
            introduced[0]["column"].as_u64()
        ),
        (Some(5), Some(30))
    );
    assert_eq!(introduced[0]["severity"], "error");

    let fixed = r["fixed"]["text"].as_str().unwrap_or_default();
    assert!(
        fixed.starts_with("No new errors.\nResolved: calc.cpp:5:30 "),
        "{fixed}"
    );
    assert!(
        fixed.contains("No matching function for call to 'add'"),
        "{fixed}"
    );
    assert_eq!(
        nvim_support::strings(&r["lines"]).join("\n") + "\n",
        CALC_CPP,
        "broken then fixed: the text is back"
    );

    assert_eq!(
        r["plain"]["text"],
        "No diagnostics for notes.txt: no language server checks it."
    );
    assert!(
        r["plain"]["ms"].as_f64().unwrap() < 2000.0,
        "not waited for: {} ms",
        r["plain"]["ms"]
    );
}

const SAVE_SCRIPT: &str = r#"
local bin, file, root, out = os.getenv('MULTIEDIT_BIN'), os.getenv('MULTIEDIT_FILE'),
  os.getenv('MULTIEDIT_ROOT'), os.getenv('MULTIEDIT_OUT')
local results = {}
RECORDED_LUA_MARK

local ok, err = pcall(function()
  vim.opt.runtimepath:append(os.getenv('MULTIEDIT_NVIM_RUNTIME'))
  local save = require('multiedit.save')
  local clean = root .. '/clean.txt'
  vim.cmd('edit ' .. vim.fn.fnameescape(clean))
  local cbuf = vim.api.nvim_get_current_buf()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  -- The user's unsaved change.
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { 'mine, unsaved' })

  local initialized = false
  local id = vim.lsp.start_client({
    name = 'multiedit',
    cmd = { bin, 'lsp' },
    root_dir = root,
    capabilities = save.capabilities(),
    handlers = recorded({ ['multiedit/save'] = save.handler }),
    on_init = function() initialized = true end,
  })
  vim.lsp.buf_attach_client(buf, id)
  vim.lsp.buf_attach_client(cbuf, id)
  assert(vim.wait(15000, function() return initialized end, 20), 'multiedit did not initialize')
  local client = vim.lsp.get_client_by_id(id)
  local done, e, r = false, nil, nil
  local plan = { files = {
    { file_path = clean, edits = { { old_string = 'clean', new_string = 'CLEAN' } } },
    { file_path = file, edits = { { old_string = 'second', new_string = 'SECOND' } } },
  } }
  client.request('workspace/executeCommand', { command = 'multiedit.apply', arguments = { plan } },
    function(er, res) e, r, done = er, res, true end, buf)
  assert(vim.wait(30000, function() return done end, 10), 'no answer to multiedit.apply')
  assert(not e, e and e.message)
  results.on_disk = { r.files[1].on_disk, r.files[2].on_disk }
  results.text = r.on_disk_text
  results.clean_modified = vim.bo[cbuf].modified
  results.modified = vim.bo[buf].modified
  results.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  vim.lsp.stop_client(id)
end)
"#;

/// Neovim saves the buffer that had nothing unsaved (with `:write`), leaves the one with the user's
/// unsaved change alone, and the result says which edit is on disk.
#[test]
fn neovim_saves_the_clean_buffer_and_not_the_users_unsaved_one() {
    if !nvim_support::available("neovim_saves_the_clean_buffer_and_not_the_users_unsaved_one") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("mine.txt");
    std::fs::write(&file, "first\nsecond\n").unwrap();
    std::fs::write(root.join("clean.txt"), "clean text\n").unwrap();
    let runtime = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/nvim");
    let r = nvim_support::run(
        &root,
        &format!("{SAVE_SCRIPT}{}", nvim_support::FINISH),
        &file,
        &[("MULTIEDIT_NVIM_RUNTIME", &runtime)],
    )
    .results();
    assert_eq!(r["on_disk"], serde_json::json!(["saved", "user_changes"]));
    assert_eq!(
        std::fs::read_to_string(root.join("clean.txt")).unwrap(),
        "CLEAN text\n",
        ":write put the edit on disk"
    );
    assert_eq!(r["clean_modified"], false);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "first\nsecond\n",
        "the user's unsaved text is not written"
    );
    assert_eq!(
        nvim_support::strings(&r["lines"]),
        ["mine, unsaved", "SECOND"]
    );
    assert_eq!(r["modified"], true);
    assert_eq!(
        r["text"],
        "Saved: clean.txt.\nmine.txt has unsaved changes of the user's in the editor, so this edit is not on disk yet: tests, \
         compilers and git will not see it until the file is saved."
    );
}

const CALC_C: &str = "int add(int a, int b) {\n  return a + b;\n}\n\nint twice(int x) {\n  return add(x, x);\n}\n\nint main(void) {\n  return twice(2);\n}\n";
const OVERLOADS_CPP: &str = "int pick(int a) { return a; }\ndouble pick(double a) { return a; }\n";

const SYMBOLS_SCRIPT: &str = r#"
local bin, file, root, out = os.getenv('MULTIEDIT_BIN'), os.getenv('MULTIEDIT_FILE'),
  os.getenv('MULTIEDIT_ROOT'), os.getenv('MULTIEDIT_OUT')
local results = {}
RECORDED_LUA_MARK
local function ms(t) return (vim.loop.hrtime() - t) / 1e6 end
results.asked = {}

local ok, err = pcall(function()
  vim.opt.runtimepath:append(os.getenv('MULTIEDIT_NVIM_RUNTIME'))
  local symbols = require('multiedit.symbols')
  local clangd = vim.lsp.start_client({ name = 'clangd', cmd = { 'clangd' }, root_dir = root })
  local initialized = false
  local id = vim.lsp.start_client({
    name = 'multiedit',
    cmd = { bin, 'lsp' },
    root_dir = root,
    capabilities = symbols.capabilities(),
    handlers = vim.tbl_extend('force', recorded(symbols.handlers), {
      -- The server logs how long each answer took (the figures in docs/performance.md).
      ['window/logMessage'] = function(_, m)
        if m.message:find('from the editor in') then table.insert(results.asked, m.message) end
      end,
    }),
    on_init = function() initialized = true end,
  })
  local function open(path)
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    vim.lsp.buf_attach_client(buf, clangd)
    vim.lsp.buf_attach_client(buf, id)
    return buf
  end
  local buf = open(file)
  local cpp = open(root .. '/overloads.cpp')
  assert(vim.wait(15000, function() return initialized end, 20), 'multiedit did not initialize')
  local client = vim.lsp.get_client_by_id(id)
  -- clangd has parsed the file once it gives its symbols.
  assert(vim.wait(60000, function()
    local r = vim.lsp.get_client_by_id(clangd).request_sync('textDocument/documentSymbol', { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 5000, buf)
    return r and r.result and #r.result == 3
  end, 200), 'clangd gave no symbols')

  local function run(plan, on_buf)
    local done, e, r = false, nil, nil
    client.request('workspace/executeCommand', { command = 'multiedit.apply', arguments = { plan } },
      function(er, res) e, r, done = er, res, true end, on_buf)
    assert(vim.wait(60000, function() return done end, 10), 'no answer to multiedit.apply')
    return { error = e and { message = e.message, kind = e.data and e.data.kind, hint = e.data and e.data.hint } or nil, message = r and r.message, rename = r and r.rename }
  end

  local t = vim.loop.hrtime()
  results.body = run({ file_path = file, edits = {
    { symbol = 'add', replace = 'body', new_string = 'return b + a;' },
    { symbol = 'twice', insert = 'after', new_string = '\nint thrice(int x) {\n  return add(x, twice(x));\n}' },
  } }, buf)
  results.body.ms = ms(t)
  results.after_body = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  t = vim.loop.hrtime()
  results.rename = run({ rename = { file_path = file, symbol = 'twice', new_name = 'double_it' } }, buf)
  results.rename.ms = ms(t)
  results.after_rename = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  results.ambiguous = run({ file_path = root .. '/overloads.cpp', edits = { { symbol = 'pick', replace = 'body', new_string = 'return -a;' } } }, cpp)
  results.cpp = vim.api.nvim_buf_get_lines(cpp, 0, -1, false)
  vim.lsp.stop_client(id)
  vim.lsp.stop_client(clangd)
end)
"#;

/// Neovim with clangd: a C function's body replaced and a function inserted after another by symbol,
/// a rename through clangd, and C++ overloads refused as ambiguous with each one's line.
#[test]
fn neovim_edits_c_by_symbol_and_renames_through_clangd() {
    if !nvim_support::available_with_clangd("neovim_edits_c_by_symbol_and_renames_through_clangd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("calc.c");
    std::fs::write(&file, CALC_C).unwrap();
    std::fs::write(root.join("overloads.cpp"), OVERLOADS_CPP).unwrap();
    let runtime = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/nvim");
    let r = nvim_support::run(
        &root,
        &format!("{SYMBOLS_SCRIPT}{}", nvim_support::FINISH),
        &file,
        &[("MULTIEDIT_NVIM_RUNTIME", &runtime)],
    )
    .results();
    eprintln!(
        "multiedit.apply with clangd in Neovim: body and insert {} ms, rename {} ms; {}",
        r["body"]["ms"], r["rename"]["ms"], r["asked"]
    );
    assert!(
        r["asked"].to_string().contains("symbols of")
            && r["asked"].to_string().contains("rename in"),
        "the server logs what it asked: {}",
        r["asked"]
    );
    assert!(r["body"]["error"].is_null(), "{}", r["body"]["error"]);
    assert_eq!(
        r["body"]["message"],
        format!("Applied 2 edits to {}:\n1. Replaced the body of function add (lines 1-3)\n2. Inserted after function twice (lines 5-7)", file.display())
    );
    let with_body = "int add(int a, int b) {\n  return b + a;\n}\n\nint twice(int x) {\n  return add(x, x);\n}\n\nint thrice(int x) {\n  return add(x, twice(x));\n}\n\nint main(void) {\n  return twice(2);\n}";
    assert_eq!(
        nvim_support::strings(&r["after_body"]).join("\n"),
        with_body
    );
    assert!(r["rename"]["error"].is_null(), "{}", r["rename"]["error"]);
    assert_eq!(
        r["rename"]["message"],
        format!("Renamed twice to double_it: 3 occurrences in 1 file.\n\nApplied 1 edit to {}:\n- Renamed twice to double_it (3 occurrences)", file.display())
    );
    assert_eq!(r["rename"]["rename"]["occurrences"], 3);
    assert_eq!(
        nvim_support::strings(&r["after_rename"]).join("\n"),
        with_body.replace("twice", "double_it")
    );
    assert_eq!(r["ambiguous"]["error"]["kind"], "symbol_ambiguous");
    assert_eq!(
        r["ambiguous"]["error"]["message"],
        format!(
            "Found 2 symbols named pick in {}, but a symbol edit must name one: name it by its place among them (pick[0] is the \
             first in the file).\nSymbol: pick",
            root.join("overloads.cpp").display()
        )
    );
    assert_eq!(r["ambiguous"]["error"]["hint"], "The symbols it names:\npick[0]: function (line 1): int (int)\npick[1]: function (line 2): double (double)");
    assert_eq!(
        nvim_support::strings(&r["cpp"]).join("\n") + "\n",
        OVERLOADS_CPP
    );
    assert_eq!(
        std::fs::read_to_string(root.join("overloads.cpp")).unwrap(),
        OVERLOADS_CPP
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        CALC_C,
        "the buffers are Neovim's to save"
    );
}

const APPROVE_SCRIPT: &str = r#"
local bin, file, root, out = os.getenv('MULTIEDIT_BIN'), os.getenv('MULTIEDIT_FILE'),
  os.getenv('MULTIEDIT_ROOT'), os.getenv('MULTIEDIT_OUT')
local results = { asked = {} }
RECORDED_LUA_MARK

local ok, err = pcall(function()
  vim.opt.runtimepath:append(os.getenv('MULTIEDIT_NVIM_RUNTIME'))
  local approve = require('multiedit.approve')
  -- The user's answers, in turn; each question and diff recorded.
  local answers = { 'discard', 'apply' }
  approve.ask = function(question, diff)
    table.insert(results.asked, { question = question, diff = diff })
    return table.remove(answers, 1)
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local initialized = false
  local id = vim.lsp.start_client({
    name = 'multiedit',
    cmd = { bin, 'lsp' },
    root_dir = root,
    capabilities = approve.capabilities(),
    handlers = recorded({ ['multiedit/approve'] = approve.handler }),
    on_init = function() initialized = true end,
  })
  vim.lsp.buf_attach_client(buf, id)
  assert(vim.wait(15000, function() return initialized end, 20), 'multiedit did not initialize')
  local client = vim.lsp.get_client_by_id(id)
  local function run(plan, options)
    local done, e, r = false, nil, nil
    client.request('workspace/executeCommand', { command = 'multiedit.apply', arguments = { plan, options } },
      function(er, res) e, r, done = er, res, true end, buf)
    assert(vim.wait(30000, function() return done end, 10), 'no answer to multiedit.apply')
    return { kind = e and e.data and e.data.kind, message = e and e.message or r.message }
  end
  local plan = { file_path = file, edits = { { old_string = '"deny": ["Bash"]', new_string = '"allow": ["Bash(*)"]' } } }
  results.discarded = run(plan, { agent = 'Claude Code' })
  results.after_discard = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  results.applied = run(plan, { agent = 'Claude Code' })
  results.after_apply = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  vim.lsp.stop_client(id)
end)
"#;

/// Neovim asks the user once, with the diff and the reason, before an agent's plan changes Claude
/// Code's settings; Discard applies nothing, Apply All applies it.
#[test]
fn neovim_asks_before_an_agent_changes_its_own_permissions() {
    if !nvim_support::available("neovim_asks_before_an_agent_changes_its_own_permissions") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".claude")).unwrap();
    let file = root.join(".claude/settings.json");
    std::fs::write(&file, "{\"permissions\": {\"deny\": [\"Bash\"]}}\n").unwrap();
    let runtime = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/nvim");
    let r = nvim_support::run(
        &root,
        &format!("{APPROVE_SCRIPT}{}", nvim_support::FINISH),
        &file,
        &[("MULTIEDIT_NVIM_RUNTIME", &runtime)],
    )
    .results();
    let question = "MultiEdit: Claude Code wants to apply 1 edit to 1 file. This change writes \
                    .claude/settings.json, which holds Claude Code's settings, permissions, hooks and agents. An \
                    agent may not change such a file without you: it decides what it and the editor may run.";
    assert_eq!(r["asked"][0]["question"], question);
    assert_eq!(r["asked"][1]["question"], question);
    let diff = r["asked"][0]["diff"].as_str().unwrap();
    assert!(
        diff.contains("-{\"permissions\": {\"deny\": [\"Bash\"]}}\n+{\"permissions\": {\"allow\": [\"Bash(*)\"]}}"),
        "{diff}"
    );
    assert_eq!(r["discarded"]["kind"], "declined");
    assert_eq!(
        nvim_support::strings(&r["after_discard"]),
        ["{\"permissions\": {\"deny\": [\"Bash\"]}}"]
    );
    assert_eq!(
        nvim_support::strings(&r["after_apply"]),
        ["{\"permissions\": {\"allow\": [\"Bash(*)\"]}}"]
    );
}
