"""Request-level full compliance (RFC) judged from observable effects only.

A suite's requirements (and a machine's rules, `skillc.bench.rules`) are checked against what a run left
behind — the files in its workdir, the tool calls it made (the run record's `ToolCall`: tool and arguments)
and the values it handed over at its end — never against what the model declared it did, so a requirement
means the same in machine, native and prompt-only mode. A run that ended failed (or did not finish) is not
compliant unless the suite says `failed_runs_comply = true`: otherwise a run that gave up before doing anything
would count as "fully compliant".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs

from skillc.runtime.record import ToolCall

#: How a run ended; "unfinished" is a run without a footer (killed, timed out).
Outcome = Literal["success", "partial", "failed", "unfinished"]
OUTCOMES: tuple[Outcome, ...] = ("success", "partial", "failed", "unfinished")
Status = Literal["met", "violated", "unverifiable"]
#: How much of a delivered file is read for a `matches` requirement or verifier.
MAX_FILE_BYTES = 1 << 20


@attrs.frozen
class CallPattern:
    """Which calls count: a tool by name, optionally with an argument (or any string argument) matching a regex.

    `arguments`: more (argument, regex) pairs that must all match too — the pattern a machine's tool state fixes
    for each argument of its call (`skillc.bench.rules`).
    """

    tool: str
    matches: str | None = None
    argument: str | None = None
    arguments: tuple[tuple[str, str], ...] = ()
    #: How verdict reasons name the pattern instead of spelling out its regexes (a machine state's call).
    label: str = ""

    def accepts(self, call: ToolCall) -> bool:
        """True when `call` is a call of this tool whose arguments match."""
        if call.tool != self.tool:
            return False
        for name, regex in self.arguments:
            value = call.args.get(name)
            if value is None or not re.search(regex, value if isinstance(value, str) else str(value)):
                return False
        if self.matches is None:
            return True
        if self.argument is not None:
            values = [call.args[self.argument]] if self.argument in call.args else []
        else:
            values = [v for v in call.args.values() if isinstance(v, str)]
        pattern = re.compile(self.matches)
        return any(pattern.search(v if isinstance(v, str) else str(v)) for v in values)

    def describe(self) -> str:
        """The pattern in words, for verdict reasons."""
        if self.label:
            return self.label
        parts = [f"`{name}` matching /{regex}/" for name, regex in self.arguments]
        if self.matches is not None:
            parts.append(f"{f'`{self.argument}`' if self.argument else 'an argument'} matching /{self.matches}/")
        return f"`{self.tool}`" + (" with " + " and ".join(parts) if parts else "")


@attrs.frozen
class FileRequirement:
    """A file the run must deliver in its workdir, optionally with content matching a regex."""

    id: str
    path: str
    matches: str | None = None
    quote: str = ""


@attrs.frozen
class NoFileRequirement:
    """Files (a glob relative to the workdir) the run must not leave behind."""

    id: str
    path: str
    quote: str = ""


@attrs.frozen
class ToolRequirement:
    """A tool call the run must make at least once (`inside`: a command a script ran inside a call counts too)."""

    id: str
    call: CallPattern
    quote: str = ""
    inside: bool = False


@attrs.frozen
class NoToolRequirement:
    """A tool call (a forbidden operation) the run must never make (`inside`: nor a script inside a call)."""

    id: str
    call: CallPattern
    quote: str = ""
    inside: bool = False


@attrs.frozen
class OrderRequirement:
    """A call matching `then` must come after a call matching `first` (write, then read back).

    `then_required` False is a machine's `order A before B` rule: no `then` call before the first `first` call,
    and a run that never makes a `then` call meets it (a `required` rule is what demands the call).
    """

    id: str
    first: CallPattern
    then: CallPattern
    quote: str = ""
    then_required: bool = True


@attrs.frozen
class EvidenceRequirement:
    """The values a run hands over at its end: for the outcome it ended with, all the keys of one alternative.

    `alternatives` pairs an outcome with the keys one terminal of that outcome requires (a machine's
    terminals); a run ending with an outcome that has no alternative is violated, one ending failed or
    unfinished owes nothing (it is not compliant anyway).
    """

    id: str
    alternatives: tuple[tuple[Outcome, tuple[str, ...]], ...]
    quote: str = ""


Requirement = (FileRequirement | NoFileRequirement | ToolRequirement | NoToolRequirement | OrderRequirement
               | EvidenceRequirement)


@attrs.frozen
class Verdict:
    """The judgement of one requirement on one run, with the requirement's quote."""

    id: str
    status: Status
    reason: str = ""
    quote: str = ""


