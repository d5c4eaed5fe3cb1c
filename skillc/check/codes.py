"""Diagnostic codes of the checker (SKM2xx), listed in `skillc.registry`."""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, N, W


def _m(body: str, *, extra: str = "", head: str = "") -> str:
    """A small machine: `answer` is written by `think`; `body` holds the states."""
    return (
        f"{head}machine demo {{\n"
        "  input question: str\n"
        "  var answer: str\n"
        f"{extra}"
        "  start think\n"
        f"{body}"
        "  terminal done: success { requires answer }\n"
        "  fallback\n"
        "}\n"
    )


def _think(edges: str = "    -> done\n", writes: str = "answer", reads: str = "question") -> str:
    return (f"  model think {{\n    reads {reads}\n    writes {writes}\n"
            f'    prompt "Answer the question."\n{edges}  }}\n')


def _sourced(body: str, note: str) -> str:
    """A machine that names `SKILL.md` as its source; `note` says what that file holds."""
    return _m(body, head=f"# {note}\n").replace("machine demo {", 'machine demo {\n  source "SKILL.md"', 1)


_JUDGE = (
    "  judge check {{\n    reads answer\n    writes verdict\n"
    '    prompt "Is the answer complete?"\n{edges}  }}\n'
)
_VERDICT = "  var verdict: enum { complete, incomplete }\n"
_COUNTER = "  counter repairs max 2\n"


# The machine of the rule examples (SKM260/261); tests build their own cases on it.
EXAMPLE_MACHINE = """machine demo {{
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var answer: str
  var status: int
  start think
  model think {{
    writes answer
    prompt "Answer the question."
    -> save
  }}
  tool save {{
    reads answer
    call bash(command: "printf %s " ++ quote(answer) ++ " > answer.txt")
    writes status = exit_code
    when status != 0 -> {failure}
    -> done
  }}
  terminal done: success {{ requires answer, status }}
  terminal write_failed: failed {{ requires status }}
  fallback
  rule {rule}
}}
"""


UNREACHABLE_STATE: Final = Code(
    "SKM200", "unreachable-state", W, "a state that no path from `start` reaches",
    "A state no run can enter is dead code: usually a missing edge or a typo in a target.",
    _m(_think() + '  model orphan {\n    writes answer\n    prompt "Never used."\n    -> done\n  }\n'),
    _m(_think()), "remove the state or add an edge that leads to it")
NO_WAY_OUT: Final = Code(
    "SKM201", "no-way-out", E, "a reachable state from which no terminal can be reached",
    "A run that enters such a state can never end; the checker lists the states it is trapped in.",
    _m(_think("    -> think\n")), _m(_think()),
    "add an edge to a terminal or to `fallback`")
MISSING_DEFAULT_EDGE: Final = Code(
    "SKM202", "missing-default-edge", E, "a non-terminal state without an unguarded edge",
    "After a state runs, the first edge whose guard holds is taken. Without a default edge, a run "
    "in which no guard holds would be stuck.",
    _m(_think('    when answer != "" -> done\n')),
    _m(_think('    when answer != "" -> done\n    -> fallback\n')),
    "end every state with `-> target`")
EDGE_AFTER_DEFAULT: Final = Code(
    "SKM203", "edge-after-default", E, "edges after the default edge",
    "The default edge always fires, so the edges after it never do.",
    _m(_think('    -> done\n    when answer == "" -> fallback\n')),
    _m(_think('    when answer == "" -> fallback\n    -> done\n')), "move the default edge last")
READ_BEFORE_ASSIGNMENT: Final = Code(
    "SKM210", "read-before-assignment", E, "a state reads a variable that some path never assigns",
    "Definite assignment: a state may read only variables assigned on every path from `start` into it "
    "(inputs, counters and initialised variables count as assigned at start). The witness is one path "
    "on which the variable is never assigned.",
    _m(_think(reads="question, answer")), _m(_think()),
    "assign the variable on every path, give it an initial value, or drop it from `reads`")
