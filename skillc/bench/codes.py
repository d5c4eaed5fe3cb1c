"""Diagnostic codes of `skillc bench` (SKM700–SKM759): suite files, the results store and the runner.

The examples are suite files (TOML), task lines (JSONL) or results rows, so the
registry test does not run them; `tests/bench/test_codes.py` loads each example
from a folder that also holds a `SKILL.md` and asserts its code.
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, W

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
NOT_A_TOOL_MODULE: Final = Code(
    "SKM714", "not-a-tool-module", E, "a `tools` entry is not a Python file, or does not compile",
    "`[suite] tools` names the Python files whose public functions implement the machine's tools, as "
    "`skillc run --tools` does; anything but a `.py` file cannot provide them, and neither can one that does "
    "not compile (the suite compiles each module when it loads, without running it, so a syntax error is found "
    "once instead of failing every cell).",
    '[suite]\nskill = "SKILL.md"\ntools = ["SKILL.md"]\n\n' + _TASK,
    '[suite]\nskill = "SKILL.md"\n# tools = ["env.py"]: the .py file that defines the tools\n\n' + _TASK,
    "name the `.py` file that defines the tools", runnable=False, lang="toml")
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
BENCH_INTERRUPTED: Final = Code(
    "SKM723", "bench-interrupted", W, "the bench was interrupted, so some cells have no row",
    "An interrupt (Ctrl-C, SIGINT) stops the bench between rows: every row already in results.jsonl is whole and "
    "kept, the cells that were running get no row (they run again, from an emptied folder), no further cell "
    "starts, and the report is not rebuilt. `skillc bench` exits 130. Running the same command again runs only "
    "the cells without a row.",
    "^C during `skillc bench suite.toml --executor scripted:script.json -o out`",
    "skillc bench suite.toml --executor scripted:script.json -o out",
    "run the same command again to run the rest, or `skillc bench --report-only -o DIR` for a report of the "
    "rows so far",
    runnable=False, lang="text")
# The Ray backend's codes (SKM725–SKM729): tests/bench/test_ray_backend.py runs the examples against a local Ray
# cluster it starts (127.0.0.1:6379 and 10.0.0.5:6379 stand for its address).
_RAY = "skillc bench suite.toml --executor scripted:script.json --backend ray --workers 2"
_DYING = ("from skillc.bench.ray_backend import RayBackend\n\n\ndef cell(n: int) -> int:\n{body}    return n\n\n\n"
          'backend = RayBackend("127.0.0.1:6379", workers=2)\nprint(sorted(backend.map_unordered(cell, range(4))))\n'
          "backend.close()\n")
_SHIPPED = ("from skillc.bench.ray_backend import Shipped, land\nfrom skillc.bench.results import Cell, Row\n\n"
            'row = Row(Cell("q1", "machine", "scripted", 0), True, True, trace="/nowhere/trace.jsonl")\n'
            'print(land(Shipped(row, {data}, "worker-node")).error)\n')
RAY_NOT_INSTALLED: Final = Code(
    "SKM725", "ray-not-installed", E, "`--backend ray` but Ray is not installed",
    "The Ray backend runs each cell as a Ray task; it needs the `ray` package in the environment of the bench "
    "(and of every node of the cluster). It is part of the `bench` extra.",
    "pip install skillc\n" + _RAY + " --address 127.0.0.1:6379\n",
    "pip install 'skillc[bench]'\n" + _RAY + " --address 127.0.0.1:6379\n",
    "pip install 'skillc[bench]'", runnable=False, lang="shell")
NO_RAY_CLUSTER: Final = Code(
    "SKM726", "no-ray-cluster", E, "no Ray cluster answers at the address",
    "The Ray backend connects to a cluster that is already running; it never starts one. The address is "
    "`--address`, else `RAY_ADDRESS`, else `auto` (the cluster `ray start` last started on this machine). The "
    "head's port is probed first — a TCP connection, then an HTTP/2 greeting that Ray's GCS (a gRPC server) "
    "answers — so a wrong address, a dead head or a port where something else listens fails in seconds "
    "instead of leaving `ray.init` retrying.",
    _RAY + " --address 127.0.0.1:6379\n",
    "ray start --head --port 6379 --disable-usage-stats\n" + _RAY + " --address 127.0.0.1:6379\n",
    "start the cluster with `ray start --head` and pass the address it prints", runnable=False, lang="shell")
INVALID_RAY_SETTING: Final = Code(
    "SKM727", "invalid-ray-setting", E, "a Ray address or CPU count the backend cannot use",
    "The address is the head node's GCS address `HOST:PORT` (what `ray start --head` prints) or `auto`; a Ray "
    "Client address `ray://…` is refused (run the bench on a node of the cluster instead). "
    "`SKILLC_RAY_NUM_CPUS`, the CPUs each cell asks for, must be a positive number.",
    _RAY + " --address ray://10.0.0.5:10001\n", _RAY + " --address 10.0.0.5:6379\n",
    "give HOST:PORT of the head node", runnable=False, lang="shell")
RAY_TASK_DIED: Final = Code(
    "SKM728", "ray-task-died", E, "the worker running a cell died",
    "A cell's Ray task ends when its worker process dies (a crash in native code, the OOM killer, a node lost). "
    "The backend does not retry it (a crash would repeat and hide): the tasks still running finish and keep "
    "their rows, then the bench stops; the dead cell has no row and runs again when the bench is run again.",
    _DYING.format(body="    if n == 2:\n        import os\n\n        os._exit(1)  # as a segfault would\n"),
    _DYING.format(body=""),
    "see why in the node's worker logs (/tmp/ray/session_latest/logs/worker-*.err), then run the bench again",
    runnable=False, lang="python")
TRACE_NOT_VISIBLE: Final = Code(
    "SKM729", "trace-not-visible", W, "a cell's trace is not visible on the machine that runs the bench",
    "Each cell writes its trace under OUT on the node that ran it. A trace written on another node is sent back "
    "and written to the same path on the driver; when that fails, the row keeps its results and its `error` "
    "says the trace is missing.",
    _SHIPPED.format(data="None"), _SHIPPED.format(data='b"{}\\n"').replace("/nowhere/", "out/"),
    "put OUT on storage every node mounts, or check that the driver can write OUT", runnable=False, lang="python")
# The runner's codes (SKM730–SKM739): the examples are `skillc bench` command lines, run by tests/bench/test_codes.py
# in a copy of tests/bench/fixtures/beats (a suite `suite.toml` with a machine and `script.json`).
_BENCH = "skillc bench suite.toml --executor scripted:script.json"
UNKNOWN_BENCH_MODE: Final = Code(
    "SKM730", "unknown-bench-mode", E, "`--modes` names a mode that does not exist",
    "A bench runs each task in some of the modes machine (the runtime drives the machine), native (the skill "
    "document and the transcript, the model picks every step) and prompt-only (the machine as prose).",
    _BENCH + " --modes machine,natve", _BENCH + " --modes machine,native",
    "use machine, native or prompt-only, comma-separated", runnable=False, lang="shell")
INVALID_BENCH_EXECUTOR: Final = Code(
    "SKM731", "invalid-bench-executor", E, "no executor, or one that cannot be made",
    "Every cell runs with one executor spec (`--executor`, repeatable). A spec of an unknown kind, or a "
    "`scripted:` or `replay:` file that cannot be read, is refused before any cell runs, so a typo does not "
    "fill the results with failed cells.",
    "skillc bench suite.toml --executor scripted:missing.json", _BENCH,
    "give --executor SPEC: scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL or local",
    runnable=False, lang="shell")
INVALID_BENCH_COUNT: Final = Code(
    "SKM732", "invalid-bench-count", E, "a repeat, worker or step count below 1, or a timeout out of range",
    "`repeats`, `workers` and `max_steps` of a bench are counts of at least 1. The model and tool timeouts are "
    "numbers of seconds greater than 0 and at most 1e9 (a timer cannot be set further; `inf` and `nan` are "
    "refused rather than making every call fail).",
    _BENCH + " --repeats 0", _BENCH + " --repeats 1", "give a count of at least 1, or a timeout in seconds",
    runnable=False, lang="shell")
BENCH_NEEDS_MACHINE: Final = Code(
    "SKM733", "bench-needs-machine", E, "no machine under test: the suite names none, and no --machine or --build",
    "Every mode runs with a checked machine: machine mode runs it, prompt-only mode renders it as prose, and "
    "native mode takes the tools and inputs from its interface (the skill document alone declares neither). The "
    "machine is the suite's `machine`, or given on the command line (`--machine FILE`, `--build offline`).",
    "skillc bench skill-only.toml --executor scripted:script.json", _BENCH,
    "name a machine: `--machine FILE`, `--build offline` (the suite's skill compiled), or `[suite] machine`",
    runnable=False, lang="shell")
NO_SKILL_DOCUMENT: Final = Code(
    "SKM734", "no-skill-document", E, "native mode has no skill document to send",
    "Native mode sends the whole skill document: the suite's `skill`, else the file the machine's `source` "
    "names. With neither, a native cell would run without its instructions.",
    "skillc bench no-skill.toml --executor scripted:script.json --modes native",
    _BENCH + " --modes native", "name the skill document in `[suite] skill`", runnable=False, lang="shell")
BACKEND_FAILED: Final = Code(
    "SKM735", "backend-failed", E, "the backend could not be started or failed during the bench",
    "Cells run on a backend (`local`: this process or a process pool; `ray`: Ray tasks). When it cannot be had "
    "(an unknown name, Ray not installed, no cluster at the address) nothing runs; when it fails during the "
    "bench (a worker process killed), the rows written so far are kept and the remaining cells run when the "
    "bench is run again.",
    _BENCH + " --backend slurm", _BENCH + " --backend local",
    "check the backend, then run the same command again: finished cells are not run twice",
    runnable=False, lang="shell")
NO_RESULTS: Final = Code(
    "SKM736", "no-results", E, "`--report-only` found no result rows",
    "`skillc bench --report-only -o DIR` rebuilds the report from DIR/results.jsonl; without a row there is "
    "nothing to report (a wrong folder, or a bench that never finished a cell).",
    "skillc bench --report-only -o empty", _BENCH + " -o out && skillc bench --report-only -o out",
    "point -o at the folder a bench wrote", runnable=False, lang="shell")
CHANGED_BENCH: Final = Code(
    "SKM737", "changed-bench", E, "the output folder holds rows made with another machine, document or limits",
    "A resumed bench runs only the cells without a row, so the report would mix rows of the old machine (or "
    "skill document, step budget, timeouts) with rows of the new one. OUT/bench.json records what the rows "
    "were made with; a bench that differs is refused before any cell runs. Adding tasks, modes, executors or "
    "repeats is not a change: only the new cells run.",
    _BENCH + " -o out && " + _BENCH + " -o out --max-steps 7", _BENCH + " -o out && " + _BENCH + " -o out",
    "write to a new output folder (-o), or delete the old one to start over", runnable=False, lang="shell")
CHANGED_SUITE: Final = Code(
    "SKM738", "changed-suite", E, "the output folder holds rows of suite tasks that changed since they ran",
    "A resumed bench keeps the rows already in its output folder, so a task whose inputs, verifier (or the "
    "verifier's code), fixture folder or horizon changed since its rows were made would be reported with rows "
    "scored under the old task beside rows of the new one; so would every task when the suite's requirements, "
    "tools modules or `failed_runs_comply` changed. OUT/bench.json records a fingerprint of each; a bench that "
    "differs for a task with rows (or in a suite-wide part) is refused before any cell runs, naming each task "
    "and what changed. A task without rows yet may change: nothing would be mixed.",
    _BENCH + " -o out && skillc bench edited.toml --executor scripted:script.json -o out",
    _BENCH + " -o out && skillc bench edited.toml --executor scripted:script.json -o out-edited",
    "write to a new output folder (-o); the rows in the old one stay as they are", runnable=False, lang="shell")
UNRECORDED_SUITE: Final = Code(
    "SKM739", "unrecorded-suite", W, "the output folder's rows have no record of the suite they were scored with",
    "`bench.json` fingerprints the suite's tasks, verifiers and requirements so that a resumed bench never mixes "
    "rows of an edited task with new ones (SKM738). A folder written by an older skillc (or with its bench.json "
    "removed) has rows but no fingerprints: the bench resumes, since the rows may well be right, records the "
    "current fingerprints, and says that the rows already there were not checked against the suite.",
    _BENCH + " --modes machine -o legacy", _BENCH + " --modes machine -o out",
    "if the suite changed since those rows ran, write to a new output folder (-o)", runnable=False, lang="shell")

# A task's inputs against the checked machine (SKM715–SKM716): `bench.suite.check_inputs`, called by the runner;
# the examples run in tests/bench/fixtures/beats like the runner's.
UNKNOWN_TASK_INPUT: Final = Code(
    "SKM715", "unknown-task-input", E, "a task gives an input the machine does not declare",
    "A task's `inputs` (with the suite's default `inputs` merged under them) are the machine's inputs; a name the "
    "machine does not declare is almost always a typo, and every cell of the task would stop before its first "
    "step. The bench checks every task against the checked machine before any cell runs.",
    "skillc bench unknown-input.toml --executor scripted:script.json",
    _BENCH, "spell the input as the machine declares it (`skillc show MACHINE` lists them)",
    runnable=False, lang="shell")
INVALID_TASK_INPUT: Final = Code(
    "SKM716", "invalid-task-input", E, "a task lacks a required input, or gives one of the wrong type",
    "Every input the machine declares without a default must be given by each task (or the suite's `inputs`), "
    "and every value must have the input's type; otherwise every cell of the task would stop before its first "
    "step. The bench checks every task against the checked machine before any cell runs.",
    "skillc bench missing-input.toml --executor scripted:script.json",
    _BENCH, "give the input in the task's `inputs` or the suite's default `inputs`", runnable=False, lang="shell")

# Machines under test, input bindings and cell setup (SKM740–SKM745; SKM746–SKM759 free): `suite.py` and `runner.py`.
INVALID_BINDING: Final = Code(
    "SKM740", "invalid-binding", E, "an `[inputs]` binding names something that is not a task field",
    "A suite's `[inputs]` table binds a machine input to a template of the task's fields: `task = \"{request}\"` "
    "gives the machine's `task` the task's `request` input (its value as it is when the template is only that "
    "field, else the text with each field filled in); `{id}` is the task's id. A field is a plain name, and every "
    "task the binding applies to must have it.",
    _GOOD + '\n[inputs]\ntask = "{request.text}"\n', _GOOD + '\n[inputs]\ntask = "{question}"\n',
    "name a task input (or `id`); write {{ and }} for literal braces", runnable=False, lang="toml")
UNBOUND_MACHINE_INPUT: Final = Code(
    "SKM741", "unbound-machine-input", E,
    "a machine under test has required inputs that no task gives and no binding fills",
    "Each machine under test (the suite's, each `--machine`, each `--build`) is checked against the tasks before "
    "any cell runs. A required input that no task gives and no `[inputs]` binding fills would stop every cell of "
    "that machine; it is refused once, naming the machine and the inputs, instead of once per task.",
    "skillc bench unbound.toml --executor scripted:script.json --modes machine",
    _BENCH + " --modes machine", "bind the input in the suite's `[inputs]` (e.g. `question = \"{request}\"`)",
    runnable=False, lang="shell")
INVALID_MACHINE_UNDER_TEST: Final = Code(
    "SKM742", "invalid-machine-under-test", E, "a `--machine` or `--build` that cannot be used",
    "`--machine FILE` names a `.skm` file (repeatable: each is a column of the report); `--build offline` or "
    "`--build model:SPEC` compiles the suite's skill folder into a machine inside the output folder first. A "
    "file that does not exist, two machines with one label, an unknown build kind, a build without a skill in "
    "the suite, or a build that fails, is refused before any cell runs.",
    _BENCH + " --machine missing.skm", _BENCH + " --machine beats.skm",
    "name an existing .skm file, or --build offline|model:SPEC with `[suite] skill`", runnable=False, lang="shell")
NO_MATCHING_TASK: Final = Code(
    "SKM743", "no-matching-task", E, "`--tasks` matches no task of the suite",
    "`--tasks PATTERN` keeps the tasks whose id matches one of its comma-separated shell patterns (`t1,web-*`). "
    "A pattern that keeps nothing is almost always a typo.",
    _BENCH + " --tasks 'x*'", _BENCH + " --tasks 't*'", "the message lists the suite's task ids",
    runnable=False, lang="shell")
SETUP_FAILED: Final = Code(
    "SKM744", "setup-failed", E, "a dry run's cell setup failed",
    "`setup` in `[suite]` is a shell command run in every cell's fresh work folder before the run (and "
    "`teardown` after it is scored), with a timeout (`setup_timeout`) and its output in the cell's `setup.log`. "
    "A cell whose setup fails gets a row with that error; `--dry-run` sets up one cell and reports a failure "
    "as this code before any cell runs.",
    "skillc bench broken-setup.toml --executor scripted:script.json --dry-run", _BENCH + " --dry-run",
    "run the setup command by hand in an empty folder; its output is in the log named", runnable=False,
    lang="shell")
PATH_OUTSIDE_SUITE: Final = Code(
    "SKM745", "path-outside-suite", E, "a tools module or fixture folder lies outside the suite's root",
    "What a suite runs (its `tools` modules) and what it copies into every cell (a task's `workdir` fixture) "
    "must lie inside the suite's root: the nearest folder above the suite file that holds `pyproject.toml`, "
    "`skillc.toml` or `.git`, else the suite file's own folder. Symlinks are resolved first. So a suite "
    "fetched from elsewhere cannot run a module from, or copy a folder of, the rest of the machine "
    "(`/home/me/.ssh`, `../../evil.py`). Documents and machines it only reads (`skill`, `machine`) may lie "
    "anywhere.",
    _GOOD.replace('skill = "SKILL.md"', 'skill = "SKILL.md"\ntools = ["../../shared/tools.py"]'), _GOOD,
    "move the module or fixture into the suite's folder (or its project), or name one that is there",
    runnable=False, lang="toml")

ALL: Final[tuple[Code, ...]] = (
    INVALID_SUITE_SYNTAX, UNKNOWN_SUITE_KEY, WRONG_KEY_TYPE, MISSING_SUITE_KEY, MISSING_SUITE_PATH,
    INVALID_TASK_LINE, DUPLICATE_TASK_ID, INVALID_PATTERN, INVALID_VERIFIER, INVALID_REQUIREMENT,
    NO_SUITE_SUBJECT, NO_TASKS, VALUE_OUT_OF_RANGE, DUPLICATE_REQUIREMENT_ID, NOT_A_TOOL_MODULE,
    UNKNOWN_TASK_INPUT, INVALID_TASK_INPUT,
    DAMAGED_RESULTS, DUPLICATE_RESULT, RESULTS_LOCKED, BENCH_INTERRUPTED,
    RAY_NOT_INSTALLED, NO_RAY_CLUSTER, INVALID_RAY_SETTING, RAY_TASK_DIED, TRACE_NOT_VISIBLE,
    UNKNOWN_BENCH_MODE, INVALID_BENCH_EXECUTOR, INVALID_BENCH_COUNT, BENCH_NEEDS_MACHINE, NO_SKILL_DOCUMENT,
    BACKEND_FAILED, NO_RESULTS, CHANGED_BENCH, CHANGED_SUITE, UNRECORDED_SUITE,
    INVALID_BINDING, UNBOUND_MACHINE_INPUT, INVALID_MACHINE_UNDER_TEST, NO_MATCHING_TASK, SETUP_FAILED,
    PATH_OUTSIDE_SUITE,
)
