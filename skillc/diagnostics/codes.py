"""Diagnostic codes of the parser and lowering (SKM0xx, SKM1xx), the run (SKM500–511) and the tool (SKM9xx).

Each stage keeps such a table of constants (``NAME: Final = Code(…)``, NAME the slug in
UPPER_SNAKE, and ``ALL``); `skillc.registry` lists every table, `docs/diagnostics.md` is
generated from it (``skillc explain --markdown``) and the test suite runs every ``bad``
example to check it yields its code and every ``good`` example to check it does not.
Codes are stable: never reuse one. This module re-exports `Code` and the severities
(`E`, `W`, `N`) for the other tables.

Ranges: SKM0xx syntax, SKM1xx names and types, SKM2xx checks, SKM3xx the markdown front end, SKM4xx the
distiller, SKM5xx the runtime, SKM6xx the importers, SKM7xx bench, SKM9xx tool errors.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.code import Code, E, N, Severity, W

__all__ = ["Code", "E", "N", "Severity", "W"]


def _m(body: str, *, head: str = "") -> str:
    """A small complete machine around `body`, for registry examples."""
    return (
        f"{head}machine demo {{\n"
        "  var answer: str\n"
        "  start think\n"
        f"{body}"
        "  terminal done: success { requires answer }\n"
        "  fallback\n"
        "}\n"
    )


_RETRY = (
    'import "stdlib/retry.skm"\n'
    "machine demo {{\n"
    "  tool bash(command: str) -> (stdout: str, exit_code: int)\n"
    '  input cmd: str\n'
    "  var count: int = 0\n"
    "  var answer: str\n"
    "  start again\n"
    "  {use}\n"
    "  terminal done: success {{ requires answer }}\n"
    "  fallback\n"
    "}}\n"
)

_THINK = '  model think {\n    writes answer\n    prompt "Answer the question."\n    -> done\n  }\n'


# ------------------------------------------------------------------ syntax
INVALID_ENCODING: Final = Code(
    "SKM001", "invalid-encoding", E, "the file is not UTF-8 text",
    "skillc reads `.skm` files as UTF-8. A file that does not decode, or that holds NUL "
    "bytes, is almost always a binary file passed by mistake.",
    "machine m { doc \"caf\\xe9\" }  # saved as Latin-1", _m(_THINK),
    "save the file as UTF-8", runnable=False)
UNEXPECTED_CHARACTER: Final = Code(
    "SKM002", "unexpected-character", E, "a character that cannot start any token",
    "The lexer met a character that no token of the language begins with.",
    _m(_THINK.replace("-> done", "-> done;")), _m(_THINK),
    "remove the character; statements need no separators")
UNTERMINATED_STRING: Final = Code(
    "SKM003", "unterminated-string", E, "a string literal is not closed on its line",
    "Plain strings end on the line they start on. Use a triple-quoted string for text "
    "that spans several lines.",
    _m(_THINK.replace('"Answer the question."', '"Answer the question.')), _m(_THINK),
    'close the string with `"`, or use `"""` for multi-line text')
UNEXPECTED_TOKEN: Final = Code(
    "SKM004", "unexpected-token", E, "a token that does not fit here",
    "The parser found a token that cannot continue the construct it was reading; the "
    "message lists what it was looking for.",
    _m(_THINK).replace("  var answer", "  tool bash(command: str) -> stdout: str\n  var answer"),
    _m(_THINK).replace("  var answer", "  tool bash(command: str) -> (stdout: str)\n  var answer"))
UNEXPECTED_END_OF_FILE: Final = Code(
    "SKM005", "unexpected-end-of-file", E, "the file ends inside an open block",
    "A `{` was opened and never closed, or the file ends in the middle of a construct.",
    "machine demo {\n  start think\n", _m(_THINK),
    "close the block that is still open")
INVALID_ESCAPE: Final = Code(
    "SKM006", "invalid-escape", E, "an unknown escape sequence in a string",
    "Plain strings support `\\\\`, `\\\"`, `\\n`, `\\r`, `\\t` and `\\u{HEX}`. "
    "Triple-quoted strings are raw and take no escapes.",
    _m(_THINK.replace('"Answer the question."', '"Answer \\q"')), _m(_THINK),
    "write `\\\\` for a backslash, or use a triple-quoted string")
NESTING_TOO_DEEP: Final = Code(
    "SKM007", "nesting-too-deep", E, "an expression or type is nested too deeply",
    "Expressions and types may nest at most 100 levels; deeper nesting is never needed "
    "and would exhaust the analyses' stacks.",
    _m(_THINK.replace("-> done", "when " + "(" * 120 + "true" + ")" * 120 + " -> done\n    -> done")),
    _m(_THINK), "split the guard or simplify it")
CHAINED_COMPARISON: Final = Code(
    "SKM008", "chained-comparison", E, "comparisons cannot be chained",
    "`a < b < c` is ambiguous in a guard language; write `a < b and b < c`.",
    _m("  counter tries max 3\n" + _THINK.replace("-> done", "when 0 < tries < 3 -> done\n    -> done")),
    _m("  counter tries max 3\n" + _THINK.replace("-> done", "when 0 < tries and tries < 3 -> done\n    -> done")),
    "join the comparisons with `and`")
EXPECTED_STATE_ITEM: Final = Code(
    "SKM009", "expected-state-item", E, "something that is not a state item inside a state",
    "A state body holds `reads`, `writes`, `prompt`, `call`, `doc`, `from` and edges "
    "(`when GUARD -> target` or `-> target`).",
    _m(_THINK.replace("writes answer", "write answer")), _m(_THINK),
    "did you mean `writes`, `reads` or an edge `-> target`?")
