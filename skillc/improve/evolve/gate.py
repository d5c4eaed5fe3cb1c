"""Evolve's side of the one gate (skillc.improve.gate): a candidate version may consume an execution only if it
checks and replays.

`check_gate` is the gate with no accepted traces (`skillc check` alone); `replay_gate(entries)` adds the replay
of accepted development traces; `archive_gate` loads them from refine's archive beside the machine
(skillc.improve.archive) and replays incrementally: only the traces the edit from the archived machine can
affect (the archive's index), every trace when the archive is stale or the machine does not check.
A gate answers why a candidate is refused, in the words of evolve's tree and report — the first error, or the
first trace that no longer replays: its short id, the replay's reason and the candidate's path — or None when it
may run; the loop counts every refusal as an execution saved. The coded refusal (SKM821, SKM822) of the last
candidate refused stays on the gate (`refusal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillc.check.source import check_source
from skillc.diagnostics import Diagnostic
from skillc.improve.archive import default_folder, open_archive
from skillc.improve.evolve.state import Node
from skillc.improve.gate import Entry, Refusal, Select, gate, incremental
from skillc.ir.machine import Machine


def _subject(node: Node) -> str:
    """How the candidate is named: its path for the check, and the subject of a coded refusal."""
    return f"<candidate {node.name or node.id}>"


def _reason(refusal: Refusal) -> str:
    """A refusal in evolve's words."""
    if refusal.trace is not None and refusal.verdict is not None:
        path = " → ".join(refusal.verdict.states) or "no state"
        return (f"no longer replays accepted trace {refusal.trace.id[:12]} (a {refusal.trace.outcome} run): "
                f"{refusal.verdict.reason}; the candidate's path: {path}")
    error = refusal.error
    why = f"{error.code}: {error.message}" if error is not None else "the machine does not build"
    return f"fails skillc check ({why})"


class ReplayGate:
    """Refuse a candidate that does not check, or that no longer replays one of the accepted traces."""

    def __init__(self, entries: Sequence[Entry], old: Machine | None = None, select: Select | None = None) -> None:
        self.entries = tuple(entries)
        self.old = old  # the machine the entries were accepted on (incremental replay needs it)
        self.select = select
        self.refusal: Refusal | None = None

    def __call__(self, node: Node) -> str | None:
        """Check, then replay the entries (those the edit can affect) in order; the first failure is the reason."""
        passage = gate(node.machine, _subject(node), self.entries, subject=f"candidate {node.name or node.id}",
                       old=self.old, select=self.select)
        self.refusal = passage.refusal
        return None if passage.refusal is None else _reason(passage.refusal)


def check_gate(node: Node) -> str | None:
    """Refuse a candidate whose machine does not pass `skillc check`."""
    return ReplayGate(())(node)


def replay_gate(entries: Sequence[Entry]) -> ReplayGate:
    """The check + replay gate over the accepted traces `entries` (each replayed)."""
    return ReplayGate(entries)


def archive_gate(machine_path: str | Path, folder: str | Path | None = None) \
        -> tuple[ReplayGate | None, list[Diagnostic]]:
    """The check + replay gate over the traces refine's archive of `machine_path` accepted (by default
    `MACHINE.archive/` beside it); None with the archive's diagnostic (SKM807) when it cannot be read.

    A machine without an archive yet gets the gate with no traces (the check alone decides); a stale archive
    (SKM808: the machine was edited by hand) still gives its traces, each of which a candidate must replay.
    """
    where = Path(folder) if folder is not None else default_folder(machine_path)
    if not where.is_dir():
        return ReplayGate([]), []  # opening would create the folder: evolving never leaves an archive behind
    archive, problems = open_archive(machine_path, where)
    if archive is None:
        return None, problems
    entries = sorted(archive.entries.values(), key=lambda e: e.id)  # a stable order: the first failure is stable
    old = None if archive.stale else _accepted_machine(Path(machine_path))
    select = incremental(archive) if old is not None else None
    return ReplayGate([(e.trace, e.alignment) for e in entries], old, select), problems


def _accepted_machine(path: Path) -> Machine | None:
    """The machine the archive's entries replayed on (the file, when the archive is not stale), checked."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    result = check_source(text, path=str(path))
    return result.machine if not result.failed else None
