"""Run BUILT machines of corpus folders to their effect, offline, with someone playing the run's model.

The front-door issue asks for run-to-effect: of the corpus folders that have a deliverable, the share whose
built machine (not a hand-written one) produces it when run with real tools and scripted user answers. The
folders with a deliverable are the cases of `tests/harness/cases.py` (a fixture, the deliverable, a verifier).

For each case: set up its fixture in a fresh work folder, start `tools/standin.py`, and run the machine with
`skillc.api.run` (executor `openai:capable` against the stand-in, the real tool kit, the case's answers to
`ask_user`). The user's request (`REQUESTS` below: what a user would ask, written from the case's task, naming
the deliverable) fills the built machine's request-like `str` inputs (`task`, `request`, `arguments`, …) and any
other required `str` input the case does not bind by name; inputs with a default keep it. While
the run waits on the model, `LANE/NEXT` names the request file and the reply file, as in
`tools/record_corpus.py`: whoever plays the model reads ONLY the request and writes the reply. Afterwards the
case's own check says whether the deliverable is there (`delivered`) and right (`verified`), and the row, the
exchange and the trace are kept under `OUT/<kind>/<id>/`.

    python tools/record_runs.py LANE OUT KIND ID=MACHINE.skm [ID=MACHINE.skm …]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillc import api  # noqa: E402
from skillc.ir import types as T  # noqa: E402
from skillc.runtime.interaction import Question  # noqa: E402
from tests.harness.cases import CASES, harness_env, snapshot  # noqa: E402
from tools.record_corpus import announce, start_standin  # noqa: E402

#: What the user asks, per case: the task in the words a user would use, naming the deliverable.
REQUESTS = {
    "mhattingpete__code-transfer": "Copy the function validate_email from auth.py into validators.py. "
                                   "Leave auth.py as it is.",
    "sentry__skill-scanner": "Scan the skill in vendor/pdf-helper for security problems before I install it. "
                             "Save the scanner's JSON output as scan.json and your report as SKILL_SCAN.md.",
    "mhattingpete__flowchart-creator": "Make an HTML flowchart of the password reset process described in "
                                       "process.md, saved as password-reset-flowchart.html.",
    "sentry__prompt-optimizer": "Optimize the prompt in prompts/support.md for Claude. Write the optimized prompt "
                                "to prompts/support.optimized.md and the package (what changed and why) to "
                                "PROMPT_PACKAGE.md.",
    "trailofbits__fp-check": "Check each finding in FINDINGS.md against src/parser.c: true or false positive? "
                             "Write your verdicts to VERDICTS.md.",
    "trailofbits__open-sourcing": "Get this repository ready to open-source: at least a LICENSE and a SECURITY.md.",
    "sentry__gha-security-review": "Review the GitHub Actions workflows in this repository for security problems "
                                   "and write the review to GHA_REVIEW.md.",
    "sentry__django-access-review": "Review the access control of this Django project and write the review to "
                                    "ACCESS_REVIEW.md.",
    "mhattingpete__test-fixing": "The test suite is failing after a refactor. Fix the code so the tests pass "
                                 "(do not change the tests).",
    "sentry__create-branch": "Create a branch for the change I have in my working tree.",
}


#: Who the user is, per case whose built machine may ask the user things the case's scripted answers (written for
#: its hand-written machine, in order) do not answer: a built machine asks its own questions, in its own words and
#: menus. Such a case's `ask_user` calls go to the stand-in as requests of their own, a system message with this
#: description and the question (and its options), and whoever plays the model answers them as that user would.
#: Written from the case's task and fixture, not from a machine's questions.
USERS = {
    "trailofbits__open-sourcing": (
        "You maintain `wordcount`, a small Python library you wrote yourself; it is not a Trail of Bits project. It "
        "has never held secrets, credentials or client data, and its tests and examples use made-up text. You want "
        "to publish it on GitHub under the MIT licence, with a LICENSE and a SECURITY.md; you accept the skill's "
        "defaults, want the gaps that matter for a small library fixed now, and keep its tooling as it is."),
}

USER_SYSTEM = ("You are the user of an agent that is carrying out a task for you, and it has asked you a question. "
               "Answer it as this user would, briefly and plainly, in the first person. When options are listed, "
               "answer with exactly one of them, word for word. Reply with the answer only.\n\nWho you are: ")


def ask_the_user(url: str, who: str) -> Callable[[str], str]:
    """An `ask_user` answer callback: each question a request to the stand-in, answered by whoever plays the user."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="standin", timeout=3600.0, max_retries=0)

    def answer(question: str) -> str:
        options = question.options if isinstance(question, Question) else None
        text = str(question) + ("\n\nOptions:\n" + "\n".join(f"- {o}" for o in options) if options else "")
        reply = client.chat.completions.create(model="user", max_tokens=512, messages=[
            {"role": "system", "content": USER_SYSTEM + who}, {"role": "user", "content": text}])
        return (reply.choices[0].message.content or "").strip()

    return answer


