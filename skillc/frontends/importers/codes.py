"""Diagnostic codes of the importers (SKM6xx), listed in `skillc.registry`.

The examples are ASL documents or Python, so the registry test does not run
them; `tests/frontends/importers/test_codes.py` imports each ASL example and asserts its code.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, N, W


def _asl(states: str, start: str = "A") -> str:
    """A small ASL definition around `states` (a JSON object body)."""
    return f'{{\n  "StartAt": "{start}",\n  "States": {{\n{states}\n  }}\n}}\n'


_OK = _asl('    "A": {"Type": "Pass", "Next": "B"},\n    "B": {"Type": "Succeed"}')
_POLL = _asl(
    '    "A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "ResultPath": "$.job", '
    '"Next": "B"},\n'
    '    "B": {"Type": "Choice", "Choices": [{"Variable": "$.job.done", "BooleanEquals": true, "Next": "C"}], '
    '"Default": "W"},\n'
    '    "W": {"Type": "Wait", "Seconds": 5, "Next": "A"},\n'
    '    "C": {"Type": "Succeed"}')


INVALID_DOCUMENT: Final = Code(
    "SKM600", "invalid-document", E, "the definition is not valid JSON or YAML",
    "The importer reads `.asl.json` files as JSON and `.asl.yaml` files as YAML. A syntax error is "
    "reported at its line and column; nothing is checked until it parses.",
    '{"StartAt": "A", "States": {"A": {"Type": "Succeed"},}}', _OK,
    "fix the JSON syntax at the position shown", runnable=False, lang="json")
NOT_A_STATE_MACHINE: Final = Code(
    "SKM601", "not-a-state-machine", E, "the document is not an ASL state machine",
    "A state machine is an object with a string `StartAt` and an object `States` whose fields are "
    "states (objects with a `Type`). Branches of a Parallel state and the processors of a Map state "
    "have the same shape.",
    '{"States": {"A": {"Type": "Succeed"}}}', _OK, "add `StartAt` and `States`", runnable=False, lang="json")
UNKNOWN_STATE_TYPE: Final = Code(
    "SKM602", "unknown-state-type", E, "a state has an unknown or missing `Type`",
    "`Type` must be one of Pass, Succeed, Fail, Task, Choice, Wait, Parallel or Map.",
    _asl('    "A": {"Type": "Lambda", "End": true}'), _OK, "use one of the eight ASL state types",
    runnable=False, lang="json")
MISPLACED_FIELD: Final = Code(
    "SKM603", "misplaced-field", E, "a field that this kind of object does not have",
    "Each kind of state (and retrier, catcher, choice rule) has a fixed set of fields; AWS rejects a "
    "definition with any other, e.g. `ResultPath` on a Choice or `Next` on a Succeed state.",
    _asl('    "A": {"Type": "Succeed", "ResultPath": "$.x"}'), _OK, "remove the field or move it",
    runnable=False, lang="json")
MISSING_FIELD: Final = Code(
    "SKM604", "missing-field", E, "a required field is missing",
    "A non-terminal state other than Choice needs `Next` (or `\"End\": true`), a Task needs `Resource`, "
    "a Choice needs `Choices`, a catcher needs `Next`, retriers and catchers need `ErrorEquals`.",
    _asl('    "A": {"Type": "Pass"}'), _OK, "add the field", runnable=False, lang="json")
BAD_FIELD_VALUE: Final = Code(
    "SKM605", "bad-field-value", E, "a field has the wrong type or an out-of-range value",
    "Field values are typed: `MaxAttempts` is a non-negative integer, `BackoffRate` a number of at "
    "least 1, `IntervalSeconds` a positive integer, `JitterStrategy` FULL or NONE, `ErrorEquals` a "
    "non-empty list of strings, and so on.",
    _asl('    "A": {"Type": "Task", "Resource": "arn:aws:lambda:f", "End": true,\n'
         '          "Retry": [{"ErrorEquals": ["States.ALL"], "BackoffRate": 0.5}]}'),
    _OK, "use a value of the documented type and range", runnable=False, lang="json")
UNDEFINED_ASL_STATE: Final = Code(
    "SKM606", "undefined-asl-state", E, "`StartAt`, `Next` or `Default` names no state",
    "Transitions name states of the same `States` object; a branch of a Parallel or Map cannot jump "
    "to a state outside it.",
    _asl('    "A": {"Type": "Pass", "Next": "Bb"},\n    "B": {"Type": "Succeed"}'), _OK,
    "name an existing state of the same `States` object", runnable=False, lang="json")
DUPLICATE_ASL_NAME: Final = Code(
    "SKM607", "duplicate-asl-name", E, "a state name or field is defined twice",
    "State names must be unique in the whole definition, nested branches included; a JSON object "
    "must not repeat a key (parsers silently keep the last one).",
    _asl('    "A": {"Type": "Pass", "Next": "B"},\n    "A": {"Type": "Succeed"},\n    "B": {"Type": "Succeed"}'),
    _OK, "rename one of them", runnable=False, lang="json")
STATES_ALL_NOT_LAST: Final = Code(
    "SKM608", "states-all-not-last", E, "`States.ALL` is not alone in the last retrier or catcher",
    "`States.ALL` matches every error, so it may only appear by itself in the last element of "
    "`Retry` or `Catch`: anything after it could never be used.",
    _asl('    "A": {"Type": "Task", "Resource": "arn:aws:lambda:f", "End": true,\n'
         '          "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "B"}, '
         '{"ErrorEquals": ["E"], "Next": "B"}]},\n    "B": {"Type": "Succeed"}'),
    _OK, "move `States.ALL` into its own, last element", runnable=False, lang="json")
INVALID_PATH: Final = Code(
    "SKM609", "invalid-path", E, "a JSONPath or intrinsic function is malformed",
    "Paths are JSONPath starting with `$` (`$$` for the context object); `ResultPath`, `Variable` "
    "and `…Path` fields must be reference paths (one node: no wildcards, filters or slices); a "
    "`.$` field may also hold an intrinsic function such as `States.Format(…)`.",
    _asl('    "A": {"Type": "Pass", "ResultPath": "$.a[*]", "End": true}'), _OK,
    "write a path such as `$.result` or `$.items[0]`", runnable=False, lang="json")
EXCLUSIVE_FIELDS: Final = Code(
    "SKM610", "exclusive-fields", E, "fields that exclude each other are both present",
    "Some fields come in alternatives of which at most one may be given: `Error`/`ErrorPath`, "
    "`TimeoutSeconds`/`TimeoutSecondsPath`, `Iterator`/`ItemProcessor`, the four waits of a Wait "
    "state, `End` and `Next`.",
    _asl('    "A": {"Type": "Wait", "Seconds": 1, "SecondsPath": "$.s", "End": true}'), _OK,
    "keep only one of them", runnable=False, lang="json")
CHOICE_WITHOUT_DEFAULT: Final = Code(
    "SKM620", "choice-without-default", W, "a Choice state has no `Default` and its rules do not cover every case",
    "When no rule of a Choice state matches and there is no `Default`, the execution fails with "
    "`States.NoChoiceMatched`. The solver (over the reals: JSON numbers are never NaN) found an input "
    "that no rule takes; the witness shows it. Rules that cover every case need no `Default`.",
    _asl('    "A": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThan": 0, '
         '"Next": "B"}]},\n    "B": {"Type": "Succeed"}'), _OK,
    "add a `Default`, or a rule for the remaining cases", runnable=False, lang="json")
UNBOUNDED_ASL_LOOP: Final = Code(
    "SKM621", "unbounded-asl-loop", W, "a cycle that no counter bounds",
    "Only the execution's timeout (or a history limit) stops a run that keeps taking this cycle. "
    "Most such cycles are polling loops that wait for an external job; make sure the job ends, or "
    "count the rounds in the state data and leave the loop after a maximum.",
    _POLL, _OK, "bound the loop with a counter and a Choice rule, or set `TimeoutSeconds`",
    runnable=False, lang="json")
MAYBE_UNSET_PATH: Final = Code(
    "SKM622", "maybe-unset-path", W, "a path is read where some execution has not written it",
    "A state writes this path (through `ResultPath` or a catcher), but some path of the graph reaches "
    "the reader without passing the writer. Unless the execution's input provides the value, the "
    "read fails at run time with `States.Runtime`.",
    _asl('    "A": {"Type": "Choice", "Choices": [{"Variable": "$.ok", "BooleanEquals": true, "Next": "C"}], '
         '"Default": "T"},\n'
         '    "T": {"Type": "Task", "Resource": "arn:aws:lambda:f", "ResultPath": "$.ok", "Next": "A"},\n'
         '    "C": {"Type": "Succeed"}'),
    _OK, "write the path on every path to the reader, or test it with `IsPresent` first",
    runnable=False, lang="json")
OPAQUE_CONDITION: Final = Code(
    "SKM623", "opaque-condition", N, "a condition the checker treats as an unknown Boolean",
    "JSONata `Condition`s, string and timestamp ordering, `StringMatches` and the type tests "
    "(`IsNumeric`, …) are not modelled exactly: each distinct one becomes a free Boolean, which only "
    "adds possibilities, so dead-rule and shadowing findings remain true.",
    _asl('    "A": {"Type": "Choice", "Choices": [{"Variable": "$.d", "TimestampLessThan": '
         '"2020-01-01T00:00:00Z", "Next": "B"}], "Default": "B"},\n    "B": {"Type": "Succeed"}'),
    _OK, None, runnable=False, lang="json")
PATH_TYPE_CONFLICT: Final = Code(
    "SKM624", "path-type-conflict", W, "a path is compared as two different types",
    "A path compared with `NumericEquals` in one rule and `StringEquals` in another can only match one "
    "of them for a given value; the checker types the path by its first comparison and treats the "
    "others as unknown Booleans.",
    _asl('    "A": {"Type": "Choice", "Choices": [{"Variable": "$.v", "NumericEquals": 1, "Next": "B"}, '
         '{"Variable": "$.v", "StringEquals": "one", "Next": "B"}], "Default": "B"},\n'
         '    "B": {"Type": "Succeed"}'),
    _OK, "guard each typed comparison with a type test (`IsNumeric`), or use one type", runnable=False,
    lang="json")

# ------------------------------------------------------------------ LangGraph
GRAPH_IMPORT_FAILED: Final = Code(
    "SKM650", "graph-import-failed", E, "the `module:attr` of a graph cannot be imported",
    "`skillc import langgraph` imports the module (from the current folder or the Python path) and "
    "takes the attribute; an exception while importing, a missing attribute or a malformed spec is "
    "reported with the cause.",
    "skillc import langgraph agent:graf", "skillc import langgraph agent:graph",
    "check the module path and the attribute name", runnable=False, lang="sh")
NOT_A_GRAPH: Final = Code(
    "SKM651", "not-a-graph", E, "the object is not a LangGraph `StateGraph`",
    "The importer reads the graph builder: a `StateGraph` (or the `CompiledStateGraph` that "
    "`compile()` returns, whose builder it uses).",
    "graph = lambda state: state", "graph = StateGraph(State)", "pass the StateGraph or its compiled graph",
    runnable=False, lang="python")
UNKNOWN_BRANCH_TARGETS: Final = Code(
    "SKM652", "unknown-branch-targets", W, "a router's destinations are not declared",
    "A conditional edge without a path map, whose router has no `Literal[...]` return annotation, can "
    "go to any node as far as the graph says; the importer assumes every node, so checks about it are "
    "weaker and drawings show every possibility.",
    "builder.add_conditional_edges('a', route)", "def route(state) -> Literal['b', '__end__']: ...",
    "annotate the router's return type with Literal[...] or pass a path map", runnable=False,
    lang="python")
NO_PATH_TO_END: Final = Code(
    "SKM653", "no-path-to-end", N, "a node from which END cannot be reached",
    "A node without outgoing edges ends the run, which is often intended; a node that only leads "
    "into such a trap never reaches END.",
    "builder.add_node('a', a)  # no edge from 'a'", "builder.add_edge('a', END)", None,
    runnable=False, lang="python")
UNBOUNDED_GRAPH_CYCLE: Final = Code(
    "SKM654", "unbounded-graph-cycle", W, "a cycle that only `recursion_limit` bounds",
    "No node on the cycle reads `RemainingSteps` and no router on it compares a counter of the state, "
    "so the run leaves the cycle only if the model decides so, or when the recursion limit raises "
    "`GraphRecursionError`.",
    "builder.add_edge('a', 'b'); builder.add_edge('b', 'a')",
    "class State(TypedDict):\n    remaining_steps: RemainingSteps",
    "read `RemainingSteps` in the router, or count the rounds in the state", runnable=False, lang="python")
BRANCH_TARGET_MISMATCH: Final = Code(
    "SKM655", "branch-target-mismatch", E, "a router can return a value its path map does not handle",
    "The router's `Literal[...]` annotation lists a value that the path map has no entry for, or a "
    "destination names no node; LangGraph raises at run time when it is returned.",
    "add_conditional_edges('a', route, {'x': 'b'})  # route -> Literal['x', 'y']",
    "add_conditional_edges('a', route, {'x': 'b', 'y': END})", "map every value the router can return",
    runnable=False, lang="python")
UNKNOWN_WRITES: Final = Code(
    "SKM656", "unknown-writes", N, "the channels a node writes are unknown",
    "Writes are read from the dictionary literals a node's function returns; a node whose source is "
    "not available or that returns something else is treated as writing every channel.",
    "def a(state): return make_update(state)", "def a(state): return {'answer': 42}", None,
    runnable=False, lang="python")
MAYBE_UNSET_CHANNEL: Final = Code(
    "SKM657", "maybe-unset-channel", W, "a node reads a channel that may not be written yet",
    "The node's input schema names a channel that has no default, is not part of the graph's input, "
    "and is not written on every path from START to the node.",
    "class S(TypedDict):\n    q: str\n    a: str  # read by 'check', written only by 'answer'",
    "builder.add_edge('answer', 'check')", "write the channel on every path, or give it a default",
    runnable=False, lang="python")

ALL: Final[tuple[Code, ...]] = (
    INVALID_DOCUMENT,
    NOT_A_STATE_MACHINE,
    UNKNOWN_STATE_TYPE,
    MISPLACED_FIELD,
    MISSING_FIELD,
    BAD_FIELD_VALUE,
    UNDEFINED_ASL_STATE,
    DUPLICATE_ASL_NAME,
    STATES_ALL_NOT_LAST,
    INVALID_PATH,
    EXCLUSIVE_FIELDS,
    CHOICE_WITHOUT_DEFAULT,
    UNBOUNDED_ASL_LOOP,
    MAYBE_UNSET_PATH,
    OPAQUE_CONDITION,
    PATH_TYPE_CONFLICT,
    GRAPH_IMPORT_FAILED,
    NOT_A_GRAPH,
    UNKNOWN_BRANCH_TARGETS,
    NO_PATH_TO_END,
    UNBOUNDED_GRAPH_CYCLE,
    BRANCH_TARGET_MISMATCH,
    UNKNOWN_WRITES,
    MAYBE_UNSET_CHANNEL,
)
