"""Executable test cases on cached outputs: running one, and the rule-based validator with repair rounds.

A case is a small Python check `check(workdir, outputs, trace)` or a shell command, judged over one
evaluated node's cached output. A case is generated code, so it runs in a box (`skillc.sandbox`): its
own process with a minimal environment (no API keys, no SSH agent), HOME and cwd in a scratch folder
holding a copy of the work folder and trace, time and memory limits, killed with everything it started
(daemons too) when it ends or times out, and — where the kernel offers them — no write outside the
scratch folder, no read of anything but the system, Python and that folder (so neither the suite's hidden
verifier nor `~/.ssh`), and no network. A case that changes the cached output anyway (where no Landlock
stops it) is broken. `_harness.py` tells a case that does not hold (0) from a broken one (it raised,
exited 2+, or timed out).

The validator accepts a draft when it compiles (Python, with a top-level `check`) or parses
(`sh -n`), and runs to a verdict on the output it was written for. `generate_cases` asks the
self-verifier for drafts, validates them, hands the problems back for repair, for up to V rounds,
keeping at most C new cases per invocation; what is still broken after that is dropped (SKM843).
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Protocol

import attrs

from skillc.bench.verify import ENV_OUTPUTS, ENV_TRACE, ENV_WORKDIR, fingerprint, snapshot
from skillc.diagnostics import Diagnostic, make
from skillc.improve.evolve import codes
from skillc.improve.evolve.state import Case, CaseKind, Hypothesis, Output, Strength
from skillc.sandbox.box import run_confined

_HARNESS = Path(__file__).with_name("_harness.py")
#: The limit of `sh -n` on a shell case (parsing a one-line command).
SYNTAX_TIMEOUT_S = 10.0


@attrs.frozen
class CaseResult:
    """One case on one output: whether it holds, or why it is broken (`error`; `holds` is then False)."""

    holds: bool
    reason: str = ""
    error: str | None = None


@attrs.frozen
class Draft:
    """A case as the self-verifier proposes it, before validation."""

    id: str
    kind: CaseKind
    source: str
    strength: Strength
    description: str = ""


def run_case(case: Case | Draft, output: Output, timeout_s: float) -> CaseResult:
    """Run one case on a cached output, in a box whose scratch folder holds a copy of its work folder and trace,
    within `timeout_s`."""
    before = _evidence(output)
    with tempfile.TemporaryDirectory(prefix="skillc-evolve-case-") as scratch:
        root = Path(scratch)
        workdir = snapshot(output.workdir, root / "work")
        trace = root / "trace.jsonl"
        if output.trace.is_file():
            shutil.copyfile(output.trace, trace)
        else:
            trace.write_text("", encoding="utf-8")
        source = root / ("case.py" if case.kind == "python" else "case.sh")
        source.write_text(case.source, encoding="utf-8")
        outputs = root / "outputs.json"
        outputs.write_text(json.dumps(_outputs(output), default=str), encoding="utf-8")
        result = root / "verdict.json"
        env = {ENV_WORKDIR: str(workdir), ENV_TRACE: str(trace), ENV_OUTPUTS: str(outputs)}
        box = run_confined([sys.executable, "-I", str(_HARNESS), str(result), case.kind, str(source)],
                           scratch=root, readable=[str(_HARNESS)], env=env, timeout_s=timeout_s)
        if box.timed_out:
            return CaseResult(False, error=f"the case did not finish within {timeout_s:g} s (it was killed with "
                                           "everything it started)")
        verdict = _read_verdict(result, f"the case gave no verdict: {box.why()}")
    if _evidence(output) != before:
        return CaseResult(False, error="the case changed the cached output it was given a copy of")
    return verdict


def _evidence(output: Output) -> tuple[object, ...]:
    """What a case must not change: the cached work folder's fingerprint and the trace's size and time."""
    try:
        st = output.trace.stat()
        trace: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
    except OSError:
        trace = None
    return fingerprint(output.workdir), trace


def _outputs(output: Output) -> dict[str, object]:
    """The run's declared outputs as values (they are cached as JSON text)."""
    return {name: json.loads(text) for name, text in output.outputs}


def _read_verdict(result: Path, reason: str) -> CaseResult:
    """The harness's verdict; none at all means the case was killed (timeout) or the harness could not run."""
    try:
        verdict = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return CaseResult(False, error=reason or "the case gave no verdict")
    if "error" in verdict:
        return CaseResult(False, error=str(verdict["error"]))
    return CaseResult(bool(verdict["holds"]), str(verdict.get("reason", "")))


