-- What the unit scripts share (nvim_unit.lua, nvim_unit_editor.lua): `test(name, fn)` runs one
-- check and counts it, `eq(got, want, what)` compares deeply, `finish(label)` prints the counts
-- and exits 1 after a failure. Loaded with `dofile`; returns a table `u`.
local u = {}
local passed, failed = 0, 0

function u.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write(string.format('FAIL %s: %s\n', name, err))
  end
end

function u.eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format('%s: got %s, want %s', what or 'value', vim.inspect(got), vim.inspect(want)), 2)
  end
end

function u.finish(label)
  io.stdout:write(string.format('%s: %d passed, %d failed\n', label, passed, failed))
  if failed > 0 then
    os.exit(1)
  end
end

return u
