-- Memory with consent in a real Neovim (SPEC §11): with `memory.mode = confirm` a run's memory
-- update queues proposals; the meter counts them; :PseudoClaudeProposals opens one as a diff
-- split; `a` after editing the right side writes the edited note, `r` rejects another, and a
-- stale proposal (its note edited by hand since) is refused with the server's reason and can be
-- rejected. Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_proposals.lua
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take = h.report, h.step, h.wait_for, h.take
local contains, errors_shown, notified = h.contains, h.errors_shown, h.notified
local workspace = h.workspace

local client
local NOTE = workspace .. '/.PseudoClaude/memory/project_knowledge_build.md'
local USER_NOTE = vim.env.HOME .. '/.PseudoClaude/memory/user_preference_user-profile.md'

local function read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data
end

local function statusline()
  return require('pseudoclaude').statusline()
end

--- Pick the proposal whose label holds `label` and wait for its split; returns the review.
local function open_review(label)
  local before = #h.selects
  h.answer({ label })
  h.forget('PseudoClaudeReviewing')
  vim.cmd('PseudoClaudeProposals')
  local shown = take('PseudoClaudeReviewing')
  assert(shown.proposal, 'no proposal opened')
  local menu = h.selects[before + 1]
  assert(menu and menu.kind == 'pseudoclaude_proposal', vim.inspect(h.selects))
  local review = assert(require('pseudoclaude.proposals').current, 'no review on screen')
  return review, menu
end

step('setup', function()
  client = h.setup_plugin({ settings = { memory = { mode = 'confirm' } } })
  assert(statusline() == 'PseudoClaude', statusline())
end)

step('a run proposes; the meter counts the proposals', function()
  h.forget('PseudoClaudeProposals')
  vim.cmd('PseudoClaudeAsk REMEMBER-BOTH: I am a Go engineer; how do I build?')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  local changed = wait_for('two proposals', function()
    local p = take('PseudoClaudeProposals')
    return p.count == 2 and p
  end)
  assert(changed.workspace == vim.uri_from_fname(workspace), vim.inspect(changed))
  wait_for('the proposed memory in the transcript', function()
    return h.transcript_text():find('✎ memory proposed: create project project_knowledge_build.md', 1, true)
  end)
  assert(read(NOTE) == nil, 'confirm mode wrote the note')
  local meter = wait_for('the meter to count them', function()
    local s = statusline()
    return s:find(' · 2 proposals', 1, true) and s
  end)
  assert(notified('PseudoClaude: 2 memory proposals to review in project: :PseudoClaudeProposals'),
    vim.inspect(report.notifications))
  report.meter_with_proposals = meter
end)