EXPECTED_MACHINE_ITEM: Final = Code(
    "SKM010", "expected-machine-item", E, "something that is not a declaration inside a machine",
    "A machine body holds `doc`, `source`, `tool`, `record`, `enum`, `input`, `var`, "
    "`counter`, `start`, states, `terminal`, `fallback`, `rule` and `use`.",
    _m(_THINK).replace("var answer: str", "variable answer: str"), _m(_THINK),
    "declarations start with a keyword such as `var`, `model` or `rule`")
EXPECTED_EDGE_TARGET: Final = Code(
    "SKM011", "expected-edge-target", E, "an edge arrow without a target state",
    "Every edge names the state it leads to: `-> target`.",
    _m(_THINK.replace("-> done", "->")), _m(_THINK), "write the target state after `->`")
EXPECTED_TYPE: Final = Code(
    "SKM012", "expected-type", E, "a type is missing or malformed",
    "Types are `str`, `int`, `float`, `bool`, `enum { … }`, `list[T]`, `map[str, T]`, a "
    "record or enum name, and `T?` for optional.",
    _m(_THINK).replace("var answer: str", "var answer: [str]"), _m(_THINK),
    "write a type after `:`, e.g. `str`")
EXPECTED_EXPRESSION: Final = Code(
    "SKM013", "expected-expression", E, "an expression is missing",
    "Guards, assignments and arguments need an expression here.",
    _m(_THINK.replace("-> done", "when -> done\n    -> done")), _m(_THINK),
    "write a Boolean guard after `when`, or drop `when` for the default edge")
MISSING_QUOTATION: Final = Code(
    "SKM014", "missing-quotation", E, "a rule without the sentence it came from",
    "Every rule keeps the sentence of the skill it encodes, as a string after the rule.",
    _m(_THINK + "  rule required think\n"),
    _m(_THINK + '  rule required think "Always think first."\n'),
    "add the quoted sentence from the skill document")
MISSING_ARROW: Final = Code(
    "SKM015", "missing-arrow", E, "an edge guard is not followed by `->`",
    "An edge is `when GUARD -> target`; the arrow separates the guard from the target.",
    _m(_THINK.replace("-> done", 'when answer == "" think\n    -> done')),
    _m(_THINK.replace("-> done", 'when answer == "" -> fallback\n    -> done')),
    "insert `->` before the target")
EXPECTED_TOP_LEVEL_ITEM: Final = Code(
    "SKM016", "expected-top-level-item", E, "something that is not allowed at the top of a file",
    "A file holds `import`, `record`, `enum`, `fragment` and `machine` declarations.",
    "var x: str\n" + _m(_THINK), _m(_THINK),
    "move the declaration inside the `machine { … }` block")
NUMBER_OUT_OF_RANGE: Final = Code(
    "SKM017", "number-out-of-range", E, "a float literal too large to represent",
    "Numbers are 64-bit floats or integers; a literal such as `1e999` would be infinite.",
    _m(_THINK.replace("-> done", "when len(answer) > 1e999 -> fallback\n    -> done")),
    _m(_THINK.replace("-> done", "when len(answer) > 1e9 -> fallback\n    -> done")),
    "use a smaller number")

# ------------------------------------------------------------------ names and types
NO_MACHINE: Final = Code(
    "SKM100", "no-machine", E, "the file declares no machine, fragment or type",
    "A `.skm` file holds one machine, or a library of fragments and types to import.",
    "# nothing here\n", _m(_THINK), "declare `machine NAME { … }`")
MULTIPLE_MACHINES: Final = Code(
    "SKM101", "multiple-machines", E, "more than one machine in one file",
    "Each file holds at most one machine; put others in their own files.",
    _m(_THINK) + _m(_THINK).replace("machine demo", "machine other"), _m(_THINK),
    "move the second machine to its own file")
UNDEFINED_STATE: Final = Code(
    "SKM102", "undefined-state", E, "an edge, `start` or rule names a state that does not exist",
    "State names are resolved in the machine; fragments' states are reached through their "
    "instance name.",
    _m(_THINK.replace("-> done", "-> dne")), _m(_THINK))
UNDEFINED_VARIABLE: Final = Code(
    "SKM103", "undefined-variable", E, "a name that is not a declared variable",
    "Every variable is declared with `input`, `var` or `counter` before use.",
    _m(_THINK.replace("writes answer", "writes answr")), _m(_THINK))
UNDEFINED_TOOL: Final = Code(
    "SKM104", "undefined-tool", E, "a call to a tool that is not in the interface table",
    "Tool states may call only tools declared with `tool NAME(params) -> (results)`.",
    _m('  tool think {\n    call bash(command: "ls")\n    writes answer = stdout\n    -> done\n  }\n'),
    _m('  tool think {\n    call bash(command: "ls")\n    writes answer = stdout\n    -> done\n  }\n',
       ).replace("  var answer", "  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var answer"),
    "declare the tool in the machine's interface table")
UNDEFINED_LABEL: Final = Code(
    "SKM105", "undefined-label", E, "a label that is not in the enum it is compared with",
    "A bare name compared with an enum variable must be one of that enum's labels.",
    _m(_THINK.replace("-> done", "when verdict == complet -> done\n    -> done"))
    .replace("  var answer: str", "  var answer: str\n  var verdict: enum { complete, incomplete } = complete"),
    _m(_THINK.replace("-> done", "when verdict == complete -> done\n    -> done"))
    .replace("  var answer: str", "  var answer: str\n  var verdict: enum { complete, incomplete } = complete"))
