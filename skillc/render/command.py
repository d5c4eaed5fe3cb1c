"""`skillc dot`: drawing a checked machine (or a library's fragment, or what changed between two versions) as DOT,
SVG, PNG or Mermaid, optionally with a run's trace over it. `skillc.api.draw` is `draw` here, and
`skillc.api.draw_diff` is `draw_diff` with skillc.improve's diff; the machines are checked with `skillc.language.check`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

import attrs

from skillc.check.source import CheckResult
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, Severity, make
from skillc.language import check, fragment_machines, load, read_stream
from skillc.render import RenderError, overlay_from_trace, render_image, to_dot, to_mermaid
from skillc.render.codes import TRACE_OF_ANOTHER_MACHINE
from skillc.render.diff import to_dot_diff
from skillc.runtime.trace import TraceError

if TYPE_CHECKING:
    from skillc.ir.loader import LoadResult
    from skillc.ir.machine import Machine
    from skillc.render.diff import DiffView


@attrs.define
class DrawResult(HasDiagnostics):
    """`skillc dot`: the drawing's bytes, or the diagnostics (or, for a render or trace problem, the `error`)."""

    data: bytes | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    error: str | None = None


def _foreign_trace(trace: str, reason: str) -> Diagnostic:
    """SKM525: the trace drawn over a machine that did not record it."""
    return make(TRACE_OF_ANOTHER_MACHINE, f"{trace}: {reason}, so the drawing does not show its run",
                hint="overlay the trace on the machine that recorded it (its header's `skillc.machine`)")


def _drawable_fragment(loaded: LoadResult, path: str, name: str | None) -> tuple[Machine | None, str | None]:
    """The fragment of a library to draw (the only one, or `name`), or why there is none."""
    machines = fragment_machines(loaded, path)
    if not machines:
        return None, f"{path} defines neither a machine nor a fragment: nothing to draw"
    if name is not None:
        if name not in machines:
            return None, f"{path} has no fragment `{name}` (it has {', '.join(machines)})"
        return machines[name], None
    if len(machines) > 1:
        return None, (f"{path} is a library of {len(machines)} fragments ({', '.join(machines)}): "
                      "pick one with --fragment")
    return next(iter(machines.values())), None


def draw_diff(old_path: str, new_path: str, fmt: str = "dot", *,
              diff: Callable[[Machine, Machine], DiffView]) -> DrawResult:
    """`skillc dot --diff OLD NEW`: NEW with what changed since OLD coloured (dot, svg or png); both must check.

    `diff` computes the structural diff (`skillc.improve.diff.diff_machines`, which `skillc.api.draw_diff` passes:
    render is a lower stage than improve and never imports it)."""
    if fmt == "mermaid":
        return DrawResult(None, error="--diff draws dot, svg or png, not mermaid")
    machines, found = [], []
    for path in (old_path, new_path):
        result = check(Path(path))
        found += [d for d in result.diagnostics if d.is_error]
        machines.append(result.machine)
    if found or machines[0] is None or machines[1] is None:
        return DrawResult(None, found)
    text = to_dot_diff(machines[0], machines[1], diff(machines[0], machines[1]))
    try:
        return DrawResult(text.encode("utf-8") if fmt == "dot" else render_image(text, fmt))
    except RenderError as exc:
        return DrawResult(None, error=str(exc))


def draw(machine_path: str, fmt: str = "dot", *, trace: str | None = None, fragment: str | None = None,
         stdin: IO[bytes] | None = None, stdin_filename: str | None = None) -> DrawResult:
    """Draw a checked machine (or a library's fragment) as `dot`, `svg`, `png` or `mermaid`; `-` reads `stdin`."""
    source = None
    if machine_path == "-":
        name = stdin_filename or "<stdin>"
        source, problems = read_stream(stdin, name) if stdin is not None else (None, [])
        origin = str(Path(name).absolute()) if stdin_filename else name
        result = check(source.text, path=origin) if source else CheckResult(None, problems)
    else:
        origin, result = machine_path, check(Path(machine_path))
    machine = result.machine
    if machine is None and result.ok:
        machine, problem = _drawable_fragment(load(source.text, path=origin) if source else load(Path(machine_path)),
                                              origin, fragment)
        if problem:
            return DrawResult(None, [make(diagnostics_codes.IO_ERROR, problem)])
    if machine is None or not result.ok:
        return DrawResult(None, [d for d in result.diagnostics if d.severity is not Severity.NOTE])
    try:
        overlay = overlay_from_trace(machine, trace) if trace else None
        # a trace of another machine would leave the drawing grey without a word: drawn, but said (SKM525)
        found = [_foreign_trace(trace, overlay.foreign)] if trace and overlay and overlay.foreign else []
        if fmt == "mermaid":
            return DrawResult(to_mermaid(machine, overlay).encode("utf-8"), found)
        text = to_dot(machine, overlay)
        return DrawResult(text.encode("utf-8") if fmt == "dot" else render_image(text, fmt), found)
    except (RenderError, TraceError) as exc:
        return DrawResult(None, error=str(exc))