GUARD_BEFORE_ASSIGNMENT: Final = Code(
    "SKM211", "guard-before-assignment", E, "a guard or assignment uses a variable that may be unassigned",
    "Guards are evaluated after the state has run, so they may use what is assigned on every path into "
    "the state plus what the state writes; an assignment may also use the assignments before it.",
    _m(_think("    when note == \"\" -> fallback\n    -> done\n"), extra="  var note: str\n"),
    _m(_think("    when note == \"\" -> fallback\n    -> done\n"), extra="  var note: str = \"\"\n"))
EVIDENCE_NOT_ASSIGNED: Final = Code(
    "SKM213", "evidence-not-assigned", E, "a terminal requires evidence that may be unassigned",
    "A terminal's `requires` lists the evidence a run must have produced to end there.",
    _m(_think(), extra="  var note: str\n").replace("requires answer", "requires answer, note"),
    _m(_think()), "assign it on every path into the terminal, or drop it from `requires`")
REQUIRED_OPERATION_BYPASSED: Final = Code(
    "SKM220", "required-operation-bypassed", E, "a success terminal is reachable without a required operation",
    "`rule required op`: once the states performing `op` are removed, no success terminal may be "
    "reachable. The witness is a path that finishes without it.",
    _m(_think('    when answer == "" -> done\n    -> save\n') +
       '  model save {\n    reads answer\n    writes answer\n    prompt "Save."\n    -> done\n  }\n'
       '  rule required save "Always save the answer."\n'),
    _m(_think("    -> save\n") +
       '  model save {\n    reads answer\n    writes answer\n    prompt "Save."\n    -> done\n  }\n'
       '  rule required save "Always save the answer."\n'))
ORDER_VIOLATED: Final = Code(
    "SKM221", "order-violated", E, "an operation can run before one that must precede it",
    "`rule order a before b`: once the states performing `a` are removed, no state performing `b` may "
    "be reachable.",
    _m(_think("    -> done\n") + '  rule order done before think "Think after finishing."\n'),
    _m(_think("    -> done\n") + '  rule order think before done "Think before finishing."\n'))
FORBIDDEN_OPERATION_REACHABLE: Final = Code(
    "SKM222", "forbidden-operation-reachable", E, "a forbidden operation can run",
    "`rule forbid op`: no reachable state may perform `op` (a state, a fragment instance, or a tool).",
    _m(_think("    -> done\n") + '  rule forbid think "Never think."\n'),
    _m(_think("    -> done\n") + '  rule forbid bash "Never use the shell."\n',
       extra="  tool bash(command: str) -> (stdout: str)\n"),
    "remove the states that perform it, or the edges that lead there")
QUOTATION_NOT_FOUND: Final = Code(
    "SKM223", "quotation-not-found", E, "a rule's quotation does not occur in the skill document",
    "Rules keep the sentence they encode. With `--skill SKILL.md` (or a `source` the machine declares), "
    "every quotation must occur in the document after normalising whitespace and markdown emphasis; the "
    "diagnostic shows the nearest passage.",
    _sourced(_think() + '  rule required think "Always think hard before answering."\n',
             "SKILL.md says: 1. **Always** think before you answer."),
    _sourced(_think() + '  rule required think "Always think before you answer."\n',
             "SKILL.md says: 1. **Always** think before you answer."),
    "quote the sentence exactly as the skill writes it", runnable=False)
SKILL_DOCUMENT_UNREADABLE: Final = Code(
    "SKM224", "skill-document-unreadable", W, "the skill document named by `source` cannot be read",
    "Quotations cannot be checked without the document.",
    _sourced(_think() + '  rule required think "Always think before you answer."\n',
             "no file SKILL.md beside this machine"),
    _sourced(_think() + '  rule required think "Always think before you answer."\n',
             "SKILL.md beside this machine says: Always think before you answer."),
    "pass `--skill PATH`, or fix `source`", runnable=False)
QUOTATION_TOO_SHORT: Final = Code(
    "SKM225", "quotation-too-short", E, "a rule's quotation is too short to locate the sentence it encodes",
    "When quotations are checked against the skill document, each must have at least `quote-min-words` "
    "words (default 3; configurable): an empty, blank or one-word quotation occurs almost anywhere, so "
    "finding it proves nothing about where the rule came from.",
    _sourced(_think() + '  rule required think "Always"\n',
             "SKILL.md says: 1. **Always** think before you answer."),
    _sourced(_think() + '  rule required think "Always think before you answer."\n',
             "SKILL.md says: 1. **Always** think before you answer."),
    "quote the whole sentence the rule encodes", runnable=False)