UNDEFINED_TYPE: Final = Code(
    "SKM106", "undefined-type", E, "a type name that is neither built in nor declared",
    "Built-in types are `str`, `int`, `float` and `bool`; records and enums are declared "
    "with `record` and `enum`.",
    _m(_THINK).replace("var answer: str", "var answer: string"), _m(_THINK))
UNDEFINED_FRAGMENT: Final = Code(
    "SKM107", "undefined-fragment", E, "`use` names a fragment that is not defined or imported",
    "Fragments are defined with `fragment` in this file or one it imports.",
    _m(_THINK + "  use retry as again() -> (ok: done)\n"),
    'import "stdlib/retry.skm"\n' + _m(_THINK))
DUPLICATE_NAME: Final = Code(
    "SKM108", "duplicate-name", E, "a name is declared twice",
    "States, variables, tools, types, labels and parameters must be unique in their scope.",
    _m(_THINK + _THINK), _m(_THINK), "rename one of them")
TYPE_MISMATCH: Final = Code(
    "SKM109", "type-mismatch", E, "operands of an operator have incompatible types",
    "Comparisons need operands of the same type; arithmetic needs numbers; `++` joins "
    "scalars into a string; `and`, `or` and `not` need Booleans.",
    _m(_THINK.replace("-> done", "when answer == 3 -> done\n    -> done")),
    _m(_THINK.replace("-> done", 'when answer == "3" -> done\n    -> done')))
ASSIGNMENT_TYPE_MISMATCH: Final = Code(
    "SKM110", "assignment-type-mismatch", E, "a value of the wrong type is assigned",
    "An edge assignment or initialiser must produce the variable's type.",
    _m(_THINK.replace("-> done", "-> done { answer = 3 }")),
    _m(_THINK.replace("-> done", '-> done { answer = "3" }')))
GUARD_NOT_BOOL: Final = Code(
    "SKM111", "guard-not-bool", E, "a guard that is not a Boolean",
    "Edge guards and the predicates of a terminal's `requires` must be Boolean expressions.",
    _m(_THINK.replace("-> done", "when answer -> done\n    -> done")),
    _m(_THINK.replace("-> done", 'when answer != "" -> done\n    -> done')))
BAD_TOOL_ARGUMENTS: Final = Code(
    "SKM112", "bad-tool-arguments", E, "a tool call's arguments do not match the tool's parameters",
    "A call passes every parameter of the tool exactly once, by name.",
    _m('  tool think {\n    call bash(cmd: "ls")\n    writes answer = stdout\n    -> done\n  }\n')
    .replace("  var answer", "  tool bash(command: str) -> (stdout: str)\n  var answer"),
    _m('  tool think {\n    call bash(command: "ls")\n    writes answer = stdout\n    -> done\n  }\n')
    .replace("  var answer", "  tool bash(command: str) -> (stdout: str)\n  var answer"))
ARGUMENT_TYPE_MISMATCH: Final = Code(
    "SKM113", "argument-type-mismatch", E, "a tool argument has the wrong type",
    "Each argument must have the type of the parameter it binds.",
    _m('  tool think {\n    call bash(command: 3)\n    writes answer = stdout\n    -> done\n  }\n')
    .replace("  var answer", "  tool bash(command: str) -> (stdout: str)\n  var answer"),
    _m('  tool think {\n    call bash(command: "3")\n    writes answer = stdout\n    -> done\n  }\n')
    .replace("  var answer", "  tool bash(command: str) -> (stdout: str)\n  var answer"))
BAD_RESULT_BINDING: Final = Code(
    "SKM114", "bad-result-binding", E, "a tool result is bound to a variable wrongly",
    "`writes var = result` binds a result of the called tool to a variable of the same type; "
    "`writes var` alone binds the result of the same name.",
    _m('  tool think {\n    call bash(command: "ls")\n    writes answer = code\n    -> done\n  }\n')
    .replace("  var answer", "  tool bash(command: str) -> (stdout: str, code: int)\n  var answer"),
    _m('  tool think {\n    call bash(command: "ls")\n    writes answer = stdout\n    -> done\n  }\n')
    .replace("  var answer", "  tool bash(command: str) -> (stdout: str, code: int)\n  var answer"))
MISSING_START: Final = Code(
    "SKM115", "missing-start", E, "the machine has no `start` declaration",
    "Execution begins at the state named by `start`.",
    _m(_THINK).replace("  start think\n", ""), _m(_THINK), "add `start STATE`")
DUPLICATE_START: Final = Code(
    "SKM116", "duplicate-start", E, "the machine declares `start` more than once",
    "A machine has exactly one initial state.",
    _m(_THINK).replace("  start think\n", "  start think\n  start think\n"), _m(_THINK),
    "keep one `start`")
MISSING_FALLBACK: Final = Code(
    "SKM117", "missing-fallback", E, "the machine has no `fallback` terminal",
    "Failed operations and unparseable outputs route to the fallback terminal, so every "
    "machine declares exactly one.",
    _m(_THINK).replace("  fallback\n", ""), _m(_THINK), "add `fallback`")
DUPLICATE_FALLBACK: Final = Code(
    "SKM118", "duplicate-fallback", E, "the machine declares more than one `fallback`",
    "There is exactly one fallback terminal.",
    _m(_THINK).replace("  fallback\n", "  fallback\n  fallback\n"), _m(_THINK),
    "keep one `fallback`")
