"""The check/replay gate: a candidate version may consume an execution only if it checks and replays.

`check_gate` runs `skillc check` on the candidate's machine text (skillc.check.source); `replay_gate`
adds the replay of accepted development traces with `skillc refine`'s replayer
(skillc.improve.refine.replay), the entries given by the caller, or `archive_gate` loading them from refine's
archive beside the machine (skillc.improve.refine.archive).
A gate answers why a candidate is refused (the first error, or the first trace that no longer
replays: its short id, the replay's reason and the candidate's path), or None when it may run; the loop
counts every refusal as an execution saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillc.improve.evolve.state import Node

if TYPE_CHECKING:
    from skillc.diagnostics import Diagnostic
    from skillc.improve.refine.events import Alignment, DevTrace
    from skillc.improve.refine.replay import ReplayVerdict
    from skillc.ir.machine import Machine


def _checked(node: Node) -> tuple[Machine | None, str | None]:
    """The candidate's checked machine, or why it does not check."""
    from skillc.check.source import check_source

    result = check_source(node.machine, path=f"<candidate {node.name or node.id}>")
    first = next((d for d in result.diagnostics if d.is_error), None)
    if result.machine is None or result.failed:
        why = f"{first.code}: {first.message}" if first is not None else "the machine does not build"
        return None, f"fails skillc check ({why})"
    return result.machine, None


def check_gate(node: Node) -> str | None:
    """Refuse a candidate whose machine does not pass `skillc check`."""
    return _checked(node)[1]


class ReplayGate:
    """Refuse a candidate that does not check, or that no longer replays one of the accepted traces."""

    def __init__(self, entries: Sequence[tuple[DevTrace, Alignment]]) -> None:
        self.entries = tuple(entries)

    def __call__(self, node: Node) -> str | None:
        """Check, then replay every entry in order; the first failure is the reason."""
        from skillc.improve.refine.replay import replay_trace

        machine, problem = _checked(node)
        if machine is None:
            return problem
        for trace, alignment in self.entries:
            verdict = replay_trace(machine, trace, alignment)
            if not verdict.ok:
                return _broken(trace, verdict)
        return None


def _broken(trace: DevTrace, verdict: ReplayVerdict) -> str:
    """Why a candidate breaks an accepted trace: the trace (short id, as refine prints it), the replay's reason and
    the path the candidate took."""
    path = " → ".join(verdict.states) or "no state"
    return (f"no longer replays accepted trace {trace.id[:12]} (a {trace.outcome} run): {verdict.reason}; "
            f"the candidate's path: {path}")


def replay_gate(entries: Sequence[tuple[DevTrace, Alignment]]) -> ReplayGate:
    """The check + replay gate over the accepted traces `entries`."""
    return ReplayGate(entries)


def archive_gate(machine_path: str | Path, folder: str | Path | None = None) \
        -> tuple[ReplayGate | None, list[Diagnostic]]:
    """The check + replay gate over the traces refine's archive of `machine_path` accepted (by default
    `MACHINE.archive/` beside it); None with the archive's diagnostic (SKM807) when it cannot be read.

    A machine without an archive yet gets the gate with no traces (the check alone decides); a stale archive
    (SKM808: the machine was edited by hand) still gives its traces, each of which a candidate must replay.
    """
    from skillc.improve.refine.archive import default_folder, open_archive

    where = Path(folder) if folder is not None else default_folder(machine_path)
    if not where.is_dir():
        return ReplayGate([]), []  # opening would create the folder: evolving never leaves an archive behind
    archive, problems = open_archive(machine_path, where)
    if archive is None:
        return None, problems
    entries = sorted(archive.entries.values(), key=lambda e: e.id)  # a stable order: the first failure is stable
    return ReplayGate([(e.trace, e.alignment) for e in entries]), problems
