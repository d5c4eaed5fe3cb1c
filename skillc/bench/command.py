"""`skillc bench`: the command's driver and typed result (`skillc.api` re-exports them; the command line renders
a `BenchResult`). A user error comes back as diagnostics in the result; an exception is an internal error (SKM900).
"""

from __future__ import annotations

import attrs

from skillc.bench.runner import BenchConfig, BenchOutcome, Progress, run_bench
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, internal_error


@attrs.define
class BenchResult(HasDiagnostics):
    """`skillc bench`: what the bench did (its rows, report and output folder) and its diagnostics."""

    outcome: BenchOutcome | None
    diagnostics: list[Diagnostic]


def bench(config: BenchConfig, *, progress: Progress | None = None) -> BenchResult:
    """Run the cells of a suite's matrix that have no row yet and write the report (`report_only`: only the report).

    `progress(total, done)` is a context manager that yields a callback told of every row written.
    """
    try:
        outcome = run_bench(config, progress=progress)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return BenchResult(None, [internal_error(exc, "running the bench")])
    return BenchResult(outcome, list(outcome.diagnostics))
