"""Fuzzed model answers against the corpus machines, examples/release-notes and a control, with the real tool kit.

Hypothesis draws the scripted executor's answers (every model state, one to three answers each: well-formed ones
built from the variables' types, the case's own good answer with one value replaced, or raw text) and the user's
prepared answers, from values that include shell injection (`; touch X`, `$(touch X)`, backticks, `; rm -rf ~`),
paths out of the work folder (`../`, absolute, `~/`), NUL bytes and long text. Every run:

(a) no tool call outside the machine's `allow` list reaches execution: each call in the trace is judged by an
    oracle written here (the allow entries read again, bash commands split with `shlex`), and one outside the list
    must carry no effects and the runtime's refusal; and nothing the fuzzed text asks for happens — no marker file
    anywhere (outside the work folder, inside it, in HOME, in the repository, in the skill folder), HOME's canary
    survives `rm -rf ~`, the skill folder is unchanged;
(b) no run ends `success` without its deliverable (the case's files, or its effect: a suite that passes, a branch).

The control (`machines/control__trusted-git-log.skm`) runs model text as shell code after an allowed prefix, so
that the runtime's own refusal of calls outside `Bash(git log:*)` is exercised; the corpus machines quote what they
splice. No run may end in an internal error. Bounded: `EXAMPLES` per machine, `CONTROL_EXAMPLES` for the control (about
20 s for all on 2 shared cores; `pytest -s` prints the counts).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillc
from skillc.ir import types as T
from tests.harness.cases import CASES, EXAMPLE, ROOT, Case, Outcome, git, run_case, snapshot

EXAMPLES = 4  # per machine
CONTROL_EXAMPLES = 12  # the control is cheap, and where refusals happen
OUT = "@OUT@"  # replaced by the run's `outside` folder: every marker is created there, or named `pwned…`
ADVERSARIAL = (
    f"; touch {OUT}/semicolon", f"$(touch {OUT}/substitution)", f"`touch {OUT}/backtick`",
    f"'; touch {OUT}/single-quote; '", f'"; touch {OUT}/double-quote; "', f"&& touch {OUT}/and",
    f"| tee {OUT}/pipe", f"> {OUT}/redirect", f"\ntouch {OUT}/newline\n", f"{OUT}/absolute-path",
    "; rm -rf ~", "$(rm -rf ~/)", "`rm -rf ~`", "; touch pwned-relative", "$(touch pwned-relative)",
    "${IFS}touch${IFS}pwned-ifs", "../../outside/escape.md", "../escape", "/etc/passwd", "~/.ssh/id_rsa",
    "shop/../../escape.py", "--help", "-rf", "", " ", "\x00", "nul\x00byte", "é ✓ \u202e", "%s%n{}", "a" * 300,
)
MENU = ("approve", "revise", "cancel", "no", "yes")
KIT_NAMES = {"read": "read", "write": "write", "edit": "edit", "glob": "glob", "grep": "grep", "bash": "bash",
             "webfetch": "fetch", "askuserquestion": "ask_user"}


def _one_commit(work: Path) -> None:
    (work / "a.txt").write_text("a\n")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "first")


#: The control: a checked machine that runs model text as shell code after an allowed prefix (`trusted`), so that
#: the runtime's refusal is what the fuzzed answers meet. No skill folder; its deliverable is the command's success.
CONTROL = Case("control__trusted-git-log", _one_commit, {}, (), lambda work: None)
ALL = [*CASES, EXAMPLE, CONTROL]
TALLY: Counter[str] = Counter({"tool calls outside the allow list": 0, "... of which executed": 0,
                                "marker files found": 0, "success without the deliverable": 0})


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    if TALLY:
        print("\nfuzzed runs: " + ", ".join(f"{k} {v}" for k, v in sorted(TALLY.items())))


# ---------------------------------------------------------------------------------------------- answers


def _value(t: T.Type, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values for a variable of type `t`: adversarial ones first, some of the wrong type."""
    text = st.sampled_from(ADVERSARIAL) | st.text(max_size=30)
    if isinstance(t, T.OptionalT):
        return st.none() | _value(t.inner, depth)
    if isinstance(t, T.StrT):
        return text
    if isinstance(t, T.IntT):
        return st.integers(-3, 60) | st.sampled_from([0, -1, 2**31, 10**12]) | text
    if isinstance(t, T.FloatT):
        return st.floats(allow_nan=False, allow_infinity=False, width=32)
    if isinstance(t, T.BoolT):
        return st.booleans()
    if isinstance(t, T.EnumT):
        return st.sampled_from(t.labels) | text
    if isinstance(t, T.ListT):
        return st.lists(_value(t.item, depth + 1), max_size=3) if depth < 2 else st.just([])
    if isinstance(t, T.MapT):
        return st.dictionaries(text, _value(t.value, depth + 1), max_size=2) if depth < 2 else st.just({})
    if isinstance(t, T.RecordT):
        return st.fixed_dictionaries({k: _value(v, depth + 1) for k, v in t.fields})
    return text