MISPLACED_ITEM: Final = Code(
    "SKM119", "misplaced-item", E, "an item that this kind of state or block does not take",
    "Model and judge states take `prompt` but no `call`; tool states take `call` but no "
    "`prompt`; `doc`, `prompt`, `call`, `reads` and `writes` appear at most once; the "
    "fallback takes no `requires`.",
    _m(_THINK.replace("writes answer", 'writes answer\n    call bash(command: "ls")')), _m(_THINK))
MISSING_ITEM: Final = Code(
    "SKM120", "missing-item", E, "a state lacks an item its kind requires",
    "A tool state needs a `call`; a model or judge state needs a `prompt`.",
    _m(_THINK.replace('    prompt "Answer the question."\n', "")), _m(_THINK),
    "add the missing item")
UNKNOWN_OUTCOME: Final = Code(
    "SKM121", "unknown-outcome", E, "a terminal's outcome is not a known category",
    "Terminal outcomes are `success`, `partial` and `failed`.",
    _m(_THINK).replace("done: success", "done: succes"), _m(_THINK))
INVALID_COUNTER: Final = Code(
    "SKM122", "invalid-counter", E, "a counter's maximum is not a positive integer",
    "`counter NAME max N` needs N ≥ 1.",
    _m("  counter tries max 0\n" + _THINK), _m("  counter tries max 2\n" + _THINK),
    "use a maximum of at least 1")
INVALID_MAP_KEY: Final = Code(
    "SKM123", "invalid-map-key", E, "a map whose keys are not strings",
    "Maps are keyed by `str` so that they serialise to JSON objects.",
    _m("  var scores: map[int, float] = {}\n" + _THINK).replace(" = {}", ""),
    _m("  var scores: map[str, float]\n" + _THINK), "use `map[str, T]`")
IMPORT_NOT_FOUND: Final = Code(
    "SKM124", "import-not-found", E, "an imported file does not exist",
    "`import` resolves `stdlib/…` to the bundled library and other paths relative to the "
    "importing file.",
    'import "nowhere.skm"\n' + _m(_THINK), 'import "stdlib/retry.skm"\n' + _m(_THINK))
IMPORT_ESCAPES_ROOT: Final = Code(
    "SKM125", "import-escapes-root", E, "an import points outside the project root",
    "Imports are confined to the project root (the nearest folder with `skillc.toml`, "
    "`pyproject.toml` or `.git`), except for `stdlib/`.",
    'import "/etc/passwd.skm"\n' + _m(_THINK), 'import "stdlib/retry.skm"\n' + _m(_THINK),
    "copy the file into the project, or import from `stdlib/`")
IMPORT_CYCLE: Final = Code(
    "SKM126", "import-cycle", E, "files import each other in a cycle",
    "Imports must form a tree; a cycle has no first file to load.",
    'import "cycle.skm"  # where cycle.skm imports this file\n' + _m(_THINK), _m(_THINK),
    runnable=False)
FRAGMENT_BINDING: Final = Code(
    "SKM127", "fragment-binding", E, "a `use` does not bind the fragment's parameters and exits exactly",
    "Every parameter of the fragment is bound to a variable of the machine, and every exit "
    "to a state, exactly once.",
    _RETRY.format(use="use retry as again(command: cmd) -> (ok: done)"),
    _RETRY.format(use="use retry as again(command: cmd, output: answer) -> (ok: done, failed: fallback)"))
FRAGMENT_BINDING_TYPE: Final = Code(
    "SKM128", "fragment-binding-type", E, "a `use` binds a parameter or tool of another type",
    "Instantiation renames the fragment's parameters to the bound variables, so their types "
    "must be identical; the tools the fragment calls must have the same signature in the machine.",
    _RETRY.format(use="use retry as again(command: count, output: answer) -> (ok: done, failed: fallback)"),
    _RETRY.format(use="use retry as again(command: cmd, output: answer) -> (ok: done, failed: fallback)"))
RECURSIVE_FRAGMENT: Final = Code(
    "SKM129", "recursive-fragment", E, "a fragment instantiates itself",
    "Fragments expand at compile time, so a fragment that uses itself, directly or through "
    "others, would never finish expanding.",
    "fragment loop() -> (out) {\n  start again\n  use loop as again() -> (out: out)\n}\n",
    "fragment once() -> (out) {\n  start step\n  model step {\n    prompt \"Go.\"\n    -> out\n  }\n}\n")
BAD_FUNCTION_CALL: Final = Code(
    "SKM130", "bad-function-call", E, "an unknown function, or the wrong number or types of arguments",
    "Expressions may call `len(x)`, `str(x)`, `contains(haystack, needle)`, `quote(x)` and `trusted(x)`; "
    "a terminal's `requires` may also call `exists(path)` and `file(path)`.",
    _m(_THINK.replace("-> done", "when size(answer) > 3 -> done\n    -> done")),
    _m(_THINK.replace("-> done", "when len(answer) > 3 -> done\n    -> done")))
UNDECLARED_READ: Final = Code(
    "SKM131", "undeclared-read", E, "a tool argument reads a variable outside the state's read set",
    "A state sees only what it declares: a call's arguments may use only variables listed "
    "in `reads`.",
    _m('  tool think {\n    call bash(command: cmd)\n    writes answer = stdout\n    -> done\n  }\n')
    .replace("  var answer: str", "  tool bash(command: str) -> (stdout: str)\n  input cmd: str\n  var answer: str"),
    _m('  tool think {\n    reads answer\n    call bash(command: answer)\n    writes answer = stdout\n'
       '    -> done\n  }\n')
    .replace("  var answer: str", "  tool bash(command: str) -> (stdout: str)\n  var answer: str = \"ls\""),
    "add the variable to the state's `reads`")
