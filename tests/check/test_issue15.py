"""Regressions for issue 15: machines that checked clean and then broke the checker's promise at run time,
and the internal errors found beside them. Each test fails on the checker before the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import skillc
from skillc.diagnostics import has_errors
from skillc.ir.evaluate import EvalError, evaluate
from tests.conftest import ROOT


def _check(text: str, **kw):
    return skillc.check(text, path=str(ROOT / "case.skm"), **kw)


def _codes(text: str, **kw) -> list[str]:
    return sorted(d.code for d in _check(text, **kw).diagnostics if d.severity.name != "NOTE")


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120)


# ------------------------------------------------------------------ 1a. entering an instance part-way

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
    found = [d for d in result.diagnostics if d.code == "SKM221"]
    assert found, [d.code for d in result.diagnostics]
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


# ------------------------------------------------------------------ 1b. several assignments to one counter

def _counter_machine(edge: str, top: int = 2) -> str:
    return f"""machine m {{
  var answer: str
  counter tries max {top}
  start think
  model think {{
    writes answer
    prompt "p"
    {edge}
    -> done
  }}
  model again {{
    writes answer
    prompt "p"
    -> done
  }}
  terminal done: success
  fallback
}}
"""


def test_two_increments_on_one_edge_are_added_up() -> None:
    assert "SKM251" in _codes(_counter_machine('when answer == "" -> again { tries += 1, tries += 1 }', top=1))
    assert "SKM251" in _codes(_counter_machine('when answer == "" and tries < 2 -> again { tries += 1, tries += 1 }'))
    assert not has_errors(_check(_counter_machine(
        'when answer == "" and tries < 1 -> again { tries += 1, tries += 1 }')).diagnostics)


def test_a_reset_then_an_increment_past_the_maximum_is_an_overflow() -> None:
    found = [d for d in _check(_counter_machine('when answer == "" -> again { tries = 2, tries += 1 }')).diagnostics
             if d.code == "SKM251"]
    assert found and "to 3" in found[0].message


def test_an_increment_before_a_reset_can_overflow_on_the_way() -> None:
    # The runtime checks the bound after each assignment, so `tries += 1` at tries = 2 fails before the reset.
    assert "SKM251" in _codes(_counter_machine('when answer == "" -> again { tries += 1, tries = 0 }'))
    assert "SKM251" not in _codes(_counter_machine('when answer == "" and tries < 2 -> again { tries += 1, tries = 0 }'))


def test_a_double_increment_pays_for_a_loop() -> None:
    text = _counter_machine('when answer == "" and tries < 1 -> think { tries += 1, tries += 1 }')
    assert [c for c in _codes(text) if c != "SKM200"] == [], _codes(text)  # `again` is unused here


def test_a_reset_composed_after_an_increment_does_not_pay() -> None:
    assert "SKM250" in _codes(_counter_machine('when answer == "" and tries < 2 -> think { tries += 1, tries = 0 }'))


# ------------------------------------------------------------------ 1c. floats are IEEE doubles

def _guards(*edges: str, extra: str = "") -> str:
    body = "\n    ".join(edges)
    return f"""machine m {{
  input n: int
  input x: float
  var answer: str
  counter tries max 2
{extra}  start think
  model think {{
    writes answer
    prompt "p"
    {body}
    -> done
  }}
  terminal done: success
  fallback
}}
"""


def test_float_rounding_is_not_called_impossible() -> None:
    assert "SKM240" not in _codes(_guards("when x + 1.0 == x -> done"))
    assert "SKM240" not in _codes(_guards("when n / 1 != n -> done"))
    assert "SKM240" not in _codes(_guards("when x != x -> done"))  # NaN
    assert 2**53 + 1.0 == 2**53 and (2**53 + 1) / 1 != 2**53 + 1  # what the run does


def test_float_rounding_does_not_prove_a_counter_bound() -> None:
    assert "SKM251" in _codes(_guards("when tries < 2 or n + 0.5 == n -> think { tries += 1 }"))
    assert "SKM251" in _codes(_guards("when tries < 2 or x + 0.5 == x -> think { tries += 1 }"))


def test_plain_float_facts_are_still_proven() -> None:
    assert "SKM240" in _codes(_guards("when x > 1.5 and x < 1.0 -> done"))
    assert "SKM240" in _codes(_guards("when n > 2.5 and n < 2.7 -> done"))  # an int beside a float constant
    assert "SKM241" in _codes(_guards("when x >= 0.5 -> done", "when x > 0.75 -> done"))


# ------------------------------------------------------------------ 2. guards that fail at run time

TAGS = """machine m {
  input tags: list[str]
  var answer: str
  start think
  model think {
    writes answer
    prompt "p"
    EDGES
    -> fallback
  }
  terminal done: success
  terminal other: partial
  fallback
}
"""


def test_an_index_that_fails_makes_the_guard_false_not_its_negation() -> None:
    text = TAGS.replace("EDGES", 'when tags[0] == "urgent" -> done\n    when tags[0] != "urgent" -> other')
    assert "SKM241" not in _codes(text)
    try:  # the runtime: evaluating the guard on an empty list fails, and a failing guard is false
        evaluate(_check(text).machine.states["think"].edges[0].guard, {"tags": []})
        raise AssertionError("indexing an empty list should fail")
    except EvalError:
        pass


def test_a_guarded_index_is_modelled_exactly() -> None:
    text = TAGS.replace("EDGES", 'when len(tags) > 0 and tags[0] == "urgent" -> done\n'
                        '    when len(tags) > 0 and tags[0] != "urgent" -> other\n    when len(tags) == 0 -> done')
    assert "SKM241" in _codes(text)
    assert "SKM240" in _codes(TAGS.replace("EDGES", 'when len(tags) == 0 and tags[0] == "x" -> done'))


def test_division_by_zero_in_a_guard_is_false_at_run_time() -> None:
    assert "SKM241" not in _codes(_guards("when 10 / n > 1.0 -> done", "when not (10 / n > 1.0) -> done",
                                          ).replace("    -> done\n  }", "    -> fallback\n  }"))


def test_overflow_in_a_guard_is_an_eval_error() -> None:
    from skillc.ir import expr as ir
    from skillc.ir import types as T

    e = ir.BinOp(T.FLOAT, op="+", left=ir.Var(T.INT, name="n"), right=ir.Const(T.FLOAT, value=0.5))
    try:
        evaluate(e, {"n": 10**400})
        raise AssertionError("expected an EvalError")
    except EvalError:
        pass


# ------------------------------------------------------------------ 3. quotations and rules

SOURCED = """machine m {
  source "SKILL.md"
  var answer: str
  start think
  model think {
    writes answer
    prompt "p"
    -> done
  }
  USE
  terminal done: success
  fallback
  RULE
}
"""

LOCAL = """fragment step() -> (out) {
  model inner {
    writes answer
    prompt "p"
    -> out
  }
  var answer: str
  start inner
  rule required inner "QUOTE"
}
"""


def _sourced(tmp_path: Path, rule: str, doc: str, use: str = "", config: str | None = None) -> list[str]:
    (tmp_path / "SKILL.md").write_text(doc)
    if config is not None:
        (tmp_path / "skillc.toml").write_text(config)
    f = tmp_path / "m.skm"
    f.write_text(SOURCED.replace("RULE", rule).replace("USE", use))
    return sorted(d.code for d in skillc.check(f).diagnostics if d.severity.name != "NOTE")


def test_empty_blank_and_one_word_quotations_are_rejected(tmp_path: Path) -> None:
    doc = "# Skill\n\nAlways think before you answer.\n"
    for quote in ("", "   ", "A", "Always think"):
        assert "SKM225" in _sourced(tmp_path, f'rule required think "{quote}"', doc), quote
    assert _sourced(tmp_path, 'rule required think "Always think before"', doc) == []


def test_the_minimum_is_configurable(tmp_path: Path) -> None:
    doc = "Always think before you answer.\n"
    assert _sourced(tmp_path, 'rule required think "Always"', doc, config="quote-min-words = 1\n") == []
    assert "SKM290" in _sourced(tmp_path, 'rule required think "Always think first"', doc,
                                config="quote-min-words = 0\n")


def test_rules_of_local_fragments_are_checked_against_the_skill(tmp_path: Path) -> None:
    doc = "Always think before you answer.\n"
    use = "use step as s() -> (out: done)"
    (tmp_path / "SKILL.md").write_text(doc)
    for quote, expected in (("Never mentioned in the skill.", ["SKM223"]), ("think before you", [])):
        f = tmp_path / "m.skm"
        f.write_text(LOCAL.replace("QUOTE", quote) + SOURCED.replace("RULE", "").replace("USE", use)
                     .replace("-> done\n  }", "-> s\n  }", 1))
        codes = sorted(d.code for d in skillc.check(f).diagnostics if d.severity.name != "NOTE")
        assert codes == expected, (quote, codes)


def test_a_hard_wrapped_line_starting_with_a_number_is_text(tmp_path: Path) -> None:
    doc = "Ship no more than\n100. Then stop and report.\n"
    assert _sourced(tmp_path, 'rule required think "Ship no more than 100. Then stop and report."', doc) == []
    # A list still loses its markers, however it is numbered.
    doc = "Steps:\n\n1. Plan the work.\n2. Do the work carefully.\n\n7. Check the work twice.\n"
    assert _sourced(tmp_path, 'rule required think "Check the work twice."', doc) == []
    assert _sourced(tmp_path, 'rule required think "Plan the work. Do the work carefully."', doc) == []


def test_forbid_fallback_is_an_error() -> None:
    text = SOURCED.replace('  source "SKILL.md"\n', "").replace("USE", "").replace(
        "RULE", 'rule forbid fallback "Never fail."')
    assert _codes(text) == ["SKM146"]


# ------------------------------------------------------------------ 4. internal errors

SOLO = """fragment solo() -> (out) {
  start out
}
machine m {
  start a
  USES
  terminal done: success
  fallback
}
"""


def test_a_self_routing_pass_through_instance_is_a_diagnostic(tmp_path: Path) -> None:
    text = SOLO.replace("USES", "use solo as a() -> (out: a)")
    assert _codes(text) == ["SKM145"]
    f = tmp_path / "solo.skm"
    f.write_text(text)
    for command in ("check", "dot"):
        r = _cli(command, str(f))
        assert r.returncode == 1 and "SKM145" in r.stdout + r.stderr and "SKM900" not in r.stdout + r.stderr, r


def test_a_chain_of_pass_through_instances_lands_on_a_state() -> None:
    result = _check(SOLO.replace("USES", "use solo as a() -> (out: b)\n  use solo as b() -> (out: done)"))
    assert not has_errors(result.diagnostics), [d.code for d in result.diagnostics]
    assert result.machine.start == "done"


def test_an_absurd_integer_literal_is_a_diagnostic(tmp_path: Path) -> None:
    f = tmp_path / "big.skm"
    f.write_text(_counter_machine("-> done").replace("var answer: str", "var answer: str\n  var n: int = "
                                                                         + "9" * 4301))
    for args in (("check",), ("dot",), ("test", "--examples", "1")):
        r = _cli(*args, str(f))
        out = r.stdout + r.stderr
        assert "SKM147" in out and "Traceback" not in out and "SKM900" not in out, (args, out[-500:])
        assert r.returncode in (1, 2), (args, r.returncode)
    assert "SKM147" not in _codes(_counter_machine("-> done").replace("var answer: str", "var answer: str\n"
                                                                        "  var n: int = " + "9" * 4300))


def test_an_optional_tool_result_left_out_is_none(tmp_path: Path) -> None:
    f = tmp_path / "opt.skm"
    f.write_text("""machine m {
  tool fetch(url: str) -> (body: str, note: str?)
  input url: str
  var body: str
  var note: str?
  start get
  tool get {
    reads url
    call fetch(url: url)
    writes body, note
    -> done
  }
  terminal done: success { requires body }
  fallback
}
""")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"tools": {"get": [{"body": "hi"}]}}))
    r = _cli("run", str(f), "--input", "url=x", "--executor", f"scripted:{script}",
             "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr


def test_a_float_beside_an_int_constant_is_compared_exactly() -> None:
    assert "SKM240" in _codes(_guards("when x == 1 and x > 2 -> done"))
    assert "SKM240" not in _codes(_guards("when x == 1 and x >= 1.0 -> done"))


def test_skillc_test_judges_fragment_rules_on_every_passage() -> None:
    from skillc.testing.explore import explore

    text = DELETE.replace("TARGET", "gd.delete")
    report = explore(_check(text).machine, text, examples=10, seed=0)
    assert any(f.prop == "rule" and "before" in f.message for f in report.failures), report.failures
    text = DELETE.replace("TARGET", "gd")
    assert not explore(_check(text).machine, text, examples=10, seed=0).failures


def test_skillc_score_judges_fragment_rules_on_every_passage(tmp_path) -> None:
    """A recorded run that entered `gd` at `gd.delete` broke the fragment's order: score must not call it compliant."""
    import json

    from skillc.runtime.score import score_trace

    machine = _check(DELETE.replace("TARGET", "gd")).machine

    def score(states: list[str], mode: str = "machine"):
        records = [{"type": "header", "skillc.mode": mode},
                   *({"type": "step", "step": k, "state": s} for k, s in enumerate(states)),
                   {"type": "footer", "skillc.outcome": "success", "skillc.terminal": "finished",
                    "skillc.evidence": {}}]
        path = tmp_path / f"t{len(states)}{mode}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
        return score_trace(machine, path)

    bad = score(["go", "gd.delete"])
    assert not bad.compliant and any("`gd.delete` ran before `gd.confirm` in `gd`" in v for v in bad.violations), bad.violations
    assert score(["go", "gd.confirm", "gd.delete"]).compliant
    native = score(["native"], mode="native")
    assert any("Confirm before deleting." in u for u in native.unverifiable)
