-- Neovim's answer to multiedit's `multiedit/diagnostics` request (docs/protocol.md, "Diagnostics"):
-- the diagnostics of the edited buffers before a plan's edit, and once the other language servers
-- have published for the new text. multiedit then tells the caller which errors the edit introduced
-- and which it resolved.
--
--   vim.opt.runtimepath:append('/path/to/multiedit/editors/nvim')
--   vim.lsp.start_client({                    -- or vim.lsp.start on Neovim 0.10+
--     name = 'multiedit',
--     cmd = { 'multiedit', 'lsp' },
--     root_dir = vim.fn.getcwd(),
--     init_options = { diagnostics = { report = 'errors', settleMs = 2000 } },
--     handlers = { ['multiedit/diagnostics'] = require('multiedit.diagnostics').handler },
--   })
--
-- Works with Neovim 0.7 and later. A buffer counts as checked when another language server is
-- attached to it; a buffer with none is answered as unchecked and not waited for. A checked buffer
-- is settled 60 ms after its diagnostics last changed (see M.idle_ms for servers that stay silent).

local buffers = require('multiedit.buffers')

local M = {}

-- A buffer is settled this long after its last diagnostics change (a server may publish twice).
M.quiet_ms = 60
-- Language servers republish a document's diagnostics after each change (clangd does, empty or not),
-- so a buffer waits for that. For a server that stays silent when nothing changed, set this: a buffer
-- whose diagnostics do not change this long after the edit is then taken as unchanged.
M.idle_ms = nil

local uv = vim.uv or vim.loop
local changed = {} -- buffer -> hrtime of its last DiagnosticChanged
local started = nil -- hrtime of the last "before"
local autocmd = nil

local function ms_since(t)
  return (uv.hrtime() - t) / 1e6
end

-- vim.diagnostic columns are bytes; the request speaks the multiedit client's position encoding.
local function column(buf, lnum, col, encoding)
  if encoding == 'utf-8' then
    return col
  end
  local line = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or ''
  col = math.min(col, #line)
  if vim.fn.has('nvim-0.11') == 1 then
    local ok, n = pcall(vim.str_utfindex, line, encoding, col, false)
    return ok and n or col
  end
  local ok, utf32, utf16 = pcall(vim.str_utfindex, line, col)
  if not ok then
    return col
  end
  return encoding == 'utf-32' and utf32 or utf16
end

local function to_lsp(buf, d, encoding)
  local end_lnum = d.end_lnum or d.lnum
  local item = {
    range = {
      start = { line = d.lnum, character = column(buf, d.lnum, d.col, encoding) },
      ['end'] = { line = end_lnum, character = column(buf, end_lnum, d.end_col or d.col, encoding) },
    },
    severity = d.severity,
    source = d.source,
    message = d.message,
  }
  local lsp = type(d.user_data) == 'table' and d.user_data.lsp or nil
  local code = d.code or (lsp and lsp.code)
  if code ~= nil then
    item.code = code
  end
  return item
end

local function snapshot(uris, encoding)
  local out = {}
  for _, uri in ipairs(uris) do
    local list = {}
    local buf = buffers.loaded(uri)
    if buf then
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        table.insert(list, to_lsp(buf, d, encoding))
      end
    end
    out[uri] = list
  end
  return out
end

-- Another language server attached to the buffer will check it again after the edit.
local function checked(buf, self_id)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.buf_get_clients(buf)
  for _, client in pairs(clients) do
    if client.id ~= self_id then
      return true
    end
  end
  return false
end

function M.handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local uris = type(params) == 'table' and params.uris or {}
  if params.phase ~= 'after' then
    changed, started = {}, uv.hrtime()
    if not autocmd then
      autocmd = vim.api.nvim_create_autocmd('DiagnosticChanged', {
        callback = function(args)
          changed[args.buf] = uv.hrtime()
        end,
      })
    end
    return { diagnostics = snapshot(uris, encoding) }
  end

  local since = started or uv.hrtime()
  local waiting, unchecked = {}, {}
  for _, uri in ipairs(uris) do
    local buf = buffers.loaded(uri)
    if buf and checked(buf, ctx.client_id) then
      waiting[uri] = buf
    else
      table.insert(unchecked, uri)
    end
  end
  local function settled()
    for _, buf in pairs(waiting) do
      if changed[buf] then
        if ms_since(changed[buf]) < M.quiet_ms then
          return false
        end
      elseif not M.idle_ms or ms_since(since) < M.idle_ms then
        return false
      end
    end
    return true
  end
  local left = (params.settleMs or 2000) - ms_since(since)
  if left > 0 then
    vim.wait(left, settled, 10)
  end
  local pending, quiet, last = {}, {}, nil
  for uri, buf in pairs(waiting) do
    local at = changed[buf]
    if not at then
      table.insert((M.idle_ms and ms_since(since) >= M.idle_ms) and quiet or pending, uri)
    elseif not last or at > last then
      last = at
    end
  end
  return {
    diagnostics = snapshot(uris, encoding),
    pending = pending,
    quiet = quiet,
    unchecked = unchecked,
    waitedMs = math.floor(ms_since(since)),
    publishedMs = last and math.floor((last - since) / 1e6) or nil,
  }
end

return M
