"""Bad input never produces a traceback: arbitrary bytes, bad encodings, huge and deep files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillc
from skillc.syntax.parser import decode_source
from tests.conftest import ROOT, codes


def _check(path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", "check", str(path), *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def _no_traceback(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stdout + r.stderr
    assert "SKM900" not in r.stdout


def test_non_utf8_file(tmp_path: Path) -> None:
    f = tmp_path / "latin1.skm"
    f.write_bytes('machine m { doc "café" }'.encode("latin-1"))
    r = _check(f)
    _no_traceback(r)
    assert r.returncode == 1
    assert "error[SKM001]" in r.stdout and "invalid byte 0xe9" in r.stdout and ":1:21" in r.stdout


def test_binary_file(tmp_path: Path) -> None:
    f = tmp_path / "bin.skm"
    f.write_bytes(b"\x00\x01\x02ELF\x00")
    r = _check(f)
    _no_traceback(r)
    assert r.returncode == 1 and "SKM001" in r.stdout and "NUL" in r.stdout


def test_empty_file(tmp_path: Path) -> None:
    f = tmp_path / "empty.skm"
    f.write_text("")
    r = _check(f)
    _no_traceback(r)
    assert r.returncode == 1 and "SKM100" in r.stdout


def test_missing_file_is_usage_error(tmp_path: Path) -> None:
    r = _check(tmp_path / "nope.skm")
    _no_traceback(r)
    assert r.returncode == 2 and "SKM901" in r.stdout


def test_directory_where_file_expected(tmp_path: Path) -> None:
    (tmp_path / "d.skm").mkdir()
    result = skillc.load(tmp_path / "d.skm")
    assert codes(result.diagnostics) == ["SKM901"]


def test_deeply_nested_expression_is_a_diagnostic() -> None:
    guard = "(" * 1000 + "x" + ")" * 1000
    text = f"machine m {{ var x: bool start s model s {{ writes x prompt \"p\" when {guard} -> s -> s }} fallback }}"
    result = skillc.load(text)
    assert codes(result.diagnostics) == ["SKM007"]
    long_sum = " + ".join(["1"] * 1000)
    result = skillc.load(f"machine m {{ var x: int = {long_sum} }}")
    assert codes(result.diagnostics) == ["SKM007"]
    nots = "not " * 1000 + "true"
    assert codes(skillc.load(f"machine m {{ var x: bool = {nots} }}").diagnostics) == ["SKM007"]


def test_five_megabyte_file(tmp_path: Path) -> None:
    lines = ["machine big {", "  var x: str", "  start s0"]
    i = 0
    while sum(len(x) + 1 for x in lines) < 5_000_000:
        prose = f"Step {i} of a very long procedure. " * 60
        lines.append(f'  model s{i} {{\n    writes x\n    prompt """\n      {prose}\n      """\n    -> s{i + 1}\n  }}')
        i += 1
    lines.append(f"  terminal s{i}: success {{ requires x }}\n  fallback\n}}")
    f = tmp_path / "big.skm"
    f.write_text("\n".join(lines) + "\n")
    assert f.stat().st_size >= 5_000_000
    start = time.perf_counter()
    result = skillc.load(f)
    elapsed = time.perf_counter() - start
    assert result.ok, codes(result.diagnostics)
    assert len(result.machine.states) == i + 2
    assert elapsed < 60


def test_five_megabyte_garbage(tmp_path: Path) -> None:
    f = tmp_path / "junk.skm"
    f.write_text("machine m { " + "}{ " * 1_700_000)
    r = _check(f, "--format", "concise")
    _no_traceback(r)
    assert r.returncode == 1 and "SKM" in r.stdout


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_end_in_diagnostics(data: bytes) -> None:
    source, diags = decode_source("fuzz.skm", data)
    if source is None:
        assert diags and str(diags[0].code) == "SKM001"
        return
    result = skillc.load(source.text, path="fuzz.skm")
    assert all(str(d.code) != "SKM900" for d in result.diagnostics)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list('machine{}()[]<>=!-+*/%.,:;?"#\n abcxyz0123456789_') +
                                ["model", "judge", "tool", "when", "->", "start", "var", "input",
                                 "terminal", "fallback", "rule", "use", "fragment", "import",
                                 "reads", "writes", "prompt", "call", "enum", "list", "map",
                                 '"""', "counter", "max", "record", "success", "and", "or", "not"]),
                max_size=60).map(" ".join))
def test_token_soup_ends_in_diagnostics(text: str) -> None:
    result = skillc.load(text, path=str(ROOT / "soup.skm"))
    assert all(str(d.code) != "SKM900" for d in result.diagnostics)


