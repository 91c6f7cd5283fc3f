--- `:PseudoClaudeSkills`: the folder's skills in a float (`pseudoclaude/skills/list`), one a line:
--- its `/<name>` command, where it is defined, whether the chat's session loaded it, what it
--- does (cut to the screen); then the skills that cannot be read, with their file, line and why.
--- `<CR>` on a skill puts `/<name> ` on the chat's prompt line (when the folder has a chat open).
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')
local util = require('pseudoclaude.util')

local M = {}

--- The float's last line.
M.HELP = '<CR> use in the chat · q close'

--- Where a skill is defined, in a few words.
M.SOURCES = {
  workspace = '.PseudoClaude/skills',
  claude = '.claude/skills',
  agents = '.agents/skills',
  user = '~/.PseudoClaude/skills',
  builtin = 'built in',
}

--- The lines of the float and, by line number, the skill each shows.
--- @param r pseudoclaude.SkillsListResult
--- @return string[], table<integer, pseudoclaude.SkillEntry>
function M.lines(r)
  local skills = type(r) == 'table' and type(r.skills) == 'table' and r.skills or {}
  local problems = type(r) == 'table' and type(r.problems) == 'table' and r.problems or {}
  local heads, wheres, width, where_width = {}, {}, 0, 0
  for i, s in ipairs(skills) do
    heads[i] = (s.command == false and '' or '/') .. s.name
    local where = { M.SOURCES[s.source] or tostring(s.source) }
    if s.loaded then
      where[#where + 1] = 'loaded'
    end
    if s.command == false then
      where[#where + 1] = 'the model loads it'
    end
    wheres[i] = table.concat(where, ' · ')
    width = math.max(width, vim.fn.strdisplaywidth(heads[i]))
    where_width = math.max(where_width, vim.fn.strdisplaywidth(wheres[i]))
  end
  -- One line each, within the screen: the name, where it is from, then what it does (cut).
  local room = math.max(20, math.min(80, vim.o.columns - 12 - width - where_width))
  local lines, at = {}, {}
  for i, s in ipairs(skills) do
    lines[#lines + 1] = string.format('%s %s%s  %s%s  %s', s.loaded and '✓' or ' ', heads[i],
      string.rep(' ', width - vim.fn.strdisplaywidth(heads[i])), wheres[i],
      string.rep(' ', where_width - vim.fn.strdisplaywidth(wheres[i])), fmt.one_line(s.description or '', room))
    at[#lines] = s
  end
  if #skills == 0 then
    lines[#lines + 1] = 'No skills: add one as .PseudoClaude/skills/<name>/SKILL.md (or .claude/skills/).'
  end
  if #problems > 0 then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Cannot be read:'
    for _, p in ipairs(problems) do
      local line = p.line ~= nil and p.line ~= vim.NIL and (':' .. p.line) or ''
      lines[#lines + 1] = string.format('  %s%s: %s', p.path, line, p.message)
    end
  end
  vim.list_extend(lines, { '', #skills > 0 and M.HELP or 'q or <Esc> closes' })
  return lines, at
end

--- Put `/<name> ` on the prompt line of the folder's chat (before what is typed there) and go
--- there; without a chat, say how to open one.
--- @param workspace string
--- @param skill pseudoclaude.SkillEntry
function M.use(workspace, skill)
  if skill.command == false then
    return util.notify('PseudoClaude: the skill ' .. skill.name .. ' cannot be run as a command: the model loads it when it needs it.')
  end
  require('pseudoclaude.context').close_float()
  if not require('pseudoclaude.chat').use_prompt(workspace, '/' .. skill.name .. ' ') then
    util.notify('PseudoClaude: open the chat (:PseudoClaudeChat) to use /' .. skill.name .. '.')
  end
end

--- Ask for the skills of the folder (`workspace`, else the current buffer's; the session its chat
--- shows) and show them.
--- @param workspace? string
function M.open(workspace)
  client.with_workspace(workspace, 'Skills', function(ws)
    local chat = require('pseudoclaude.chat').get(ws)
    local params = { workspace = ws, sessionId = chat and chat.session_id or nil }
    client.request_or_fail(protocol.requests.skills_list, params, 'Skills', function(r)
      local lines, at = M.lines(r)
      local buf = require('pseudoclaude.context').open_float(lines, 'PseudoClaude skills · ' .. fmt.basename(ws))
      vim.keymap.set('n', '<CR>', function()
        local skill = at[vim.api.nvim_win_get_cursor(0)[1]]
        if skill then
          M.use(ws, skill)
        end
      end, { buffer = buf, nowait = true, desc = 'PseudoClaude: use the skill under the cursor in the chat' })
    end)
  end)
end

return M
