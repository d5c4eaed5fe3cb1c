"""Every bench code's bad example yields the code and its good example does not (the registry cannot run them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillc.bench import codes
from skillc.bench.results import open_writer, read_results
from skillc.bench.suite import load_suite
from skillc.diagnostics import Diagnostic


def _suite_codes(tmp_path: Path, text: str) -> list[str]:
    """The codes of a suite file holding `text`, in a folder with a SKILL.md."""
    (tmp_path / "SKILL.md").write_text("# demo\n", encoding="utf-8")
    (tmp_path / "suite.toml").write_text(text, encoding="utf-8")
    return [str(d.code) for d in load_suite(tmp_path / "suite.toml").diagnostics]


def _task_line_codes(tmp_path: Path, text: str) -> list[str]:
    """The codes of a suite whose tasks are the JSONL `text`."""
    (tmp_path / "tasks.jsonl").write_text(text, encoding="utf-8")
    return _suite_codes(tmp_path, '[suite]\nskill = "SKILL.md"\ntasks = "tasks.jsonl"\n')


def _results_codes(tmp_path: Path, text: str) -> list[str]:
    """The codes of reading a results file holding `text`."""
    (tmp_path / "results.jsonl").write_text(text, encoding="utf-8")
    return [str(d.code) for d in read_results(tmp_path / "results.jsonl").diagnostics]


def _writer_codes(tmp_path: Path, text: str) -> list[str]:
    """The codes of the Python example, run with open_writer recording what it returned."""
    found: list[str] = []

    def recording(path: str) -> object:
        result = open_writer(tmp_path / path)
        if isinstance(result, Diagnostic):
            found.append(str(result.code))
        return result

    exec(compile(text.replace("from skillc.bench.results import open_writer\n", ""), "example", "exec"),
         {"open_writer": recording})
    return found


def _bench_codes(tmp_path: Path, text: str) -> list[str]:
    """The codes printed by the `skillc` command lines of `text` (lines, or commands joined by `&&`), run in a copy
    of the runner's fixture folder; other commands (`pip`, `ray start`) are not run."""
    import contextlib
    import shlex
    import shutil

    from click.testing import CliRunner

    from skillc.cli import main

    folder = tmp_path / "beats"
    shutil.copytree(Path(__file__).parent / "fixtures" / "beats", folder)
    printed = ""
    with contextlib.chdir(folder):
        for command in (c for line in text.splitlines() for c in line.split(" && ")):
            if command.startswith("skillc "):
                printed += CliRunner().invoke(main, [*shlex.split(command)[1:], "--quiet"]).output
    return re.findall(r"\[(SKM\d{3})\]", printed)


def _run(code: codes.Code, text: str, tmp_path: Path) -> list[str]:
    if code.lang == "shell":
        return _bench_codes(tmp_path, text)
    if code.lang == "toml":
        return _suite_codes(tmp_path, text)
    if code.lang == "python":
        return _writer_codes(tmp_path, text)
    if code.code.startswith("SKM70"):
        return _task_line_codes(tmp_path, text)
    return _results_codes(tmp_path, text)


#: The Ray backend's codes (SKM725–SKM729) need a live Ray cluster (and, for SKM725, an environment without
#: Ray): tests/bench/test_ray_backend.py::test_ray_code_examples runs their examples against the one it starts.
#: SKM723 needs a real interrupt: tests/bench/test_runner.py::test_sigint_keeps_the_rows_and_resumes sends one.
_EXAMPLES = [c for c in codes.ALL if not "SKM725" <= c.code <= "SKM729" and c.code != "SKM723"]


@pytest.mark.parametrize("code", _EXAMPLES, ids=lambda c: c.code)
def test_bad_example_yields_its_code(code: codes.Code, tmp_path: Path) -> None:
    assert code.code in _run(code, code.bad, tmp_path)


@pytest.mark.parametrize("code", _EXAMPLES, ids=lambda c: c.code)
def test_good_example_is_clean(code: codes.Code, tmp_path: Path) -> None:
    assert _run(code, code.good, tmp_path) == []


def test_table_is_well_formed() -> None:
    """Numbers in the bench range, unique codes and slugs, slugs in kebab case, every example present."""
    assert all(re.fullmatch(r"SKM7[0-5]\d", c.code) for c in codes.ALL)
    assert len({c.code for c in codes.ALL}) == len({c.slug for c in codes.ALL}) == len(codes.ALL)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", c.slug) and c.bad and c.good for c in codes.ALL)
    assert all(c.stage == "bench" for c in codes.ALL)
    names = {name for name in vars(codes) if name.isupper() and isinstance(getattr(codes, name), codes.Code)}
    assert {c.slug.replace("-", "_").upper() for c in codes.ALL} == names
