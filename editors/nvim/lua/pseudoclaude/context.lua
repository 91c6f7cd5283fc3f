--- What fills the context and what a compaction would do with it (SPEC §11 "Context breakdown",
--- "Compaction preview", "Undo", "Summary fact check"): the text of `:PseudoClaudeContext` and
--- `:PseudoClaudePreview` (pure functions; the server words the results), and the floating window
--- they are shown in.
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')

local M = {}

--- Width of the bars of the breakdown, in cells (a full bar is the whole context window).
M.BAR_WIDTH = 20

--- Display names of the breakdown's keys.
M.labels = {
  system = 'System',
  rules = 'Rules',
  memory = 'Memory',
  skills = 'Skills',
  tools = 'Tools',
  summary = 'Summary',
  messages = 'Messages',
  toolCalls = 'Tool calls',
  toolResults = 'Tool results',
  spilled = 'Spilled',
  free = 'Free',
  reserved = 'Reserved',
}

local EIGHTHS = { '▏', '▎', '▍', '▌', '▋', '▊', '▉' }

local function count(n)
  n = tonumber(n)
  if not n or n ~= n or n < 0 then
    return 0
  end
  return n
end

--- `12%` of the window; `<1%` for a count that rounds to nothing; `—` without a window.
--- @param tokens number
--- @param window number
--- @return string
function M.share(tokens, window)
  window = count(window)
  if window <= 0 then
    return '—'
  end
  local pct = count(tokens) / window * 100
  if pct > 0 and pct < 0.5 then
    return '<1%'
  end
  return string.format('%d%%', math.floor(pct + 0.5))
end

--- A bar of `tokens` out of `window` in `width` cells, in eighths; a non-zero count shows at least
--- `▏`, a count over the window a full bar.
--- @param tokens number
--- @param window number
--- @param width? integer
--- @return string
function M.bar(tokens, window, width)
  width = width or M.BAR_WIDTH
  tokens, window = count(tokens), count(window)
  if window <= 0 or tokens <= 0 then
    return ''
  end
  local cells = math.min(width, tokens / window * width)
  local full = math.floor(cells)
  local eighths = math.floor((cells - full) * 8 + 0.5)
  if eighths == 8 then
    full, eighths = full + 1, 0
  end
  local out = string.rep('█', full) .. (eighths > 0 and EIGHTHS[eighths] or '')
  return out == '' and EIGHTHS[1] or out
end

--- The rows of a breakdown: the ten categories, then `free` and `reserved`, each
--- `{key, label, tokens, share, bar}` (negative or missing counts as 0).
--- @param breakdown pseudoclaude.Breakdown
--- @param window number
--- @return table[]
function M.rows(breakdown, window)
  local keys = vim.list_extend(vim.deepcopy(protocol.breakdown_categories), { 'free', 'reserved' })
  local out = {}
  for _, key in ipairs(keys) do
    local tokens = count(breakdown[key])
    out[#out + 1] = {
      key = key,
      label = M.labels[key],
      tokens = tokens,
      share = M.share(tokens, window),
      bar = M.bar(tokens, window),
    }
  end
  return out
end

local function row_line(row)
  return (string.format('%-13s%9s %5s  %s', row.label, fmt.count(row.tokens), row.share, row.bar):gsub('%s+$', ''))
end

