"""tools/codemod_codes.py on a synthetic module: code strings at call sites become the stages' constants."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("codemod_codes", ROOT / "tools" / "codemod_codes.py")
assert _spec and _spec.loader
codemod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(codemod)

SOURCE = '''"""A check."""

from skillc.diagnostics import Diagnostic, make
from skillc.ir.machine import Machine


def check_x(m: Machine, codes: list[str]) -> list[Diagnostic]:
    found = [make("SKM200", "unreachable", m.span)]
    found.append(make(
        "SKM103",
        "undefined",
        hint="declare it"))
    found.append(make("SKM240" if m.name else "SKM241", "dead", m.span))
    found.append(make(code="SKM900", message="internal"))
    if any(d.code == "SKM241" for d in found):  # data: stays a string
        codes.append("SKM241")
    return found


class Lowerer:
    def _error(self, code: str, message: str) -> Diagnostic:
        return make(code, message)

    def name(self) -> Diagnostic:
        return self._error("SKM105", "not a label")


EXPECTED = Diagnostic(code="SKM103", message="kept")
'''


def _rewrite(text: str, rel: str = "skillc/check/example.py") -> tuple[str, list[str]]:
    return codemod.rewrite(text, rel, codemod.load_tables())


def test_call_sites_become_constants_and_data_stays() -> None:
    new, report = _rewrite(SOURCE)
    assert 'make(check_codes.UNREACHABLE_STATE, "unreachable", m.span)' in new  # `codes` is a parameter here
    assert "        diagnostics_codes.UNDEFINED_VARIABLE,\n        \"undefined\"," in new  # a multi-line call
    assert "make(check_codes.DEAD_EDGE if m.name else check_codes.SHADOWED_EDGE" in new
    assert "make(code=diagnostics_codes.INTERNAL_ERROR" in new
    assert 'self._error(diagnostics_codes.UNDEFINED_LABEL, "not a label")' in new
    assert "def _error(self, code: Code, message: str)" in new  # the forwarded parameter's type follows
    assert 'd.code == "SKM241"' in new and 'codes.append("SKM241")' in new  # data is left alone
    assert 'Diagnostic(code="SKM103", message="kept")' in new
    assert "from skillc.check import codes as check_codes\n" in new
    assert "from skillc.diagnostics import codes as diagnostics_codes\n" in new
    assert "from skillc.diagnostics import Code, Diagnostic, make\n" in new
    ast.parse(new)
    assert any('"SKM200" -> check_codes.UNREACHABLE_STATE' in line for line in report)


def test_a_second_run_changes_nothing() -> None:
    once, _ = _rewrite(SOURCE)
    twice, report = _rewrite(once)
    assert twice == once and report == []


def test_the_own_table_is_imported_as_codes() -> None:
    text = 'from skillc.diagnostics import make\n\n\ndef f():\n    return make("SKM210", "x")\n'
    new, _ = _rewrite(text)
    assert 'make(codes.READ_BEFORE_ASSIGNMENT, "x")' in new
    assert "from skillc.check import codes\n" in new


def test_a_package_init_never_binds_codes_to_another_table() -> None:
    """In skillc/check/__init__.py, `codes` is the submodule skillc.check.codes."""
    text = 'from skillc.diagnostics import make\n\n\ndef f():\n    return make("SKM900", "x")\n'
    new, _ = _rewrite(text, "skillc/check/__init__.py")
    assert "from skillc.diagnostics import codes as diagnostics_codes\n" in new
    assert "make(diagnostics_codes.INTERNAL_ERROR" in new


def test_the_command_line_checks_and_rewrites(tmp_path: Path) -> None:
    target = tmp_path / "skillc" / "check"
    target.mkdir(parents=True)
    (target / "example.py").write_text(SOURCE, encoding="utf-8")
    env_path = str(ROOT)
    run = [sys.executable, str(ROOT / "tools" / "codemod_codes.py")]
    check = subprocess.run([*run, "--check", "skillc"], cwd=tmp_path, capture_output=True, text=True,
                           env={"PYTHONPATH": env_path, "PATH": ""}, timeout=120)
    assert check.returncode == 1, check.stderr
    assert (target / "example.py").read_text(encoding="utf-8") == SOURCE  # --check writes nothing
    done = subprocess.run([*run, "skillc"], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": env_path, "PATH": ""}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "check_codes.UNREACHABLE_STATE" in (target / "example.py").read_text(encoding="utf-8")
    assert "skillc/check/example.py:8:" in done.stdout
