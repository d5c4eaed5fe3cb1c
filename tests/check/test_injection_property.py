"""Property: a machine `skillc check` passes never runs a payload a model wrote.

Random machines from a small grammar of string-building steps — assignments on the edges of a chain of
states, a bounded loop that extends a variable, `++`, `quote()`, `str()`, record fields, list items and
list literals, constant fragments full of shell syntax — end in a `bash` call. Each is checked, then run
through the real runtime (a scripted model, real `/bin/bash`, a fresh work folder) with replies that carry
payloads. A payload that runs creates the file `PWNED`: a machine the checker passed (no error at all)
that creates it is a failure of the checker. Machines the checker refuses run too, to count the safe ones
it refused (false positives, reported by `bench/injection.py`). CI runs a few seeds (seconds); set
`SKILLC_INJECTION_EXAMPLES` for more, or run `bench/injection.py`.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

import skillc
from skillc.ir.machine import Machine
from skillc.runtime import RunOptions, make_executor
from skillc.runtime.session import run_mode, run_tools

MARKER = "PWNED"

#: What a model may answer: each tries to run `touch PWNED` from some quoting context (`./pwn` names a program that
#: does, for the places where the reply is the program).
PAYLOADS = (
    "; touch PWNED", "$(touch PWNED)", "`touch PWNED`", '"; touch PWNED; "', "' ; touch PWNED '",
    "\ntouch PWNED\n", "x\nEOF\ntouch PWNED\n", "touch PWNED", "a'$(touch PWNED)'b", '"$(touch PWNED)"',
    ") ; touch PWNED ; (", "\\'; touch PWNED #", "x\ntouch PWNED #", "'\"; touch PWNED; #\"'", "&& touch PWNED",
    "| touch PWNED", "$'\\''; touch PWNED #", "-c touch${IFS}PWNED", "./pwn",
)

#: Constant fragments: plain words and the shell syntax that changes how the next piece is read.
FRAGMENTS = (
    "echo ", "printf %s ", " ", "x", "-n ", '"', "'", "\\\"", "$(", ")", "`", "$", "\\", "; ", " > /dev/null",
    "cat <<EOF\n", "\nEOF\n", "cat <<'EOF'\n", "# ", "\n", "X=", "eval ", "bash -c ", "sh -c ", "env ",
    "echo \"$(echo ", ")\"", "echo $((1 + ", "))", "${X:-", "}", "true && ", "printf '%s' ", "echo a=",
)

#: Untrusted atoms (what the model wrote) and how to read them.
SOURCES = ("reply", "note.text", "items[0]")


@attrs.frozen
class Sample:
    """One generated machine and the replies it runs with."""

    text: str
    replies: tuple[dict, ...]


def _literal(s: str) -> str:
    """A `.skm` string literal."""
    return json.dumps(s)


def _atom(rng: random.Random, names: list[str], lists: list[str]) -> str:
    """One operand of a `++` chain."""
    pool = ["const"] * 5 + ["source", "quoted"] * 2 + ["var", "quoted_var"] * (2 if names else 0) + \
        ["item"] * (1 if lists else 0) + ["number"]
    kind = rng.choice(pool)
    if kind == "const":
        return _literal(rng.choice(FRAGMENTS))
    if kind == "source":
        return rng.choice(SOURCES)
    if kind == "quoted":
        return f"quote({rng.choice(SOURCES)})"
    if kind == "var":
        return rng.choice(names)
    if kind == "quoted_var":
        return f"quote({rng.choice(names)})"
    if kind == "item":
        return f"{rng.choice(lists)}[{rng.randrange(2)}]"
    return rng.choice(["str(note.n)", "str(len(reply))"])


def _chain(rng: random.Random, names: list[str], lists: list[str], longest: int = 5) -> str:
    """A `++` chain of 1 to `longest` operands."""
    return " ++ ".join(_atom(rng, names, lists) for _ in range(rng.randint(1, longest)))


def generate(rng: random.Random) -> Sample:
    """A random machine: a model, a chain of no-op tool states whose edges build strings, a loop, the command."""
    hops = rng.randint(0, 2)
    names: list[str] = []
    lists: list[str] = []
    edges: list[list[str]] = [[] for _ in range(hops + 1)]  # assignments on the edge into hop i (last: into `run`)
    decls: list[str] = []
    for i, at in enumerate(sorted(rng.randrange(hops + 1) for _ in range(rng.randint(1, 4)))):
        if rng.random() < 0.2:
            name = f"l{i}"
            decls.append(f"  var {name}: list[str]")
            edges[at].append(f"{name} = [{_chain(rng, names, lists, 3)}, {_chain(rng, names, lists, 3)}]")
            lists.append(name)
            continue
        name = f"v{i}"
        decls.append(f"  var {name}: str")
        edges[at].append(f"{name} = {_chain(rng, names, lists)}")
        names.append(name)
    visible = names + lists
    loop = ""
    if names and rng.random() < 0.4:
        grown = rng.choice(names)
        loop = f"    when n < 2 -> run {{ n += 1, {grown} = {grown} ++ {_chain(rng, names, lists, 3)} }}\n"
    # The command starts with text: one untrusted value as the whole command is deliberate (the model writes it).
    command = _literal(rng.choice(FRAGMENTS)) + " ++ " + _chain(rng, names, lists, 4)
    hop_states = [f"hop{i}" for i in range(hops)]
    targets = [*hop_states, "run"]
    body = [
        "machine fuzz {",
        "  tool bash(command: str) -> (stdout: str, exit_code: int)",
        "  record Note { text: str, n: int }",
        "  var reply: str", "  var note: Note", "  var items: list[str]", "  var out: str", "  var status: int",
        "  counter n max 2",
        *decls,
        "  start ask",
        "  model ask {", "    writes reply, note, items", '    prompt "Answer."',
        f"    -> {targets[0]}{_braces(edges[0])}", "  }",
    ]
    for i, hop in enumerate(hop_states):
        body += [f"  tool {hop} {{", '    call bash(command: "true")', "    writes out = stdout",
                 f"    -> {targets[i + 1]}{_braces(edges[i + 1])}", "  }"]
    reads = ", ".join(["reply", "note", "items", *visible])
    body += ["  tool run {", f"    reads {reads}", f"    call bash(command: {command})",
             "    writes out = stdout, status = exit_code", loop.rstrip("\n"), "    -> done", "  }",
             "  terminal done: success { requires out, status }", "  fallback", "}", ""]
    text = "\n".join(line for line in body if line)
    chosen = rng.sample(PAYLOADS, 3)
    replies = tuple({"reply": p, "note": {"text": rng.choice(PAYLOADS), "n": 1}, "items": [rng.choice(PAYLOADS)]}
                    for p in chosen)
    return Sample(text, replies)


def every_payload() -> tuple[dict, ...]:
    """Replies that carry each payload in every untrusted field at once."""
    return tuple({"reply": p, "note": {"text": p, "n": 1}, "items": [p]} for p in PAYLOADS)


def _braces(assigns: list[str]) -> str:
    """An edge's assignment block."""
    return " { " + ", ".join(assigns) + " }" if assigns else ""


