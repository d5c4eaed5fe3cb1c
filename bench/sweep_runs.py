"""Robustness of `skillc run` on real material: machines built from real skill folders, run with the real tool kit in
a box, by a model that answers at random.

    python bench/sweep_runs.py ROOT... [--machines 60] [--runs 3] [--jobs 2]
    python bench/sweep_runs.py --corpus [--runs 3] [--jobs 2]

Machines: `ROOT...` builds every skill folder under the roots offline (as bench/sweep.py does) and runs a seeded
sample of `--machines` of those that build; `--corpus` runs the machines the LLM compiler builds from the recorded
exchanges of `corpus/llm/` (`skillc build corpus/skills/ID --model recorded:…`), the closest to what a user runs.

Each run is `skillc run M.skm --executor chaos:SEED --workdir WORK --skill-dir SKILL --journal J --trace T --json`,
in this process's CLI, inside the box of `skillc.sandbox` (writes beneath its scratch folder only; reads of the
system, /etc (git reads its configuration there), Python and the repository; no network; 300 s): the machine's
`bash` really runs the skill's commands there, and `read`, `write`, `edit`, `glob` and `grep` act on the files.
WORK is a fresh git repository holding a README, a Python module and a notes file; SKILL is a copy of the skill's
folder under its own name (an `allowed-tools` entry may name it), readable and never writable. The model is
`chaos`: an in-process executor that answers each model or judge state with values of the declared types, steered
toward a random state's edges as `skillc test` steers (Z3 values for the guards on the way), and one reply in eight
invalid (not JSON, a field missing, a value of the wrong type), so the runtime's retries and fallbacks run too.
Inputs are drawn the same way (strings often a file of WORK). Every even seed runs in a child process that is
SIGKILLed once the journal holds 1 to 6 committed steps, and the run is resumed with `--resume RUN_ID` and the same
limits, naming no folder: the journal keeps the places, and this process's folder is not WORK (one killed after its
end is taken as ended, one killed while it waits is answered); a bash
command the killed process had started goes on, as after any crash, until it ends or the box does. A run that
waits for its user (exit 6) is resumed from its journal with `--resume RUN_ID --answer TEXT` (an option of the menu
when there is one, after an answer outside it that must be refused, exit 2), until it ends or has waited five
times; then `skillc replay M.skm T`.

A finding is:
- an internal error (exit 3, SKM900, a traceback) of `run`, a resume or `replay`;
- a run's exit code that disagrees with its JSON outcome, or JSON that does not parse; a killed run whose resume
  is refused;
- a refused answer that was an option of the menu, or an answer outside the menu that was taken;
- a trace that does not replay through its own machine (`skillc replay` exit 1), no trace at all, or a finished
  trace without every step once and one footer;
- a `success` whose terminal's predicates, judged again over the work folder and the variables committed last, do
  not all hold, or that reports another number of verdicts than its terminal has predicates;
- a file tool that reached the skill's folder or beyond and was stopped by the box (`Permission denied`)
  instead of refused by the runtime's places;
- a file the run left in the folder it was started from (a folder of its own in the box, where the journal and
  the trace are; not the box's HOME or TMPDIR, where `npm` keeps its cache) instead of in WORK: a run or resume
  that acted in the wrong folder;
- the box itself: killed by its time or memory limit, unless a bash call of the run asked for a `timeout` of a
  fifth of the box's limit or more (`npx --yes eas-cli@latest whoami`, 180 s: the machine's own time, not a hang).
A machine that calls tools nothing implements (a service's, an MCP server's, declared without one: Notion, n8n,
Linear) gets a `--tools` module of stand-ins (`_standins`): results of the declared types picked by the arguments,
one call in eight refused; the run and its resumes name it. Prints `machines | runs | outcomes | tool calls | waits |
killed and resumed | findings | s`, why the runs that did not succeed ended where they did, how many ran with
stand-ins, each finding, and any refusal. `--keep DIR` keeps the box of each run with a finding.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.sweep import _cli, _cli_streams, _internal, skill_folders  # noqa: E402 - after the repository is on the path

#: Exit codes of `skillc run` by outcome (its --help).
EXITS = {"success": 0, "partial": 4, "failed": 5, "fallback": 5, "waiting": 6}
#: Files of the work folder a drawn string input may name.
WORK_FILES = {"README.md": "# demo\n\nA small project.\n",
              "src/app.py": "def total(items):\n    return sum(items)\n",
              "notes.txt": "todo: add tests\n"}
BOX_SECONDS = 300
MAX_WAITS = 5


# --- inside the box: one machine, one seed ---------------------------------------------------------------------

class Chaos:
    """A model that answers with values of the declared types, steered toward a random state; one reply in eight is
    invalid. Not a tool source and no verdicts of its own: the run's tools are real and its predicates are judged
    over the work folder."""

    name = "chaos"

    def __init__(self, machine: Any, seed: int) -> None:
        from skillc.testing.explore import Steering, _path_to

        self.rng = random.Random(seed)
        goal = self.rng.choice(sorted(machine.states))
        path = _path_to(machine, goal) or []
        self.steering = Steering(machine, {s: k for s, k in path}, self.rng)

    def complete(self, request: Any) -> Any:
        from skillc.runtime.executors.base import Response

        reply = self.steering.complete(request)
        if self.rng.random() >= 1 / 8:
            return reply
        data = json.loads(reply.text)
        broken = self.rng.choice(["text", "missing", "type"])
        if broken == "text" or not data:
            return Response("I would rather explain in prose: the step is done.")
        key = self.rng.choice(sorted(data))
        if broken == "missing":
            data.pop(key)
        else:
            data[key] = {"unexpected": [1, 2]}
        return Response(json.dumps(data))

    def close(self) -> None:
        return None


def _with_chaos() -> None:
    """`--executor chaos:SEED` names the Chaos model (in this process only); every other spec is as before."""
    import skillc.runtime.command as command
    from skillc.language import check

    made = command.make_executor

    def make_executor(spec: str, **kw: Any) -> Any:
        kind, _, seed = spec.partition(":")
        if kind != "chaos":
            return made(spec, **kw)
        machine = check(Path(os.environ["SWEEP_MACHINE"])).machine
        return Chaos(machine, int(seed))

    command.make_executor = make_executor  # type: ignore[assignment]


def _inputs(machine: Any, rng: random.Random) -> dict:
    """A value of each required input: strings often a file of the work folder, else as `skillc test` draws."""
    from skillc.ir import types as T
    from skillc.testing.explore import random_value

    pool = [*WORK_FILES, "main", "fix the failing total"]
    out: dict = {}
    for v in machine.variables.values():
        if v.is_input and v.init is None:
            base = T.strip_optional(v.type)
            out[v.name] = rng.choice(pool) if isinstance(base, T.StrT) and rng.random() < 0.6 else \
                random_value(v.type, rng, pool)
    return out


def run_one(spec: dict) -> dict:
    """One run, its resumes and its replay, in this (boxed) process: the outcome and the findings."""
    from skillc.language import check

    _with_chaos()
    machine_path, seed, work, skill = spec["machine"], spec["seed"], spec["work"], spec["skill"]
    os.chdir(spec["run"])  # the journal, trace and inputs are kept here: neither WORK nor the box's HOME and TMPDIR
    os.environ["SWEEP_MACHINE"] = machine_path
    machine = check(Path(machine_path)).machine
    rng = random.Random(seed * 7919)
    inputs = Path("inputs.json")
    inputs.write_text(json.dumps(_inputs(machine, rng)), encoding="utf-8")
    row: dict = {"findings": [], "waits": 0}
    standins = _standins(machine, work, rng)
    row["standins"] = len(standins)
    args = ["run", machine_path, "--executor", f"chaos:{seed}", "--workdir", work, "--skill-dir", skill,
            "--journal", "runs.sqlite",
            "--trace", "trace.jsonl", "--input-file", str(inputs), "--json", *LIMITS, *_standin_args()]
    report = _killed(args, machine_path, rng, row) if seed % 2 == 0 else _run(args, row, "run")
    while report is not None and report.get("outcome") == "waiting" and row["waits"] < MAX_WAITS:
        row["waits"] += 1
        report = _answer(report, machine_path, rng, row)
    if report is None:
        return row
    row["outcome"] = report.get("outcome")
    row["terminal"] = report.get("terminal")
    row["reason"] = (report.get("reason") or {}).get("kind")
    row["error"] = (report.get("error") or "")[:200]
    if row["outcome"] == "success":
        row["findings"] += _rejudged(machine, report, work)
    trace = Path("trace.jsonl")
    if not trace.is_file():
        row["findings"].append(("trace", "no trace was written"))
        return row
    row["tools"] = _tool_calls(trace, row, finished=row["outcome"] != "waiting")
    if row["outcome"] != "waiting":
        code, output, escaped = _cli(["replay", machine_path, str(trace)])
        if _internal(code, output, escaped) or code != 0:
            row["findings"].append(("replay", (escaped or output)[-600:]))
    return row


#: The `--tools` module standing in for the tools a machine calls that nothing here implements (in a folder of its
#: own, where importing it leaves its `__pycache__`).
STANDINS = "standins/standins.py"


def _standins(machine: Any, work: str, rng: random.Random) -> list[str]:
    """Write STANDINS for the tools the machine calls that neither the kit nor anything installed implements (an MCP
    server's or a service's, declared without one: Notion, n8n, Linear); the names. Each stand-in answers with one of
    four results of its declared types, picked by its arguments, and raises on an eighth of them (a service that
    refuses), so the runs that were refused for want of them run, fail and resume like the others. The functions are
    bound by name (a tool may be called `pass` or `json`); a name `--tools` skips (`_x`) is left refused."""
    from skillc.runtime.tools import ToolBox
    from skillc.testing.explore import random_value

    box = ToolBox.for_run(machine, workdir=work)
    try:
        missing = [name for name in box.missing(machine) if not name.startswith("_")]
    finally:
        box.close()
    if not missing:
        return []
    samples = {name: [{r: random_value(t, rng, list(WORK_FILES)) for r, t in machine.tools[name].results}
                      for _ in range(4)] for name in missing}
    module = f'''"""Stand-ins written by bench/sweep_runs.py: typed results by the arguments; an eighth refuse."""
import json as _json
import zlib as _zlib

_SAMPLES = _json.loads({json.dumps(json.dumps(samples))})


def _stand_in(_name):
    def stand_in(**args):
        options = _SAMPLES[_name]
        pick = _zlib.crc32(_json.dumps([_name, args], sort_keys=True, default=str).encode()) % 8
        if pick == 7:
            raise RuntimeError(_name + ": the service refused the call (a stand-in)")
        return options[pick % len(options)]
    return stand_in


for _name in _SAMPLES:
    globals()[_name] = _stand_in(_name)
'''
    Path(STANDINS).parent.mkdir(exist_ok=True)
    Path(STANDINS).write_text(module, encoding="utf-8")
    return missing


def _rejudged(machine: Any, report: dict, work: str) -> list[tuple[str, str]]:
    """A `success` judged again: each predicate of its terminal over the work folder as it is now and the variables
    the journal committed last, one verdict a predicate in the report, and each holding."""
    from skillc.ir.evaluate import WorkFolder
    from skillc.runtime.interpreter import verdict

    terminal = machine.states.get(report.get("terminal") or "")
    if terminal is None:
        return [("success", f"a success at `{report.get('terminal')}`, not a terminal of the machine")]
    with closing(sqlite3.connect("runs.sqlite")) as db:
        last = db.execute("SELECT env FROM steps ORDER BY step DESC LIMIT 1").fetchone()
    env = json.loads(last[0]) if last else {}
    found: list[tuple[str, str]] = []
    reported = [p.get("predicate") for p in report.get("predicates") or []]
    if len(reported) != len(terminal.predicates):
        found.append(("success", f"{len(terminal.predicates)} predicates, {len(reported)} verdicts: {reported}"))
    for p in terminal.predicates:
        judged = verdict(terminal.name, p, env, WorkFolder(work))
        if not judged.holds:
            found.append(("success", f"`{judged.predicate}` does not hold over the work folder: {judged.reason}"))
    return found


def _run(args: list[str], row: dict, what: str) -> dict | None:
    """A `skillc run` (or resume) in this process; its JSON report, or None after a finding."""
    return _report(*_cli_streams(args), row, what)


def _killed(args: list[str], machine_path: str, rng: random.Random, row: dict) -> dict | None:
    """The run in a child process, SIGKILLed once its journal holds 1 to 6 committed steps, then resumed from the
    journal here: the report of whichever ended it (a run that ends first is not killed)."""
    target = rng.randint(1, 6)  # committed steps before the kill
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--cli", json.dumps(args)],
                                 stdout=out, stderr=err, start_new_session=True)
        deadline = time.monotonic() + BOX_SECONDS / 2
        while child.poll() is None and time.monotonic() < deadline and _committed() < target:
            time.sleep(0.005)
        if child.poll() is not None:  # it ended before the kill
            out.seek(0)
            err.seek(0)
            text = out.read().decode("utf-8", "replace")
            return _report(child.returncode, text, text + err.read().decode("utf-8", "replace"), None, row, "run")
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    with closing(sqlite3.connect("runs.sqlite")) as db:
        runs = list(db.execute("SELECT run_id, status, outcome FROM runs"))
    if not runs:  # killed by the deadline before its first step
        Path("trace.jsonl").unlink(missing_ok=True)
        return _run(args, row, "run")
    row["killed"] = _committed()
    run_id, status, outcome = runs[0]
    row["resumed"] = status not in ("done", "waiting")
    if status == "done":  # killed after its end was committed: there is nothing to resume, and its trace must be whole
        footer = _footer(Path("trace.jsonl"))
        return {"run_id": run_id, "outcome": outcome, "terminal": footer.get("skillc.terminal"),
                "reason": footer.get("skillc.reason"), "predicates": footer.get("skillc.predicates") or []}
    if status == "waiting":  # killed after it began to wait: it is answered as a run that said so
        with closing(sqlite3.connect("runs.sqlite")) as db:
            question, options = db.execute("SELECT question, options FROM waits WHERE run_id = ? AND answer IS NULL",
                                           (run_id,)).fetchone()
        return {"run_id": run_id, "outcome": "waiting",
                "waiting": {"question": question, "options": json.loads(options) if options else None}}
    return _run(_resume(machine_path, run_id), row, "resume after a kill")


def _footer(trace: Path) -> dict:
    """The last footer of a trace ({} without one)."""
    found: dict = {}
    for line in trace.read_text(encoding="utf-8").splitlines() if trace.is_file() else []:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn line: `_tool_calls` reports it
        if isinstance(record, dict) and record.get("type") == "footer":
            found = record
    return found


def _committed() -> int:
    """Steps committed to the sweep's journal so far (0 before it exists)."""
    if not Path("runs.sqlite").is_file():
        return 0
    try:
        with closing(sqlite3.connect("runs.sqlite", timeout=0.1)) as db:
            return int(db.execute("SELECT count(*) FROM steps").fetchone()[0])
    except sqlite3.Error:  # the schema not there yet, or the writer holds the lock
        return 0