@attrs.frozen
class Compliance:
    """Every requirement's verdict and the run's RFC: True, False, or None when something was unverifiable."""

    verdicts: tuple[Verdict, ...]
    compliant: bool | None
    reason: str = ""

    @property
    def violated(self) -> tuple[str, ...]:
        """The ids of the violated requirements."""
        return tuple(v.id for v in self.verdicts if v.status == "violated")


def check_requirements(requirements: Sequence[Requirement], *, workdir: Path | None,
                       calls: Sequence[ToolCall] | None, outcome: Outcome,
                       failed_runs_comply: bool = False, outputs: Mapping[str, object] | None = None,
                       inner: Sequence[ToolCall] = ()) -> Compliance:
    """Judge each requirement from the workdir, the calls and the outputs; None for one makes its requirements
    unverifiable. `inner`: the commands scripts ran inside the calls (`skillc.bench.inside`), judged by the
    `tool` and `no-tool` requirements marked `inside`."""
    verdicts = tuple(attrs.evolve(judge(r, workdir=workdir, calls=calls, outcome=outcome, outputs=outputs,
                                        inner=inner), quote=r.quote) for r in requirements)
    if outcome in ("failed", "unfinished") and not failed_runs_comply:
        return Compliance(verdicts, False, f"the run ended {outcome}")
    violated = [v.id for v in verdicts if v.status == "violated"]
    if violated:
        return Compliance(verdicts, False, "violated: " + ", ".join(violated))
    unknown = [v.id for v in verdicts if v.status == "unverifiable"]
    if unknown:
        return Compliance(verdicts, None, "unverifiable: " + ", ".join(unknown))
    return Compliance(verdicts, True)


def judge(requirement: Requirement, *, workdir: Path | None, calls: Sequence[ToolCall] | None,
          outcome: Outcome = "success", outputs: Mapping[str, object] | None = None,
          inner: Sequence[ToolCall] = ()) -> Verdict:
    """One requirement's verdict."""
    if isinstance(requirement, EvidenceRequirement):
        if outputs is None:
            return Verdict(requirement.id, "unverifiable", "the run's outputs are not available")
        return _judge_evidence(requirement, outcome, outputs)
    if isinstance(requirement, (FileRequirement, NoFileRequirement)):
        if workdir is None or not workdir.is_dir():
            return Verdict(requirement.id, "unverifiable", "the run's workdir is not available")
        if isinstance(requirement, FileRequirement):
            return _judge_file(requirement, workdir)
        return _judge_no_file(requirement, workdir)
    if calls is None:
        return Verdict(requirement.id, "unverifiable", "the run's tool calls are not available")
    if isinstance(requirement, ToolRequirement):
        hit = any(requirement.call.accepts(c) for c in calls) or \
            (requirement.inside and any(requirement.call.accepts(c) for c in inner))
        return Verdict(requirement.id, "met" if hit else "violated",
                       "" if hit else f"no call of {requirement.call.describe()}")
    if isinstance(requirement, NoToolRequirement):
        bad = [i for i, c in enumerate(calls) if requirement.call.accepts(c)]
        if not bad and requirement.inside:
            found = next((c for c in inner if requirement.call.accepts(c)), None)
            if found is not None:
                return Verdict(requirement.id, "violated", f"a script inside a call ran {requirement.call.describe()}"
                                                           f": `{found.args.get('command', '')}`")
        return Verdict(requirement.id, "violated" if bad else "met",
                       f"call {bad[0] + 1} is {requirement.call.describe()}" if bad else "")
    return _judge_order(requirement, calls)


