"""`skillc export langgraph`: a checked machine as a Python module building a LangGraph `StateGraph` whose nodes run
skillc's own steps. `skillc.api.export_graph` is `export_graph` here.
"""

from __future__ import annotations

from skillc.diagnostics import internal_error
from skillc.export.langgraph import export
from skillc.language import TextResult, load_checked


def export_graph(kind: str, machine_path: str) -> TextResult:
    """`skillc export langgraph MACHINE`: a Python module building the checked machine as a LangGraph `StateGraph`
    whose nodes run skillc's own steps (`kind` is `langgraph`, the one system written so far); the module is None
    when the machine cannot be exported."""
    checked = load_checked(machine_path)
    if checked.machine is None:
        return TextResult(None, checked.diagnostics)
    try:
        return TextResult(*export(checked.machine, machine_path))
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return TextResult(None, [internal_error(exc, f"exporting {machine_path}")])
