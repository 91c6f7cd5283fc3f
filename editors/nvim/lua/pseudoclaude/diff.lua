--- A diff split in a tab of its own: two scratch buffers (`before` on the left, `after` on the
--- right) with `:diffthis`, a one-line hint in each window's winbar and buffer-local keys. Used by
--- the edit approvals (`pseudoclaude/approve`) and by `:PseudoClaudeProposals`.
local M = {}

--- The lines of a whole-file text (a final newline ends the last line, it adds none).
--- @param text string
--- @return string[]
function M.lines(text)
  if text == '' then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

--- The text of `lines`, with a final newline when `eol` (the inverse of `M.lines`).
--- @param lines string[]
--- @param eol boolean
--- @return string
function M.text(lines, eol)
  if #lines == 0 or (#lines == 1 and lines[1] == '') then
    return ''
  end
  return table.concat(lines, '\n') .. (eol and '\n' or '')
end

--- Does the text end with a newline (or is it empty, which keeps a new line's file ending)?
function M.ends_with_newline(text)
  return text == '' or text:sub(-1) == '\n'
end

--- The filetype of a path (`nil` when Neovim does not know it).
--- @param path string
--- @param lines? string[]
--- @return string?
function M.filetype(path, lines)
  local ok, ft = pcall(vim.filetype.match, { filename = path, contents = lines })
  return ok and ft or nil
end

--- A buffer name not taken yet: `name`, else `name (2)`, `name (3)`...
local function free_name(name)
  local candidate, n = name, 1
  while vim.fn.bufexists(candidate) == 1 do
    n = n + 1
    candidate = string.format('%s (%d)', name, n)
  end
  return candidate
end

--- `%` doubled, for a winbar.
local function escape(s)
  return (s:gsub('%%', '%%%%'))
end

--- `a · b` (either may be missing).
function M.join(a, b)
  if a and a ~= '' and b and b ~= '' then
    return a .. ' · ' .. b
  end
  return (a and a ~= '') and a or (b or '')
end

--- A winbar: `head`, then `tail` after `sep` (default ` · `); when too long, the tail loses its
--- start (`<`), the head stays.
--- @param head string
--- @param tail? string
--- @param sep? string
--- @return string
function M.winbar(head, tail, sep)
  if not tail or tail == '' then
    return ' ' .. escape(head)
  end
  return ' ' .. escape(head) .. escape(sep or ' · ') .. '%<' .. escape(tail)
end

--- @class pseudoclaude.DiffSide
--- @field name string buffer name (made unique)
--- @field text string the whole file text
--- @field filetype? string
--- @field editable? boolean the right side may be edited (`:w` calls `on_write`)
--- @field title string its winbar: the title, then `detail` (cut from its start when too long);
---   on the right side the hint comes first
--- @field detail? string

--- @class pseudoclaude.DiffView
--- @field tab integer
--- @field left {buf: integer, win: integer}
--- @field right {buf: integer, win: integer}
--- @field closed boolean
--- @field close fun(self: pseudoclaude.DiffView)
--- @field right_text fun(self: pseudoclaude.DiffView): string
--- @field set_hint fun(self: pseudoclaude.DiffView, hint: string)

local function make_buf(side)
  local buf = vim.api.nvim_create_buf(false, true)
  local lines = M.lines(side.text)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_name(buf, free_name(side.name))
  vim.bo[buf].buftype = side.editable and 'acwrite' or 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modified = false
  if side.filetype and side.filetype ~= '' then
    vim.bo[buf].filetype = side.filetype
  end
  vim.bo[buf].modifiable = side.editable == true
  vim.bo[buf].readonly = side.editable ~= true
  return buf
end

--- Open the split in a new tab and enter its right window.
--- `opts.keys`: `{ {lhs, fn, desc}, ... }` mapped in normal mode in both buffers; `opts.on_close`
--- runs once when the user closes a window, the tab or a buffer of the split (not after
--- `view:close()`); `opts.on_write` runs on `:w` in an editable right side.
--- @param opts {left: pseudoclaude.DiffSide, right: pseudoclaude.DiffSide, hint: string, keys: table[], on_close?: fun(), on_write?: fun()}
--- @return pseudoclaude.DiffView
function M.open(opts)
  local origin = vim.api.nvim_get_current_win()
  -- Typing in the chat's prompt when the split opens: its keys are Normal mode keys, and the
  -- prompt gets Insert mode back after.
  local was_inserting = vim.fn.mode():sub(1, 1) == 'i'
  if was_inserting then
    vim.cmd.stopinsert()
  end
  local left_buf = make_buf(opts.left)
  local right_buf = make_buf(opts.right)
  vim.cmd('tab sbuffer ' .. left_buf)
  local left_win = vim.api.nvim_get_current_win()
  vim.cmd('vertical rightbelow sbuffer ' .. right_buf)
  local right_win = vim.api.nvim_get_current_win()
  local view = {
    tab = vim.api.nvim_get_current_tabpage(),
    left = { buf = left_buf, win = left_win },
    right = { buf = right_buf, win = right_win },
    closed = false,
    eol = M.ends_with_newline(opts.right.text),
  }
  local group = vim.api.nvim_create_augroup('pseudoclaude_diff_' .. left_buf, { clear = true })

  function view.set_hint(self, hint)
    if vim.api.nvim_win_is_valid(self.left.win) then
      vim.wo[self.left.win].winbar = M.winbar(opts.left.title, opts.left.detail)
    end
    if vim.api.nvim_win_is_valid(self.right.win) then
      vim.wo[self.right.win].winbar = M.winbar(hint, M.join(opts.right.title, opts.right.detail), ' │ ')
    end
    self.hint = hint
  end

  function view.right_text(self)
    local lines = vim.api.nvim_buf_get_lines(self.right.buf, 0, -1, false)
    return M.text(lines, self.eol)
  end

  function view.close(self)
    if self.closed then
      return
    end
    self.closed = true
    pcall(vim.api.nvim_del_augroup_by_id, group)
    for _, side in ipairs({ self.left, self.right }) do
      if vim.api.nvim_buf_is_valid(side.buf) then
        pcall(vim.api.nvim_buf_delete, side.buf, { force = true })
      end
    end
    if vim.api.nvim_win_is_valid(origin) then
      pcall(vim.api.nvim_set_current_win, origin)
      if was_inserting and vim.bo[vim.api.nvim_win_get_buf(origin)].buftype == 'prompt' then
        vim.cmd('startinsert!')
      end
    end
  end

  for _, win in ipairs({ left_win, right_win }) do
    vim.api.nvim_win_call(win, function()
      vim.cmd.diffthis()
    end)
    vim.wo[win].wrap = false
    vim.wo[win].foldlevel = 99 -- show the whole file; [c and ]c jump between changes
  end
  view:set_hint(opts.hint)

  for _, buf in ipairs({ left_buf, right_buf }) do
    for _, key in ipairs(opts.keys or {}) do
      vim.keymap.set('n', key[1], key[2], { buffer = buf, nowait = true, desc = key[3] })
    end
  end
  if opts.right.editable and opts.on_write then
    vim.api.nvim_create_autocmd('BufWriteCmd', {
      group = group,
      buffer = right_buf,
      callback = function()
        vim.bo[right_buf].modified = false
        opts.on_write()
      end,
    })
  end

  -- The user closing a window of the split, the tab, or wiping a buffer: `on_close`, once.
  local function user_closed()
    if view.closed then
      return
    end
    vim.schedule(function()
      if view.closed then
        return
      end
      view:close()
      if opts.on_close then
        opts.on_close()
      end
    end)
  end
  vim.api.nvim_create_autocmd('WinClosed', {
    group = group,
    pattern = { tostring(left_win), tostring(right_win) },
    callback = user_closed,
  })
  vim.api.nvim_create_autocmd({ 'BufWipeout', 'BufHidden' }, {
    group = group,
    buffer = left_buf,
    callback = user_closed,
  })
  vim.api.nvim_create_autocmd({ 'BufWipeout', 'BufHidden' }, {
    group = group,
    buffer = right_buf,
    callback = user_closed,
  })
  vim.api.nvim_set_current_win(right_win)
  -- The cursor on the first change.
  vim.api.nvim_win_set_cursor(right_win, { 1, 0 })
  if vim.fn.diff_hlID(1, 1) == 0 then
    pcall(vim.cmd, 'normal! ]c')
  end
  return view
end

return M
