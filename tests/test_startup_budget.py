"""Start-up budget (issue 31): which modules `skillc --version`, `fmt` and `check` may load.

Times depend on the machine; the set of modules a command imports does not, and it is what a start costs. Each
command runs in a fresh interpreter through the console script's entry point (`skillc.__main__.main`), and the
modules in `sys.modules` when it exits are compared with the budget: `--version` loads no stage and not click;
`fmt` loads the syntax stage only (no IR, no checker, no solver); `check` of a machine without guards loads no
solver; no command loads the third-party `regex` module (Lark would, but skm.lark needs only `re`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIVEMATH = ROOT / "examples" / "livemath" / "livemath.skm"  # 12 states, guards: the solver is needed

# No guard, so no question for the solver.
HELLO = """\
machine hello {
  var reply: str

  start draft

  model draft {
    writes reply
    prompt "Say hello."
    -> done
  }

  terminal done: success { requires reply }
  fallback
}
"""

_RUN = """\
import atexit, json, sys
out, sys.argv = sys.argv[1], ["skillc", *sys.argv[2:]]
atexit.register(lambda: open(out, "w", encoding="utf-8").write(json.dumps(sorted(sys.modules))))
from skillc.__main__ import main
main()
"""

STAGES = ("skillc.syntax", "skillc.ir", "skillc.check", "skillc.runtime", "skillc.render", "skillc.frontends",
          "skillc.improve", "skillc.lsp")


def loaded(tmp_path: Path, *args: str) -> set[str]:
    """The modules in `sys.modules` when `skillc *args` exits (run in a fresh interpreter, from `tmp_path`)."""
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", _RUN, str(out), *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert out.is_file(), done.stderr
    modules: list[str] = json.loads(out.read_text(encoding="utf-8"))
    return set(modules)


def under(modules: set[str], *packages: str) -> set[str]:
    """The modules of `modules` that are one of `packages` or inside one."""
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


@pytest.fixture
def hello(tmp_path: Path) -> Path:
    path = tmp_path / "hello.skm"
    path.write_text(HELLO, encoding="utf-8")
    return path


def test_version_loads_no_stage_and_not_click(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "--version")
    assert "skillc.version" in modules  # the run did answer --version
    assert not under(modules, *STAGES, "click", "attrs", "attr", "lark", "z3", "skillc.cli", "skillc.api")


def test_fmt_loads_the_syntax_stage_only(tmp_path: Path, hello: Path) -> None:
    modules = loaded(tmp_path, "fmt", "--check", str(hello))
    assert "skillc.syntax.printer" in modules  # the run did format
    assert not under(modules, "skillc.ir", "skillc.check", "z3", "regex")


def test_check_without_guards_loads_no_solver(tmp_path: Path, hello: Path) -> None:
    modules = loaded(tmp_path, "check", str(hello))
    assert "skillc.check.passes" in modules  # the run did check
    assert not under(modules, "z3", "skillc.check.smt", "regex")


def test_check_with_guards_loads_the_solver_but_not_regex(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "check", str(LIVEMATH))
    assert {"z3", "skillc.check.smt"} <= modules  # the budget above is not vacuous: guards do load the solver
    assert not under(modules, "regex")


def test_regex_stays_importable_after_lark_loaded_without_it() -> None:
    """The block on `regex` while Lark loads is lifted: later code can still import it."""
    code = ("import sys; import skillc.syntax, lark.lark; assert 'regex' not in sys.modules; "
            "assert not lark.lark._has_regex; import regex; print(regex.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "regex", done.stderr