def _report(code: int, stdout: str, output: str, escaped: str | None, row: dict, what: str) -> dict | None:
    """The JSON report of a run command that exited `code`, or None after a finding (or a refusal)."""
    if _internal(code, output, escaped):
        row["findings"].append((what, (escaped or output)[-600:]))
        return None
    if code in (1, 2) and what == "resume after a kill":
        row["findings"].append((what, "the killed run's resume was refused: " + output.strip()[-400:]))
        return None
    if code in (1, 2):  # a machine or an input it refuses: no run, and nothing to hold against it
        row["refused"] = (re.findall(r"SKM\d+", output) or ["?"])[0]
        row["refusal"] = next((ln for ln in output.splitlines() if "SKM" in ln), output.strip()[-200:])
        return None
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError:
        row["findings"].append((what, "--json printed no JSON on standard output: " + stdout[-300:]))
        return None
    outcome = report.get("outcome")
    if EXITS.get(outcome) != code:
        row["findings"].append((what, f"exit {code} with the outcome {outcome!r}"))
    return report


#: The limits of every run and resume (a journal keeps none of them, nor the `--tools` modules: a resume sets them
#: again).
LIMITS = ["--max-steps", "300", "--tool-timeout", "10", "--step-deadline", "30"]


def _resume(machine_path: str, run_id: str) -> list[str]:
    """The arguments that resume a run with its limits. Its places are not named: the journal keeps them, and this
    process's folder is not the work folder, so a resume that lost them would act in the wrong folder."""
    return ["run", machine_path, "--resume", run_id, "--journal", "runs.sqlite", "--json", *LIMITS, *_standin_args()]


