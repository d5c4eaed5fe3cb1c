"""Diagnostic codes of `skillc bench` (SKM700–SKM739): suite files and the results store.

The examples are suite files (TOML), task lines (JSONL) or results rows, so the
registry test does not run them; `tests/bench/test_codes.py` loads each example
from a folder that also holds a `SKILL.md` and asserts its code.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import E, W, Code

_TASK = ('[[task]]\nid = "q1"\ninputs = { question = "2 + 2?" }\n'
         'verify = { file = "answer.txt", matches = \'^4\\s*$\' }\n')
_GOOD: Final = '[suite]\nskill = "SKILL.md"\n\n' + _TASK


def _suite(body: str, *, head: str = '[suite]\nskill = "SKILL.md"\n\n') -> str:
    """A suite file around `body` (a task or requirement), for the examples."""
    return head + body


INVALID_SUITE_SYNTAX: Final = Code(
    "SKM700", "invalid-suite-syntax", E, "the suite file is not valid TOML",
    "A suite is a TOML file (or a TOML or JSONL task file next to it). A syntax error is reported at the line "
    "and column the TOML parser stopped at; nothing else is checked until the file parses.",
    _GOOD.replace('skill = "SKILL.md"', 'skill = "SKILL.md'), _GOOD,
    "fix the TOML syntax at the position shown", runnable=False, lang="toml")
UNKNOWN_SUITE_KEY: Final = Code(
    "SKM701", "unknown-suite-key", E, "a key that the suite format does not have",
    "Every table of a suite has a fixed set of keys (see docs/bench.md); an unknown key is almost always a typo, "
    "and ignoring it would silently run a different benchmark.",
    _GOOD.replace("inputs =", "input ="), _GOOD, "check the spelling; the message names the closest key",
    runnable=False, lang="toml")
WRONG_KEY_TYPE: Final = Code(
    "SKM702", "wrong-key-type", E, "a suite key has a value of the wrong type",
    "Paths, ids, patterns and commands are strings, `inputs` and `verify` are tables, `horizon` is an integer, "
    "`timeout` a number and `failed_runs_comply` a Boolean.",
    _GOOD.replace('id = "q1"', "id = 1"), _GOOD, runnable=False, lang="toml")
MISSING_SUITE_KEY: Final = Code(
    "SKM703", "missing-suite-key", E, "a required key is missing",
    "Each task needs an `id` and a verifier (its own `verify` table or the suite's default `[verify]`); each "
    "requirement needs a `kind` and the keys of its kind.",
    _GOOD.replace('id = "q1"\n', ""), _GOOD, runnable=False, lang="toml")
MISSING_SUITE_PATH: Final = Code(
    "SKM704", "missing-suite-path", E, "a file or folder named by the suite does not exist",
    "Paths in a suite are relative to the suite file's folder: the skill document, the machine, the task file, "
    "a task's `workdir` fixture folder and a Python verifier's module must exist when the suite is loaded, "
    "so a typo is found before any cell runs.",
    _GOOD.replace('"SKILL.md"', '"SKIL.md"'), _GOOD, "paths are relative to the folder of the suite file",
    runnable=False, lang="toml")
INVALID_TASK_LINE: Final = Code(
    "SKM705", "invalid-task-line", E, "a line of a JSONL task file is not a JSON object",
    "A JSONL task file holds one task per line, each a JSON object with the keys of a `[[task]]` table; blank "
    "lines are skipped.",
    '{"id": "q1", "inputs": {"question": "2 + 2?"}, "verify": {"shell": "grep -qx 4 answer.txt"}\n',
    '{"id": "q1", "inputs": {"question": "2 + 2?"}, "verify": {"shell": "grep -qx 4 answer.txt"}}\n',
    "close the object; each line is one complete JSON object", runnable=False, lang="json")
DUPLICATE_TASK_ID: Final = Code(
    "SKM706", "duplicate-task-id", E, "two tasks have the same id",
    "A task's id names its cells in the results file; two tasks with one id would share results and resumption "
    "would skip one of them.",
    _GOOD + "\n" + _TASK, _GOOD + "\n" + _TASK.replace('"q1"', '"q2"'), "give each task its own id",
    runnable=False, lang="toml")
INVALID_PATTERN: Final = Code(
    "SKM707", "invalid-pattern", E, "a regular expression does not compile",
    "`matches` in a verifier or a requirement is a Python regular expression (searched, not anchored: write "
    "`^…$` to match the whole text).",
    _GOOD.replace("'^4\\s*$'", "'^(4\\s*$'"), _GOOD, runnable=False, lang="toml")
INVALID_VERIFIER: Final = Code(
    "SKM708", "invalid-verifier", E, "a verifier is not exactly one of python, shell or file",
    "A `verify` table has exactly one of `python = \"module:function\"`, `shell = \"command\"` or "
    "`file = \"path\"` (with at most one of `equals` and `matches`); `timeout` applies to python and shell.",
    _GOOD.replace('file = "answer.txt", matches', 'file = "answer.txt", shell = "true", matches'), _GOOD,
    "keep one kind of verifier", runnable=False, lang="toml")
INVALID_REQUIREMENT: Final = Code(
    "SKM709", "invalid-requirement", E, "a requirement of an unknown kind, or with keys its kind does not take",
    "A `[[require]]` table has a `kind` — `file`, `no-file`, `tool`, `no-tool` or `order` — and only the keys "
    "of that kind: `path` (and `matches`) for files, `tool` (and `argument`, `matches`) for tool calls, "
    "`first` and `then` for an order.",
    _suite(_TASK + '\n[[require]]\nkind = "tools"\ntool = "bash"\n'),
    _suite(_TASK + '\n[[require]]\nkind = "tool"\ntool = "bash"\n'),
    runnable=False, lang="toml")
NO_SUITE_SUBJECT: Final = Code(
    "SKM710", "no-suite-subject", E, "the suite names neither a skill document nor a machine",
    "A suite measures a skill: `[suite]` names the skill document (`skill`), the compiled machine (`machine`), "
    "or both.",
    _suite(_TASK, head="[suite]\nname = \"demo\"\n\n"), _GOOD, "add `skill = \"SKILL.md\"` or "
    "`machine = \"machine.skm\"` to `[suite]`", runnable=False, lang="toml")
NO_TASKS: Final = Code(
    "SKM711", "no-tasks", E, "the suite has no tasks",
    "Tasks are `[[task]]` tables in the suite or lines of the file named by `tasks`; a suite without any "
    "would report nothing.",
    '[suite]\nskill = "SKILL.md"\n', _GOOD, "add a `[[task]]` table", runnable=False, lang="toml")
VALUE_OUT_OF_RANGE: Final = Code(
    "SKM712", "value-out-of-range", E, "a number outside the range its key allows",
    "`horizon` is an integer of at least 1 and `timeout` a number of seconds greater than 0.",
    _GOOD.replace('id = "q1"', 'id = "q1"\nhorizon = 0'), _GOOD.replace('id = "q1"', 'id = "q1"\nhorizon = 25'),
    runnable=False, lang="toml")
DUPLICATE_REQUIREMENT_ID: Final = Code(
    "SKM713", "duplicate-requirement-id", E, "two requirements have the same id",
    "A requirement's id names it in every verdict and in the `violated` list of a results row; two with one id "
    "could not be told apart.",
    _suite(_TASK + '\n[[require]]\nid = "readback"\nkind = "tool"\ntool = "bash"\n'
           '\n[[require]]\nid = "readback"\nkind = "file"\npath = "answer.txt"\n'),
    _suite(_TASK + '\n[[require]]\nid = "readback"\nkind = "tool"\ntool = "bash"\n'
           '\n[[require]]\nid = "answer"\nkind = "file"\npath = "answer.txt"\n'),
    "give each requirement its own id", runnable=False, lang="toml")
_ROW = ('{"v": 1, "task": "q1", "mode": "machine", "executor": "scripted", "repeat": 0, "success": true, '
        '"rfc": true, "steps": 3, "prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.01, '
        '"outcome": "success", "trace": null, "error": null, "horizon": null, "violated": []}')
DAMAGED_RESULTS: Final = Code(
    "SKM720", "damaged-results", E, "a results line that is not a result row",
    "The results file is append-only JSONL written a whole line at a time; a killed bench can leave only its "
    "last line torn, which is dropped silently and run again. A damaged line before the end means the file was "
    "edited or written by something else; the row is skipped and its cell counts as not done.",
    _ROW.replace('"steps": 3', '"steps": "three"') + "\n" + _ROW.replace('"q1"', '"q2"') + "\n",
    _ROW + "\n" + _ROW.replace('"q1"', '"q2"') + "\n",
    "delete the damaged line; its cell runs again when the bench resumes", runnable=False, lang="json")
DUPLICATE_RESULT: Final = Code(
    "SKM721", "duplicate-result", W, "two rows for the same cell",
    "The bench writes each cell (task × mode × executor × repeat) once; a second row for a cell comes from "
    "concatenated or hand-edited results. The first row is kept.",
    _ROW + "\n" + _ROW + "\n", _ROW + "\n" + _ROW.replace('"repeat": 0', '"repeat": 1') + "\n",
    "remove one of the rows", runnable=False, lang="json")
RESULTS_LOCKED: Final = Code(
    "SKM722", "results-locked", E, "another bench is writing this results file",
    "One process writes a results file at a time (an exclusive lock the kernel drops when its holder dies, "
    "even by SIGKILL), so two benches resuming the same output never run a cell twice.",
    'from skillc.bench.results import open_writer\n\nfirst = open_writer("out/results.jsonl")\n'
    'second = open_writer("out/results.jsonl")  # a Diagnostic while `first` is open\n',
    'from skillc.bench.results import open_writer\n\nfirst = open_writer("out/results.jsonl")\nfirst.close()\n'
    'second = open_writer("out/results.jsonl")\n',
    "wait for the other bench to end, or write to another output folder", runnable=False, lang="python")

ALL: Final[tuple[Code, ...]] = (
    INVALID_SUITE_SYNTAX, UNKNOWN_SUITE_KEY, WRONG_KEY_TYPE, MISSING_SUITE_KEY, MISSING_SUITE_PATH,
    INVALID_TASK_LINE, DUPLICATE_TASK_ID, INVALID_PATTERN, INVALID_VERIFIER, INVALID_REQUIREMENT,
    NO_SUITE_SUBJECT, NO_TASKS, VALUE_OUT_OF_RANGE, DUPLICATE_REQUIREMENT_ID, DAMAGED_RESULTS, DUPLICATE_RESULT, RESULTS_LOCKED,
)