JUDGE_OUTPUT: Final = Code(
    "SKM230", "judge-output", E, "a judge does not write exactly one enum variable",
    "A judge chooses one label from a fixed set; its `writes` is one variable of an `enum` type.",
    _m(_think("    -> check\n") + _JUDGE.format(edges="    -> done\n").replace("writes verdict", "writes answer")),
    _m(_think("    -> check\n") + _JUDGE.format(edges="    when verdict == incomplete -> fallback\n    -> done\n"),
       extra=_VERDICT))
INDISTINCT_LABELS: Final = Code(
    "SKM231", "indistinct-labels", W, "labels of a judge that every guard treats alike",
    "Two labels are indistinct when, in every case, they lead to the same edge: the judge may as well "
    "not tell them apart. Usually a guard for one of them is missing.",
    _m(_think("    -> check\n") + _JUDGE.format(edges="    -> done\n"), extra=_VERDICT),
    _m(_think("    -> check\n") + _JUDGE.format(edges="    when verdict == incomplete -> fallback\n    -> done\n"),
       extra=_VERDICT),
    "add a guard on one of the labels, or merge them")
DEAD_EDGE: Final = Code(
    "SKM240", "dead-edge", W, "an edge whose guard can never hold",
    "The guard is unsatisfiable under the variables' types (Z3), so the edge never fires.",
    _m(_think('    when answer == "a" and answer == "b" -> fallback\n    -> done\n')),
    _m(_think('    when answer == "a" or answer == "b" -> fallback\n    -> done\n')))
SHADOWED_EDGE: Final = Code(
    "SKM241", "shadowed-edge", W, "an edge that earlier edges always pre-empt",
    "Edges are tried in order and the first that holds wins. An edge whose every case is taken by an "
    "earlier edge never fires; the witness is a case it admits and the label shows who takes it.",
    _m(_think("    -> check\n") + _JUDGE.format(
        edges="    when verdict == incomplete and repairs < 2 -> think { repairs += 1 }\n"
              "    when verdict == incomplete and repairs < 1 -> fallback\n    -> done\n"),
       extra=_VERDICT + _COUNTER),
    _m(_think("    -> check\n") + _JUDGE.format(
        edges="    when verdict == incomplete and repairs < 2 -> think { repairs += 1 }\n"
              "    when verdict == incomplete -> fallback\n    -> done\n"),
       extra=_VERDICT + _COUNTER),
    "reorder the edges or narrow the earlier guard")
OPAQUE_IN_GUARD: Final = Code(
    "SKM242", "opaque-in-guard", N, "part of a guard the solver treats as an opaque value",
    "Record fields, map lookups, list items, `quote`, membership in lists and maps and float arithmetic "
    "(which rounds) are not modelled; the solver treats each distinct such expression as an unknown value "
    "of its type, which may also fail to evaluate (a failing guard is false at run time), so dead-edge and "
    "shadowing results for the guard are conservative.",
    _m(_think('    when items[0] == "x" -> fallback\n    -> done\n'), extra='  var items: list[str] = ["x"]\n'),
    _m(_think('    when len(items) == 0 -> fallback\n    -> done\n'), extra='  var items: list[str] = ["x"]\n'))
SOLVER_UNKNOWN: Final = Code(
    "SKM243", "solver-unknown", W, "the solver could not decide a question in time",
    "Every Z3 question has a budget (`smt-timeout-ms`, default 2000): that many milliseconds' worth of Z3's "
    "resource units, so the answer is the same on a loaded or slow machine, and ten times as long on the wall "
    "clock as a backstop. An undecided question is reported, never waited on.",
    "# checked with --smt-timeout 1\n" + _m(_think("    when len(answer) * len(answer) * len(answer) == n * n * n + 1 "
                                                "-> fallback\n    -> done\n"), extra="  input n: int\n"),
    "# checked with the default timeout\n" + _m(_think("    when len(answer) > n -> fallback\n    -> done\n"),
                                                extra="  input n: int\n"),
    "simplify the guard, or raise `smt-timeout-ms`", runnable=False)