@attrs.frozen
class Outcome:
    """What happened to one sample: the checker's verdict and whether any payload ran."""

    passed: bool  # no error from `skillc check`
    injection_codes: tuple[str, ...]
    other_errors: tuple[str, ...]
    executed: bool


def _run(machine: Machine, text: str, reply: dict, folder: Path, name: str) -> tuple[Path, dict]:
    """One run in a fresh work folder (holding `pwn`): the folder and the run's evidence."""
    work = folder / name
    work.mkdir()
    pwn = work / "pwn"  # a program a reply may name: run as the command (or by `eval`), it leaves PWNED
    pwn.write_text("#!/bin/sh\ntouch PWNED\n", encoding="utf-8")
    pwn.chmod(0o755)
    script = folder / f"{name}.json"
    script.write_text(json.dumps({"outputs": {"ask": [reply]}}), encoding="utf-8")
    tools = run_tools(machine, "machine", workdir=work, timeout_s=10)
    options = RunOptions(retries=0, max_steps=50, workdir=str(work))
    result = run_mode(machine, text, "machine", make_executor(f"scripted:{script}"), tools, options, {})
    return work, result.evidence


def broken_shell(sample: Sample, folder: Path) -> bool:
    """Whether the command is not even valid shell: with harmless replies, bash exits with 2 (a syntax error)."""
    path = folder / "fuzz.skm"
    path.write_text(sample.text, encoding="utf-8")
    machine = skillc.load(path).machine
    assert machine is not None
    plain = {"reply": "hello", "note": {"text": "hello", "n": 1}, "items": ["hello"]}
    return _run(machine, sample.text, plain, folder, "plain")[1].get("status") == 2


def run_sample(sample: Sample, folder: Path) -> Outcome:
    """Check the machine, then run it once per reply in a fresh work folder; did `PWNED` appear?"""
    path = folder / "fuzz.skm"
    path.write_text(sample.text, encoding="utf-8")
    checked = skillc.check(path)
    errors = [str(d.code) for d in checked.diagnostics if d.is_error]
    injection = tuple(c for c in errors if c in ("SKM510", "SKM511"))
    other = tuple(c for c in errors if c not in injection)
    executed = False
    if not other:
        machine = skillc.load(path).machine
        assert machine is not None
        for i, reply in enumerate(sample.replies):
            work, _ = _run(machine, sample.text, reply, folder, f"w{i}")
            if any(p.name == MARKER for p in work.rglob(MARKER)):
                executed = True
                break
    return Outcome(not errors, injection, other, executed)


def samples(seed: int, count: int) -> Iterator[Sample]:
    """`count` machines from one seed."""
    rng = random.Random(seed)
    for _ in range(count):
        yield generate(rng)


COUNT = int(os.environ.get("SKILLC_INJECTION_EXAMPLES", "20"))


@pytest.mark.parametrize("seed", range(3))
def test_no_machine_the_checker_passes_runs_a_payload(seed: int) -> None:
    for sample in samples(seed, COUNT):
        with tempfile.TemporaryDirectory() as tmp:
            outcome = run_sample(sample, Path(tmp))
        assert not outcome.other_errors, (outcome.other_errors, sample.text)  # the grammar makes valid machines
        assert not (outcome.passed and outcome.executed), sample.text


def test_the_oracle_sees_a_payload_that_runs(tmp_path: Path) -> None:
    """The property can fail: an unquoted reply runs (the checker refuses that machine, but it does run)."""
    text = (
        "machine fuzz {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var reply: str\n"
        "  var out: str\n  start ask\n  model ask {\n    writes reply\n    prompt \"Answer.\"\n    -> run\n  }\n"
        "  tool run {\n    reads reply\n    call bash(command: \"echo \" ++ reply)\n    writes out = stdout\n"
        "    -> done\n  }\n  terminal done: success { requires out }\n  fallback\n}\n")
    outcome = run_sample(Sample(text, ({"reply": "; touch PWNED"},)), tmp_path)
    assert outcome.executed and not outcome.passed and outcome.injection_codes == ("SKM510",)
