"""skillc.testing: generated machines pass the checker, runs agree with it, `skillc test` explores and reports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillc
from skillc import api
from skillc.runtime.values import apply_outputs
from skillc.testing import machines, outputs_for, runs
from skillc.testing.explore import check_run, explore, step_bound
from tests.conftest import EXAMPLES, ROOT

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(machines(structured=True))
def test_generated_machines_pass_the_checker(text: str) -> None:
    result = skillc.check(text)
    assert [str(d.code) for d in result.diagnostics if d.severity.name != "NOTE"] == [], text


@SETTINGS
@given(st.data())
def test_accepted_machines_behave_as_the_checker_promised(data) -> None:
    machine = skillc.check(data.draw(machines())).machine
    result = data.draw(runs(machine, max_steps=step_bound(machine)))
    assert check_run(machine, result, step_bound(machine)) == []


@SETTINGS
@given(st.data())
def test_outputs_for_makes_valid_and_invalid_outputs(data) -> None:
    machine = skillc.check(data.draw(machines())).machine
    states = [s for s in machine.states.values() if s.kind in ("model", "judge")]
    if not states:
        return
    state = data.draw(st.sampled_from(states))
    env = {}
    good = data.draw(outputs_for(machine, state))
    assert apply_outputs(machine, state, env, good)[1] == []
    bad = data.draw(outputs_for(machine, state, valid=False))
    assert apply_outputs(machine, state, env, bad)[1] != []


def test_livemath_reaches_full_transition_coverage_quickly() -> None:
    path = EXAMPLES / "livemath" / "livemath.skm"
    report = explore(skillc.check(path).machine, path.read_text(), examples=200, seed=0)
    assert report.coverage("transitions") == 1.0 and report.failures == []


BUGGY = """machine buggy {
  var items: map[str, int] = {}
  var n: int = 0
  start fill

  model fill {
    reads items
    writes items
    prompt "Record the items."
    -> done { n = items["k"] }
  }

  terminal done: success { requires n }
  fallback
}
"""


def test_skillc_test_reports_failures_with_a_replayable_trace(tmp_path: Path) -> None:
    f = tmp_path / "buggy.skm"
    f.write_text(BUGGY)
    env = {**os.environ, "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "skillc", "test", str(f), "--examples", "20", "--traces",
                        str(tmp_path / "runs")], capture_output=True, text=True, cwd=ROOT, env=env, timeout=240)
    assert r.returncode == 1
    assert "FAILED fallback: the runtime gave up although every output was valid" in r.stdout
    trace = r.stdout.split("replay: skillc replay ")[1].split()[1]
    assert Path(trace).is_file()
    ok = subprocess.run([sys.executable, "-m", "skillc", "test", str(EXAMPLES / "livemath" / "livemath.skm")],
                        capture_output=True, text=True, cwd=ROOT, env=env, timeout=240)
    assert ok.returncode == 0 and "12/12 transitions (100%)" in ok.stdout


READS_SKILL = """machine bundled {
  %s
  tool read(path: str, offset: int?, limit: int?) -> (content: str, lines: int)
  var notes: str
  start load

  tool load {
    call read(path: skill_dir ++ "/references/notes.md")
    writes notes = content
    -> done
  }

  terminal done: success { requires notes }
  fallback
}
"""


def test_skillc_test_explores_a_machine_that_reads_its_skill_folder(tmp_path: Path) -> None:
    """No tool runs in `skillc test`, so the skill folder stands in too: the source's folder, else a nominal one."""
    (tmp_path / "SKILL.md").write_text("# Bundled\n\nRead references/notes.md.\n")
    for name, source in (("sourced.skm", 'source "SKILL.md"'), ("bare.skm", "")):
        f = tmp_path / name
        f.write_text(READS_SKILL % source)
        result = api.explore(str(f), examples=5)
        assert result.report is not None and result.report.failures == [], result.diagnostics
        assert result.report.coverage("transitions") == 1.0
    # a failing run of such a machine is reported with a replay command that works: the trace's header names the
    # skill folder the run had, and `skillc replay` gives the run that folder again
    buggy = tmp_path / "buggy.skm"
    buggy.write_text(BUGGY.replace("  start fill\n", '  source "SKILL.md"\n  tool read(path: str, offset: int?, '
                                   'limit: int?) -> (content: str, lines: int)\n  var notes: str\n  start load\n\n'
                                   '  tool load {\n    call read(path: skill_dir ++ "/references/notes.md")\n'
                                   "    writes notes = content\n    -> fill\n  }\n"))
    env = {**os.environ, "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "skillc", "test", str(buggy), "--examples", "5", "--traces",
                        str(tmp_path / "runs")], capture_output=True, text=True, cwd=ROOT, env=env, timeout=240)
    assert r.returncode == 1 and "replay: skillc replay " in r.stdout, r.stdout + r.stderr
    command = r.stdout.split("replay: ")[1].split("\n")[0].split()
    replayed = subprocess.run([sys.executable, "-m", *command], capture_output=True, text=True, cwd=ROOT, env=env,
                              timeout=240)
    assert replayed.returncode == 0 and "replayed 2 steps to `fallback`" in replayed.stdout, replayed.stdout


