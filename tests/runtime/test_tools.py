"""Tool states at run time (runtime/tools.py and the interpreter's tool step)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m skillc ARGS` from the repository root."""
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_an_optional_tool_result_left_out_is_none(tmp_path: Path) -> None:
    f = tmp_path / "opt.skm"
    f.write_text("""machine m {
  tool fetch(url: str) -> (body: str, note: str?)
  input url: str
  var body: str
  var note: str?
  start get
  tool get {
    reads url
    call fetch(url: url)
    writes body, note
    -> done
  }
  terminal done: success { requires body }
  fallback
}
""")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"tools": {"get": [{"body": "hi"}]}}))
    r = _cli("run", str(f), "--input", "url=x", "--executor", f"scripted:{script}",
             "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
