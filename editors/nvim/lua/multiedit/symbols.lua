-- Neovim's answers to multiedit's `multiedit/symbols` and `multiedit/rename` (docs/protocol.md,
-- "Symbols and renames"): a document's symbols, and a rename's WorkspaceEdit (unapplied), from the
-- other language servers attached to the buffer. multiedit then applies plans that address code by
-- symbol, and renames, as one change with the plan's other edits.
--
--   vim.opt.runtimepath:append('/path/to/multiedit/editors/nvim')
--   local symbols = require('multiedit.symbols')
--   vim.lsp.start_client({                    -- or vim.lsp.start on Neovim 0.10+
--     name = 'multiedit',
--     cmd = { 'multiedit', 'lsp' },
--     root_dir = vim.fn.getcwd(),
--     capabilities = symbols.capabilities(),  -- announces experimental.multiedit.symbols and .rename
--     handlers = symbols.handlers,
--   })
--
-- Works with Neovim 0.7 and later. Positions are converted between each server's encoding and the one
-- multiedit negotiated. A buffer multiedit is not attached to is read from disk by multiedit: the
-- rename's edits for it are only right if it holds no unsaved change.

local buffers = require('multiedit.buffers')

local M = {}

-- How long a language server may take to answer.
M.timeout_ms = 10000