def _standin_args() -> list[str]:
    """`--tools STANDINS` where the run has stand-ins (a run and each of its resumes name them)."""
    return ["--tools", str(Path(STANDINS).resolve())] if Path(STANDINS).is_file() else []


def _answer(report: dict, machine_path: str, rng: random.Random, row: dict) -> dict | None:
    """Resume a waiting run with an answer: an option when there is a menu (after one outside it), else text."""
    wait = report.get("waiting") or {}
    run_id, options = report.get("run_id"), wait.get("options") or []
    resume = _resume(machine_path, str(run_id))
    if options:
        code, _stdout, output, escaped = _cli_streams([*resume, "--answer", "none of these, thanks"])
        if _internal(code, output, escaped):
            row["findings"].append(("answer", (escaped or output)[-600:]))
            return None
        if code != 2:
            row["findings"].append(("answer", f"an answer outside the menu {options} was taken (exit {code})"))
            return None
    answer = rng.choice(options) if options else rng.choice(["yes", "no", "use src/app.py", "main"])
    report2 = _run([*resume, "--answer", str(answer)], row, "resume")
    if report2 is None and row.pop("refused", None) is not None:
        row["findings"].append(("answer", f"the menu's option {answer!r} was refused"))
    return report2


def _tool_calls(trace: Path, row: dict, finished: bool = True) -> int:
    """Real tool calls in the trace; a file tool the box stopped instead of the runtime is a finding, and so is a
    finished trace without every step once and one footer (a killed and resumed run's too)."""
    calls, steps, footers, total = 0, Counter(), 0, None
    for line in trace.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            row["findings"].append(("trace", f"a line of the trace is not JSON: {line[:120]}"))
            continue
        if isinstance(record, dict) and record.get("type") == "footer":
            footers, total = footers + 1, record.get("skillc.steps")
        if isinstance(record, dict) and record.get("type") == "step":
            steps[record.get("step")] += 1
        if not isinstance(record, dict) or record.get("type") != "step" or record.get("kind") != "tool":
            continue
        calls += 1
        tool = record.get("gen_ai.tool.name")
        said = json.dumps([record.get("skillc.errors"), record.get("tool_result")])
        if tool in ("read", "write", "edit", "glob", "grep") and "Permission denied" in said:
            row["findings"].append(("places", f"`{tool}` reached the box's walls: {said[:300]}"))
    twice = sorted(str(k) for k, n in steps.items() if n > 1)
    gaps = sorted(set(range(total if isinstance(total, int) else len(steps))) - set(steps))
    if finished and (twice or gaps or footers != 1):
        row["findings"].append(("trace", f"steps written twice: {twice}, missing: {gaps}, footers: {footers}"))
    return calls