NON_CONSTANT_INITIALISER: Final = Code(
    "SKM132", "non-constant-initialiser", E, "an initial value that is not a constant",
    "Initial values are literals (or lists of literals); they cannot read other variables.",
    _m(_THINK).replace("var answer: str", "var seed: str = \"a\"\n  var answer: str = seed"),
    _m(_THINK).replace("var answer: str", "var answer: str = \"a\""))
READ_ONLY_VARIABLE: Final = Code(
    "SKM133", "read-only-variable", E, "a state or edge writes an input",
    "Inputs are given by the caller and never change during a run.",
    _m(_THINK).replace("var answer: str", "input answer: str"), _m(_THINK),
    "copy the input into a `var` and write that")
RESERVED_NAME: Final = Code(
    "SKM134", "reserved-name", E, "a declaration uses a name the language reserves",
    "`fallback` always names the machine's fallback terminal, and `true`, `false`, `none`, "
    "`and`, `or`, `not` and `in` cannot name variables because expressions read them as "
    "literals and operators. `skill_dir` and `workdir` are the places a run allows: predeclared, "
    "read-only paths the runtime sets, which no variable may shadow and no state or edge may write.",
    _m(_THINK.replace("model think", "model fallback")).replace("start think", "start fallback"),
    _m(_THINK))
INVALID_OPERATOR: Final = Code(
    "SKM135", "invalid-operator", E, "`+=` or `-=` on a variable that is not a number",
    "Increments apply to `int` and `float` variables and to counters.",
    _m(_THINK.replace("-> done", '-> done { answer += "x" }')),
    _m(_THINK.replace("-> done", '-> done { answer = answer ++ "x" }')))
INVALID_LINE_RANGE: Final = Code(
    "SKM136", "invalid-line-range", E, "a `from` annotation with an empty line range",
    "`from \"FILE\":START-END` needs 1 ≤ START ≤ END.",
    _m(_THINK.replace("writes answer", 'writes answer\n    from "SKILL.md":9-3')),
    _m(_THINK.replace("writes answer", 'writes answer\n    from "SKILL.md":3-9')))
COUNTER_WRITTEN_BY_STATE: Final = Code(
    "SKM137", "counter-written-by-state", E, "a state lists a counter in `writes`",
    "Counters are the proof that loops end: they change only through edge assignments "
    "(`-> target { tries += 1 }`), never through a model's or tool's output.",
    _m("  counter tries max 2\n" + _THINK.replace("writes answer", "writes answer, tries")),
    _m("  counter tries max 2\n"
       + _THINK.replace("-> done", "when answer == \"\" and tries < 2 -> think { tries += 1 }\n    -> done")),
    "increment the counter on an edge instead")
RECURSIVE_TYPE: Final = Code(
    "SKM138", "recursive-type", E, "a record contains itself, directly or through other records",
    "Variables serialise to finite JSON objects, so a record cannot contain itself.",
    "record Node {\n  label: str\n  next: Node?\n}\n",
    "record Node {\n  label: str\n  next: str?\n}\n",
    "store a key or an id of the other record instead")
INVALID_COUNTER_ASSIGNMENT: Final = Code(
    "SKM139", "invalid-counter-assignment", E, "a counter changed other than by a constant step or reset",
    "Counters bound loops, so they only go up by a positive integer constant (`c += 1`) or are reset "
    "to a constant between 0 and their maximum (`c = 0`). Anything else would break the bound "
    "the checker proves.",
    _m("  counter tries max 2\n" + _THINK.replace("-> done", "-> done { tries = 5 }")),
    _m("  counter tries max 2\n" + _THINK.replace("-> done", "-> done { tries = 0 }")),
    "increment with `+= N` or reset with `= 0`")
UNKNOWN_RULE_OUTCOME: Final = Code(
    "SKM140", "unknown-rule-outcome", E, "`rule ends` names an outcome that does not exist",
    "A termination rule `rule ends OP in OUTCOME` says every run through `OP` ends with `OUTCOME`, "
    "one of success, partial or failed.",
    _m(_THINK + '  rule ends think in finished "Stop when the answer is written."\n'),
    _m(_THINK + '  rule ends think in success "Stop when the answer is written."\n'),
    "use success, partial or failed")
UNKNOWN_KIT_TOOL: Final = Code(
    "SKM141", "unknown-kit-tool", E, "`use tools` names a kit, or a tool of the kit, that does not exist",
    "`use tools std` takes the whole agent tool kit (`read`, `write`, `edit`, `glob`, `grep`, `bash`, `fetch`, "
    "`ask_user`) with its signatures; `use tools std(read, bash)` takes some of its tools. A tool of your own is "
    "declared with `tool NAME(…) -> (…)` instead.",
    _m(_THINK).replace("  var answer", "  use tools std(read, bsh)\n  var answer"),
    _m(_THINK).replace("  var answer", "  use tools std(read, bash)\n  var answer"),
    "name `std` and tools of it, or declare the tool yourself")
INVALID_ALLOW_ENTRY: Final = Code(
    "SKM142", "invalid-allow-entry", E, "an `allow` entry that is not a tool name with an optional pattern",
    "`allow` takes the entries of a skill's `allowed-tools` as written: a tool name (`Read`, `Bash`, `WebFetch`, "
    "or a tool the machine declares), optionally with a pattern in parentheses (`Bash(git diff:*)`, "
    "`Read(docs/**)`, `WebFetch(domain:example.com)`). Several entries may share one string, separated by spaces "
    "or commas.",
    _m(_THINK).replace("  var answer", '  allow "Read", "Bash(git diff:*"\n  var answer'),
    _m(_THINK).replace("  var answer", '  allow "Read", "Bash(git diff:*)"\n  var answer'),
    "write `Tool` or `Tool(pattern)`")
