"""Release hygiene and the rough edges users meet first: the changelog, PyPI metadata, shell completion, the
pre-commit `rev` the docs give, SARIF paths relative to the repository root, `skillc dot --trace` with another
machine's trace, and the commands that need a package skillc does not install."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from skillc.version import __version__
from tests.conftest import ROOT
from tests.ecosystem.test_sarif_and_schemas import sarif_validator

MACHINE = """machine m {
  var a: str = "x"
  start s
  model s {
    reads a
    writes a
    prompt "p"
    -> done
  }
  terminal done: success
  fallback
}
"""
# `a` read before it is assigned: an error (SKM210) for the SARIF log
BROKEN = MACHINE.replace(' = "x"', "")


def skillc(*args: str, cwd: Path = ROOT, hide: tuple[str, ...] = (), env: dict[str, str] | None = None,
           ) -> subprocess.CompletedProcess[str]:
    """Run the command line in a fresh interpreter; `hide` makes those packages unimportable (as if not installed)."""
    code = f"import sys; sys.modules.update(dict.fromkeys({list(hide)!r})); sys.argv = ['skillc', *sys.argv[1:]]; " \
           "from skillc.__main__ import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, stdin=subprocess.DEVNULL)


# ---------------------------------------------------------------- the changelog and PyPI metadata


def test_the_changelog_lists_the_waves_so_far() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n") and "## [Unreleased]" in text
    waves = re.findall(r"^### (\d{4}-\d\d-\d\d): ", text, re.M)
    assert waves == sorted(waves, reverse=True) and {"2026-11-30", "2026-12-01"} <= set(waves)
    assert f"`v` + the version of `skillc/version.py` (the first: `v{__version__}`)" in text


def test_pypi_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    classifiers = project["classifiers"]
    assert "License :: OSI Approved :: MIT License" not in classifiers  # the SPDX `license` says it (PEP 639)
    assert {"Programming Language :: Python :: 3.11", "Typing :: Typed", "Environment :: Console"} <= set(classifiers)
    assert all(c.count(" :: ") >= 1 for c in classifiers)
    urls = project["urls"]
    assert {"Homepage", "Documentation", "Source", "Issues", "Changelog"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    extras = project["optional-dependencies"]
    assert {"mkdocs", "mkdocs-material", "mkdocstrings[python]"} <= {re.split(r"[<>=]", d)[0] for d in extras["docs"]}
    assert set(extras["docs"]) <= set(extras["dev"])
    assert (ROOT / "skillc" / "py.typed").is_file()


# ---------------------------------------------------------------- shell completion and the pre-commit rev


def test_shell_completion_as_documented() -> None:
    script = skillc(env={"_SKILLC_COMPLETE": "bash_source"})
    assert script.returncode == 0 and "_skillc_completion()" in script.stdout and "complete " in script.stdout
    words = skillc(env={"_SKILLC_COMPLETE": "bash_complete", "COMP_WORDS": "skillc ch", "COMP_CWORD": "1"})
    assert words.returncode == 0 and "plain,check" in words.stdout.split()
    options = skillc(env={"_SKILLC_COMPLETE": "bash_complete", "COMP_WORDS": "skillc check --sarif", "COMP_CWORD": "2"})
    assert "plain,--sarif-root" in options.stdout.split()
    docs = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert '_SKILLC_COMPLETE=bash_source skillc' in docs and "_SKILLC_COMPLETE=zsh_source" in docs


def test_the_pre_commit_rev_names_the_release_tag() -> None:
    """The docs pin `rev: v<version>`; the tag exists once the release is made (releases are tagged so)."""
    tag = f"v{__version__}"
    for path in (ROOT / "docs" / "ci.md", ROOT / ".pre-commit-hooks.yaml"):
        revs = re.findall(r"^\s*#?\s*rev: (\S+)", path.read_text(encoding="utf-8"), re.M)
        assert revs and set(revs) == {tag}, (path, revs)
    assert "pin a commit instead" in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- SARIF relative to the repository root


def test_sarif_paths_relative_to_the_root(tmp_path: Path) -> None:
    (tmp_path / "skills" / "a b").mkdir(parents=True)
    (tmp_path / "skills" / "a b" / "m.skm").write_text(BROKEN, encoding="utf-8")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.skm"
    outside.write_text(BROKEN, encoding="utf-8")
    here = tmp_path / "skills"
    plain = skillc("check", "--format", "sarif", "a b/m.skm", cwd=here)
    rooted = skillc("check", "--format", "sarif", "--sarif-root", str(tmp_path), "a b/m.skm", str(outside), cwd=here)
    assert plain.returncode == rooted.returncode == 1, rooted.stderr

    def uri(log: dict, i: int = 0) -> dict:
        return log["runs"][0]["results"][i]["locations"][0]["physicalLocation"]["artifactLocation"]

    before, after = json.loads(plain.stdout), json.loads(rooted.stdout)
    assert uri(before) == {"uri": "a%20b/m.skm", "uriBaseId": "%SRCROOT%"}
    assert "originalUriBaseIds" not in before["runs"][0]
    found = sorted((uri(after, i)["uri"] for i in range(len(after["runs"][0]["results"]))), key=len)
    assert found[0] == "skills/a%20b/m.skm" and found[-1].startswith("file:///") and found[-1].endswith("-outside.skm")
    assert after["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}
    sarif_validator().validate(after)
    missing = skillc("check", "--format", "sarif", "--sarif-root", str(tmp_path / "nope"), "a b/m.skm", cwd=here)
    assert missing.returncode == 2 and "nope" in missing.stderr


# ---------------------------------------------------------------- dot --trace with another machine's trace


def _trace(path: Path, machine: str, state: str) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in (
        {"type": "header", "skillc.trace_version": 2, "skillc.machine": machine, "inputs": {}},
        {"type": "step", "step": 0, "state": state, "kind": "model", "output": {}, "edge": 0},
        {"type": "footer", "skillc.terminal": "done", "skillc.outcome": "success", "skillc.steps": 1})) + "\n",
        encoding="utf-8")
    return path


def test_dot_with_another_machines_trace_warns_and_fails(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(MACHINE, encoding="utf-8")
    own = skillc("dot", "m.skm", "--trace", str(_trace(tmp_path / "own.jsonl", "m", "s")), "-o", "own.dot",
                 cwd=tmp_path)
    assert own.returncode == 0 and own.stderr == "" and "×1" in (tmp_path / "own.dot").read_text(encoding="utf-8")
    for name, state, reason in (("warehouse", "s", "recorded with machine `warehouse`, not `m`"),
                                ("m", "think", "visits states `m` does not have: `think`")):
        other = skillc("dot", "m.skm", "--trace", str(_trace(tmp_path / "other.jsonl", name, state)), "-o",
                       "other.dot", cwd=tmp_path)
        assert other.returncode == 1, other.stderr
        assert "warning[SKM525]" in other.stderr and reason in other.stderr
        assert (tmp_path / "other.dot").read_text(encoding="utf-8").startswith("digraph")  # still drawn
    to_stdout = skillc("dot", "m.skm", "--trace", str(tmp_path / "other.jsonl"), cwd=tmp_path)
    assert to_stdout.returncode == 1 and to_stdout.stdout.startswith("digraph") and "SKM525" not in to_stdout.stdout


# ---------------------------------------------------------------- a package skillc does not install


def test_import_langgraph_without_langgraph_is_a_usage_error(tmp_path: Path) -> None:
    r = skillc("import", "langgraph", "agent:graph", cwd=tmp_path, hide=("langgraph",))
    assert r.returncode == 2, r.stderr
    assert "needs the langgraph package (pip install langgraph)" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_report_only_without_the_bench_extra_says_so(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    rows = (ROOT / "docs" / "experiments" / "livemath-local" / "results.jsonl").read_text(encoding="utf-8")
    (out / "results.jsonl").write_text("".join(rows.splitlines(keepends=True)[:6]), encoding="utf-8")
    r = skillc("bench", "--report-only", "-o", str(out), hide=("matplotlib", "scipy"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "pip install 'skillc[bench]'" in r.stderr and "Traceback" not in r.stderr
    assert not (out / "report.html").exists()
    with_extra = skillc("bench", "--report-only", "-o", str(out))
    assert with_extra.returncode == 0 and (out / "report.html").is_file(), with_extra.stderr
