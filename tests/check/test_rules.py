"""Rules inside fragment instances (check/rules.py): entering an instance part-way skips its rules, and
`skillc test` and `skillc score` judge a fragment's rules on every passage too."""

from __future__ import annotations

from skillc.diagnostics import has_errors
from tests.check.helpers import check_text as _check
from tests.check.helpers import codes as _codes

DELETE = """fragment guarded_delete(path: str) -> (done) {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var ok: enum { yes, no }
  var status: int
  start confirm
  judge confirm {
    reads path
    writes ok
    prompt "Confirm deletion?"
    when ok == yes -> delete
    -> done
  }
  tool delete {
    reads path
    call bash(command: "rm -rf " ++ quote(path))
    writes status = exit_code
    -> done
  }
  model never {
    reads path
    writes status
    prompt "x"
    -> done
  }
  rule order confirm before delete "Confirm before deleting."
  rule forbid never "Never do this."
}
machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input target: str
  var note: str
  start go
  model go {
    reads target
    writes note
    prompt "x"
    -> TARGET
  }
  use guarded_delete as gd(path: target) -> (done: finished)
  terminal finished: success
  fallback
}
"""


def test_jumping_past_a_fragment_order_rule_is_reported() -> None:
    result = _check(DELETE.replace("TARGET", "gd.delete"))
    found = [d for d in result.diagnostics if str(d.code) == "SKM221"]
    assert found, [str(d.code) for d in result.diagnostics]
    assert any("enters `gd` at `gd.delete`" in n for n in found[0].notes)
    assert "-> gd" in (found[0].hint or "")


def test_jumping_to_a_forbidden_state_inside_an_instance_is_reported() -> None:
    assert "SKM222" in _codes(DELETE.replace("TARGET", "gd.never"))


def test_entering_the_instance_by_its_name_stays_clean() -> None:
    assert not has_errors(_check(DELETE.replace("TARGET", "gd")).diagnostics)


def test_jumping_into_write_verify_skips_its_rules() -> None:
    text = """import "stdlib/write_verify.skm"
machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var letter: str
  var target: str = "out.txt"
  start draft
  model draft {
    writes letter
    prompt "Write."
    -> save.compare
  }
  use write_verify as save(content: letter, path: target) -> (verified: done, unverified: done)
  terminal done: success
  fallback
}
"""
    codes = _codes(text)
    assert "SKM220" in codes or "SKM221" in codes, codes


def test_skillc_test_judges_fragment_rules_on_every_passage() -> None:
    from skillc.testing.explore import explore

    text = DELETE.replace("TARGET", "gd.delete")
    report = explore(_check(text).machine, text, examples=10, seed=0)
    assert any(f.prop == "rule" and "before" in f.message for f in report.failures), report.failures
    text = DELETE.replace("TARGET", "gd")
    assert not explore(_check(text).machine, text, examples=10, seed=0).failures


def test_skillc_score_judges_fragment_rules_on_every_passage(tmp_path) -> None:
    """A recorded run that entered `gd` at `gd.delete` broke the fragment's order: score must report it violated."""
    import json

    from skillc.bench.score import score_run
    from skillc.runtime.record import load_run

    machine = _check(DELETE.replace("TARGET", "gd")).machine

    def score(states: list[str], mode: str = "machine"):
        records = [{"type": "header", "skillc.mode": mode},
                   *({"type": "step", "step": k, "state": s} for k, s in enumerate(states)),
                   {"type": "footer", "skillc.outcome": "success", "skillc.terminal": "finished",
                    "skillc.evidence": {}}]
        path = tmp_path / f"t{len(states)}{mode}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
        scored = score_run(load_run(path), path, requirements=(), workdir=None, verifier=None, machine=machine)
        return {v.quote: (v.status, v.reason) for v in scored.state_rules}

    bad = score(["go", "gd.delete"])
    assert bad["Confirm before deleting."] == ("violated", "`gd.delete` ran before `gd.confirm` in `gd`"), bad
    assert score(["go", "gd.confirm", "gd.delete"])["Confirm before deleting."][0] == "met"
    native = score(["native"], mode="native")
    assert native["Confirm before deleting."][0] == "not applicable"
