"""Issue #33: machines under test from the command line (--machine, --build), --tasks, --dry-run, `[inputs]`
bindings, per-cell setup and teardown, per-task and conditional requirements, `{machine}` in executor specs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillc.bench.results import read_results
from skillc.bench.suite import Task, bound_inputs, load_suite
from skillc.bench.verify import FileVerifier
from skillc.cli import main
from tests.bench.helpers import bench_cli, copy_beats


@pytest.fixture
def beats(tmp_path: Path) -> Path:
    """A copy of the runner's fixture folder (a suite, its machine, a script)."""
    return copy_beats(tmp_path)


def _rows(out: Path) -> dict[tuple[str, str], tuple[bool | None, bool | None, tuple[str, ...], str | None]]:
    """(task, mode) → (success, rfc, violated, error) of a bench's rows."""
    results = read_results(out / "results.jsonl")
    return {(r.cell.task, r.cell.mode): (r.success, r.rfc, r.violated, r.error) for r in results.rows}


def test_two_machines_are_two_columns_compared_like_modes(beats: Path, tmp_path: Path) -> None:
    """Two `--machine` files (one that never reads back) each get cells `machine:LABEL`; native runs once; the
    report compares the machines with the paired statistics and has one line per machine."""
    lazy = (beats / "beats.skm").read_text(encoding="utf-8").replace(
        'when readback == answer ++ "\\n" -> delivered\n    -> fallback', '-> delivered')
    lazy = lazy.replace('call bash(command: "cat answer.txt")', 'call bash(command: "true")')
    lazy = lazy.replace("rule required read_back", "# rule required read_back")
    (beats / "lazy.skm").write_text(lazy, encoding="utf-8")
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "suite.toml"), "--machine", str(beats / "beats.skm"), "--machine",
                        f"quick={beats / 'lazy.skm'}", "--modes", "machine,native", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "t1,t2", "-o", str(out))
    assert code == 0, text
    rows = _rows(out)
    assert sorted(rows) == sorted((t, m) for t in ("t1", "t2") for m in ("machine:beats", "machine:quick", "native"))
    assert rows[("t1", "machine:beats")][:2] == (True, True)
    assert rows[("t1", "machine:quick")][:3] == (True, False, ("read-back",))
    assert "machine:beats vs machine:quick" in text and "2 pairs" in text
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "One line per machine under test" in report
    assert "| beats | " in report and "| quick | " in report


def test_build_offline_with_a_binding(beats: Path, tmp_path: Path) -> None:
    """`--build offline` compiles the suite's skill into OUT/builds; the offline draft names its input `task`,
    which the suite binds from the tasks' `question`; without the binding it is refused once (SKM741)."""
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "suite.toml"), "--build", "offline", "--modes", "machine", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "t1", "-o", str(out))
    assert code == 2 and "SKM741" in text and "`task`" in text, text
    suite = (beats / "suite.toml").read_text(encoding="utf-8") + '\n[inputs]\ntask = "Answer: {question}"\n'
    (beats / "bound.toml").write_text(suite, encoding="utf-8")
    code, text = bench_cli(str(beats / "bound.toml"), "--build", "offline", "--modes", "machine", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "t1", "-o", str(out))
    assert code == 0, text
    assert (out / "builds" / "offline.skm").is_file()
    trace = next((out / "cells" / "t1").rglob("trace.jsonl"))
    header = json.loads(trace.read_text(encoding="utf-8").splitlines()[0])
    assert header["inputs"]["task"] == "Answer: six times seven?"


def test_tasks_filter_and_no_match(beats: Path, tmp_path: Path) -> None:
    """`--tasks` keeps the matching task ids; a pattern that keeps none is SKM743 with the ids."""
    code, text = bench_cli(str(beats / "suite.toml"), "--modes", "machine", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "x*", "-o", str(tmp_path / "o"))
    assert code == 2 and "SKM743" in text and "t1, t2, t3, t4" in text
    code, text = bench_cli(str(beats / "suite.toml"), "--modes", "machine", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "t[34]", "-o", str(tmp_path / "o"))
    assert code == 0 and sorted(t for t, _ in _rows(tmp_path / "o")) == ["t3", "t4"]