def test_pytest_plugin_collects_machines_and_runs_custom_properties(tmp_path: Path) -> None:
    (tmp_path / "machines").mkdir()
    (tmp_path / "machines" / "livemath.skm").write_text((EXAMPLES / "livemath" / "livemath.skm").read_text())
    (tmp_path / "machines" / "SKILL.md").write_text((EXAMPLES / "livemath" / "SKILL.md").read_text())
    (tmp_path / "machines" / "buggy.skm").write_text(BUGGY)
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nskillc_machines = ["machines"]\n'
                                             'skillc_examples = "30"\n')
    (tmp_path / "test_props.py").write_text(
        "from skillc.testing.pytest_plugin import machine_property\n\n"
        "@machine_property('machines/livemath.skm', examples=15)\n"
        "def test_evidence(machine, result):\n"
        "    assert not result.missing_evidence\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=240)
    assert "2 passed" in r.stdout and "1 failed" in r.stdout, r.stdout[-2000:]
    assert "buggy.skm: fallback: the runtime gave up" in r.stdout


UNPAID = """machine spin {
  var answer: str = ""
  var verdict: enum { again, stop } = again
  start draft

  model draft {
    reads answer
    writes answer
    prompt "Draft."
    -> review
  }

  judge review {
    reads answer
    writes verdict
    prompt "Again?"
    when verdict == again -> draft
    -> done
  }

  terminal done: success { requires answer }
  fallback
}
"""

UNASSIGNED = """machine hole {
  var answer: str
  var note: str
  var fast: bool = false
  start route

  model route {
    writes fast
    prompt "Fast?"
    when fast -> write
    -> think
  }

  model think {
    writes answer
    prompt "Think."
    -> write
  }

  model write {
    reads answer
    writes note
    prompt "Write."
    -> done
  }

  terminal done: success
  fallback
}
"""


def _witness(text: str, code: str) -> list[str]:
    (d,) = [d for d in skillc.check(text).diagnostics if str(d.code) == code]
    line = d.witness[0]
    return line.split(" on ")[-1].split(" -> ") if code == "SKM210" else line.split(" -> ")


def test_a_definite_assignment_witness_replays_to_an_unset_read() -> None:
    from skillc.ir.loader import Loader  # noqa: F401  (the machine is loaded unchecked on purpose)
    from skillc.testing.explore import follow

    path = _witness(UNASSIGNED, "SKM210")
    assert path == ["route", "write"]
    machine = skillc.load(UNASSIGNED).machine
    outcome, env = follow(machine, path)
    assert outcome == "reached" and "answer" in machine.states["write"].reads and "answer" not in env


def test_an_unpaid_cycle_witness_replays_to_a_run_that_never_ends() -> None:
    from skillc.testing.explore import follow

    cycle = _witness(UNPAID, "SKM250")
    assert cycle[0] == cycle[-1] and set(cycle) == {"draft", "review"}
    machine = skillc.load(UNPAID).machine
    outcome, result = follow(machine, cycle, repeat=1000, max_steps=500)
    assert outcome == "run" and result.terminal == "fallback" and "step limit 500" in result.error