UNIMPLEMENTED_ALLOWED_TOOL: Final = Code(
    "SKM143", "unimplemented-allowed-tool", N, "an `allow` entry names a tool skillc has no implementation of",
    "A skill written for another harness may allow tools skillc does not have (`WebSearch`, `Task`, …). The entry "
    "is kept, but no state can call such a tool, so it allows nothing here.",
    _m(_THINK).replace("  var answer", '  allow "Read", "WebSearch"\n  var answer'),
    _m(_THINK).replace("  var answer", '  allow "Read"\n  var answer'),
    "drop the entry, or declare a tool of that name and give the runtime an implementation")
WORLD_FUNCTION_OUTSIDE_REQUIRES: Final = Code(
    "SKM144", "world-function-outside-requires", E, "`exists` or `file` outside a terminal's `requires`",
    "World predicates look at the work folder. The runtime evaluates them exactly once, on arrival at a terminal "
    "whose `requires` holds them; a guard, an assignment or a tool argument cannot look at the world, because "
    "every effect must go through a tool state (and appear in the trace).",
    _m(_THINK.replace("-> done", 'when exists("answer.txt") -> done\n    -> done')),
    _m(_THINK).replace("requires answer", 'requires answer, exists("answer.txt")'),
    "move the predicate into the terminal's `requires`, or read the file in a tool state")
CIRCULAR_PASS_THROUGH: Final = Code(
    "SKM145", "circular-pass-through", E, "fragment instances that route back to themselves without a state",
    "A fragment whose `start` is one of its exits passes the run straight on to what the exit is bound to. "
    "When such instances route to each other in a circle, entering them would never reach a state.",
    "fragment solo() -> (out) {\n  start out\n}\n"
    "machine demo {\n  start a\n  use solo as a() -> (out: a)\n  terminal done: success\n  fallback\n}\n",
    "fragment solo() -> (out) {\n  start out\n}\n"
    "machine demo {\n  start a\n  use solo as a() -> (out: done)\n  terminal done: success\n  fallback\n}\n",
    "route the pass-through fragment's exit to a state or terminal")
FORBID_FALLBACK: Final = Code(
    "SKM146", "forbid-fallback", E, "`rule forbid fallback`",
    "The runtime routes a failed operation or an unusable output to the fallback without any edge, "
    "so no machine can promise never to reach it.",
    _m(_THINK + '  rule forbid fallback "Never give up."\n'),
    _m(_THINK + '  rule required think "Always think."\n'),
    "forbid the states or tools that lead to failure instead, or `rule required` what must succeed")
INTEGER_TOO_LARGE: Final = Code(
    "SKM147", "integer-too-large", E, "an integer literal with more digits than skillc accepts",
    "Integer literals are limited to 4,300 digits (Python's safe conversion limit); a longer one is "
    "almost certainly a mistake and would make every later stage slow.",
    _m(_THINK).replace("var answer: str", "var answer: str\n  var n: int = " + "9" * 4301),
    _m(_THINK).replace("var answer: str", "var answer: str\n  var n: int = 9"),
    "use a smaller number")

# ------------------------------------------------------------------ runtime
JOURNAL_ERROR: Final = Code(
    "SKM500", "journal-error", E, "the run journal cannot be used",
    "The SQLite journal of `skillc run` is unreadable, is not a skillc journal (another application's "
    "database, or a file that is not SQLite at all), or a run in it is damaged (wrong-typed or "
    "undecodable values), or a `--resume` names a journal that does not exist (none is made: the default "
    "`.skillc/runs.sqlite` is relative to the folder the command is typed in). skillc refuses to resume "
    "from a journal it cannot trust rather than running tool steps from a guessed state.", "", "",
    "point --journal at the run's own journal, or start the run "
    "again", runnable=False)
RUN_REFUSED: Final = Code(
    "SKM501", "run-refused", E, "a run cannot start or resume as asked",
    "The inputs do not fit the machine, a tool has no implementation, the run already finished, the "
    "machine changed since the run started, or `--resume` was given `--input` or another `--executor` "
    "(a resumed run continues with what it started with). A machine that uses the place `skill_dir` in a "
    "run without a skill folder is refused before its first step (give `--skill-dir DIR`). Answers: "
    "`--answer` to a run that is not waiting for one (it finished, was interrupted, or was answered "
    "already: an answer is taken once), an answer that is not on the question's menu (the run keeps "
    "waiting), and `--resume` of a waiting run without `--answer` are refused, and so is a resume whose "
    "work folder (kept in the journal) is gone, unless `--workdir` names another; nothing changes.", "", "",
    runnable=False)
RUN_LEASED: Final = Code(
    "SKM502", "run-leased", E, "another process is running or resuming this run",
    "A run is leased by one process at a time (an exclusive lock that the kernel drops when its holder "
    "dies, even by SIGKILL). A second `--resume` of a leased run is refused, so no tool step runs twice.",
    "", "", "wait for the other process to end, or stop it, then resume", runnable=False)
TRACE_WRITE_FAILED: Final = Code(
    "SKM503", "trace-write-failed", E, "the trace could not be written",
    "Writing a trace record failed (a full disk, a device that refuses data, a FIFO without a reader). "
    "The record is cut back so the trace has no half-written line; every committed step is in the "
    "journal and the run resumes with `--resume RUN_ID` once the trace can be written.",
    "", "", "free space (or pick another --trace) and resume", runnable=False)
