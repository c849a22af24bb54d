-- Neovim's answer to multiedit's `multiedit/approve` request (docs/protocol.md, "Approval"): one
-- question for a whole plan, with its diff in a split beside it, answered Apply All or Discard. The
-- server asks it for the plans the review settings name, and always for an agent's change to the files
-- where agents' permissions, servers and hooks are configured (`.claude/`, `.mcp.json`, `.vscode/`...,
-- docs/guarantees.md "One gate"), which an editor that cannot ask gets refused.
--
--   vim.opt.runtimepath:append('/path/to/multiedit/editors/nvim')
--   local approve = require('multiedit.approve')
--   vim.lsp.start({
--     name = 'multiedit',
--     cmd = { 'multiedit', 'lsp' },
--     root_dir = vim.fn.getcwd(),
--     capabilities = approve.capabilities(),   -- announces experimental.multiedit.approve
--     handlers = { ['multiedit/approve'] = approve.handler },
--   })
--
-- The question is Neovim's own confirm(), which waits for the user: the server gives up after the
-- request's `timeoutMs` and never applies the plan after that, whatever is answered later. Set
-- `require('multiedit.approve').ask` to ask another way (a floating window, say): it is given the
-- question and the diff and returns 'apply' or 'discard'. Works with Neovim 0.7 and later.

local M = {}

-- The client capabilities (Neovim's defaults unless given) with multiedit's approval announced.
function M.capabilities(capabilities)
  local caps = capabilities or vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.multiedit = vim.tbl_extend('force', caps.experimental.multiedit or {}, { approve = true })
  return caps
end

-- The lines of `path` as the user sees them: its loaded buffer, else the disk, else none.
local function lines_of(path)
  local buf = vim.fn.bufnr(path)
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  if vim.fn.filereadable(path) == 1 then
    return vim.fn.readfile(path)
  end
  return {}
end

-- One document's text edits as a unified diff: applied to a scratch copy, then compared.
local function file_diff(uri, edits, encoding)
  local path = vim.uri_to_fname(uri)
  local old = lines_of(path)
  local scratch = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, old)
  vim.lsp.util.apply_text_edits(edits, scratch, encoding)
  local new = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
  vim.api.nvim_buf_delete(scratch, { force = true })
  local diff = vim.diff(table.concat(old, '\n') .. '\n', table.concat(new, '\n') .. '\n')
  return '--- ' .. path .. '\n+++ ' .. path .. '\n' .. diff
end

-- The whole WorkspaceEdit as a diff, files created, renamed and deleted named on their own lines.
function M.diff(edit, encoding)
  local out = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      table.insert(out, file_diff(change.textDocument.uri, change.edits, encoding))
    elseif change.kind == 'rename' then
      table.insert(out, 'rename ' .. vim.uri_to_fname(change.oldUri) .. ' -> ' .. vim.uri_to_fname(change.newUri))
    elseif change.kind then
      table.insert(out, change.kind .. ' ' .. vim.uri_to_fname(change.uri))
    end
  end
  for uri, edits in pairs(edit.changes or {}) do
    table.insert(out, file_diff(uri, edits, encoding))
  end
  return table.concat(out, '\n')
end

-- The default way to ask: the diff in a split, then confirm().
function M.ask(question, diff)
  vim.cmd('new')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(diff, '\n'))
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].filetype = 'nofile', 'wipe', 'diff'
  vim.cmd('redraw')
  local choice = vim.fn.confirm(question, '&Apply All\n&Discard', 2)
  vim.api.nvim_buf_delete(buf, { force = true })
  return choice == 1 and 'apply' or 'discard'
end

-- The handler for `multiedit/approve`: the question names who asks, what the change is and, for a
-- change to what an agent may do, why the user is asked.
function M.handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local who = params.agent and (params.agent .. ' wants to apply') or 'Apply'
  local what = params.label:gsub('^[^:]*:%s*', '')
  local question = 'MultiEdit: ' .. who .. ' ' .. what .. '.'
  if params.reason then
    question = question .. ' ' .. params.reason
  end
  local ok, decision = pcall(function()
    return M.ask(question, M.diff(params.edit, client and client.offset_encoding or 'utf-16'))
  end)
  -- Anything but a clear yes applies nothing.
  return { decision = (ok and decision == 'apply') and 'apply' or 'discard' }
end

return M
