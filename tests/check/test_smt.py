"""The Z3 encoding of guards (check/smt.py) agrees with the runtime: Python's arithmetic, literal strings,
IEEE doubles, and guards that fail at run time (false, not their negation)."""

from __future__ import annotations

import time

import pytest

from skillc.ir.evaluate import EvalError, evaluate
from tests.check.helpers import check_text as _check
from tests.check.helpers import codes as _codes
from tests.check.test_loops import LOOP
from tests.conftest import ROOT


def test_modulo_follows_python_semantics_in_the_solver() -> None:
    text = LOOP.replace("ASSIGN", "").replace('when answer == "" and tries < 2 -> reset { tries += 1 }',
                                                 "when tries % -3 == -1 -> reset { tries += 1 }")
    codes = _codes(text)
    assert "SKM251" in codes and "SKM240" not in codes  # tries = 2 satisfies the guard, then overflows


def test_string_constants_are_taken_literally_by_the_solver() -> None:
    # `len` forces real Z3 strings; the literal is six characters (backslash, u, {, 4, 1, }), not "A".
    text = LOOP.replace("ASSIGN", "").replace('when answer == "" and tries < 2',
                                              'when answer == "\\\\u{41}" and len(answer) == 1 and tries < 2')
    assert "SKM240" in _codes(text)
    assert "SKM240" not in _codes(text.replace("len(answer) == 1", "len(answer) == 6"))


# ------------------------------------------------------------------ floats are IEEE doubles


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


def test_a_float_beside_an_int_constant_is_compared_exactly() -> None:
    assert "SKM240" in _codes(_guards("when x == 1 and x > 2 -> done"))
    assert "SKM240" not in _codes(_guards("when x == 1 and x >= 1.0 -> done"))


# ------------------------------------------------------------------ guards that fail at run time


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


# ------------------------------------------------------------------ Z3 is loaded only for a question

_LOADS_Z3 = """import sys
import skillc
result = skillc.check(sys.stdin.read(), path="case.skm")
print(sorted(str(d.code) for d in result.diagnostics), "z3" in sys.modules)
"""


def test_z3_is_loaded_only_when_a_check_has_a_question_for_it() -> None:
    import subprocess
    import sys

    def run(text: str) -> str:
        return subprocess.run([sys.executable, "-c", _LOADS_Z3], input=text, capture_output=True, text=True,
                              cwd=ROOT, timeout=120, check=True).stdout.strip()

    plain = LOOP.replace("ASSIGN", "").replace('when answer == "" and tries < 2 -> reset { tries += 1 }\n', "")
    assert run(plain) == "['SKM200'] False"  # `reset` is unreachable now; no guard, no increment
    assert run(LOOP.replace("ASSIGN", "")) == "[] True"


def test_a_model_is_decoded_by_one_decoder() -> None:
    from fractions import Fraction

    import z3

    from skillc.check.smt import Decoded, Encoder, decode, describe_model, model_value

    machine = _check(_guards('when answer == "yes" and n > 3 and x < 0.5 -> done')).machine
    guard = machine.states["think"].edges[0].guard
    enc = Encoder(machine)
    enc.begin([guard])
    s = z3.Solver()
    s.add(*enc.domain, enc.fires(guard))
    assert s.check() == z3.sat
    model = s.model()
    assert decode(model, enc, "answer") == Decoded("value", "yes")  # an equality-only string: a code
    n = decode(model, enc, "n")
    assert n.kind == "value" and isinstance(n.value, int) and n.value > 3
    x = decode(model, enc, "x")
    assert x.kind == "value" and isinstance(x.value, float) and x.value < 0.5
    assert decode(model, enc, "tries") == Decoded("value", 0)  # never asked about: a fresh, unrecorded term
    assert "tries" not in enc.vars
    assert describe_model(model, enc, ["answer", "n"]) == ['answer = "yes"', f"n = {n.value}"]
    assert model_value(model, z3.RealVal("3/2")) == Fraction(3, 2)
    assert model_value(model, z3.StringVal("\\u{e9}")) == "é"


def test_ctrl_c_during_a_solver_call_reaches_python() -> None:
    """A SIGINT inside a Z3 call becomes a KeyboardInterrupt once the call returns (Z3's own handler is off)."""
    import os
    import signal
    import threading

    import z3

    from skillc.check import smt

    x, y, z = z3.Ints("x y z")
    s = smt.solver(1500)
    s.add(x * x * x + y * y * y == z * z * z, x > 1, y > 1, z > 1)  # Fermat n=3: Z3 runs until the timeout
    # Python's own handler for the test: a run started in the background (CI) inherits SIGINT ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        s.check()
        import time
        timer.join(30)  # on a loaded machine the timer may fire only now; its signal must still come through
        time.sleep(0.5)  # the signal arrives at the next bytecode after the call (or after the kill)
    except KeyboardInterrupt:
        return
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    raise AssertionError("the interrupt was swallowed by Z3")


def test_each_solver_asks_in_a_context_of_its_own() -> None:
    """A question's answer depends only on the question: each solver works in a fresh Z3 context (the default one
    keeps caches from whatever the process asked before), and its models come back over the default context."""
    import z3

    from skillc.check import smt

    x = z3.Int("x")
    a, b = smt.solver(100), smt.solver(100)
    assert len({id(a.ctx), id(b.ctx), id(z3.main_ctx())}) == 3
    a.add(x > 3)
    a.push()
    a.add(x < 3)
    assert a.check() == z3.unsat
    a.pop()
    assert a.check(x < 5) == z3.sat
    assert a.model().eval(x).as_long() == 4  # a model over the caller's own term
    assert b.check(x < 5) == z3.sat  # nothing of `a` was asserted in `b`


def _hard_question(ctx: object, rlimit: int) -> object:
    """A solver over `ctx` with a question Z3 does not settle (a sum of cubes), stopped at `rlimit` units."""
    import z3

    a, b, c = (z3.Int(n, ctx) for n in "abc")
    solver = z3.Solver(ctx=ctx)
    solver.set("rlimit", rlimit)
    solver.add(a * a * a + b * b * b == c * c * c, a > 10_000, b > 10_000, c > 0)
    return solver


def test_the_backstop_counts_the_solving_threads_cpu_time_not_the_wall_clock() -> None:
    """Under load a thread waits for a core without spending CPU time, so the backstop (for work Z3 does not count
    in units) is the solving thread's CPU clock: time spent waiting does not use it up, solving does. A wall-clock
    deadline would have passed during the wait and left the question to its 50M units (about 10 s here)."""
    import z3

    from skillc.check import smt

    if not smt._HAS_THREAD_CLOCK:
        pytest.skip("no per-thread CPU clock on this platform: the backstop is Z3's wall-clock timeout")
    ctx = z3.Context()
    solver = _hard_question(ctx, 50_000_000)
    with smt._cpu_backstop(ctx, 0.3):
        time.sleep(0.6)  # a wait, as for a busy core: no CPU time
        started = time.monotonic()
        verdict = solver.check()
    took = time.monotonic() - started
    assert verdict == z3.unknown and solver.reason_unknown() == "interrupted", solver.reason_unknown()
    assert 0.2 < took < 5, took
    assert z3.Solver(ctx=ctx).check() == z3.sat  # an interrupt leaves the context usable