def _announce(lane: Path, folder: Path, done: threading.Event) -> None:
    """Keep LANE/NEXT naming the oldest request without a reply until `done`."""
    while not done.is_set():
        announce(lane, folder)
        done.wait(1.0)


#: `str` inputs that take the user's request when the case does not bind them by name.
REQUEST_INPUTS = frozenset({"task", "request", "arguments", "args", "prompt", "instructions", "description", "goal"})


def _inputs(machine: Path, case_inputs: dict[str, object], request: str) -> dict[str, object]:
    """The inputs a user would give: the case's by name, the request for a request-like or required `str` one."""

    checked = api.load_checked(str(machine))
    if checked.machine is None:
        raise SystemExit(f"{machine}: does not check: {[d.message for d in checked.diagnostics][:3]}")
    out: dict[str, object] = {}
    for var in checked.machine.variables.values():
        if var.kind != "input":
            continue
        if var.name in case_inputs:
            out[var.name] = case_inputs[var.name]
        elif isinstance(var.type, T.StrT) and (var.name in REQUEST_INPUTS or var.init is None):
            out[var.name] = request
    return out


def record(lane: Path, out: Path, kind: str, case_id: str, machine: Path) -> dict[str, object]:
    """One case's run; its row."""

    case = next(c for c in CASES if c.id == case_id)
    folder = lane / f"{kind}__{case_id}"
    standin, url = start_standin(folder)
    done = threading.Event()
    announcer = threading.Thread(target=_announce, args=(lane, folder, done), daemon=True)
    announcer.start()
    keep = out / kind / case_id
    keep.mkdir(parents=True, exist_ok=True)
    inputs = _inputs(machine, case.inputs, REQUESTS[case_id])
    with tempfile.TemporaryDirectory(prefix="skillc-r2e-") as tmp:
        scratch = Path(tmp)
        work = scratch / "work"
        work.mkdir()
        (scratch / "inputs.json").write_text(json.dumps(inputs))
        try:
            with harness_env(scratch):
                case.setup(work)
                before = snapshot(work)
                started = time.perf_counter()
                report = api.run(api.RunConfig(
                    machine=str(machine), executor="openai:capable", base_url=url,
                    input_file=str(scratch / "inputs.json"), workdir=str(work), skill_dir=str(case.skill_dir),
                    journal=None, trace=str(keep / "trace.jsonl"), tool_timeout_s=120.0, model_timeout_s=3500.0,
                    step_deadline_s=7200.0,
                    answers=() if case_id in USERS else tuple(case.answers),
                    answer=ask_the_user(url, USERS[case_id]) if case_id in USERS else None))
                seconds = time.perf_counter() - started
                delivered = case.delivered(work)
                verdict = delivered if delivered is not None else case.verify(work)
        except Exception as exc:  # noqa: BLE001 - a verifier that crashes is a failed verdict
            delivered = verdict = f"{type(exc).__name__}: {exc}"
            seconds, report = 0.0, None
        after = snapshot(work)
    done.set()
    standin.terminate()
    standin.wait(10)
    if (folder / "exchange.jsonl").exists():
        shutil.copy(folder / "exchange.jsonl", keep / "exchange.jsonl")
    shutil.copy(machine, keep / "machine.skm")
    result = report.result if report is not None else None
    row = {"id": case_id, "kind": kind, "inputs": inputs,
           "outcome": result.outcome if result is not None else "error",
           "error": ((report.error_line if report is not None else None)
                     or (result.error if result is not None else None)),
           "delivered": delivered is None, "verified": verdict is None, "why": verdict,
           "changed": sorted(p for p, h in after.items() if before.get(p) != h),
           "model_requests": len(list((folder / "requests").glob("*.json"))), "seconds": round(seconds, 1)}
    (keep / "row.json").write_text(json.dumps(row, indent=2) + "\n")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lane", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("kind", help="what built the machines: offline, llm, …")
    parser.add_argument("runs", nargs="+", metavar="ID=MACHINE")
    args = parser.parse_args(argv)
    args.lane.mkdir(parents=True, exist_ok=True)
    for spec in args.runs:
        case_id, machine = spec.split("=", 1)
        row = record(args.lane, args.out, args.kind, case_id, Path(machine).resolve())
        print(json.dumps(row), flush=True)
    (args.lane / "NEXT").write_text("DONE\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
