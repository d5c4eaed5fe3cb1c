"""State rules judged on visited states: machine mode only, `required` whatever the outcome, passages of an
instance one by one."""

from __future__ import annotations

import json
from pathlib import Path

import skillc
from skillc.ir.machine import Machine
from skillc.runtime.record import load_run
from skillc.runtime.score import judge_state_rules, passages

MACHINE = """machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var a: str
  var b: str
  start plan
  model plan { writes a prompt "plan" -> act }
  tool act { call bash(command: "ls") writes b = stdout -> done }
  terminal done: success { requires a }
  fallback
  rule required plan "Always plan."
  rule order plan before act "Plan before acting."
  rule forbid fallback_helper "Never improvise."
  model fallback_helper { writes a prompt "x" -> done }
}
"""


def _machine() -> Machine:
    machine = skillc.check(MACHINE).machine
    assert machine is not None
    return machine


def _judge(tmp_path: Path, states: list[str], outcome: str = "success", mode: str = "machine") -> dict[str, tuple]:
    m = _machine()
    records = [{"type": "header", "skillc.mode": mode},
               *({"type": "step", "step": k, "state": s} for k, s in enumerate(states)),
               {"type": "footer", "skillc.outcome": outcome, "skillc.terminal": "done", "skillc.evidence": {}}]
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    rules = [(f"rule-{i + 1}", r) for i, r in enumerate(m.rules)]
    return {v.id: (v.status, v.reason) for v in judge_state_rules(m, rules, load_run(path))}


def test_a_required_state_is_violated_whatever_the_outcome(tmp_path: Path) -> None:
    for outcome in ("success", "failed"):
        assert _judge(tmp_path, ["act"], outcome)["rule-1"] == ("violated", "`plan` never ran")
    assert _judge(tmp_path, ["plan", "act"])["rule-1"] == ("met", "")


def test_order_and_forbid_on_states(tmp_path: Path) -> None:
    verdicts = _judge(tmp_path, ["act", "plan", "fallback_helper"])
    assert verdicts["rule-2"] == ("violated", "`act` ran before `plan`")
    assert verdicts["rule-3"] == ("violated", "`fallback_helper` ran at step 3")
    assert _judge(tmp_path, ["plan"])["rule-2"] == ("met", "")  # `act` never ran: the order holds


def test_state_rules_are_not_applicable_outside_machine_mode(tmp_path: Path) -> None:
    verdicts = _judge(tmp_path, ["native"], mode="prompt-only")
    assert {status for status, _ in verdicts.values()} == {"not applicable"}
    assert verdicts["rule-1"][1] == "about machine states; a prompt-only run visits none"


def test_passages_are_the_maximal_stretches_inside_an_instance() -> None:
    visited = ["go", "gd.confirm", "gd.delete", "back", "gd.delete"]
    assert list(passages(visited, "gd.", "done")) == [(1, 3, "back"), (4, 5, "done")]
