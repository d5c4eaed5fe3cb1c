"""Agreement of `check` and `run`: a machine the checker accepts keeps the checker's promises when it runs.

Random machines use what issue 15 found the checker getting wrong: fragment
instances entered by name or part-way (`inst.state`), edges that assign one
counter several times, float and int/float guards (rounding, NaN, overflow)
and guards that fail at run time (`tags[0]` on an empty list). Many machines
are rejected, which is fine. Each accepted one runs under generated outputs
(values chosen to hit the corner cases: 2**53, huge ints, -0.0, empty lists)
and every run must

- never violate a rule (the machine's, or a fragment's on any passage through its instance),
- never overflow a counter or otherwise make the runtime give up (the fallback only by an edge),
- end at a terminal within the bound the counters imply, with its evidence,
- never take an edge that SKM240 or SKM241 called impossible.

The default run is small; `SKILLC_AGREEMENT_EXAMPLES=10000` runs it at scale, and
`python -m tests.check.test_agreement 10000` runs seeds 0 … 9999 and prints a tally.
"""

from __future__ import annotations

import json
import os
import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillc
from skillc.diagnostics import has_errors
from skillc.ir import types as T
from skillc.ir.machine import Machine
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.base import BaseExecutor, Response
from skillc.testing.explore import check_run, step_bound

EXAMPLES = int(os.environ.get("SKILLC_AGREEMENT_EXAMPLES", "30"))
RUNS_PER_MACHINE = 6

FLOATS = [0.0, -0.0, 0.5, 1.5, -2.0, 3.0, 0.1, 2.0**53, 1e308]
INTS = [0, 1, 2, -1, 3, 2**53 + 1, 10**310]
STRS = ["", "a", "b", "ab"]
LISTS = [[], ["a"], ["b", "a"]]

INT_ATOMS = ["n < {k}", "n / 1 != n", "n + 0.5 == n", "n > 2.5", "n == {k}", "n % 2 == 1", "10 / n > 1.0"]
FLOAT_ATOMS = ["x > 0.5", "x + 1.0 == x", "x != x", "x * 2.0 > x", "10.0 / x > 1.0", "x == -0.0", "x < n",
               "x >= 3", "x == 0"]
LIST_ATOMS = ['tags[0] == "a"', 'tags[0] != "a"', 'len(tags) > 0 and tags[0] != "a"', 'tags[1] == "a"',
              "len(tags) == 0"]
OTHER_ATOMS = ['v == "a"', "len(v) > 1", "e == yes", "e == no"]


def _atom(rng: random.Random, counters: list[tuple[str, int]]) -> str:
    pool = rng.choice([INT_ATOMS, FLOAT_ATOMS, LIST_ATOMS, OTHER_ATOMS])
    atom = rng.choice(pool).format(k=rng.randint(0, 3))
    if counters and rng.random() < 0.25:
        c, top = rng.choice(counters)
        atom = f"{c} < {rng.randint(0, top)}"
    return atom


def _guard(rng: random.Random, counters) -> str:
    g = _atom(rng, counters)
    r = rng.random()
    if r < 0.25:
        g = f"{g} {rng.choice(['and', 'or'])} {_atom(rng, counters)}"
    elif r < 0.35:
        g = f"not ({g})"
    return g


def _assign(rng: random.Random, counters, paying: bool) -> tuple[str, str]:
    """Assignments to a counter (often several on one edge) and the guard that would keep it in bounds."""
    c, top = rng.choice(counters)
    shapes = ["+1", "+1+1", "+2"] if paying and rng.random() < 0.9 else ["+1", "+1+1", "=0+1", "+1=0", "=top+1", "+2"]
    shape = rng.choice(shapes)
    text = {"+1": f"{c} += 1", "+1+1": f"{c} += 1, {c} += 1", "=0+1": f"{c} = 0, {c} += 1",
            "+1=0": f"{c} += 1, {c} = 0", "=top+1": f"{c} = {top}, {c} += 1", "+2": f"{c} += 2"}[shape]
    rise = {"+1": 1, "+1+1": 2, "=0+1": 0, "+1=0": 1, "=top+1": 0, "+2": 2}[shape]
    bound = f"{c} < {top - rise + 1}" if rise else ""
    return text, bound


