"""Soundness cross-check: a machine the checker accepts never reads an unset variable at run time.

Random machines are generated (many are rejected, which is fine); each
accepted one is explored by random walks with type-correct outputs, and the
walk asserts what the checker promised: reads, guards, assignments and
terminal evidence only use assigned variables, counters stay within their
maximum, and every walk ends at a terminal.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillc
from skillc.diagnostics import has_errors
from skillc.ir import types as T
from skillc.ir.evaluate import EvalError, UnsetVariable, evaluate

TYPES = ["str", "int", "bool", "enum { a, b, c }"]


def _const(t: str) -> str:
    """A constant of a written type."""
    if t.startswith("enum"):
        return t.split("{")[1].split(",")[0].strip()
    return {"str": '"y"', "int": "1", "bool": "true"}[t]


def random_machine(rng: random.Random) -> str:
    """A random, usually well-formed machine over a few variables and counters."""
    variables = [(f"v{i}", rng.choice(TYPES)) for i in range(rng.randint(2, 5))]
    variables.append(("verdict", "enum { good, bad }"))
    counters = [(f"c{i}", rng.randint(1, 3)) for i in range(rng.randint(0, 2))]
    n = rng.randint(2, 7)
    names = [f"s{i}" for i in range(n)]
    lines = ["machine random {", "  tool run(x: str) -> (out: str, code: int)", "  input task: str"]
    for name, t in variables:
        init = ""
        if rng.random() < 0.2:
            init = " = " + _const(t)
        lines.append(f"  var {name}: {t}{init}")
    for name, top in counters:
        lines.append(f"  counter {name} max {top}")
    lines.append("  start s0")
    var_names = [v for v, _ in variables]
    typed = dict(variables)

    defined = {v for v, _ in variables if f"var {v}:" in "\n".join(lines) and " = " in
               next(line for line in lines if line.startswith(f"  var {v}:"))}

    def pick(pool: set[str]) -> str:
        """Mostly a variable that is probably assigned by now; sometimes any (to provoke rejections)."""
        return rng.choice(sorted(pool)) if pool and rng.random() < 0.9 else rng.choice(var_names)

    def atom(pool: set[str]) -> str:
        choice = rng.random()
        if counters and choice < 0.3:
            c, top = rng.choice(counters)
            return f"{c} < {rng.randint(0, top)}"
        v = pick(pool)
        t = typed[v]
        if t == "int":
            return f"{v} {rng.choice(['<', '>=', '==', '!='])} {rng.randint(-1, 3)}"
        if t == "bool":
            return v if rng.random() < 0.5 else f"not {v}"
        if t == "str":
            return f'{v} == "{rng.choice(["", "x"])}"' if rng.random() < 0.7 else f"len({v}) > {rng.randint(0, 2)}"
        labels = t.split("{")[1].rstrip("}").replace(" ", "").split(",")
        return f"{v} == {rng.choice(labels)}"

    for i, name in enumerate(names):
        kind = rng.choice(["model", "judge", "tool"])
        reads = list(dict.fromkeys(pick(defined) for _ in range(rng.randint(0, 2))))
        lines.append(f"  {kind} {name} {{")
        if kind == "tool":
            strs = [v for v, t in variables if t == "str"]
            ints = [v for v, t in variables if t == "int"]
            arg = rng.choice(strs) if strs and rng.random() < 0.5 else None
            if arg:
                reads = list(dict.fromkeys([*reads, arg]))
            if reads:
                lines.append(f"    reads {', '.join(reads)}")
            lines.append(f'    call run(x: {arg or chr(34) + "go" + chr(34)})')
            binds = []
            if strs:
                binds.append(f"{rng.choice(strs)} = out")
            if ints:
                binds.append(f"{rng.choice(ints)} = code")
            if binds:
                lines.append(f"    writes {', '.join(binds)}")
            written = {b.split(" =")[0] for b in binds}
        else:
            if reads:
                lines.append(f"    reads {', '.join(reads)}")
            writes = ["verdict"] if kind == "judge" else rng.sample(var_names, rng.randint(1, 2))
            lines.append(f"    writes {', '.join(writes)}")
            lines.append('    prompt "Do it."')
            written = set(writes)
        after = defined | written
        for _ in range(rng.randint(0, 2)):
            guard = atom(after) if rng.random() < 0.6 else f"{atom(after)} {rng.choice(['and', 'or'])} {atom(after)}"
            backward = rng.random() < 0.4
            target = rng.choice(names[: i + 1]) if backward else rng.choice([*names[i + 1 :], "done", "fallback"])
            assign = ""
            if counters and (backward or rng.random() < 0.3):
                c, top = rng.choice(counters)
                guard = f"({guard}) and {c} < {top}"
                assign = f" {{ {c} += 1 }}"
            elif rng.random() < 0.2:
                v = rng.choice(var_names)
                value = _const(typed[v])
                assign = f" {{ {v} = {value} }}"
            lines.append(f"    when {guard} -> {target}{assign}")
        lines.append(f"    -> {names[i + 1] if i + 1 < n and rng.random() < 0.8 else 'done'}")
        lines.append("  }")
        defined = after
    requires = list(dict.fromkeys(pick(defined) for _ in range(rng.randint(0, 2))))
    lines.append(f"  terminal done: success{' { requires ' + ', '.join(requires) + ' }' if requires else ''}")
    lines.append("  fallback")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _value(t: T.Type, rng: random.Random):
    if isinstance(t, T.OptionalT):
        return None if rng.random() < 0.3 else _value(t.inner, rng)
    if isinstance(t, T.StrT):
        return rng.choice(["", "x", "y", "long text"])
    if isinstance(t, T.IntT):
        return rng.randint(-2, 4)
    if isinstance(t, T.BoolT):
        return rng.random() < 0.5
    if isinstance(t, T.EnumT):
        return rng.choice(t.labels)
    raise AssertionError(t)


def walk(machine, rng: random.Random, bound: int = 5000) -> str:
    """One random run; returns the terminal reached. Asserts the checker's promises on the way."""
    env = {}
    for v in machine.variables.values():
        if v.is_input:
            env[v.name] = _value(v.type, rng)
        elif v.is_counter:
            env[v.name] = 0
        elif v.init is not None:
            env[v.name] = evaluate(v.init, {})
    state = machine.states[machine.start]
    for _ in range(bound):
        if state.is_terminal:
            missing = [r for r in state.requires if r not in env]
            assert not missing, f"terminal {state.name} reached without {missing}"
            return state.name
        missing = [r for r in state.reads if r not in env]
        assert not missing, f"{state.name} read unset {missing}"
        for w in state.writes:
            env[w] = _value(machine.variables[w].type, rng)
        for e in state.edges:
            try:
                fires = e.guard is None or evaluate(e.guard, env)
            except UnsetVariable as exc:
                raise AssertionError(f"guard of {state.name} edge {e.index + 1} read unset {exc.name}") from None
            except EvalError:
                fires = False
            if fires:
                for a in e.assigns:
                    try:
                        value = evaluate(a.value, env)
                    except UnsetVariable as exc:
                        raise AssertionError(f"assignment on {state.name} read unset {exc.name}") from None
                    if a.op == "+=":
                        value = env[a.var] + value
                    elif a.op == "-=":
                        value = env[a.var] - value
                    var = machine.variables[a.var]
                    if var.is_counter:
                        assert value <= var.max, f"counter {a.var} exceeded {var.max}"
                    env[a.var] = value
                state = machine.states[e.target]
                break
        else:
            raise AssertionError(f"no edge fired in {state.name}")
    raise AssertionError("the walk did not terminate")


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_accepted_machines_never_read_unset_variables(seed: int) -> None:
    rng = random.Random(seed)
    text = random_machine(rng)
    result = skillc.check(text, path="random.skm")
    assert all(str(d.code) != "SKM900" for d in result.diagnostics), text
    if has_errors(result.diagnostics):
        return
    for _ in range(8):
        walk(result.machine, rng)


def test_generator_produces_both_outcomes() -> None:
    rng = random.Random(7)
    accepted = rejected = 0
    for _ in range(150):
        result = skillc.check(random_machine(rng), path="random.skm")
        if has_errors(result.diagnostics):
            rejected += 1
        else:
            accepted += 1
    assert accepted >= 15 and rejected >= 15, (accepted, rejected)
