-- What the multiedit handlers (diagnostics.lua, save.lua, symbols.lua) share about Neovim's buffers.

local M = {}

-- The loaded buffer that holds `uri`, or nil (a file no buffer shows is multiedit's to read from disk).
function M.loaded(uri)
  local ok, name = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not vim.api.nvim_buf_is_loaded(buf) then
    return nil
  end
  return buf
end

-- The version Neovim's LSP client gives the buffer's text (its changedtick at the last change; a
-- write moves the changedtick without changing the text).
function M.version(buf)
  local versions = vim.lsp.util.buf_versions
  local v = versions and versions[buf]
  if type(v) == 'number' then
    return v
  end
  return vim.api.nvim_buf_get_changedtick(buf)
end

return M