def test_a_lone_surrogate_from_a_file_is_printed_escaped_not_an_internal_error(tmp_path: Path) -> None:
    """Found by `bench/fuzz.py --files`: a trace header holding `\\ud800` made `skillc replay` fail with SKM900
    while printing its (right) refusal. Whatever the locale's error handler, text goes out escaped."""
    from tests.runtime.helpers import ECHO

    machine = tmp_path / "m.skm"
    machine.write_text(ECHO, encoding="utf-8")
    script = tmp_path / "s.json"
    script.write_text('{"outputs": {"think": [{"answer": "hello"}]}}', encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    run = subprocess.run([sys.executable, "-m", "skillc", "run", str(machine), "--input", "q=x", "--executor",
                          f"scripted:{script}", "--trace", str(trace), "--workdir", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = trace.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"skillc.machine_hash": "', '"skillc.machine_hash": "\\\\ud800', 1)
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for env in ({"LC_ALL": "C.UTF-8"}, {"LC_ALL": "C", "PYTHONIOENCODING": "utf-8:surrogateescape"}):
        done = subprocess.run([sys.executable, "-m", "skillc", "replay", str(machine), str(trace)],
                              capture_output=True, timeout=120, env={**os.environ, **env})
        out = (done.stdout + done.stderr).decode("utf-8", "replace")
        assert done.returncode == 1 and "SKM900" not in out and "\\ud800" in out, out


def test_a_trace_header_naming_an_impossible_folder_is_not_an_internal_error(tmp_path: Path) -> None:
    """Found by `bench/fuzz.py --files` at 10,000 inputs: `skillc score` stat'ed a header's 100,000-character
    workdir and stopped with SKM900 (ENAMETOOLONG). Such a folder is no folder of this machine: not judged."""
    from skillc.bench.score import recorded_workdir
    from skillc.runtime.record import load_run

    sys.path.insert(0, str(ROOT / "bench"))
    from fuzz import valid_inputs

    data = valid_inputs(tmp_path)["skillc-trace"].decode("utf-8")
    for bad in ("x" * 100_000, "a\\u0000b"):
        trace = tmp_path / "t.jsonl"
        first, rest = data.split("\n", 1)
        header = json.loads(first)
        header["skillc.workdir"] = bad.encode().decode("unicode_escape")
        trace.write_text(json.dumps(header) + "\n" + rest, encoding="utf-8")
        assert recorded_workdir(load_run(trace), trace) is None


def test_the_real_material_sweep_finds_nothing_on_a_folder_that_reads_its_references(tmp_path: Path) -> None:
    """`bench/sweep.py` on one folder whose machine reads a bundled reference through `skill_dir` and whose front
    matter holds an unquoted `: `: built, every command clean (`skillc test` once stopped on such machines, SKM900;
    the front matter was refused, SKM303); and one mutated play of a recorded LLM build ends in a verdict."""
    from bench.sweep import replay_mutated, sweep_folder

    skill = tmp_path / "skills" / "notes"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: notes\ndescription: Summarise notes: read the guide first.\n---\n"
                                    "# Notes\n\n## Workflow\n\n1. Read [references/guide.md](references/guide.md) "
                                    "completely before you start.\n2. Summarise the notes the user gives, as the guide "
                                    "says.\n3. Write the summary to summary.md.\n", encoding="utf-8")
    (skill / "references" / "guide.md").write_text("# Guide\n\nBe brief.\n", encoding="utf-8")
    row = sweep_folder(("skills", str(skill), str(tmp_path), 10))
    assert row.get("built") and row["findings"] == [], row
    play = replay_mutated((str(ROOT / "corpus" / "llm" / "mhattingpete__git-pushing.exchange.jsonl"), 1))
    assert play["findings"] == [], play


def test_the_run_sweep_runs_a_real_machine_in_the_box_to_a_replayed_end(tmp_path: Path) -> None:
    """`bench/sweep_runs.py` on the LLM compiler's create-branch machine: built from its recorded exchange, run with
    the real kit in the box (git really runs in a fresh repository), every run replays; no finding."""
    from bench.sweep_runs import _build, box_run

    folder = ROOT / "corpus" / "skills" / "sentry__create-branch"
    built = _build((str(folder), str(tmp_path),
                    f"recorded:{ROOT / 'corpus' / 'llm' / 'sentry__create-branch.exchange.jsonl'}"))
    assert built is not None
    rows = [box_run((*built, seed, None)) for seed in (1, 2)]
    assert all(r["findings"] == [] for r in rows), rows
    assert all(r.get("outcome") in ("success", "failed", "partial") for r in rows), rows
    assert sum(r.get("tools", 0) for r in rows) >= 2, rows  # git ran for real: a tool step at least each run


def test_the_run_sweep_stands_in_for_tools_nothing_implements(tmp_path: Path, monkeypatch) -> None:
    """A machine calling a service's tool (declared, no implementation): the sweep writes a `--tools` module whose
    stand-in answers with results of the declared types, picked by the arguments, or refuses; resumes name it too."""
    import random

    from bench import sweep_runs

    machine = skillc.check("""machine notes {
  use tools std(bash)
  tool notion_search(query: str) -> (hits: int, title: str?)
  tool json(query: str) -> (hits: int)
  input query: str
  var hits: int
  start look
  tool look {
    reads query
    call notion_search(query: query)
    writes hits = hits
    -> again
  }
  tool again {
    reads query
    call json(query: query)
    writes hits = hits
    -> done
  }
  terminal done: success { requires hits }
  fallback
}
""").machine
    assert machine is not None
    monkeypatch.chdir(tmp_path)
    assert sweep_runs._standins(machine, str(tmp_path), random.Random(1)) == ["json", "notion_search"]
    from skillc.runtime.tools import load_module_tools

    module = load_module_tools(tmp_path / sweep_runs.STANDINS, confined=False)  # as `--tools` loads it
    assert sorted(module) == ["json", "notion_search"]  # a tool may be named like the module's imports
    json_hits = []
    for n in range(8):
        try:
            json_hits.append(module["json"](query=f"j{n}")["hits"])
        except RuntimeError:
            pass
    assert json_hits and all(isinstance(h, int) for h in json_hits)  # `json` the tool did not shadow json the module
    answers, refused = {}, 0
    for n in range(40):
        try:
            answers[f"q{n}"] = module["notion_search"](query=f"q{n}")
        except RuntimeError:
            refused += 1
    assert 0 < refused < 20 and len(answers) == 40 - refused
    assert all(module["notion_search"](query=q) == a for q, a in answers.items())  # picked by the arguments
    answers = list(answers.values())
    assert all(isinstance(a["hits"], int) and (a["title"] is None or isinstance(a["title"], str)) for a in answers)
    assert "--tools" in sweep_runs._resume("m.skm", "r1")  # a journal keeps no --tools: the resume names them


def test_the_run_sweep_holds_each_finding_against_the_run(tmp_path: Path) -> None:
    """The sweep's findings can fire: a file tool the box stopped instead of the runtime's places, an exit code that
    disagrees with the outcome, an answer outside the menu that a run takes."""
    from bench import sweep_runs

    trace = tmp_path / "trace.jsonl"
    steps = [{"type": "step", "step": 0, "kind": "tool", "gen_ai.tool.name": "write",
              "skillc.errors": [{"message": "[Errno 13] Permission denied: '/etc/x'"}]},
             {"type": "step", "step": 1, "kind": "tool", "gen_ai.tool.name": "bash",
              "tool_result": {"stderr": "Permission denied"}}]
    footer = {"type": "footer", "skillc.steps": 2}
    trace.write_text("".join(json.dumps(r) + "\n" for r in [{"type": "header"}, *steps, footer]), encoding="utf-8")
    row: dict = {"findings": []}
    assert sweep_runs._tool_calls(trace, row) == 2
    assert [what for what, _ in row["findings"]] == ["places"]  # bash is not confined by the places: not a finding
    trace.write_text("".join(json.dumps(r) + "\n" for r in [{"type": "header"}, steps[0], steps[0],
                                                             {**footer, "skillc.steps": 3}]), encoding="utf-8")
    row = {"findings": []}
    sweep_runs._tool_calls(trace, row)  # a step twice, and the last one missing: a trace a resume got wrong
    assert row["findings"][-1] == ("trace", "steps written twice: ['0'], missing: [1, 2], footers: 1")

    scratch = tmp_path / "scratch"
    for name in ("runs.sqlite", "runs.sqlite-wal", "runs.sqlite.leases", "trace.jsonl", "inputs.json"):
        (scratch / name).mkdir(parents=True)
    assert sweep_runs._strays(scratch) == []
    (scratch / "chosen.txt").write_text("prod")  # a resume that acted in the folder it was typed in
    assert sweep_runs._strays(scratch) == ["chosen.txt"]

    answers = iter([(5, '{"outcome": "success"}', "", None)])
    original = sweep_runs._cli_streams
    sweep_runs._cli_streams = lambda args: next(answers)  # type: ignore[assignment]
    try:
        row = {"findings": []}
        assert sweep_runs._run(["run"], row, "run") == {"outcome": "success"}
        assert row["findings"] == [("run", "exit 5 with the outcome 'success'")]
        sweep_runs._cli_streams = lambda args: (0, '{"outcome": "success"}', "", None)  # type: ignore[assignment]
        row = {"findings": []}
        report = {"outcome": "waiting", "run_id": "r1", "waiting": {"options": ["yes", "no"]}}
        assert sweep_runs._answer(report, "m.skm", __import__("random").Random(1), row) is None
        assert row["findings"][0][0] == "answer" and "outside the menu" in row["findings"][0][1]
    finally:
        sweep_runs._cli_streams = original  # type: ignore[assignment]
