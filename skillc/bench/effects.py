"""Request-level full compliance (RFC) judged from observable effects only.

A suite's requirements are checked against what a run left behind — the files in
its workdir and the tool calls it made (the run record's `ToolCall`: tool and arguments) — never against
what the model declared, so a requirement means the same in machine, native and
prompt-only mode. A run that ended failed (or did not finish) is not compliant
unless the suite says `failed_runs_comply = true`: otherwise a run that gave up
before doing anything would count as "fully compliant".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
    """Which calls count: a tool by name, optionally with an argument (or any string argument) matching a regex."""

    tool: str
    matches: str | None = None
    argument: str | None = None

    def accepts(self, call: ToolCall) -> bool:
        """True when `call` is a call of this tool whose argument matches."""
        if call.tool != self.tool:
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
        if self.matches is None:
            return f"`{self.tool}`"
        where = f"`{self.argument}`" if self.argument else "an argument"
        return f"`{self.tool}` with {where} matching /{self.matches}/"


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
    """A tool call the run must make at least once."""

    id: str
    call: CallPattern
    quote: str = ""


@attrs.frozen
class NoToolRequirement:
    """A tool call (a forbidden operation) the run must never make."""

    id: str
    call: CallPattern
    quote: str = ""


@attrs.frozen
class OrderRequirement:
    """A call matching `then` must come after a call matching `first` (write, then read back)."""

    id: str
    first: CallPattern
    then: CallPattern
    quote: str = ""


Requirement = FileRequirement | NoFileRequirement | ToolRequirement | NoToolRequirement | OrderRequirement


@attrs.frozen
class Verdict:
    """The judgement of one requirement on one run."""

    id: str
    status: Status
    reason: str = ""


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
                       failed_runs_comply: bool = False) -> Compliance:
    """Judge each requirement from the workdir and the calls; None for either makes its requirements unverifiable."""
    verdicts = tuple(judge(r, workdir=workdir, calls=calls) for r in requirements)
    if outcome in ("failed", "unfinished") and not failed_runs_comply:
        return Compliance(verdicts, False, f"the run ended {outcome}")
    violated = [v.id for v in verdicts if v.status == "violated"]
    if violated:
        return Compliance(verdicts, False, "violated: " + ", ".join(violated))
    unknown = [v.id for v in verdicts if v.status == "unverifiable"]
    if unknown:
        return Compliance(verdicts, None, "unverifiable: " + ", ".join(unknown))
    return Compliance(verdicts, True)


def judge(requirement: Requirement, *, workdir: Path | None, calls: Sequence[ToolCall] | None) -> Verdict:
    """One requirement's verdict."""
    if isinstance(requirement, (FileRequirement, NoFileRequirement)):
        if workdir is None or not workdir.is_dir():
            return Verdict(requirement.id, "unverifiable", "the run's workdir is not available")
        if isinstance(requirement, FileRequirement):
            return _judge_file(requirement, workdir)
        return _judge_no_file(requirement, workdir)
    if calls is None:
        return Verdict(requirement.id, "unverifiable", "the run's tool calls are not available")
    if isinstance(requirement, ToolRequirement):
        hit = any(requirement.call.accepts(c) for c in calls)
        return Verdict(requirement.id, "met" if hit else "violated",
                       "" if hit else f"no call of {requirement.call.describe()}")
    if isinstance(requirement, NoToolRequirement):
        bad = [i for i, c in enumerate(calls) if requirement.call.accepts(c)]
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


def _judge_order(requirement: OrderRequirement, calls: Sequence[ToolCall]) -> Verdict:
    """Some call matching `then` after the first call matching `first`."""
    firsts = [i for i, c in enumerate(calls) if requirement.first.accepts(c)]
    if not firsts:
        return Verdict(requirement.id, "violated", f"no call of {requirement.first.describe()}")
    if any(requirement.then.accepts(c) for c in calls[firsts[0] + 1:]):
        return Verdict(requirement.id, "met")
    return Verdict(requirement.id, "violated",
                   f"no call of {requirement.then.describe()} after call {firsts[0] + 1}")