UNBOUNDED_LOOP: Final = Code(
    "SKM250", "unbounded-loop", E, "a cycle of states that no counter pays for",
    "Every cycle must increment a counter that it never resets, so that it runs a bounded number of "
    "times. Strongly connected components are checked recursively after removing the paying counters' "
    "increments, which gives nested loops a lexicographic bound.",
    _m(_think("    -> check\n") + _JUDGE.format(edges="    when verdict == incomplete -> think\n    -> done\n"),
       extra=_VERDICT),
    _m(_think("    -> check\n") + _JUDGE.format(
        edges="    when verdict == incomplete and repairs < 2 -> think { repairs += 1 }\n    -> done\n"),
       extra=_VERDICT + _COUNTER),
    "add `counter tries max N` and increment it on an edge of the loop guarded by `tries < N`")
COUNTER_OVERFLOW: Final = Code(
    "SKM251", "counter-overflow", E, "an increment whose guard does not keep the counter within its maximum",
    "An edge that increments a counter must have a guard implying `counter + step <= max`; otherwise the "
    "runtime would overflow the counter and route the run to the fallback. Several assignments to one "
    "counter on an edge are composed, and every intermediate value must stay within the maximum.",
    _m(_think("    -> check\n") + _JUDGE.format(
        edges="    when verdict == incomplete -> think { repairs += 1 }\n    -> done\n"),
       extra=_VERDICT + _COUNTER),
    _m(_think("    -> check\n") + _JUDGE.format(
        edges="    when verdict == incomplete and repairs < 2 -> think { repairs += 1 }\n    -> done\n"),
       extra=_VERDICT + _COUNTER),
    "add `and counter < max` to the guard")
COUNTER_BOUND_UNPROVEN: Final = Code(
    "SKM252", "counter-bound-unproven", E, "the solver could not prove that an increment stays within bounds",
    "When the question of SKM251 times out, the bound is unproven; unlike other solver timeouts this is an "
    "error, because the loop-termination proof rests on it.",
    "# checked with --smt-timeout 1\n" + _m(_think("    -> check\n") + _JUDGE.format(
        edges="    when repairs * repairs * repairs + 1 == len(answer) * len(answer) * len(answer) "
              "and repairs < 2 -> think { repairs += 1 }\n    -> done\n"), extra=_VERDICT + _COUNTER),
    _m(_think("    -> check\n") + _JUDGE.format(
        edges="    when verdict == incomplete and repairs < 2 -> think { repairs += 1 }\n    -> done\n"),
       extra=_VERDICT + _COUNTER),
    "guard the increment with a plain `counter < max`", runnable=False)
INVALID_CONFIG: Final = Code(
    "SKM290", "invalid-config", E, "the `[tool.skillc]` configuration is invalid",
    "Unknown settings, unknown codes, bad severities and attempts to lower an error are reported "
    "instead of being ignored.",
    '[tool.skillc]\nstrict = "yes"\n\n[tool.skillc.severity]\nSKM210 = "off"   # an error: cannot be lowered\n',
    '[tool.skillc]\nstrict = true\n\n[tool.skillc.severity]\nSKM241 = "error"\nunreachable-state = "off"\n',
    runnable=False, lang="toml")

# ------------------------------------------------------------------ termination and data rules
TERMINATION_RULE_VIOLATED: Final = Code(
    "SKM260", "termination-rule-violated", E, "a run through an operation can end with another outcome",
    "`rule ends op in outcome`: every terminal reachable from the states performing `op` must have that "
    "outcome (an edge to the fallback counts as `failed`). Stop clauses such as \"if the write fails, stop "
    "with failure\" compile to this rule.",
    EXAMPLE_MACHINE.format(failure="done", rule='ends save in failed "If the write fails, stop with failure."'),
    EXAMPLE_MACHINE.format(failure="write_failed", rule='ends write_failed in failed "If the write fails, stop with '
                                                  'failure."'),
    "route every path from the operation to a terminal with that outcome")