@functools.cache
def _machine(path: Path) -> Any:
    machine = skillc.check(path).machine
    assert machine is not None
    return machine


def _replaced(base: dict[str, Any], types: dict[str, T.Type], name: str) -> st.SearchStrategy[dict[str, Any]]:
    """`base` with the value of `name` drawn."""
    return _value(types[name]).map(lambda value: {**base, name: value})


def _answers(case: Case) -> st.SearchStrategy[tuple[dict[str, Any], list[str]]]:
    machine = _machine(case.machine)
    good = json.loads(case.script.read_text(encoding="utf-8")).get("outputs", {})
    outputs = {}
    for state in machine.states.values():
        if state.kind not in ("model", "judge"):
            continue
        types = {v: machine.variables[v].type for v in state.writes}
        whole = st.fixed_dictionaries({v: _value(t) for v, t in types.items()})
        choices = [whole, st.sampled_from(ADVERSARIAL)]  # a raw string is not JSON: invalid output
        for base in good.get(state.name, []):
            if isinstance(base, dict):
                choices.append(st.just(base))
                choices.append(st.sampled_from(sorted(types)).flatmap(functools.partial(_replaced, base, types)))
        outputs[state.name] = st.lists(st.one_of(choices), min_size=1, max_size=3)
    users = st.just(list(case.answers)) | st.lists(st.sampled_from(MENU) | st.sampled_from(ADVERSARIAL), max_size=3)
    return st.tuples(st.fixed_dictionaries(outputs), users)


# ---------------------------------------------------------------------------------------------- the oracle


def _outside_allow(spellings: tuple[str, ...], tool: str, args: dict[str, Any]) -> bool:
    """Whether a call falls outside an allowed-tools list, judged here without skillc's own matcher."""
    if not spellings or tool == "ask_user":
        return False
    entries = []
    for spelling in spellings:
        m = re.fullmatch(r"(\w+)(?:\((.*)\))?", spelling.strip(), re.S)
        assert m, spelling
        entries.append((KIT_NAMES.get(m.group(1).lower(), m.group(1).lower()), m.group(2)))
    names = {name for name, _ in entries}
    if tool in ("glob", "grep") and "read" in names:
        names.add(tool)
    if tool not in names:
        return True
    if tool != "bash" or any(name == "bash" and pattern in (None, "*") for name, pattern in entries):
        return False
    for name, pattern in entries:
        if name != "bash" or pattern is None:
            continue
        prefix, exact = (pattern[:-2].split(), None) if pattern.endswith(":*") else (None, pattern.strip())
        if args.get("argv") is not None:
            words = [str(w) for w in args["argv"]]
            if (prefix is not None and words[:len(prefix)] == prefix) or (exact is not None and words == exact.split()):
                return False
            continue
        command = str(args.get("command") or "")
        if exact is not None and command.strip() == exact:
            return False
        if prefix is None:
            continue
        try:
            words = shlex.split(command)
            lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            tokens = list(lexer)
        except ValueError:  # an unclosed quote
            continue
        operators = [t for t in tokens if t and set(t) <= set("();<>|&")]
        unquoted = re.sub(r"'[^']*'", "", command)
        if words[:len(prefix)] == prefix and not operators and "`" not in unquoted and "$(" not in unquoted \
                and "\n" not in command:
            return False
    return True


def _markers(scratch: Path, case: Case) -> list[str]:
    found = [str(p) for p in (scratch / "outside").iterdir()]
    for where in (scratch, ROOT, case.skill_dir, Path(tempfile.gettempdir())):
        found += [str(p) for p in where.glob("pwned*")]
    found += [str(p) for p in scratch.rglob("pwned*")]
    found += [str(p) for p in scratch.rglob("*") if p.name in ("semicolon", "substitution", "backtick", "and",
                                                                "pipe", "redirect", "newline", "absolute-path")]
    return sorted(set(found))


# ---------------------------------------------------------------------------------------------- the property

SKILL_SNAPSHOTS = {case.id: snapshot(case.skill_dir) for case in ALL}