UNQUOTED_SHELL_VALUE: Final = Code(
    "SKM510", "unquoted-shell-value", E, "model or tool text spliced into a bash command without `quote()`",
    "A `bash` command built with `++` runs through `/bin/bash -c`: a value a model wrote or a tool "
    "returned that holds `; rm -rf ~` or `$(…)` would run as shell code. Quote such values with "
    "`quote(x)`; `trusted(x)` marks text meant as shell code, one value at a time. Inputs, enums, "
    "numbers and booleans cannot inject, and a command that is one untrusted value as a whole is "
    "deliberate. The check follows the value through edge assignments, `++`, lists and records.",
    "machine demo {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var reply: str\n"
    "  var out: str\n  start ask\n  model ask {\n    writes reply\n    prompt \"Name a file.\"\n"
    "    -> show\n  }\n  tool show {\n    reads reply\n    call bash(command: \"printf %s \" ++ reply)\n"
    "    writes out = stdout\n    -> done\n  }\n  terminal done: success { requires out }\n  fallback\n}\n",
    "machine demo {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var reply: str\n"
    "  var out: str\n  start ask\n  model ask {\n    writes reply\n    prompt \"Name a file.\"\n"
    "    -> show\n  }\n  tool show {\n    reads reply\n    call bash(command: \"printf %s \" ++ quote(reply))\n"
    "    writes out = stdout\n    -> done\n  }\n  terminal done: success { requires out }\n  fallback\n}\n",
    "write `quote(x)` (or `trusted(x)` for text that is meant to be shell code)")
QUOTED_IN_UNSAFE_CONTEXT: Final = Code(
    "SKM511", "quoted-in-unsafe-context", E, "`quote(x)` of model or tool text where quoting does not protect it",
    "`quote(x)` makes one `'…'` shell word, which is safe only as a whole argument in plain shell. "
    "Inside `\"…\"` its single quotes are literal, so `$(…)` in the value runs; inside `'…'` they end "
    "the quotes; a here-document, a comment, backquotes, `${…}` or arithmetic read it their own way; "
    "after `\\` or `$` its opening quote changes meaning; and as the program, or as code that `eval`, "
    "`sh -c`, `env`/`xargs`/… or `find -exec` run, the value itself is what runs. Close the quotes and "
    "splice `quote(x)` as a word of its own, or use `argv`.",
    "machine demo {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var reply: str\n"
    "  var out: str\n  start ask\n  model ask {\n    writes reply\n    prompt \"Name a file.\"\n"
    "    -> show\n  }\n  tool show {\n    reads reply\n"
    "    call bash(command: \"echo \\\"reply: \" ++ quote(reply) ++ \"\\\"\")\n"
    "    writes out = stdout\n    -> done\n  }\n  terminal done: success { requires out }\n  fallback\n}\n",
    "machine demo {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var reply: str\n"
    "  var out: str\n  start ask\n  model ask {\n    writes reply\n    prompt \"Name a file.\"\n"
    "    -> show\n  }\n  tool show {\n    reads reply\n    call bash(command: \"echo reply: \" ++ quote(reply))\n"
    "    writes out = stdout\n    -> done\n  }\n  terminal done: success { requires out }\n  fallback\n}\n",
    "close the quotes and splice `quote(x)` as an argument of its own, or pass the value with `argv`")
QUOTED_AS_OPTION: Final = Code(
    "SKM512", "quoted-as-option", W, "`quote(x)` of model or tool text stands where a leading `-` makes it an option",
    "`quote(x)` keeps the shell from reading the value as code, not the program from reading it as an option: "
    "a value `-rf` or `--output=/etc/x` spliced as an operand of `rm`, `cat` or `curl` changes what the program "
    "does (argument injection). Reported where the quoted value begins a word after the program's name, no `--` "
    "came before it in that command, and the word before it is not an option (so `-m` `quote(msg)`, an option's "
    "value, is not reported). Put `--` before the operands, or make the value unable to start with `-` (`./` ++ "
    "a path). `printf`'s arguments after its format are data, and are not reported.",
    "machine demo {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var name: str\n"
    "  var out: str\n  start ask\n  model ask {\n    writes name\n    prompt \"Name a file.\"\n"
    "    -> show\n  }\n  tool show {\n    reads name\n    call bash(command: \"cat \" ++ quote(name))\n"
    "    writes out = stdout\n    -> done\n  }\n  terminal done: success { requires out }\n  fallback\n}\n",
    "machine demo {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n  var name: str\n"
    "  var out: str\n  start ask\n  model ask {\n    writes name\n    prompt \"Name a file.\"\n"
    "    -> show\n  }\n  tool show {\n    reads name\n    call bash(command: \"cat -- \" ++ quote(name))\n"
    "    writes out = stdout\n    -> done\n  }\n  terminal done: success { requires out }\n  fallback\n}\n",
    "put `--` before it (`\"cat -- \" ++ quote(x)`), or make sure the value cannot start with `-`")

# ------------------------------------------------------------------ files: leases, outputs, untrusted paths, bounds
ARCHIVE_LEASED: Final = Code(
    "SKM540", "archive-leased", E, "another process is refining against this archive",
    "An archive of accepted traces is leased by one `skillc refine` at a time (an exclusive lock that the "
    "kernel drops when its holder dies, even by SIGKILL), as a run is by one process. Two refines of one "
    "archive at once would each commit what it accepted over the other's; the second is refused before "
    "anything is read or written.", "", "", "wait for the other refine to end, or give another --archive",
    runnable=False)