DATA_RULE_VIOLATED: Final = Code(
    "SKM261", "data-rule-violated", E, "a state can read a value another operation did not produce",
    "`rule reads b from a`: `b` must read a variable that `a` writes, and every definition of it that "
    "reaches `b` must come from `a` (no path from another writer, or from the start, reaches `b` without "
    "passing `a`).",
    EXAMPLE_MACHINE.format(failure="write_failed", rule='reads think from save "Save, then answer."'),
    EXAMPLE_MACHINE.format(failure="write_failed", rule='reads save from think "Write the answer you found."'),
    "read a variable the operation writes, on every path")

# ------------------------------------------------------------------ effects and capabilities
_ACTS = """machine demo {{
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var answer: str
  var status: int
  start think
  model think {{
    writes answer
    prompt "Answer the question."
    -> save
  }}
  tool save {{
    reads answer
    call bash(command: "printf %s " ++ quote(answer) ++ " > answer.txt")
    writes status = exit_code
    when status != 0 -> fallback
    -> done
  }}
  terminal done: success {{ requires {evidence} }}
  fallback
}}
"""

# A machine with the agent tool kit and a capability set; `{allow}` and `{call}` vary.
_KIT = """machine demo {{
  use tools std
  allow {allow}
  input name: str
  var out: str
  var status: int
  start run
  tool run {{
    reads name
    call {call}
    writes out = stdout, status = exit_code
    -> done
  }}
  terminal done: success {{ requires out, status == 0 }}
  fallback
}}
"""

_READ = """machine demo {{
  use tools std(read)
  allow "Read(docs/**)"
  input page: str
  var text: str
  start load
  tool load {{
    reads page
    call read(path: {path})
    writes text = content
    -> done
  }}
  terminal done: success {{ requires text }}
  fallback
}}
"""

SUCCESS_WITHOUT_EFFECT: Final = Code(
    "SKM270", "success-without-effect", W, "a success terminal whose evidence no tool state or input produced",
    "Success is an effect: in a machine that acts (one with a tool state), a `success` terminal must require at "
    "least one item that an effect proves on every path into it: a world predicate (`exists(\"report.md\")`, "
    "`file(\"answer.txt\") == choice`) the runtime evaluates on arrival, a variable last written by a tool state "
    "(or an input, or a place), or a predicate over such variables (`status == 0`). A value an edge computes from "
    "those only counts too; a model's or judge's reply is model text, and never proves a deliverable. The witness "
    "is a path on which nothing the terminal requires came from an effect. Machines without tool states, and "
    "terminals that no path through a model or judge state reaches, are not checked. Under `--strict` this is an "
    "error.",
    _ACTS.format(evidence="answer"), _ACTS.format(evidence="answer, status == 0"),
    "add `requires exists(\"…\")` for the deliverable, or require what a tool state returned")
TOOL_NOT_ALLOWED: Final = Code(
    "SKM280", "tool-not-allowed", E, "a tool state calls a tool the machine's `allow` list leaves out",
    "A machine with an `allow` list (its skill's `allowed-tools`) may call only the tools the list names: kit tools "
    "by their harness spelling (`Read` for `read`, `WebFetch` for `fetch`, `AskUserQuestion` for `ask_user`), a "
    "tool the machine declares itself by its own name. The runtime refuses any other call.",
    _KIT.format(allow='"Read"', call='bash(command: "git diff")'),
    _KIT.format(allow='"Read", "Bash"', call='bash(command: "git diff")'),
    "add the tool to `allow`, or do the step with an allowed tool")
COMMAND_NOT_ALLOWED: Final = Code(
    "SKM281", "command-not-allowed", E, "a bash command that may fall outside every allowed `Bash(…)` entry",
    "`Bash(git diff:*)` allows commands that start with `git diff` as a whole word; `Bash(make test)` allows "
    "exactly that command. The checker proves with Z3's string theory that the `command` of every bash call does "
    "so on every path, reading its variables as any string except those every reaching definition sets to a "
    "constant (so a branch that assigns `cmd = \"rm -rf /\"` is found); an `argv` call must start with the "
    "prefix's words. The witness is a command outside the list.",
    _KIT.format(allow='"Bash(git diff:*)"', call='bash(command: name ++ " git diff")'),
    _KIT.format(allow='"Bash(git diff:*)"', call='bash(command: "git diff " ++ quote(name))'),
    "start the command with an allowed prefix written as a constant, quoting the values after it")