--- The instruction files under the Rules row, indented: path, tokens, source (`rules` of the
--- context; nothing from a server that does not send it).
--- @param rules? pseudoclaude.RuleFile[]
--- @return string[]
function M.rule_lines(rules)
  local out = {}
  for _, r in ipairs(type(rules) == 'table' and rules or {}) do
    if type(r) == 'table' and type(r.path) == 'string' then
      out[#out + 1] = string.format('  %-11s%9s  %s', r.path, fmt.count(count(r.tokens)), tostring(r.source or ''))
    end
  end
  return out
end

--- The lines of `:PseudoClaudeContext`: the totals, one line per category (tokens, share of the
--- window, a bar; the instruction files under Rules), a rule, free and reserved, the auto-compact
--- state and how to close.
--- @param c pseudoclaude.ContextResult
--- @return string[]
function M.breakdown_lines(c)
  local head = {
    string.format('%s of %s tokens', fmt.count(count(c.estimatedTokens)), fmt.count(count(c.contextWindow))),
    fmt.plural(c.messageCount or 0, 'message'),
    (type(c.sessionId) == 'string' and c.sessionId ~= '') and ('session ' .. c.sessionId) or 'no session yet',
  }
  local lines = { table.concat(head, ' · '), '' }
  local b = c.breakdown
  if type(b) == 'table' then
    local rows = M.rows(b, c.contextWindow)
    for i, row in ipairs(rows) do
      if i == #protocol.breakdown_categories + 1 then
        lines[#lines + 1] = string.rep('─', 13 + 9 + 1 + 5 + 2 + M.BAR_WIDTH)
      end
      lines[#lines + 1] = row_line(row)
      if row.key == 'rules' then
        vim.list_extend(lines, M.rule_lines(c.rules))
      end
    end
  else
    lines[#lines + 1] = '(this server sends no breakdown)'
  end
  lines[#lines + 1] = ''
  local auto = 'Auto-compact at ' .. fmt.count(count(c.autoCompactThreshold)) .. ' tokens'
  if c.autoCompactTripped then
    auto = auto
      .. string.format(
        '; stopped after %s: :PseudoClaudeCompact',
        fmt.plural(c.autoCompactFailures or 3, 'failure')
      )
  end
  lines[#lines + 1] = auto
  vim.list_extend(lines, M.checkpoint_lines(c.checkpoints))
  lines[#lines + 1] = 'q or <Esc> closes · :PseudoClaudePreview · :PseudoClaudeUndo'
  return lines
end

--- Width the checkpoint line of the breakdown wraps at.
M.CHECKPOINT_WIDTH = 60

--- What a rewind of code can restore (`checkpoints` of the context), wrapped: `Rewind: every
--- file can be taken back`, or the server's words of what cannot be; `{}` from a server that
--- does not say.
--- @param cp? pseudoclaude.CheckpointStatus
--- @return string[]
function M.checkpoint_lines(cp)
  if type(cp) ~= 'table' then
    return {}
  end
  local problem = type(cp.problem) == 'string' and vim.trim(cp.problem) or ''
  local text
  if problem ~= '' then
    text = 'Rewind: ' .. problem
  elseif cp.covers == 'writes' then
    text = "Rewind: only the agent's own file writes can be taken back"
  else
    text = 'Rewind: every file can be taken back'
  end
  local skipped = type(cp.skipped) == 'table' and #cp.skipped or 0
  if skipped > 0 then
    text = string.format('%s; %s over 1 MiB left out', text, fmt.plural(skipped, 'file'))
  end
  return fmt.wrap(text, M.CHECKPOINT_WIDTH)
end

--- The server's words about a result (`message`), as a notification says them.
--- @param r {message?: string}
--- @param fallback string
--- @return string
function M.message(r, fallback)
  local m = type(r) == 'table' and r.message or nil
  return 'PseudoClaude: ' .. ((type(m) == 'string' and vim.trim(m) ~= '') and m or fallback)
end

--- What `:PseudoClaudePreview` shows: `{kind = 'confirm', message, lines}` (ask before compacting)
--- or `{kind = 'nothing', message}` (say why, ask nothing). The server words the preview
--- (`message`); a preview that would summarize nothing but offload tool results still asks.
--- @param p pseudoclaude.CompactPreviewResult
--- @param where string the folder's name
--- @return {kind: 'confirm'|'nothing', message: string, lines: string[]?}
function M.preview_plan(p, where)
  local s = type(p.spill) == 'table' and p.spill or {}
  local said = type(p.message) == 'string' and p.message or ''
  if p.wouldSummarize then
    return { kind = 'confirm', message = string.format('Compact the context of %s?', where), lines = { said } }
  end
  if count(s.results) > 0 and p.reason ~= protocol.preview_reasons.no_session then
    return {
      kind = 'confirm',
      message = string.format('Offload tool results in %s?', where),
      lines = { said },
    }
  end
  return { kind = 'nothing', message = M.message(p, 'nothing to compact in ' .. where .. '.') }
end

--- `summary checked: 12 facts, 2 carried by the server` (and how many did not fit the budget).
--- @param f pseudoclaude.FactCheck
--- @return string
function M.fact_check_text(f)
  local left = count(f.missing) - count(f.added)
  return string.format('summary checked: %s, %d carried by the server', fmt.plural(count(f.checked), 'fact'), count(f.added))
    .. (left > 0 and string.format(', %d not carried (over the budget)', left) or '')
end

-- The floating window ---------------------------------------------------------------------------

--- The float on screen (one at a time): `{win, buf}`.
M.float = nil

--- Close the float, if one is open.
function M.close_float()
  local f = M.float
  M.float = nil
  if f and vim.api.nvim_win_is_valid(f.win) then
    pcall(vim.api.nvim_win_close, f.win, true)
  end
end

--- Show `lines` in a centered floating window titled `title` (replacing the one open); `q` and
--- `<Esc>` close it, and so does leaving it. `enter = false` leaves the cursor where it is.
--- @param lines string[]
--- @param title string
--- @param opts? {enter?: boolean, filetype?: string}
--- @return integer buf, integer win
function M.open_float(lines, title, opts)
  opts = opts or {}
  M.close_float()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = opts.filetype or 'pseudoclaude_context'
  local width = vim.fn.strdisplaywidth(title) + 4
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.max(1, math.min(width + 2, vim.o.columns - 4))
  local height = math.max(1, math.min(#lines, vim.o.lines - 4))
  local win = vim.api.nvim_open_win(buf, opts.enter ~= false, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    style = 'minimal',
    border = 'rounded',
    title = ' ' .. title .. ' ',
    title_pos = 'center',
  })
  vim.wo[win].wrap = false
  for _, key in ipairs({ 'q', '<Esc>' }) do
    vim.keymap.set('n', key, M.close_float, { buffer = buf, nowait = true, desc = 'Close the PseudoClaude float' })
  end
  vim.api.nvim_create_autocmd('WinLeave', { buffer = buf, once = true, callback = vim.schedule_wrap(function()
    if M.float and M.float.win == win then
      M.close_float()
    end
  end) })
  M.float = { win = win, buf = buf }
  return buf, win
end

return M