def test_dry_run_runs_nothing_and_sets_up_one_cell(beats: Path, tmp_path: Path) -> None:
    """`--dry-run` resolves the cells and runs the setup once in a scratch folder: no results, no cell folders;
    a failing setup is SKM744 with its output."""
    suite = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        'tools = ["marks.py"]', 'tools = ["marks.py"]\nsetup = "echo made > made.txt; ls"')
    (beats / "setup.toml").write_text(suite, encoding="utf-8")
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "setup.toml"), "--executor", f"scripted:{beats / 'script.json'}",
                        "-o", str(out), "--dry-run")
    assert code == 0, text
    assert "12 cells, 12 would run" in text and "setup ran in" in text and "left 1 files" in text
    assert not (out / "results.jsonl").exists() and not (out / "cells").exists()
    code, text = bench_cli(str(beats / "broken-setup.toml"), "--executor", f"scripted:{beats / 'script.json'}",
                        "-o", str(out), "--dry-run")
    assert code == 2 and "SKM744" in text and "exited 3" in text and "making the fixture" in text


def test_setup_and_teardown_run_in_every_cell(beats: Path, tmp_path: Path) -> None:
    """The setup makes the fixture the verifier needs (answer.txt's expected twin), its output is in setup.log;
    the teardown runs after scoring; a background process the setup left is ended with its group."""
    suite = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        'tools = ["marks.py"]',
        'tools = ["marks.py"]\nsetup = "printf \'42\\\\n\' > expected.txt; echo set up $SKILLC_TASK_ID; '
        '(sleep 300 & echo $! > ../bg.pid) "\nteardown = "echo torn down >> torn.txt"')
    suite = suite.replace('[verify]\nfile = "answer.txt"\nequals = "42\\n"',
                          '[verify]\nshell = "cmp answer.txt expected.txt"')
    (beats / "setup.toml").write_text(suite, encoding="utf-8")
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "setup.toml"), "--modes", "machine,native", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "t1", "-o", str(out))
    assert code == 0, text
    rows = _rows(out)
    assert rows[("t1", "machine")][:2] == (True, True) and rows[("t1", "native")][0] is False
    cell = next((out / "cells" / "t1" / "machine").glob("*/r0"))
    assert "set up t1" in (cell / "setup.log").read_text(encoding="utf-8")
    assert (cell / "work" / "torn.txt").read_text(encoding="utf-8") == "torn down\n"
    status = Path(f"/proc/{(cell / 'bg.pid').read_text(encoding='utf-8').strip()}/status")
    assert not status.exists() or "State:\tZ" in status.read_text(encoding="utf-8")  # ended with its group


def test_a_failing_setup_is_the_rows_error(beats: Path, tmp_path: Path) -> None:
    """A setup that fails gives the cell a row whose error names it; the run never starts."""
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "broken-setup.toml"), "--modes", "machine", "--executor",
                        f"scripted:{beats / 'script.json'}", "-o", str(out))
    assert code == 0, text
    assert _rows(out)[("t1", "machine")] == (None, None, (), "setup failed: `echo making the fixture; exit 3` "
                                                               "exited 3 (see setup.log)")


def test_task_requirements_and_the_conditional_kind(beats: Path, tmp_path: Path) -> None:
    """A `[[task.require]]` is judged on that task only; `before` is met when its `then` never happens and
    violated when it comes first; a task requirement reusing a suite requirement's id is SKM713."""
    suite = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        '[[task]]\nid = "t2"\ninputs = { question = "forty plus two?" }',
        '[[task]]\nid = "t2"\ninputs = { question = "forty plus two?" }\n\n[[task.require]]\nid = "never-cat"\n'
        'kind = "no-tool"\ntool = "bash"\nmatches = "^cat "\n\n[[task.require]]\nid = "mark-before-rm"\n'
        'kind = "before"\nfirst = { tool = "mark" }\nthen = { tool = "bash", matches = "rm " }\n\n'
        '[[task.require]]\nid = "cat-before-write"\nkind = "before"\nfirst = { tool = "bash", matches = "^cat" }\n'
        'then = { tool = "bash", matches = "> answer" }')
    (beats / "req.toml").write_text(suite, encoding="utf-8")
    loaded = load_suite(beats / "req.toml")
    assert loaded.ok, loaded.diagnostics
    assert [r.id for r in loaded.suite.tasks[1].requirements] == ["never-cat", "mark-before-rm", "cat-before-write"]
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "req.toml"), "--modes", "machine", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "t1,t2", "-o", str(out))
    assert code == 0, text
    rows = _rows(out)
    assert rows[("t1", "machine")][:3] == (True, True, ())
    assert rows[("t2", "machine")][:3] == (True, False, ("never-cat", "cat-before-write"))
    (beats / "dup.toml").write_text(suite.replace('id = "never-cat"', 'id = "answer"'), encoding="utf-8")
    assert [str(d.code) for d in load_suite(beats / "dup.toml").diagnostics] == ["SKM713"]