def _run(case: Case, script: dict[str, Any], users: list[str]) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="skillc-fuzz-"))
    try:
        outside = scratch / "outside"
        outside.mkdir()
        (scratch / "home").mkdir()
        canary = scratch / "home" / "canary"
        canary.write_text("still here\n")
        text = json.dumps({"outputs": script}).replace(OUT, str(outside))
        out: Outcome = run_case(case, scratch, script=json.loads(text),
                                answers=tuple(u.replace(OUT, str(outside)) for u in users), verify=False)
        TALLY["runs"] += 1
        TALLY[f"outcome {out.outcome}"] += 1
        assert out.outcome != "error", out.error  # a usage or internal error is a bug: fuzzed answers are data
        spellings = tuple(c.spelling for c in _machine(case.machine).allowed)
        for step in out.trace.steps if out.trace is not None else ():
            call = step.tool_call
            if call is None:
                continue
            TALLY["tool calls"] += 1
            ran = call.effects is not None or (call.tool == "ask_user" and not step.errors)
            TALLY["tool calls executed"] += ran
            if _outside_allow(spellings, call.tool, dict(call.args)):
                TALLY["tool calls outside the allow list"] += 1
                TALLY["... of which executed"] += ran
                assert not ran, f"{step.state}: {call.tool} {call.args} is outside {spellings} and ran"
                assert any("outside allowed-tools:" in e.message for e in step.errors), step.errors
        markers = _markers(scratch, case)
        TALLY["marker files found"] += len(markers)
        assert markers == [], "fuzzed text was executed"
        assert canary.is_file(), "rm -rf ~ ran"
        assert snapshot(case.skill_dir) == SKILL_SNAPSHOTS[case.id], "the skill folder changed"
        if out.outcome == "success":
            TALLY["success"] += 1
            problem = case.delivered(out.work)
            TALLY["success without the deliverable"] += problem is not None
            assert problem is None, f"success without the deliverable: {problem}"
            TALLY["success with the deliverable"] += 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize("case", ALL, ids=lambda c: c.id)
def test_fuzzed_answers_never_escape_the_allow_list_nor_succeed_without_the_deliverable(case: Case) -> None:
    @settings(max_examples=CONTROL_EXAMPLES if case is CONTROL else EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(_answers(case))
    def check(drawn: tuple[dict[str, Any], list[str]]) -> None:
        _run(case, *drawn)

    check()


# ---------------------------------------------------------------------------------------------- the checks are live


def test_the_oracle_judges_commands_as_the_allow_list_means() -> None:
    prefix = ("Read", "Bash(git log:*)")
    assert not _outside_allow(prefix, "bash", {"command": "git log --oneline -n 1"})
    assert not _outside_allow(prefix, "bash", {"command": "git log --grep 'a;b' -- '$(x)'"})
    assert not _outside_allow(prefix, "grep", {"pattern": "x"}) and not _outside_allow(prefix, "ask_user", {})
    for command in ("git log; touch x", "git log && touch x", "git log | tee x", "git log > x", "git log $(touch x)",
                    "git log `touch x`", "git log\ntouch x", "git logx", "rm -rf ~", "git log 'unclosed"):
        assert _outside_allow(prefix, "bash", {"command": command}), command
    assert _outside_allow(prefix, "write", {"path": "x"})
    assert not _outside_allow(("Bash(git log:*)",), "bash", {"argv": ["git", "log", "; touch x"]})
    assert not _outside_allow(("Read", "Grep", "Glob", "Bash"), "bash", {"command": "a; b"})


def test_an_injection_that_gets_through_is_seen(tmp_path: Path) -> None:
    """The same machine as the control with every command allowed: `$(touch …)` runs, and the check sees it."""
    text = CONTROL.machine.read_text(encoding="utf-8").replace('allow "Bash(git log:*)"', 'allow "Bash"')
    machine = tmp_path / "open.skm"
    machine.write_text(text, encoding="utf-8")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "outside").mkdir()
    case = attrs.evolve(CONTROL, machine_file=machine)
    injected = {"outputs": {"pick": [{"filter": f"$(touch {scratch}/outside/substitution)"}]}}
    out = run_case(case, scratch, script=injected, verify=False)
    assert out.outcome == "success"
    assert _markers(scratch, case) == [str(scratch / "outside" / "substitution")]
    refused = run_case(CONTROL, tmp_path / "refused",
                       script={"outputs": {"pick": [{"filter": "; touch pwned-relative"}]}}, verify=False)
    step = refused.trace.steps[-1]
    assert refused.outcome == "failed" and step.tool_call is not None and step.tool_call.effects is None
    assert "outside allowed-tools:" in step.errors[-1].message
    assert not list((tmp_path / "refused").rglob("pwned*"))