step('accept after editing the right side: the note holds the edited text', function()
  local before_tabs = #vim.api.nvim_list_tabpages()
  local review, menu = open_review('create · project · Build')
  assert(#menu.labels == 2, vim.inspect(menu.labels))
  contains(table.concat(menu.labels, '\n'), 'create · project · Build — project_knowledge_build.md', 'menu')
  contains(table.concat(menu.labels, '\n'), 'create · user · User Profile — user_preference_user-profile.md', 'menu')
  assert(menu.prompt == 'Review which memory proposal? (2 pending)', menu.prompt)
  local view = review.view
  assert(#vim.api.nvim_list_tabpages() == before_tabs + 1, 'no new tab')
  assert(vim.wo[view.left.win].diff and vim.wo[view.right.win].diff, 'not a diff')
  assert(vim.deep_equal(vim.api.nvim_buf_get_lines(view.left.buf, 0, -1, false), { '' }), 'left side of a create')
  assert(vim.bo[view.right.buf].modifiable and not vim.bo[view.left.buf].modifiable, 'editable sides')
  assert(vim.bo[view.right.buf].filetype == 'markdown', vim.bo[view.right.buf].filetype)
  contains(vim.api.nvim_buf_get_name(view.right.buf), 'pseudoclaude://proposal/project/project_knowledge_build.md.after', 'name')
  contains(vim.wo[view.right.win].winbar, 'a accept (:w too) · r reject · q later', 'hint')
  local right = vim.api.nvim_buf_get_lines(view.right.buf, 0, -1, false)
  local at
  for i, l in ipairs(right) do
    if l == 'Run `make build`.' then
      at = i
    end
  end
  assert(at, 'the proposed body is not on the right: ' .. vim.inspect(right))
  report.proposal_right = right
  -- Edit the right side as a user would, then `a`.
  vim.api.nvim_set_current_win(view.right.win)
  vim.api.nvim_win_set_cursor(view.right.win, { at, 0 })
  vim.api.nvim_feedkeys('ccRun `make build` (edited in Neovim).' .. vim.keycode('<Esc>'), 'x', false)
  h.forget('PseudoClaudeReviewed')
  vim.api.nvim_feedkeys('a', 'x', false)
  local reviewed = take('PseudoClaudeReviewed')
  assert(reviewed.error == nil and reviewed.result.applied == true and reviewed.edited == true, vim.inspect(reviewed))
  local note = assert(read(NOTE), 'the note was not written')
  contains(note, 'Run `make build` (edited in Neovim).', 'note')
  assert(not note:find('Run `make build`.\n', 1, true), 'the proposed text was written')
  assert(#vim.api.nvim_list_tabpages() == before_tabs, 'the split did not close')
  assert(notified('PseudoClaude: Accepted: project_knowledge_build.md is written to project memory.'), vim.inspect(report.notifications))
  wait_for('the meter to count one', function()
    return statusline():find(' · 1 proposal', 1, true)
  end)
  report.note = note
end)

step('reject another', function()
  local review = open_review('User Profile')
  h.forget('PseudoClaudeReviewed')
  vim.api.nvim_set_current_win(review.view.left.win)
  vim.api.nvim_feedkeys('r', 'x', false)
  local reviewed = take('PseudoClaudeReviewed')
  assert(reviewed.error == nil and reviewed.decision == 'reject', vim.inspect(reviewed))
  assert(read(USER_NOTE) == nil, 'the rejected note was written')
  wait_for('the meter to drop the count', function()
    return not statusline():find('proposal', 1, true)
  end)
  h.answer({})
  vim.cmd('PseudoClaudeProposals')
  wait_for('the empty message', function()
    return notified('PseudoClaude: no memory proposals to review in project.')
  end)
end)

step('a stale proposal is refused with the reason, then rejected', function()
  vim.cmd('PseudoClaudeAsk UPDATE-BUILD: use all cores')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  wait_for('the update proposal', function()
    return statusline():find(' · 1 proposal', 1, true)
  end)
  -- The note changes by hand before the review.
  local f = assert(io.open(NOTE, 'ab'))
  f:write('A line added by hand.\n')
  f:close()
  local review = open_review('update · project · Build')
  local left = table.concat(vim.api.nvim_buf_get_lines(review.view.left.buf, 0, -1, false), '\n')
  contains(left, '(edited in Neovim)', 'left side of an update')
  h.forget('PseudoClaudeReviewed')
  vim.api.nvim_feedkeys('a', 'x', false)
  local refused = take('PseudoClaudeReviewed')
  assert(refused.error ~= nil, 'a stale proposal was accepted: ' .. vim.inspect(refused))
  local shown = errors_shown()
  assert(#shown == 1, vim.inspect(shown))
  contains(shown[1], 'PseudoClaude: Accept project_knowledge_build.md failed: ', 'stale message')
  contains(shown[1], 'changed since it was proposed', 'stale message')
  report.stale_message = shown[1]
  assert(not review.view.closed, 'the split closed after a refusal')
  contains(vim.wo[review.view.right.win].winbar, 'not applied', 'hint after the refusal')
  contains(read(NOTE), 'A line added by hand.', 'note')
  vim.api.nvim_feedkeys('r', 'x', false)
  local rejected = take('PseudoClaudeReviewed')
  assert(rejected.error == nil and rejected.decision == 'reject', vim.inspect(rejected))
  assert(review.view.closed, 'the split stayed')
  contains(read(NOTE), 'A line added by hand.', 'note after the rejection')
end)

step('stop', function()
  h.stop(client)
end)

h.done('nvim proposals e2e')