def random_machine(rng: random.Random) -> str:
    """A random machine with a local fragment instance, float and failing guards and counter edges."""
    counters = [(f"c{i}", rng.randint(1, 3)) for i in range(rng.randint(1, 2))]
    k = rng.randint(2, 4)
    frag = [f"f{i}" for i in range(k)]
    lines = ["fragment step() -> (ok, bad) {", "  var fv: enum { yes, no } = no", "  var fx: float = 0.0",
             f"  start {frag[0]}"]
    for i, name in enumerate(frag):
        kind = rng.choice(["model", "judge"])
        lines += [f"  {kind} {name} {{", f"    writes {'fv' if kind == 'judge' else rng.choice(['fx', 'fv'])}",
                  '    prompt "Do it."']
        for _ in range(rng.randint(0, 2)):
            guard = rng.choice(["fv == yes", "fv == no", "fx > 0.5", "fx + 1.0 == fx", "fx != fx"])
            target = rng.choice([*frag[i + 1 :], "ok", "bad", "fallback"])
            lines.append(f"    when {guard} -> {target}")
        lines += [f"    -> {rng.choice([*frag[i + 1 :], 'ok', 'ok', 'bad'])}", "  }"]
    # `fz` is entered only by a jump from outside; the start state comes first on every passage from the entry.
    lines += ["  model fz {", "    writes fx", '    prompt "Never needed."', "    -> ok", "  }"]
    frag.append("fz")
    kind = rng.choice(["order", "forbid", "required"])
    rule = {"order": f"order f0 before {rng.choice(frag[1:])}", "forbid": "forbid fz",
            "required": "required f0"}[kind]
    lines += [f'  rule {rule} "Follow the fragment."', "}", ""]

    n = rng.randint(2, 5)
    names = [f"s{i}" for i in range(n)]
    lines += ["machine agree {", "  input n: int", "  input tags: list[str]", "  var x: float = 1.0",
              '  var v: str = ""', "  var e: enum { yes, no } = no"]
    lines += [f"  counter {c} max {top}" for c, top in counters]
    lines.append(f"  start {rng.choice([names[0], names[0], 'inst', 'inst.' + rng.choice(frag)])}")
    ok_target = rng.choice([*names[1:], "done"])
    lines.append(f"  use step as inst() -> (ok: {ok_target}, bad: {rng.choice(['part', 'fallback', names[-1]])})")
    for i, name in enumerate(names):
        kind = rng.choice(["model", "judge"])
        writes = "e" if kind == "judge" else rng.choice(["x", "v", "x, v"])
        lines += [f"  {kind} {name} {{", f"    writes {writes}", '    prompt "Do it."']
        for _ in range(rng.randint(0, 3)):
            guard = _guard(rng, counters)
            backward = rng.random() < 0.3
            if backward:
                target = rng.choice(names[: i + 1])
            else:
                target = rng.choice([*names[i + 1 :], "done", "part", "fallback", "inst"]
                                    + (["inst." + rng.choice(frag)] if rng.random() < 0.4 else []))
            assign = ""
            if backward or rng.random() < 0.3:
                text, bound = _assign(rng, counters, paying=backward)
                if bound and rng.random() < 0.9:
                    guard = f"({guard}) and {bound}"
                assign = f" {{ {text} }}"
            lines.append(f"    when {guard} -> {target}{assign}")
        lines += [f"    -> {rng.choice([*names[i + 1 :], 'done', 'inst'])}", "  }"]
    lines += ["  terminal done: success", "  terminal part: partial", "  fallback"]
    if rng.random() < 0.5:
        lines.append(f'  rule order {rng.choice(names[:2])} before inst "Plan before the step."')
    lines.append("}")
    return "\n".join(lines) + "\n"


