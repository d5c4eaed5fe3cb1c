"""Diagnostic codes of `skillc export` and of reading an exported graph back (SKM870–SKM879), in `skillc.registry`.

The examples are Python (an exported module's lines) or `.skm`; `tests/export/test_codes.py` produces each code
from real input.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, W

_GOOD_SKM: Final = """machine demo {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var out: str
  start run
  tool run {
    call bash(command: "date")
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""

RESERVED_EXPORT_NAME: Final = Code(
    "SKM870", "reserved-export-name", E, "a name of the machine is one the exported graph keeps for itself",
    "An exported LangGraph graph keeps its bookkeeping (the state each step chose, the step count, the run's log) "
    "in channels whose names begin with `__skillc`; a state or variable of the machine may not begin so, since "
    "its channel or node would take the same name. Nothing is written.",
    _GOOD_SKM.replace("var out", "var __skillc_out").replace("writes out", "writes __skillc_out")
    .replace("requires out", "requires __skillc_out"), _GOOD_SKM,
    "rename the state or variable", runnable=False)
EXPORTED_GRAPH_CHANGED: Final = Code(
    "SKM871", "exported-graph-changed", W, "the exported graph no longer matches the machine it carries, so it is "
    "imported as any graph",
    "A module written by `skillc export langgraph` carries its machine (`MACHINE`) and builds one node per state, "
    "with the state's edge targets (and the fallback) as the path map of the conditional edge after it. "
    "`skillc import langgraph` gives that machine back only while the graph still matches it; when a node, an "
    "edge or a path map was changed by hand, the graph is imported like any other LangGraph graph (nodes as "
    "tool states, routers as free choices), and this warning lists what no longer matches.",
    'builder.add_node("audit", step_audit)  # added by hand to an exported graph',
    "# the module as `skillc export langgraph` wrote it", "change the machine and export it again",
    runnable=False, lang="python")
EXPORTED_MACHINE_DOES_NOT_CHECK: Final = Code(
    "SKM872", "exported-machine-does-not-check", E, "the machine an exported graph carries does not pass "
    "`skillc check`",
    "The `MACHINE` text of an exported module is what its nodes run; it was checked when it was exported. A "
    "module whose text was edited so that it no longer checks is not read back, and its graph will not run; "
    "the first of the checker's errors is named.",
    "MACHINE = r'''\nmachine demo { start nowhere fallback }\n'''[1:]", "# the module as exported",
    "export the machine again from its .skm file", runnable=False, lang="python")
EXPORT_NOT_STANDALONE: Final = Code(
    "SKM873", "export-not-standalone", E, "the machine's imports could not be inlined into one text",
    "An exported module carries its machine as one `.skm` text: every import of a project file is inlined (the "
    "standard library's stay, since skillc ships it). The inlined text did not load into the same machine, or an "
    "imported file could not be read again; nothing is written.",
    'import "fragments/missing.skm"', 'import "stdlib/retry.skm"', "check that every imported file is readable",
    runnable=False)

ALL: Final[tuple[Code, ...]] = (RESERVED_EXPORT_NAME, EXPORTED_GRAPH_CHANGED, EXPORTED_MACHINE_DOES_NOT_CHECK,
                                EXPORT_NOT_STANDALONE)
