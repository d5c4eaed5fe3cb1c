"""`skillc distill` and `skillc collect`: reusable skills distilled from successful traces, and the traces
recorded (TextWorld cooking walkthroughs, PDDL plans). `skillc.api.distill` and `collect` are these; neither
writes anything (the command line writes what they return).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics import internal_error, unique
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, make
from skillc.frontends.distill import codes as distill_codes
from skillc.frontends.distill import pddl
from skillc.frontends.distill import textworld as tw
from skillc.frontends.distill.library import Built, build_library, target_problem
from skillc.frontends.distill.trace import dumps

Progress = Callable[[str, str], AbstractContextManager[Callable[[int], None] | None]]


def _no_progress(what: str, unit: str) -> AbstractContextManager[None]:
    """No progress display (the default of the API)."""
    return nullcontext(None)


@attrs.define
class DistillOutcome(HasDiagnostics):
    """`skillc distill`: the library built (None after a usage or internal error) and its diagnostics."""

    built: Built | None
    diagnostics: list[Diagnostic]
    usage: bool = False


def distill(traces: Sequence[str], *, output: str | None = None, min_reuse: float = 0.1, emit: str = "skm,python",
            heldout: Sequence[str] = (), games: str | None = None, report: bool = False,
            progress: Progress | None = None) -> DistillOutcome:
    """Distil reusable skills from successful JSONL traces; `output` is only checked here, not written.

    `progress(what, unit)` is a context manager that yields a callback told of every held-out game played.
    """
    kinds = tuple(k.strip() for k in emit.split(",") if k.strip())
    if not kinds or any(k not in ("skm", "python") for k in kinds):
        return DistillOutcome(None, [make(diagnostics_codes.IO_ERROR,
                                          f"expected a comma-separated subset of skm,python, not {emit!r}")],
                              usage=True)
    if output is None and not report:
        return DistillOutcome(None, [make(diagnostics_codes.IO_ERROR,
                                          "say where to write the library (-o DIR), or ask only for --report")],
                              usage=True)
    problem = target_problem(output) if output else None
    if problem:
        return DistillOutcome(None, [make(diagnostics_codes.IO_ERROR, problem)], usage=True)
    try:
        with (progress or _no_progress)("held-out games played", "game") as tick:
            built = build_library(traces, heldout=heldout, min_reuse=min_reuse, emit=kinds, games=games,
                                  progress=tick)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return DistillOutcome(None, [internal_error(exc, "distilling traces")])
    return DistillOutcome(built, unique(built.diagnostics))


@attrs.define
class CollectResult(HasDiagnostics):
    """`skillc collect`: the JSONL of the recorded traces and the line to report, or the diagnostics."""

    text: str | None
    summary: str
    diagnostics: list[Diagnostic]


def collect(output: str, *, count: int = 20, seed: int = 0, games: str = ".skillc/games", workers: int = 1,
            env: str = "textworld", domain: str = "blocks", split: str = "train",
            progress: Progress | None = None) -> CollectResult:
    """Record runs as traces: TextWorld cooking walkthroughs, or PDDL plans solved by pyperplan (not written).

    `progress(what, unit)` is a context manager that yields a callback told of every game or problem done.
    """
    bar = progress or _no_progress
    if env == "pddl":
        try:
            chosen = pddl.problems(domain, split)[:count]
            if not Path(output).resolve().parent.is_dir():
                raise tw.Unavailable(f"no such folder for the output: {Path(output).parent}")
            with bar(f"{domain} problems solved", "problem") as tick:
                traces = pddl.collect(domain, split, chosen, progress=tick)
        except tw.Unavailable as exc:
            return CollectResult(None, "", [make(diagnostics_codes.IO_ERROR, str(exc))])
        return CollectResult(dumps(traces), f"{len(traces)} traces of {len(chosen)} {domain} problems ({split})", [])
    problem = None
    try:
        tw.import_textworld()
        Path(games).mkdir(parents=True, exist_ok=True)
    except tw.Unavailable as exc:
        problem = str(exc)
    except OSError as exc:
        problem = f"cannot keep games in {games}: {exc.strerror or exc}"
    if problem is None and not Path(output).resolve().parent.is_dir():
        problem = f"no such folder for the output: {Path(output).parent}"
    if problem:
        return CollectResult(None, "", [make(diagnostics_codes.IO_ERROR, problem)])
    dropped: list[str] = []
    with bar("games generated and played", "game") as tick:
        played = tw.collect(tw.specs(count, seed), games, workers=workers, progress=tick, dropped=dropped)
    left_out = [make(distill_codes.GAME_UNAVAILABLE, f"left out {why}") for why in dropped]
    if not played:  # an empty trace file is not a result: say so, write nothing
        return CollectResult(None, "", [*left_out, make(distill_codes.NO_TRACES, f"none of the {count} games could "
                                                        "be made; nothing written")])
    recorded = tw.relative_to(played, Path(output).parent)
    won = sum(t.success for t in recorded)
    return CollectResult(dumps(recorded), f"{len(recorded)} traces ({won} won) of {count} games; games in {games}",
                         left_out)
