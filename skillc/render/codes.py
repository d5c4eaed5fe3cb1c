"""Diagnostic codes of the drawings (`skillc dot`): SKM525, a trace overlaid on a machine that did not record it.

The number sits with the trace codes (SKM520–SKM539) because it is about a trace; the examples are command lines.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, W

TRACE_OF_ANOTHER_MACHINE: Final = Code(
    "SKM525", "trace-of-another-machine", W, "the trace overlaid on the drawing was recorded with another machine",
    "`skillc dot MACHINE --trace RUN.jsonl` colours the states and edges the run went through. A trace whose "
    "header names another machine, or whose steps are in states this machine does not have, would leave the "
    "drawing grey, as if the run had visited nothing: the drawing is still written, with this warning, and the "
    "command exits 1. A machine edited since the run (same name, other hash) is drawn without the warning as long "
    "as the run's states still exist.",
    "skillc dot livemath.skm --trace warehouse-run.jsonl -o run.svg",
    "skillc dot livemath.skm --trace livemath-run.jsonl -o run.svg",
    "overlay the trace on the machine that recorded it (the header's `skillc.machine`)", runnable=False, lang="text")

ALL: Final[tuple[Code, ...]] = (TRACE_OF_ANOTHER_MACHINE,)