def test_machine_placeholder_picks_a_script_per_machine(beats: Path, tmp_path: Path) -> None:
    """`{machine}` in an executor spec is the cell's machine label (`native` for native cells); a missing file
    for one of them is SKM731 before anything runs."""
    shutil.copy(beats / "script.json", beats / "beats.json")
    out = tmp_path / "out"
    spec = f"scripted:{beats}/{{machine}}.json"
    code, text = bench_cli(str(beats / "suite.toml"), "--modes", "machine,native", "--executor", spec, "--tasks", "t1",
                        "-o", str(out))
    assert code == 2 and "SKM731" in text and "native.json" in text
    shutil.copy(beats / "script.json", beats / "native.json")
    code, text = bench_cli(str(beats / "suite.toml"), "--modes", "machine,native", "--executor", spec, "--tasks", "t1",
                        "-o", str(out))
    assert code == 0, text and _rows(out)[("t1", "machine")][0] is True


def test_bound_inputs() -> None:
    """A template that is one field keeps the value's type; a longer one is text (JSON for non-strings); `{id}`
    is the task id; `{{` is a brace; a field the task lacks raises; consumed fields the machine does not
    declare are left out."""
    task = Task("t9", {"request": "push", "n": 3, "extra": "x"}, FileVerifier("a"))
    bindings = {"task": "{request}", "count": "{n}", "label": "{id}: {request} x{n} {{literal}}"}
    assert bound_inputs(task, bindings, {"task", "count", "label"}) == \
        {"task": "push", "count": 3, "label": "t9: push x3 {literal}", "extra": "x"}
    assert bound_inputs(task, {"task": "{request}"}, {"request"}) == {"request": "push", "n": 3, "extra": "x"}
    with pytest.raises(ValueError, match="no field `missing`"):
        bound_inputs(task, {"task": "{missing}"}, {"task"})


def test_a_binding_with_a_bad_field_is_skm740(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("# s\n", encoding="utf-8")
    (tmp_path / "s.toml").write_text('[suite]\nskill = "SKILL.md"\n\n[inputs]\ntask = "{a.b}"\n\n[[task]]\nid = "t"\n'
                                     'verify = { file = "x" }\n', encoding="utf-8")
    found = load_suite(tmp_path / "s.toml").diagnostics
    assert [(str(d.code), d.span.start_pos[0] if d.span else 0) for d in found] == [("SKM740", 5)]


def test_a_changed_setup_or_task_requirement_refuses_resumption(beats: Path, tmp_path: Path) -> None:
    """The setup command, the bindings and a task's own requirements are fingerprinted: changing one after rows
    exist is SKM738, naming it."""
    base = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        'tools = ["marks.py"]', 'tools = ["marks.py"]\nsetup = "true"')
    (beats / "s.toml").write_text(base, encoding="utf-8")
    out = tmp_path / "out"
    args = ("--modes", "machine", "--executor", f"scripted:{beats / 'script.json'}", "--tasks", "t1", "-o", str(out))
    assert bench_cli(str(beats / "s.toml"), *args)[0] == 0
    (beats / "s.toml").write_text(base.replace('setup = "true"', 'setup = "echo other"'), encoding="utf-8")
    code, text = bench_cli(str(beats / "s.toml"), *args)
    assert code == 2 and "SKM738" in text and "setup" in text
    task_req = base.replace('inputs = { question = "six times seven?" }', 'inputs = { question = "six times seven?" }'
                            '\n\n[[task.require]]\nkind = "no-tool"\ntool = "mark"')
    (beats / "s.toml").write_text(task_req, encoding="utf-8")
    code, text = bench_cli(str(beats / "s.toml"), *args)
    assert code == 2 and "SKM738" in text and "t1 (requirements)" in text