-- The client capabilities (Neovim's defaults unless given) with multiedit's symbols and rename announced.
function M.capabilities(capabilities)
  local caps = capabilities or vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.multiedit = vim.tbl_extend('force', caps.experimental.multiedit or {}, { symbols = true, rename = true })
  return caps
end

local function clients_of(buf)
  return vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.buf_get_clients(buf)
end

-- The buffer of `uri`, loaded (and attached to multiedit, so that it holds the same text).
local function buffer_for(uri, self_id)
  local buf = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(buf) then
    vim.fn.bufload(buf)
  end
  if not vim.lsp.buf_is_attached(buf, self_id) then
    vim.lsp.buf_attach_client(buf, self_id)
  end
  return buf
end

-- Another attached language server that answers `method`.
local function server_for(buf, self_id, method)
  for _, client in pairs(clients_of(buf)) do
    if client.id ~= self_id and client.supports_method(method) then
      return client
    end
  end
  return nil
end

-- A line of a buffer, or of a file not loaded.
local function line_getter(uri)
  local buf = vim.uri_to_bufnr(uri)
  if vim.api.nvim_buf_is_loaded(buf) then
    return function(n)
      return vim.api.nvim_buf_get_lines(buf, n, n + 1, false)[1] or ''
    end
  end
  local lines = {}
  local f = io.open(vim.uri_to_fname(uri), 'rb')
  if f then
    for l in (f:read('*a') .. '\n'):gmatch('(.-)\r?\n') do
      table.insert(lines, l)
    end
    f:close()
  end
  return function(n)
    return lines[n + 1] or ''
  end
end

-- The byte index of `character` (counted in `encoding`) in `line`.
local function to_byte(line, character, encoding)
  if encoding == 'utf-8' then
    return math.min(character, #line)
  end
  local ok, b = pcall(vim.str_byteindex, line, character, encoding == 'utf-16')
  return ok and b or #line
end

-- The `character` of byte index `byte` of `line`, counted in `encoding`.
local function from_byte(line, byte, encoding)
  if encoding == 'utf-8' then
    return byte
  end
  local ok, utf32, utf16 = pcall(vim.str_utfindex, line, math.min(byte, #line))
  if not ok then
    return byte
  end
  return encoding == 'utf-16' and utf16 or utf32
end

local function convert_position(p, lines, from, to)
  if from == to then
    return { line = p.line, character = p.character }
  end
  local line = lines(p.line)
  return { line = p.line, character = from_byte(line, to_byte(line, p.character, from), to) }
end

local function convert_range(r, lines, from, to)
  return { start = convert_position(r.start, lines, from, to), ['end'] = convert_position(r['end'], lines, from, to) }
end

local function reported(symbol, lines, from, to)
  -- A SymbolInformation (flat) has a location instead of ranges.
  local range = symbol.range or (symbol.location and symbol.location.range)
  local out = {
    name = symbol.name,
    kind = symbol.kind,
    range = convert_range(range, lines, from, to),
    selectionRange = convert_range(symbol.selectionRange or range, lines, from, to),
  }
  if symbol.detail and symbol.detail ~= '' then
    out.detail = symbol.detail
  end
  if symbol.children and #symbol.children > 0 then
    out.children = {}
    for _, c in ipairs(symbol.children) do
      table.insert(out.children, reported(c, lines, from, to))
    end
  end
  return out
end

local function encoding_of(client)
  return client and client.offset_encoding or 'utf-16'
end

-- `multiedit/symbols`: the document's symbols and the version they were computed on.
function M.symbols(_, params, ctx)
  local self = vim.lsp.get_client_by_id(ctx.client_id)
  local buf = buffer_for(params.uri, ctx.client_id)
  local server = server_for(buf, ctx.client_id, 'textDocument/documentSymbol')
  local version = buffers.version(buf)
  if not server then
    return { version = version, symbols = vim.NIL }
  end
  local answer = server.request_sync('textDocument/documentSymbol', { textDocument = { uri = params.uri } }, M.timeout_ms, buf)
  if not answer or answer.err then
    return nil, { code = -32803, message = 'the language server did not give the symbols: ' .. vim.inspect(answer and answer.err) }
  end
  local lines = line_getter(params.uri)
  local out = {}
  for _, s in ipairs(answer.result or {}) do
    table.insert(out, reported(s, lines, encoding_of(server), encoding_of(self)))
  end
  return { version = version, symbols = out }
end

-- `multiedit/rename`: prepare rename, then the rename's WorkspaceEdit, unapplied, with the versions of
-- the documents multiedit holds.
function M.rename(_, params, ctx)
  local self = vim.lsp.get_client_by_id(ctx.client_id)
  local buf = buffer_for(params.uri, ctx.client_id)
  local server = server_for(buf, ctx.client_id, 'textDocument/rename')
  if not server then
    return { noProvider = true }
  end
  local theirs, ours = encoding_of(server), encoding_of(self)
  local position = convert_position(params.position, line_getter(params.uri), ours, theirs)
  local where = { textDocument = { uri = params.uri }, position = position }
  local placeholder = nil
  if server.supports_method('textDocument/prepareRename') then
    local prepared = server.request_sync('textDocument/prepareRename', where, M.timeout_ms, buf)
    if not prepared or prepared.err then
      return { refused = prepared and prepared.err and prepared.err.message or 'no answer to prepareRename' }
    end
    local r = prepared.result
    if r == nil or r == vim.NIL then
      return { refused = 'there is nothing it can rename at this place' }
    end
    local range = r.range or (r.start and r) or nil
    placeholder = r.placeholder
    if not placeholder and range and range.start.line == range['end'].line then
      local line = vim.api.nvim_buf_get_lines(buf, range.start.line, range.start.line + 1, false)[1] or ''
      placeholder = line:sub(to_byte(line, range.start.character, theirs) + 1, to_byte(line, range['end'].character, theirs))
    end
  end
  local answer = server.request_sync('textDocument/rename', vim.tbl_extend('force', where, { newName = params.newName }), M.timeout_ms, buf)
  if not answer or answer.err then
    return { refused = answer and answer.err and answer.err.message or 'no answer to rename' }
  end
  local edit = answer.result or {}
  local changes, versions = {}, {}
  local function add(uri, edits)
    local lines = line_getter(uri)
    changes[uri] = changes[uri] or {}
    for _, e in ipairs(edits) do
      table.insert(changes[uri], { range = convert_range(e.range, lines, theirs, ours), newText = e.newText })
    end
    local b = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(b) and vim.lsp.buf_is_attached(b, ctx.client_id) then
      versions[uri] = buffers.version(b)
    end
  end
  for uri, edits in pairs(edit.changes or {}) do
    add(uri, edits)
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind then
      return { refused = 'the rename also ' .. change.kind .. 's a file, which multiedit does not apply' }
    end
    add(change.textDocument.uri, change.edits)
  end
  return {
    edit = { changes = next(changes) and changes or vim.empty_dict() },
    versions = next(versions) and versions or vim.empty_dict(),
    placeholder = placeholder,
  }
end

M.handlers = {
  ['multiedit/symbols'] = M.symbols,
  ['multiedit/rename'] = M.rename,
}

return M
