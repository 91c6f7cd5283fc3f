--- `:PseudoClaudeProposals` (SPEC §11 "Memory with consent"): pick a pending memory proposal and
--- review it in a diff split: the note as it is (left) and as proposed (right, editable). `a`
--- accepts (the edited text when the right side was changed; `:w` there does the same), `r`
--- rejects, `q` leaves it queued. A stale proposal (its note changed since) is refused by the
--- server: the split stays open with the reason, to reject it or leave it.
local util = require('pseudoclaude.util')
local client = require('pseudoclaude.client')
local diff = require('pseudoclaude.diff')
local fmt = require('pseudoclaude.format')
local meter = require('pseudoclaude.meter')
local protocol = require('pseudoclaude.protocol')
local render = require('pseudoclaude.render')

local M = {}

--- The review on screen: `{proposal, workspace, view}`.
M.current = nil

local notify = util.notify

local fire = util.fire

--- The `pseudoclaude/memory/review` params of an accept: `content` only when the right side
--- differs from the proposed text (and never for a delete).
--- @param p pseudoclaude.Proposal
--- @param edited string the right side's text
--- @return table
function M.accept_params(p, edited)
  local params = { id = p.id, decision = protocol.review_decisions.accept }
  if p.action ~= protocol.proposal_actions.delete and edited ~= p.after then
    params.content = edited
  end
  return params
end

--- What the split's windows are called and titled.
--- @param p pseudoclaude.Proposal
--- @return table left, table right
function M.sides(p)
  local where = p.level .. '/' .. p.filename
  local absent = p.before == '' and ' (no such note yet)' or ''
  local delete = p.action == protocol.proposal_actions.delete
  local summary = (type(p.summary) == 'string' and p.summary ~= '') and fmt.one_line(p.summary, 60) or nil
  return {
    name = 'pseudoclaude://proposal/' .. where .. '.before',
    text = p.before,
    filetype = 'markdown',
    title = 'PseudoClaude memory · before',
    detail = where .. absent,
  }, {
    name = 'pseudoclaude://proposal/' .. where .. '.after',
    text = p.after,
    filetype = 'markdown',
    editable = not delete,
    title = delete and 'after: deleted' or ('after (' .. p.action .. ', editable)'),
    detail = summary,
  }
end

--- The hint of the split (the keys).
--- @param p pseudoclaude.Proposal
--- @return string
function M.hint(p)
  local save = p.action == protocol.proposal_actions.delete and '' or ' (:w too)'
  return string.format('a accept%s · r reject · q later', save)
end

local function finish(review, what)
  if M.current == review then
    M.current = nil
  end
  review.view:close()
  fire('PseudoClaudeReviewed', what)
end

local function send(review, params, verb)
  local p = review.proposal
  params.workspace = review.workspace
  client.request(protocol.requests.memory_review, params, function(err, r)
    if err then
      local message = client.error_message(err)
      if not review.view.closed then
        review.view:set_hint('not applied (see the message) · r reject · q later')
      end
      notify(string.format('PseudoClaude: %s %s failed: %s', verb, p.filename, message), vim.log.levels.ERROR)
      fire('PseudoClaudeReviewed', { proposal = p, decision = params.decision, error = err })
      return
    end
    notify('PseudoClaude: ' .. ((type(r.message) == 'string' and r.message ~= '') and r.message
      or string.format('%s: %s.', params.decision, p.filename)))
    finish(review, { proposal = p, decision = params.decision, result = r, edited = params.content ~= nil })
  end)
end

--- Review one proposal in a diff split.
--- @param p pseudoclaude.Proposal
--- @param workspace string
function M.review(p, workspace)
  if M.current and not M.current.view.closed then
    M.current.view:close()
  end
  local left, right = M.sides(p)
  local review = { proposal = p, workspace = workspace }
  local function accept()
    send(review, M.accept_params(p, review.view:right_text()), 'Accept')
  end
  local function reject()
    send(review, { id = p.id, decision = protocol.review_decisions.reject }, 'Reject')
  end
  local function later()
    finish(review, { proposal = p, decision = 'later' })
  end
  review.view = diff.open({
    left = left,
    right = right,
    hint = M.hint(p),
    keys = {
      { 'a', accept, 'PseudoClaude: accept this memory proposal (the right side, as edited)' },
      { 'r', reject, 'PseudoClaude: reject this memory proposal' },
      { 'q', later, 'PseudoClaude: close, keep the proposal for later' },
    },
    on_write = accept,
    on_close = function()
      if M.current == review then
        M.current = nil
      end
    end,
  })
  M.current = review
  fire('PseudoClaudeReviewing', { proposal = p })
end

--- `:PseudoClaudeProposals`: pick a pending proposal and review it.
--- @param workspace? string (default: the current buffer's folder)
function M.open(workspace)
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.memory_proposals, params, 'Proposals', function(r)
    local list = r.proposals or {}
    meter.set_proposals(params.workspace, #list)
    if #list == 0 then
      notify('PseudoClaude: no memory proposals to review in ' .. fmt.basename(params.workspace) .. '.')
      fire('PseudoClaudeReviewing', { proposal = nil })
      return
    end
    vim.ui.select(list, {
      prompt = string.format('Review which memory proposal? (%d pending)', #list),
      kind = 'pseudoclaude_proposal',
      format_item = render.proposal_label,
    }, function(p)
      if p then
        M.review(p, params.workspace)
      end
    end)
  end)
end

return M