def test_a_verifier_is_told_the_task(beats: Path, tmp_path: Path) -> None:
    """A shell verifier sees the cell's task id and inputs (SKILLC_TASK_ID, SKILLC_TASK_INPUTS) and the trace
    (SKILLC_TRACE): one verifier can judge every task by what it asked."""
    suite = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        '[verify]\nfile = "answer.txt"\nequals = "42\\n"',
        '[verify]\nshell = \'test "$SKILLC_TASK_ID" = t2 && echo "$SKILLC_TASK_INPUTS" | grep -q "forty plus" '
        '&& test -s "$SKILLC_TRACE"\'')
    (beats / "told.toml").write_text(suite, encoding="utf-8")
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "told.toml"), "--modes", "machine", "--executor",
                        f"scripted:{beats / 'script.json'}", "--tasks", "t1,t2", "-o", str(out))
    assert code == 0, text
    rows = _rows(out)
    assert (rows[("t1", "machine")][0], rows[("t2", "machine")][0]) == (False, True)


def test_commands_inside_scripts_are_judged_when_asked(beats: Path, tmp_path: Path) -> None:
    """A run that calls `bash inner.sh`: the script's own commands are recorded (commands.log beside the trace)
    and judged by `tool`/`no-tool` requirements marked `inside = true`; unmarked ones see the call only (a
    `git branch -D` inside a called script left RFC true)."""
    suite = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        'tools = ["marks.py"]',
        'tools = ["marks.py"]\nsetup = "printf \'b=wip\\\\ngit --version >/dev/null\\\\n\' > inner.sh"')
    suite += ('\n[[require]]\nid = "no-git-inside"\nkind = "no-tool"\ntool = "bash"\nmatches = "^git "\ninside = true\n'
              '\n[[require]]\nid = "no-git-top"\nkind = "no-tool"\ntool = "bash"\nmatches = "^git "\n'
              '\n[[require]]\nid = "sets-b"\nkind = "tool"\ntool = "bash"\nmatches = "^b=wip$"\ninside = true\n')
    (beats / "inside.toml").write_text(suite, encoding="utf-8")
    script = json.loads((beats / "script.json").read_text(encoding="utf-8"))
    script["outputs"]["native"] = [{"action": "bash", "args": {"command": "bash inner.sh"}},
                                   {"action": "finish", "outcome": "success", "evidence": {"answer": "42"}}]
    (beats / "inside.json").write_text(json.dumps(script), encoding="utf-8")
    out = tmp_path / "out"
    code, text = bench_cli(str(beats / "inside.toml"), "--modes", "native", "--executor",
                        f"scripted:{beats / 'inside.json'}", "--tasks", "t1", "-o", str(out))
    assert code == 0, text
    violated = _rows(out)[("t1", "native")][2]
    assert "no-git-inside" in violated and "no-git-top" not in violated and "sets-b" not in violated
    cell = next((out / "cells" / "t1" / "native").glob("*/r0"))
    assert (cell / "commands.log").read_text(encoding="utf-8").splitlines() == ["b=wip", "git --version > /dev/null"]
    scored = CliRunner().invoke(main, ["score", str(beats / "beats.skm"), str(cell / "trace.jsonl"), "--suite",
                                       str(beats / "inside.toml"), "--task", "t1", "--json"])
    assert '"no-git-inside", "status": "violated"' in scored.output


def test_dry_run_json(beats: Path, tmp_path: Path) -> None:
    """`--dry-run --json` is one object: the cells that would run as [task, mode, executor, repeat], the machines."""
    code, text = bench_cli(str(beats / "suite.toml"), "--executor", f"scripted:{beats / 'script.json'}",
                           "--tasks", "t1", "--modes", "machine", "-o", str(tmp_path / "o"), "--dry-run", "--json")
    found = json.loads(text)
    assert code == 0 and found["dry_run"] is True and found["cells"] == 1
    assert found["planned"] == [["t1", "machine", f"scripted:{beats / 'script.json'}", 0]]
    assert found["machines"] == {"beats": str(beats / "beats.skm")}
