"""Language-server latency seen from a real editor: headless Neovim as the LSP client.

    python bench/lsp_nvim.py [--sizes 50,500,1500] [--repeat 10] [--root DIR] [--nvim nvim]

For each size a generated machine (`bench.gen.nested_loop_machine`) is written to a temporary folder and
opened in `nvim --headless --clean`; a Lua script starts `skillc lsp` with `vim.lsp.start_client`, attaches
it to the buffer and edits the buffer with `nvim_buf_set_text`, as typing does. Neovim sends each change
as an incremental `didChange` (its debounce set to 0, so the figure is the server's and the transport's,
not Neovim's 150 ms typing delay); the time is from the edit to the `publishDiagnostics` whose version is
the buffer's new changedtick, measured with `vim.loop.hrtime()` inside Neovim.

Columns (median ms over `--repeat` edits, the slowest in parentheses):
- `open`: attaching the client to the publish of the first diagnostics (one full check, the server started);
- `comment`: a comment's text edited;
- `prompt`: one prompt's text edited;
- `edit`: a guard's constant edited in a state in the middle (a new value each time: never a text checked
  before), an edit outside comments and prompt text.

`--root DIR` runs the server of another checkout (a before/after table on one machine). Without Neovim on
the PATH it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen import nested_loop_machine

LUA = r"""
local path, out, repeat_n = _G.BENCH.path, _G.BENCH.out, _G.BENCH.repeat_n
local results = {}
local published = {}
vim.cmd("edit " .. vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
local t_open = vim.loop.hrtime()
local client = vim.lsp.start_client({
  name = "skillc", cmd = _G.BENCH.cmd, cmd_env = _G.BENCH.env, root_dir = vim.fn.fnamemodify(path, ":h"),
  flags = { debounce_text_changes = 0 },
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      published[#published + 1] = { t = vim.loop.hrtime(), version = result.version, n = #result.diagnostics }
    end,
  },
})
vim.lsp.buf_attach_client(buf, client)

local function wait_version(version, limit)
  local got = nil
  vim.wait(limit or 120000, function()
    for _, p in ipairs(published) do
      if p.version == version then got = p; return true end
    end
    return false
  end, 1)
  return got
end

vim.wait(120000, function() return #published > 0 end, 1)  -- didOpen's version is 0 in Neovim 0.7
results.open = #published > 0 and (published[1].t - t_open) / 1e6 or -1

local function find(pattern, from_line)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i = from_line or 1, #lines do
    local s = lines[i]:find(pattern, 1, true)
    if s then return i - 1, s - 1, lines[i] end
  end
  error("not found: " .. pattern)
end

local function quiet(seconds)
  vim.wait(seconds * 1000, function() return false end, 10)
end

local function timed(name, edit)
  local times = {}
  for i = 1, repeat_n do
    quiet(_G.BENCH.quiet)
    local t0 = vim.loop.hrtime()
    edit(i)
    local p = wait_version(vim.api.nvim_buf_get_changedtick(buf))
    times[#times + 1] = p and (p.t - t0) / 1e6 or -1
  end
  results[name] = times
end

-- a comment after `start`
local row, col, line = find("  start b0_0")
vim.api.nvim_buf_set_text(buf, row, #line, row, #line, { "  # comment" })
wait_version(vim.api.nvim_buf_get_changedtick(buf))
timed("comment", function(i)
  local r, c, l = find("  # comment")
  vim.api.nvim_buf_set_text(buf, r, c + 4, r, #l, { "comment " .. i })
end)

local middle = _G.BENCH.middle
local state_row = find("model b" .. middle .. "_1 {")
timed("prompt", function(i)
  local r, c, l = find('prompt "Draft', state_row + 1)
  local s = c + #'prompt "'
  local e = l:find('"', s + 1, true) - 1
  vim.api.nvim_buf_set_text(buf, r, s, r, e, { "Draft " .. i .. "." })
end)

local bound = "10"
timed("edit", function(i)
  local r, c, l = find("when verdict == unsure and len(note) > " .. bound .. " -> b" .. middle .. "_4")
  local s = c + #"when verdict == unsure and len(note) > "
  local new = tostring(10 + i)
  vim.api.nvim_buf_set_text(buf, r, s, r, s + #bound, { new })
  bound = new
end)

local f = io.open(out, "w")
f:write(vim.fn.json_encode(results))
f:close()
vim.lsp.stop_client(client)
vim.cmd("qa!")
"""


def run_size(nvim: str, n: int, repeat: int, root: str | None, folder: Path) -> dict:
    """One Neovim session over a machine of about `n` states; its timings."""
    text = nested_loop_machine(n)
    path = folder / f"bench_{n}.skm"
    path.write_text(text)
    out = folder / f"result_{n}.json"
    env = {"PYTHONPATH": root} if root else {}
    config = {"path": str(path), "out": str(out), "repeat_n": repeat, "middle": max(1, n // 20) // 2,
              "cmd": [sys.executable, "-m", "skillc", "lsp"], "env": env,
              "quiet": 0.3 + (0.003 if n < 1000 else 0.004) * n}
    script = folder / "bench.lua"
    script.write_text(f"_G.BENCH = vim.fn.json_decode({json.dumps(json.dumps(config))})\n" + LUA)
    subprocess.run([nvim, "--headless", "--clean", "-c", f"luafile {script}"], cwd=root or os.getcwd(),
                   timeout=600, check=False, stdin=subprocess.DEVNULL)
    if not out.exists():
        raise SystemExit(f"neovim wrote no result for {n} states")
    return json.loads(out.read_text())


def _ms(values: list[float] | float | None) -> str:
    if values is None:
        return "-"
    if isinstance(values, (int, float)):
        return f"{values:.0f}"
    return f"{statistics.median(values):.1f} ({max(values):.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="50,500,1500")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--root", default=None, help="Run the server from this checkout instead of this one.")
    ap.add_argument("--nvim", default="nvim")
    args = ap.parse_args()
    nvim = shutil.which(args.nvim)
    if nvim is None:
        print(f"skipped: `{args.nvim}` is not on the PATH (apt-get install neovim)")
        return
    version = subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"{version}, median ms (slowest in parentheses), edit -> publishDiagnostics of its version")
    print("states | open | comment | prompt | edit")
    with tempfile.TemporaryDirectory(prefix="skillc-nvim-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            row = run_size(nvim, n, args.repeat, args.root, Path(tmp))
            print(" | ".join([str(n), _ms(row.get("open")), _ms(row.get("comment")), _ms(row.get("prompt")),
                              _ms(row.get("edit"))]), flush=True)


if __name__ == "__main__":
    main()
