-- Neovim's answer to multiedit's `multiedit/save` request (docs/protocol.md, "Saving"): which buffers
-- hold unsaved changes before a plan's edit, and once it is applied, `:write` for the buffers multiedit
-- may save (its BufWritePre/BufWritePost autocommands run, a format-on-save plugin included), each
-- only while it is at the version the edit left it at. The result then tells an agent, per file,
-- whether its edit is on disk, where its tests, compiler and git look.
--
--   vim.opt.runtimepath:append('/path/to/multiedit/editors/nvim')
--   local save = require('multiedit.save')
--   vim.lsp.start({
--     name = 'multiedit',
--     cmd = { 'multiedit', 'lsp' },
--     root_dir = vim.fn.getcwd(),
--     capabilities = save.capabilities(),      -- announces experimental.multiedit.save
--     init_options = { save = 'clean' },       -- or 'all', 'never'
--     handlers = { ['multiedit/save'] = save.handler },
--   })
--
-- Works with Neovim 0.7 and later. A `:write` that asks a question (the file changed on disk since it
-- was read) waits for the user's answer; multiedit then reports the save as still running.

local buffers = require('multiedit.buffers')

local M = {}

-- The client capabilities (Neovim's defaults unless given) with multiedit's save announced.
function M.capabilities(capabilities)
  local caps = capabilities or vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.multiedit = vim.tbl_extend('force', caps.experimental.multiedit or {}, { save = true })
  return caps
end

local function save(file)
  local buf = buffers.loaded(file.uri)
  if not buf then
    -- Neovim edits a file it has not loaded by loading it; one that is not loaded was not edited here.
    local path = vim.uri_to_fname(file.uri)
    return { uri = file.uri, status = vim.fn.filereadable(path) == 1 and 'saved' or 'closed' }
  end
  if file.version ~= nil and file.version ~= vim.NIL and buffers.version(buf) ~= file.version then
    return { uri = file.uri, status = 'changed' }
  end
  if not vim.bo[buf].modified then
    return { uri = file.uri, status = 'saved', version = buffers.version(buf) }
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if vim.bo[buf].readonly or (vim.fn.filereadable(name) == 1 and vim.fn.filewritable(name) == 0) then
    return { uri = file.uri, status = 'readOnly' }
  end
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd('write')
  end)
  if not ok then
    return { uri = file.uri, status = 'failed', message = tostring(err) }
  end
  if vim.bo[buf].modified then
    return { uri = file.uri, status = 'failed', message = 'the buffer is still modified after :write' }
  end
  return { uri = file.uri, status = 'saved', version = buffers.version(buf) }
end

-- The handler for `multiedit/save` (Neovim answers a server request with what a handler returns).
function M.handler(_, params)
  if params.phase == 'before' then
    local unsaved = {}
    for _, uri in ipairs(params.uris or {}) do
      local buf = buffers.loaded(uri)
      if buf and vim.bo[buf].modified then
        table.insert(unsaved, uri)
      end
    end
    -- An empty Lua table would travel as {}, not []: an empty list is left out.
    return { unsaved = #unsaved > 0 and unsaved or nil }
  end
  local files = {}
  for _, file in ipairs(params.files or {}) do
    table.insert(files, save(file))
  end
  return { files = #files > 0 and files or nil }
end

return M