ARGUMENT_NOT_ALLOWED: Final = Code(
    "SKM282", "argument-not-allowed", E, "a constant path or URL outside the allowed entries of its tool",
    "`Read(docs/**)` (and `Write(…)`, `Edit(…)`, `Glob(…)`, `Grep(…)`) allows paths, relative to the work folder, "
    "that its glob matches (`**` crosses folders, `*` does not); `WebFetch(domain:example.com)` allows URLs whose "
    "host is that domain or below it. A constant argument outside them can never be called.",
    _READ.format(path='"src/main.py"'), _READ.format(path='"docs/guide.md"'),
    "use a path or URL inside the allowed entries, or widen `allow`")
CAPABILITY_UNPROVEN: Final = Code(
    "SKM283", "capability-unproven", W, "a path, URL or command the checker cannot prove inside the `allow` list",
    "A computed path or URL under a restricted entry (`Read(docs/**)`, `WebFetch(domain:…)`) cannot be proved "
    "inside it before the run, and a solver question may time out. The runtime still refuses any call outside "
    "the list; the warning says the static proof is missing.",
    _READ.format(path='"docs/" ++ page'), _READ.format(path='"docs/guide.md"'),
    "use a constant, or accept the runtime's check")

SHELL_CONTROL_REFUSED: Final = Code(
    "SKM284", "shell-control-refused", E, "a bash command the runtime will refuse: shell control after what its "
    "`Bash(…)` entry allows",
    "`Bash(git diff:*)` allows `git diff` and its arguments, not `git diff && rm -rf /`: the runtime refuses a "
    "command that adds shell control (`;`, `&&`, `|`, `>`, `$(…)`, a newline, …) after an allowed prefix, or "
    "anywhere under a wildcard entry such as `Bash(npx *eas-cli@*)`, whose `*` may stand for anything. The "
    "checker reads the command's constant text (values it cannot know stand in as one plain word) and reports "
    "the operator the runtime would stop at, so the step is not found refused only when it runs.",
    _KIT.format(allow='"Bash(git diff:*)"', call='bash(command: "git diff " ++ quote(name) ++ " > diff.txt")'),
    _KIT.format(allow='"Bash(git diff:*)"', call='bash(command: "git diff " ++ quote(name))'),
    "run one command per tool state (write files with the `write` tool), or allow the whole command exactly")

ALL: Final[tuple[Code, ...]] = (
    UNREACHABLE_STATE,
    NO_WAY_OUT,
    MISSING_DEFAULT_EDGE,
    EDGE_AFTER_DEFAULT,
    READ_BEFORE_ASSIGNMENT,
    GUARD_BEFORE_ASSIGNMENT,
    EVIDENCE_NOT_ASSIGNED,
    REQUIRED_OPERATION_BYPASSED,
    ORDER_VIOLATED,
    FORBIDDEN_OPERATION_REACHABLE,
    QUOTATION_NOT_FOUND,
    SKILL_DOCUMENT_UNREADABLE,
    QUOTATION_TOO_SHORT,
    JUDGE_OUTPUT,
    INDISTINCT_LABELS,
    DEAD_EDGE,
    SHADOWED_EDGE,
    OPAQUE_IN_GUARD,
    SOLVER_UNKNOWN,
    UNBOUNDED_LOOP,
    COUNTER_OVERFLOW,
    COUNTER_BOUND_UNPROVEN,
    TERMINATION_RULE_VIOLATED,
    DATA_RULE_VIOLATED,
    SUCCESS_WITHOUT_EFFECT,
    TOOL_NOT_ALLOWED,
    COMMAND_NOT_ALLOWED,
    ARGUMENT_NOT_ALLOWED,
    CAPABILITY_UNPROVEN,
    SHELL_CONTROL_REFUSED,
    INVALID_CONFIG,
)