def workdir_file(workdir: Path, relative: str) -> Path | None:
    """The regular file `relative` names under the workdir, or None (missing, or leading out by `..` or a symlink)."""
    root = workdir.resolve()
    target = (root / relative).resolve()
    return target if root in target.parents and target.is_file() else None


def read_head(path: Path) -> str:
    """The first MAX_FILE_BYTES of a file as text (undecodable bytes replaced); OSError if it cannot be read."""
    with path.open("rb") as f:
        return f.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")


def _judge_file(requirement: FileRequirement, workdir: Path) -> Verdict:
    """A delivered file, and its content against the pattern."""
    target = workdir_file(workdir, requirement.path)
    if target is None:
        return Verdict(requirement.id, "violated", f"{requirement.path} was not delivered")
    if requirement.matches is None:
        return Verdict(requirement.id, "met")
    try:
        text = read_head(target)
    except OSError as exc:
        return Verdict(requirement.id, "violated", f"{requirement.path} cannot be read: {exc.strerror or exc}")
    if re.search(requirement.matches, text):
        return Verdict(requirement.id, "met")
    return Verdict(requirement.id, "violated",
                   f"{requirement.path} does not match /{requirement.matches}/ (it holds {text[:60]!r})")


def _judge_no_file(requirement: NoFileRequirement, workdir: Path) -> Verdict:
    """No file matching the glob is left in the workdir."""
    found = sorted(p.relative_to(workdir).as_posix() for p in workdir.glob(requirement.path))
    if found:
        return Verdict(requirement.id, "violated", f"{found[0]} is present")
    return Verdict(requirement.id, "met")


def _judge_evidence(requirement: EvidenceRequirement, outcome: Outcome, outputs: Mapping[str, object]) -> Verdict:
    """Every key of some alternative of the run's outcome handed over (not null)."""
    if outcome in ("failed", "unfinished"):
        return Verdict(requirement.id, "met", f"a run that ended {outcome} owes no evidence")
    keys = [k for o, k in requirement.alternatives if o == outcome]
    if not keys:
        return Verdict(requirement.id, "violated", f"no terminal has outcome {outcome}")
    missing = min(([k for k in ks if outputs.get(k) is None] for ks in keys), key=len)
    if missing:
        return Verdict(requirement.id, "violated", "evidence missing: " + ", ".join(missing))
    return Verdict(requirement.id, "met")


def _judge_order(requirement: OrderRequirement, calls: Sequence[ToolCall]) -> Verdict:
    """Some call matching `then` after the first call matching `first` (or, for a rule, none before it)."""
    if not requirement.then_required:
        return _judge_rule_order(requirement, calls)
    firsts = [i for i, c in enumerate(calls) if requirement.first.accepts(c)]
    if not firsts:
        return Verdict(requirement.id, "violated", f"no call of {requirement.first.describe()}")
    if any(requirement.then.accepts(c) for c in calls[firsts[0] + 1:]):
        return Verdict(requirement.id, "met")
    return Verdict(requirement.id, "violated",
                   f"no call of {requirement.then.describe()} after call {firsts[0] + 1}")


def _judge_rule_order(requirement: OrderRequirement, calls: Sequence[ToolCall]) -> Verdict:
    """`order A before B`: the first call matching `then` comes after the first call matching `first`. A call that
    matches both (two states calling one tool with arguments the patterns cannot tell apart) counts as `first`:
    the run cannot be shown to have done B before A."""
    then = next((i for i, c in enumerate(calls) if requirement.then.accepts(c)), None)
    if then is None:
        return Verdict(requirement.id, "met")
    if any(requirement.first.accepts(c) for c in calls[:then + 1]):
        return Verdict(requirement.id, "met")
    return Verdict(requirement.id, "violated", f"call {then + 1} is {requirement.then.describe()}, "
                                               f"before any call of {requirement.first.describe()}")