_EDGE = re.compile(r"edge (\d+) of `([^`]+)`")
_DEFAULT = re.compile(r"the default edge of `([^`]+)`")


def impossible_edges(machine: Machine, diagnostics) -> set[tuple[str, int]]:
    """The (state, edge index) pairs that SKM240 or SKM241 said can never fire."""
    out = set()
    for d in diagnostics:
        if str(d.code) not in ("SKM240", "SKM241"):
            continue
        # The fragment, checked on its own, names its states unprefixed; its instance's states are reported too.
        if (m := _DEFAULT.search(d.message)) and m.group(1) in machine.states:
            st_ = machine.states[m.group(1)]
            out.add((st_.name, next(e.index for e in st_.edges if e.guard is None)))
        elif (m := _EDGE.search(d.message)) and m.group(2) in machine.states:
            out.add((m.group(2), int(m.group(1)) - 1))
    return out


def _value(t: T.Type, rng: random.Random):
    if isinstance(t, T.OptionalT):
        return None if rng.random() < 0.2 else _value(t.inner, rng)
    if isinstance(t, T.FloatT):
        return rng.choice(FLOATS)
    if isinstance(t, T.IntT):
        return rng.choice(INTS)
    if isinstance(t, T.StrT):
        return rng.choice(STRS)
    if isinstance(t, T.EnumT):
        return rng.choice(t.labels)
    if isinstance(t, T.ListT):
        return list(rng.choice(LISTS))
    raise AssertionError(t)


class Outputs(BaseExecutor):
    """Type-correct outputs drawn from the corner-case pools."""

    name = "agreement"

    def __init__(self, machine: Machine, rng: random.Random) -> None:
        self.machine, self.rng = machine, rng

    def complete(self, request) -> Response:
        st_ = self.machine.states[request.state]
        return Response(json.dumps({w: _value(self.machine.variables[w].type, self.rng) for w in st_.writes}))


def agree(text: str, rng: random.Random, runs: int = RUNS_PER_MACHINE) -> bool:
    """Check a machine and, when it is accepted, run it; assert the promises. True when it was accepted."""
    result = skillc.check(text, path="agree.skm")
    assert all(str(d.code) != "SKM900" for d in result.diagnostics), (text, [d.message for d in result.diagnostics])
    if has_errors(result.diagnostics):
        return False
    machine = result.machine
    never = impossible_edges(machine, result.diagnostics)
    bound = step_bound(machine)
    for _ in range(runs):
        inputs = {v.name: _value(v.type, rng) for v in machine.variables.values() if v.is_input}
        run = Interpreter(machine, Outputs(machine, rng), ToolBox(), RunOptions(retries=0, max_steps=bound)).run(inputs)
        problems = check_run(machine, run, bound)
        assert not problems, (text, inputs, run.visited, problems)
        taken = set(run.edges) & never
        assert not taken, (text, inputs, f"took edges the checker called impossible: {sorted(taken)}")
    return True


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.integers(0, 2**32 - 1))
def test_accepted_machines_keep_the_checkers_promises(seed: int) -> None:
    rng = random.Random(seed)
    agree(random_machine(rng), rng)


def test_the_generator_produces_accepted_and_rejected_machines() -> None:
    rng = random.Random(15)
    accepted = sum(agree(random_machine(rng), rng, runs=1) for _ in range(40))
    assert 4 <= accepted <= 36, accepted


def main(argv: list[str]) -> None:
    """`python -m tests.check.test_agreement N [FIRST]`: the property over seeds FIRST … FIRST+N-1, with a tally."""
    count, first = int(argv[0]), int(argv[1]) if len(argv) > 1 else 0
    accepted = 0
    for seed in range(first, first + count):
        rng = random.Random(seed)
        accepted += agree(random_machine(rng), rng)
    print(f"{count} machines (seeds {first}-{first + count - 1}): {accepted} accepted and run "
          f"{RUNS_PER_MACHINE} times each ({accepted * RUNS_PER_MACHINE} runs), {count - accepted} rejected, "
          "0 disagreements")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