def syntax_problem(draft: Draft) -> str | None:
    """Why a draft does not even parse (or, in Python, defines no top-level `check`); None when it does."""
    if draft.kind == "python":
        try:
            tree = ast.parse(draft.source)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body):
            return "the case defines no top-level function check(workdir, outputs, trace)"
        return None
    try:
        done = subprocess.run(["/bin/sh", "-n", "-c", draft.source], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=SYNTAX_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "`sh -n` did not finish"
    return None if done.returncode == 0 else (done.stderr.strip() or f"`sh -n` exited {done.returncode}")


def shape_problem(draft: Draft) -> str | None:
    """Why a draft is no case whatever it does: an empty id, or a source with nothing to run (an empty shell
    command always "holds")."""
    if not draft.id.strip():
        return "the case has no id"
    if not draft.source.strip():
        return "the case's source is empty"
    return None


def validate(draft: Draft, output: Output, timeout_s: float) -> str | None:
    """Why a draft is not a usable case (syntax, or no verdict on `output`); None when it is."""
    return _validated(draft, output, timeout_s)[0]


def _validated(draft: Draft, output: Output, timeout_s: float) -> tuple[str | None, bool]:
    """`validate`'s answer, and whether the case held on `output` (so the caller need not run it again)."""
    problem = shape_problem(draft) or syntax_problem(draft)
    if problem is not None:
        return problem, False
    result = run_case(draft, output, timeout_s)
    return result.error, result.holds


@attrs.frozen
class VerifyRequest:
    """What the self-verifier is asked: cases for one hypothesis, over the output of the node that failed.

    `feedback` holds (draft id, problem) of the previous round's broken drafts (empty in the first round).
    """

    hypothesis: Hypothesis
    node: int
    output: Output
    round: int
    feedback: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class Proposal:
    """The self-verifier's answer: drafts of cases, and why a model's reply could not be used (SKM845)."""

    drafts: tuple[Draft, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()


class SelfVerifier(Protocol):
    """The role that turns a hypothesis into executable test cases."""

    def propose(self, request: VerifyRequest) -> Proposal:
        """Drafts of cases for the request's hypothesis (repairs of the broken ones when there is feedback)."""
        ...


@attrs.frozen
class Generated:
    """The validated cases of one invocation, the rounds it took, and the drafts dropped (SKM843)."""

    cases: tuple[Case, ...]
    rounds: int
    diagnostics: tuple[Diagnostic, ...] = ()
    held: frozenset[str] = frozenset()  # the cases that held on the output they were validated on


def generate_cases(verifier: SelfVerifier, hypothesis: Hypothesis, node: int, output: Output, *,
                   repair_rounds: int, max_cases: int, timeout_s: float) -> Generated:
    """Ask for cases, validate them, feed problems back for up to `repair_rounds` rounds; at most `max_cases`."""
    accepted: dict[str, Case] = {}
    held: set[str] = set()
    notes: list[Diagnostic] = []
    broken: dict[str, str] = {}  # every draft still broken, by id, with its latest problem: repaired or dropped
    rounds = 0
    for rounds in range(1, repair_rounds + 1):
        proposal = verifier.propose(VerifyRequest(hypothesis, node, output, rounds, tuple(broken.items())))
        notes.extend(proposal.diagnostics)
        for draft in proposal.drafts:
            if len(accepted) >= max_cases:
                break
            if draft.id in accepted:
                same = (accepted[draft.id].kind, accepted[draft.id].source) == (draft.kind, draft.source)
                if not same:
                    notes.append(_dropped(draft.id, hypothesis, rounds, "its id is taken by another case"))
                continue
            problem, holds_there = _validated(draft, output, timeout_s)
            if problem is None:
                broken.pop(draft.id, None)
                accepted[draft.id] = Case(draft.id, draft.kind, draft.source, draft.strength,
                                          frozenset({hypothesis.id}), draft.description)
                if holds_there:
                    held.add(draft.id)
            else:
                broken[draft.id] = problem
        if not broken or len(accepted) >= max_cases:
            break
    dropped = tuple(_dropped(case_id, hypothesis, rounds, problem) for case_id, problem in broken.items())
    return Generated(tuple(accepted.values()), rounds, (*notes, *dropped), frozenset(held))


def _dropped(case_id: str, hypothesis: Hypothesis, rounds: int, problem: str) -> Diagnostic:
    """SKM843 for a draft that never became a case."""
    return make(codes.UNVALIDATED_CASE, f"case {case_id!r} for hypothesis {hypothesis.id!r} was dropped after "
                                        f"{rounds} round{'s' if rounds != 1 else ''}: {problem}")


def holds(case: Case, output: Output, timeout_s: float) -> int:
    """M's entry for one case on one output: 1 when it holds (a broken run counts as not holding)."""
    return int(run_case(case, output, timeout_s).holds)
