"""An exported graph runs on LangGraph to the same terminal, path and evidence as `skillc run` with the same
scripted answers, and its trace is a skillc trace (`skillc replay` accepts it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from skillc import api
from skillc.export.runtime import ExportError
from tests.conftest import ROOT

LIVEMATH = ROOT / "examples" / "livemath" / "livemath.skm"
INPUTS = {"question": "What is 6 times 7?", "options": ["40", "42", "44", "48", "49"]}
FITS = {f"fit_{x}": "fits" if x == "B" else "contradicts" for x in "ABCDE"}
# The first pick contradicts the review: the machine repairs once, picks again, and goes on.
SCRIPT: dict[str, Any] = {
    "outputs": {"analyze": [{"restatement": "6 * 7", "work": "6 * 7 = 42", "result": "42"}],
                "review_options": [FITS],
                "pick": [{"choice": "C", "doubt": "", "sanity_check": "?"},
                         {"choice": "B", "doubt": "", "sanity_check": "42 / 6 = 7"}],
                "judge_complete": [{"completeness": "complete"}],
                "repair": [{"work": "6 * 7 = 42", "result": "42", **FITS}]},
    "tools": {"write": [{"stdout": "", "exit_code": 0}], "read_back": [{"stdout": "B", "exit_code": 0}]}}


def _script(tmp_path: Path, script: dict[str, Any], name: str = "answers.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(script), encoding="utf-8")
    return f"scripted:{path}"


def _skillc_run(tmp_path: Path, executor: str, trace: str) -> Any:
    report = api.run(api.RunConfig(machine=str(LIVEMATH), executor=executor, trace=trace, workdir=str(tmp_path),
                                   journal=str(tmp_path / "runs.sqlite"),
                                   inputs=tuple(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                                                for k, v in INPUTS.items())))
    assert report.result is not None, (report.error, report.usage, report.diagnostics)
    return report.result


@pytest.mark.parametrize("case", ["repair-loop", "write-fails", "invalid-output"])
def test_same_terminal_path_and_evidence_as_skillc_run(case: str, tmp_path: Path, exported) -> None:
    script = json.loads(json.dumps(SCRIPT))
    if case == "write-fails":
        script["tools"]["write"] = [{"stdout": "", "exit_code": 1}]
    if case == "invalid-output":
        script["outputs"]["judge_complete"] = ["not json"]
    _, module = exported(LIVEMATH)
    ours = module.run(dict(INPUTS), executor=_script(tmp_path, script, "a.json"), workdir=str(tmp_path),
                      trace=str(tmp_path / "graph.jsonl"))
    theirs = _skillc_run(tmp_path, _script(tmp_path, script, "b.json"), str(tmp_path / "run.jsonl"))
    assert (ours.outcome, ours.terminal, ours.evidence) == (theirs.outcome, theirs.terminal, theirs.evidence)
    assert ours.visited == theirs.visited and ours.edges == theirs.edges and ours.steps == theirs.steps
    assert (ours.reason.kind if ours.reason else None) == (theirs.reason.kind if theirs.reason else None)
    expected = {"repair-loop": ("success", "verified"), "write-fails": ("failed", "fallback"),
                "invalid-output": ("failed", "fallback")}[case]
    assert (ours.outcome, ours.terminal) == expected
    replayed = api.replay(str(LIVEMATH), str(tmp_path / "graph.jsonl"))  # the file's hash: no --other-machine
    assert replayed.report is not None and replayed.report.ok, replayed.report and replayed.report.message


def test_the_step_limit_ends_in_the_fallback(tmp_path: Path, exported) -> None:
    _, module = exported(LIVEMATH)
    result = module.run(dict(INPUTS), executor=_script(tmp_path, SCRIPT), max_steps=3, workdir=str(tmp_path))
    assert (result.outcome, result.terminal, result.steps) == ("failed", "fallback", 3)
    assert result.reason is not None and result.reason.kind == "step_limit"


def test_the_graph_is_plain_langgraph(exported) -> None:
    _, module = exported(LIVEMATH)
    graph = module.builder.compile()
    nodes = set(graph.get_graph().nodes)
    assert {"analyze", "pick", "repair", "write", "read_back", "verified", "unverified", "fallback"} <= nodes
    assert module.builder.branches["read_back"]["after_read_back"].ends == {
        "fallback": "fallback", "verified": "verified", "unverified": "unverified"}


def test_bad_inputs_and_an_unconfigured_run_raise(tmp_path: Path, exported) -> None:
    from skillc.runtime.interpreter import RunError

    _, module = exported(LIVEMATH)
    module.STEPS._config = None
    with pytest.raises(ExportError, match="configure the run first"):
        module.graph.invoke(dict(INPUTS))
    with pytest.raises(RunError, match="question"):
        module.run({"options": INPUTS["options"]}, executor=_script(tmp_path, SCRIPT), workdir=str(tmp_path))


def test_cli_writes_the_module_and_import_reads_it_back(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}, timeout=120)

    r = cli("export", "langgraph", str(LIVEMATH), "-o", "lm_graph.py")
    assert r.returncode == 0 and (tmp_path / "lm_graph.py").is_file(), r.stderr
    assert cli("export", "langgraph", str(LIVEMATH)).stdout == (tmp_path / "lm_graph.py").read_text(encoding="utf-8")
    back = cli("import", "langgraph", "lm_graph:builder")
    assert back.returncode == 0 and "machine livemath {" in back.stdout
    assert "SKM224" in back.stderr  # SKILL.md is not beside the module: its quotations are not checked
    missing = cli("export", "langgraph", str(tmp_path / "none.skm"))
    assert missing.returncode == 2 and "SKM901" in missing.stdout


KIT = """machine kit_host {
  allow "Read", "Write"
  use tools std(read, write)
  input notes: str
  var written: str
  var back: str
  start save
  tool save {
    reads notes
    call write(path: "NOTES.md", content: notes)
    writes written = path
    -> check
  }
  tool check {
    call read(path: "NOTES.md")
    writes back = content
    -> done
  }
  terminal done: success { requires written, exists("NOTES.md"), file("NOTES.md") == WANT }
  fallback
}
"""


@pytest.mark.parametrize("want", ["notes", '"something else"'])
def test_kit_tools_and_success_predicates_as_skillc_run(want: str, tmp_path: Path, exported) -> None:
    """The kit's real tools in the run's work folder, and the terminal's predicates judged over it on arrival: a
    predicate that fails ends both runs in the fallback (reason `predicate`)."""
    machine = tmp_path / "kit.skm"
    machine.write_text(KIT.replace("WANT", want), encoding="utf-8")
    executor = _script(tmp_path, {"outputs": {}})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, module = exported(machine)
    ours = module.run({"notes": "hello"}, executor=executor, workdir=str(tmp_path / "a"))
    report = api.run(api.RunConfig(machine=str(machine), executor=executor, workdir=str(tmp_path / "b"),
                                   journal=str(tmp_path / "runs.sqlite"), inputs=("notes=hello",)))
    theirs = report.result
    assert theirs is not None, report
    assert (ours.outcome, ours.terminal, ours.evidence, ours.visited) == \
        (theirs.outcome, theirs.terminal, theirs.evidence, theirs.visited)
    assert (tmp_path / "a" / "NOTES.md").read_text(encoding="utf-8") == "hello"
    assert ours.outcome == ("success" if want == "notes" else "failed")
    assert (ours.reason.kind if ours.reason else None) == (theirs.reason.kind if theirs.reason else None)