OUTPUT_IS_INPUT: Final = Code(
    "SKM541", "output-is-input", E, "an output path names one of the command's inputs",
    "`-o` (or another output) names a file the command reads: writing it would replace the input with the "
    "result. The same file is recognised through symlinks, `..` and hard links. Nothing is written.",
    "", "", "write the output somewhere else", runnable=False)
UNSAFE_OUTPUT: Final = Code(
    "SKM542", "unsafe-output", E, "an output cannot be written there safely",
    "The output is a FIFO, a device or a socket where a regular file must be written (an output that is "
    "read back, such as a refined machine), or a symlink to a file outside its own folder (outputs never "
    "follow a link out of their folder). Nothing is written.", "", "",
    "give a regular file's path (or remove the link)", runnable=False)
PATH_OUTSIDE_FOLDER: Final = Code(
    "SKM543", "path-outside-folder", E, "a path read from a file points outside the folders named",
    "Paths read from files (a trace header's profile or game, an archive's object names) are confined to "
    "the folder the file is in (or the folders the command was given): an absolute path, `..` or a "
    "symlink that leads out is refused rather than read or written.", "", "",
    "keep the file the path names beside the file that names it", runnable=False)
INPUT_OVER_LIMIT: Final = Code(
    "SKM544", "input-over-limit", E, "an input is larger, deeper or longer than skillc reads",
    "Structured inputs are read within bounds: JSON and YAML nest at most 200 levels, a file is at most "
    "128 MiB, and a definition has at most a bounded number of items (an ASL Choice at most 500 rules). "
    "Beyond, the input is refused with its limit instead of a slow run or a crash.", "", "",
    "split the input, or simplify it", runnable=False)

# ------------------------------------------------------------------ tool errors
INTERNAL_ERROR: Final = Code(
    "SKM900", "internal-error", E, "skillc itself failed: this is a bug",
    "An internal error is never the user's fault. Please report it with the input that "
    "caused it.", "", "", "report this at the project's issue tracker", runnable=False)
IO_ERROR: Final = Code(
    "SKM901", "io-error", E, "a file could not be read or written",
    "The path does not exist, is a directory where a file was expected, or is not readable.",
    "", "", runnable=False)

ALL: Final[tuple[Code, ...]] = (
    INVALID_ENCODING,
    UNEXPECTED_CHARACTER,
    UNTERMINATED_STRING,
    UNEXPECTED_TOKEN,
    UNEXPECTED_END_OF_FILE,
    INVALID_ESCAPE,
    NESTING_TOO_DEEP,
    CHAINED_COMPARISON,
    EXPECTED_STATE_ITEM,
    EXPECTED_MACHINE_ITEM,
    EXPECTED_EDGE_TARGET,
    EXPECTED_TYPE,
    EXPECTED_EXPRESSION,
    MISSING_QUOTATION,
    MISSING_ARROW,
    EXPECTED_TOP_LEVEL_ITEM,
    NUMBER_OUT_OF_RANGE,
    NO_MACHINE,
    MULTIPLE_MACHINES,
    UNDEFINED_STATE,
    UNDEFINED_VARIABLE,
    UNDEFINED_TOOL,
    UNDEFINED_LABEL,
    UNDEFINED_TYPE,
    UNDEFINED_FRAGMENT,
    DUPLICATE_NAME,
    TYPE_MISMATCH,
    ASSIGNMENT_TYPE_MISMATCH,
    GUARD_NOT_BOOL,
    BAD_TOOL_ARGUMENTS,
    ARGUMENT_TYPE_MISMATCH,
    BAD_RESULT_BINDING,
    MISSING_START,
    DUPLICATE_START,
    MISSING_FALLBACK,
    DUPLICATE_FALLBACK,
    MISPLACED_ITEM,
    MISSING_ITEM,
    UNKNOWN_OUTCOME,
    INVALID_COUNTER,
    INVALID_MAP_KEY,
    IMPORT_NOT_FOUND,
    IMPORT_ESCAPES_ROOT,
    IMPORT_CYCLE,
    FRAGMENT_BINDING,
    FRAGMENT_BINDING_TYPE,
    RECURSIVE_FRAGMENT,
    BAD_FUNCTION_CALL,
    UNDECLARED_READ,
    NON_CONSTANT_INITIALISER,
    READ_ONLY_VARIABLE,
    RESERVED_NAME,
    INVALID_OPERATOR,
    INVALID_LINE_RANGE,
    COUNTER_WRITTEN_BY_STATE,
    RECURSIVE_TYPE,
    INVALID_COUNTER_ASSIGNMENT,
    UNKNOWN_RULE_OUTCOME,
    UNKNOWN_KIT_TOOL,
    INVALID_ALLOW_ENTRY,
    UNIMPLEMENTED_ALLOWED_TOOL,
    WORLD_FUNCTION_OUTSIDE_REQUIRES,
    CIRCULAR_PASS_THROUGH,
    FORBID_FALLBACK,
    INTEGER_TOO_LARGE,
    JOURNAL_ERROR,
    RUN_REFUSED,
    RUN_LEASED,
    TRACE_WRITE_FAILED,
    UNQUOTED_SHELL_VALUE,
    QUOTED_IN_UNSAFE_CONTEXT,
    QUOTED_AS_OPTION,
    ARCHIVE_LEASED,
    OUTPUT_IS_INPUT,
    UNSAFE_OUTPUT,
    PATH_OUTSIDE_FOLDER,
    INPUT_OVER_LIMIT,
    INTERNAL_ERROR,
    IO_ERROR,
)
