"""A scripted executor that answers one livemath task: the answers of the machine's model states, and a native
agent's turns.

    python examples/livemath/bench/oracle.py lm-001 > /tmp/oracle.json
    skillc bench examples/livemath/bench/suite.toml --modes machine,native --executor 'scripted:DIR/{task}.json'

It picks the task's right letter (`--wrong`: the next one), marks that option `fits` and the others
`contradicts`; the native turns write the letter with `printf %s` and read it back with `cat`, as the skill
says. The tool states run for real. The suite's tests use it to show a task can be completed and verified.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LETTERS = "ABCDE"


def task_line(task: str) -> dict:
    """The task's line of tasks.jsonl."""
    for line in (HERE / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        value = json.loads(line)
        if value["id"] == task:
            return value
    raise KeyError(task)


def script(task: str, *, wrong: bool = False) -> dict[str, object]:
    """The scripted-executor file of a task (an id such as lm-001)."""
    line = task_line(task)
    right = line["verify"]["equals"]
    letter = LETTERS[(LETTERS.index(right) + 1) % len(LETTERS)] if wrong else right
    question, options = line["inputs"]["question"], line["inputs"]["options"]
    chosen = options[LETTERS.index(letter)]
    return {"outputs": {
        "analyze": [{"restatement": question, "work": f"the value is {chosen}", "result": chosen}],
        "review_options": [{f"fit_{x}": "fits" if x == letter else "contradicts" for x in LETTERS}],
        "pick": [{"choice": letter, "doubt": "", "sanity_check": f"option {letter} is {chosen}"}],
        "judge_complete": [{"completeness": "complete"}],
        "native": [{"action": "bash", "args": {"command": f"printf %s {letter} > answer.txt"}},
                   {"action": "bash", "args": {"command": "cat answer.txt"}},
                   {"action": "finish", "outcome": "success", "evidence": {"choice": letter, "readback": letter}}]}}


def main(argv: list[str] | None = None) -> int:
    """Print the script of one task."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", help="a task id, e.g. lm-001")
    parser.add_argument("--wrong", action="store_true", help="pick the letter after the right one")
    args = parser.parse_args(argv)
    try:
        json.dump(script(args.task, wrong=args.wrong), sys.stdout)
    except KeyError:
        parser.error(f"no task {args.task} in {HERE / 'tasks.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
