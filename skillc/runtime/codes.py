"""Diagnostic codes of the run record (SKM520–SKM539): trace files that cannot be read as runs.

The examples are trace lines (JSONL), not machines, so the registry test does not
run them; `tests/runtime/test_record.py` reads each `bad` example and asserts its code.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E

_HEADER: Final = '{"type": "header", "skillc.trace_version": 2, "skillc.machine": "demo", "inputs": {}}\n'
_STEP: Final = '{"type": "step", "step": 0, "state": "think", "kind": "model", "output": {"answer": "4"}}\n'
_FOOTER: Final = '{"type": "footer", "skillc.terminal": "done", "skillc.outcome": "success", "skillc.steps": 1}\n'
_GOOD: Final = _HEADER + _STEP + _FOOTER

UNREADABLE_TRACE: Final = Code(
    "SKM520", "unreadable-trace", E, "the trace file cannot be read",
    "A trace is a UTF-8 text file of JSON Lines. The path is missing, is a folder or a device, or the bytes "
    "are not UTF-8 (a binary file passed by mistake).",
    "\xff\xfe" + _GOOD, _GOOD, "pass the `--trace` file that `skillc run` wrote", runnable=False, lang="json")
NOT_A_TRACE: Final = Code(
    "SKM521", "not-a-trace", E, "the file is not a skillc run trace",
    "A run trace starts with a `header` record, and every line is a record of type `header`, `step` or "
    "`footer`. An empty file, a JSON file of another kind, or a record of another type is not a trace.",
    _STEP + _FOOTER, _GOOD, "pass the `--trace` file that `skillc run` wrote", runnable=False, lang="json")
MALFORMED_TRACE_LINE: Final = Code(
    "SKM522", "malformed-trace-line", E, "a line of the trace is not JSON",
    "Each line of a trace is one JSON object. A last line without its end (a crash in the middle of a "
    "write) is dropped silently; any other line that does not parse is an error at its line.",
    _HEADER + '{"type": "step", "step": 0,\n' + _FOOTER, _GOOD, runnable=False, lang="json")
INVALID_TRACE_RECORD: Final = Code(
    "SKM523", "invalid-trace-record", E, "a trace record lacks a field or has one of the wrong type",
    "Every step names its `step` index (an integer) and its `state` (a string); every other field is "
    "optional, but one that is present must have the type docs/runtime.md gives it (tokens are counts, "
    "`tool_call` is an object with `tool` and `args`, an outcome is success, partial or failed).",
    _HEADER + _STEP.replace('"step": 0', '"step": "first"') + _FOOTER, _GOOD, runnable=False, lang="json")
UNSUPPORTED_TRACE_VERSION: Final = Code(
    "SKM524", "unsupported-trace-version", E, "the trace was written in a newer format than this skillc reads",
    "The header's `skillc.trace_version` names the format of the records. skillc reads every version up to "
    "its own (a trace without the field is version 1, as written by skillc 0.1.0); a newer one, or a value "
    "that is not a positive integer, is refused rather than misread.",
    _GOOD.replace('"skillc.trace_version": 2', '"skillc.trace_version": 99'), _GOOD,
    "read the trace with the skillc version that wrote it (its `skillc.version`), or upgrade skillc",
    runnable=False, lang="json")

ALL: Final[tuple[Code, ...]] = (UNREADABLE_TRACE, NOT_A_TRACE, MALFORMED_TRACE_LINE, INVALID_TRACE_RECORD,
                                UNSUPPORTED_TRACE_VERSION)
