"""`skillc conform`: native transcripts aligned to a checked machine, without replaying any model, and judged by
its rules. `skillc.api.conform` is `conform` here; the command line renders its `ConformResult`.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from skillc.conform.conform import ConformReport, conform_files
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, internal_error
from skillc.language import load_checked


@attrs.define
class ConformResult(HasDiagnostics):
    """`skillc conform`: every transcript's report (None when the machine does not check), and the diagnostics:
    the machine's problems (`unchecked`), the transcripts' import problems, each violation (SKM860–SKM865)."""

    report: ConformReport | None
    diagnostics: list[Diagnostic]
    unchecked: bool = False


def conform(machine_path: str, transcripts: Sequence[str], *, trace_format: str | None = None) -> ConformResult:
    """Align native transcripts (skillc run traces of any mode, chat transcripts, Claude Code logs) to a checked
    machine without replaying any model, and report the rules and success evidence each one broke, and where."""

    checked = load_checked(machine_path)
    if checked.machine is None:
        return ConformResult(None, checked.diagnostics, checked.unchecked)
    try:
        report = conform_files(checked.machine, transcripts, fmt=trace_format)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return ConformResult(None, [internal_error(exc, "conforming transcripts")])
    return ConformResult(report, list(report.diagnostics))