# --- outside: building, the box, the table -------------------------------------------------------------------

def _work_folder(at: Path) -> None:
    """A small git repository: the files of WORK_FILES, committed."""
    for name, text in WORK_FILES.items():
        (at / name).parent.mkdir(parents=True, exist_ok=True)
        (at / name).write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "sweep", "GIT_AUTHOR_EMAIL": "sweep@example.invalid",
           "GIT_COMMITTER_NAME": "sweep", "GIT_COMMITTER_EMAIL": "sweep@example.invalid"}
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-qm", "start"]):
        subprocess.run(argv, cwd=at, env=env, check=True, capture_output=True)


def box_run(job: tuple[str, str, int, str | None]) -> dict:
    """One machine and seed, in a fresh box: the row of the run (its box kept under `keep` after a finding)."""
    from skillc.sandbox.box import run_confined

    machine, folder, seed, keep = job
    row: dict = {"machine": machine, "folder": folder, "seed": seed, "findings": []}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="skillc-runs-") as tmp:
        scratch, skill = Path(tmp) / "box", Path(tmp) / "skills" / Path(folder).name  # allowed-tools may name it
        (scratch / "work").mkdir(parents=True)
        (scratch / "run").mkdir()
        shutil.copytree(folder, skill, symlinks=True, ignore=shutil.ignore_patterns(".git", "node_modules"))
        _work_folder(scratch / "work")
        spec = {"machine": machine, "seed": seed, "work": str(scratch / "work"), "skill": str(skill),
                "run": str(scratch / "run")}
        try:
            box = run_confined([sys.executable, str(Path(__file__).resolve()), "--one", json.dumps(spec)],
                               scratch=scratch, readable=[ROOT, skill, folder, Path(machine).parent, sys.prefix,
                                                          "/etc"],
                               timeout_s=BOX_SECONDS, memory_mb=4096, processes=512,
                               env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        except OSError as exc:
            row["findings"].append(("box", f"the box did not start: {exc}"))
            return row
        lines = box.stdout.decode("utf-8", "replace").strip().splitlines()
        asked = _longest_timeout(scratch / "run" / "trace.jsonl")
        if box.timed_out and asked >= BOX_SECONDS / 5:
            row["outcome"] = f"stopped by the box (a call asked for {asked:g} s)"
        elif box.timed_out or box.signal is not None:
            row["findings"].append(("box", f"the box was stopped (timed out: {box.timed_out}, signal {box.signal})"
                                           f": {box.stderr.decode('utf-8', 'replace')[-300:]}"))
        elif not lines or box.exit != 0:
            row["findings"].append(("box", f"exit {box.exit}: {box.stderr.decode('utf-8', 'replace')[-600:]}"))
        else:
            inner = json.loads(lines[-1])
            row.update({k: v for k, v in inner.items() if k != "findings"})
            row["findings"] += [tuple(f) for f in inner["findings"]]
        if strays := _strays(scratch / "run"):
            row["findings"].append(("places", f"files beside the journal, outside the work folder: {strays}"))
        if keep and row["findings"]:
            shutil.copytree(scratch, Path(keep) / f"{Path(folder).name}-{seed}", symlinks=True, dirs_exist_ok=True)
    row["seconds"] = time.perf_counter() - started
    return row


#: What a run leaves in the folder it is started from: its journal (and SQLite's files beside it, the leases), its
#: trace and its inputs.
RUN_FILES = re.compile(r"runs\.sqlite(?:-wal|-shm|-journal|\.leases)?|trace\.jsonl|inputs\.json|standins")


def _strays(scratch: Path) -> list[str]:
    """Names in the run's starting folder that are none of RUN_FILES: something acted there, not in the work folder."""
    return sorted(p.name for p in scratch.iterdir() if not RUN_FILES.fullmatch(p.name))


def _longest_timeout(trace: Path) -> float:
    """The longest `timeout` a bash call of the trace asked for (0 without a trace): a machine may ask for more
    time than the run's `--tool-timeout` for one command (`npx … install`), and the box's limit is then its own."""
    longest = 0.0
    if trace.is_file():
        for found in re.findall(r'"timeout": (\d+(?:\.\d+)?)', trace.read_text(encoding="utf-8", errors="replace")):
            longest = max(longest, float(found))
    return longest


def _build(job: tuple[str, str, str]) -> tuple[str, str] | None:
    """Build one folder (offline, or from a recorded exchange); the machine's path, or None when refused."""
    folder, out, model = job
    name = Path(folder).name + "-" + format(abs(hash(folder)) % 10**8, "08d")
    machine = str(Path(out) / f"{name}.skm")
    args = ["build", folder, "-o", machine] + (["--model", model] if model else [])
    code, _output, _escaped = _cli(args)
    return (machine, folder) if code == 0 and Path(machine).is_file() else None


def table(rows: list[dict], machines: int, seconds: float, verbose: bool = False) -> None:
    """The summary line and each finding (`verbose`: and why each run that failed at the fallback did)."""
    outcomes = Counter(r.get("outcome") or ("refused " + r["refused"] if r.get("refused") else "none") for r in rows)
    findings = [(r["folder"], r["seed"], what, text) for r in rows for what, text in r["findings"]]
    killed = [r for r in rows if "killed" in r]
    print("| machines | runs | outcomes | tool calls | waits | killed (resumed) | findings | s |")
    print("|---|---|---|---|---|---|---|---|")
    shown = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1]))
    print(f"| {machines} | {len(rows)} | {shown} | {sum(r.get('tools', 0) for r in rows)} | "
          f"{sum(r.get('waits', 0) for r in rows)} | {len(killed)} ({sum(1 for r in killed if r['resumed'])}) | "
          f"{len(findings)} | {seconds:.0f} |")
    reasons = Counter(f"{r.get('outcome')} at {r.get('terminal')} ({r.get('reason') or 'an edge'})"
                      for r in rows if r.get("outcome") in ("failed", "partial"))
    print("\nruns not ended in success: " + "; ".join(f"{k} {v}" for k, v in reasons.most_common(8)))
    stood = [r for r in rows if r.get("standins")]
    if stood:
        print(f"\nruns with tools stood in for (STANDINS): {len(stood)}, "
              f"{len({r['machine'] for r in stood})} machines, {sum(r['standins'] for r in stood)} tools")
    if verbose:
        for r in rows:
            if r.get("error"):
                print(f"  {Path(r['folder']).name} (seed {r['seed']}): {r['reason']}: {r['error']}")
    for folder, seed, what, text in findings:
        print(f"\n{folder} (seed {seed}) {what}: {text}")
    refusals = Counter(r["refusal"][:200] for r in rows if r.get("refusal"))
    for text, n in refusals.most_common():
        print(f"\nrefused ({n}): {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path, help="folders holding skill folders")
    parser.add_argument("--corpus", action="store_true", help="the LLM compiler's machines of corpus/llm/")
    parser.add_argument("--machines", type=int, default=60, help="ROOTs: machines sampled (seed 7)")
    parser.add_argument("--runs", type=int, default=3, help="seeds per machine")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="copy the box of each run with a finding here")
    parser.add_argument("--verbose", "-v", action="store_true", help="print why each run went to the fallback")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--cli", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cli:  # the killable child of `_killed`: one skillc command, with the chaos model
        from skillc.cli import main as skillc

        _with_chaos()
        skillc(json.loads(args.cli))
    if args.one:
        try:
            row = run_one(json.loads(args.one))
        except Exception:  # noqa: BLE001 - the sweep's own failure is a finding too
            row = {"findings": [("sweep", traceback.format_exc()[-600:])]}
        print(json.dumps(row))
        return 0
    if args.corpus == bool(args.roots):
        parser.error("give skill-folder ROOTs, or --corpus")
    started = time.perf_counter()
    out = Path(tempfile.mkdtemp(prefix="skillc-sweep-runs-"))
    if args.corpus:
        jobs = [(str(ROOT / "corpus" / "skills" / f.name.removesuffix(".exchange.jsonl")), str(out),
                 f"recorded:{f}") for f in sorted((ROOT / "corpus" / "llm").glob("*.exchange.jsonl"))]
    else:
        folders = [str(f) for _c, f in skill_folders(args.roots)]
        jobs = [(f, str(out), "") for f in random.Random(7).sample(folders, min(len(folders), args.machines * 2))]
    with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=25) as pool:
        built = [b for b in pool.imap(_build, jobs) if b is not None][: None if args.corpus else args.machines]
        keep = str(args.keep.resolve()) if args.keep else None
        runs = [(m, f, s, keep) for m, f in built for s in range(1, args.runs + 1)]
        rows = list(pool.imap_unordered(box_run, runs))
    table(sorted(rows, key=lambda r: (r["folder"], r["seed"])), len(built), time.perf_counter() - started,
          args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
