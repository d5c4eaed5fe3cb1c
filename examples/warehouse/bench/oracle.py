"""A scripted executor that runs one warehouse task correctly: the answers the machine's model states need.

    python examples/warehouse/bench/oracle.py T25-s1 > /tmp/oracle.json
    skillc run examples/warehouse/warehouse.skm --executor scripted:/tmp/oracle.json \\
        --tools examples/warehouse/env.py --workdir WORK --input state_path=WORK/state.json …

Each event is parsed as written and applied with ../env.py's `apply_event`, so the answers are the ground
truth; `--wrong` leaves one unit too many on the last shelf an event changes, a run the verifier must fail. The
suite's tests use it to show every task can be completed and verified end to end.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys

from make_fixtures import HERE, load_env

TOTALS = ("import json, sys; s = json.load(open({path!r})); "
          "print('units', sum(r['quantity'] for r in s['shelves'].values())); "
          "print('discrepancies', len(s['discrepancies']))")


def _apply_answer(env: object, shelves: dict, event: dict) -> dict[str, object]:
    """The apply_event state's answer: the changed shelves, the new discrepancies and the effect."""
    before = copy.deepcopy(shelves)
    found: dict[str, object] = {}
    effect = env.apply_event(shelves, found, event)  # type: ignore[attr-defined]
    changed = {k: v for k, v in shelves.items() if before.get(k) != v}
    return {"shelves": copy.deepcopy(changed), "discrepancies": found, "effect": effect}


def script(task: str, *, wrong: bool = False, state_path: str = "state.json") -> dict[str, object]:
    """The scripted-executor file of a task (a fixture folder's name such as T25-s1)."""
    env = load_env()
    fixture = HERE / "fixtures" / task
    shelves = json.loads((fixture / "records.json").read_text(encoding="utf-8"))
    events = [json.loads(line) for line in (fixture / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    parses = [{"event": e, "skip_reason": "", "skipped": {}} for e in events]
    applies = [_apply_answer(env, shelves, e) for e in events]
    if wrong:  # one unit too many on the last shelf any event changes: no later answer corrects it
        last = applies[max(i for i, a in enumerate(applies) if a["shelves"])]["shelves"]
        assert isinstance(last, dict)
        next(iter(last.values()))["quantity"] += 1
    return {"outputs": {"parse_event": parses, "apply_event": applies,
                        "write_totals_code": [{"totals_code": TOTALS.format(path=state_path)}],
                        "write_report": [{"report": f"{len(events)} events processed"}]}}


def main(argv: list[str] | None = None) -> int:
    """Print the script of one task."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", help="a task id, e.g. T25-s1")
    parser.add_argument("--wrong", action="store_true", help="one unit too many on the last shelf an event changes")
    parser.add_argument("--state-path", default="state.json", help="the state_path input of the run")
    args = parser.parse_args(argv)
    if not (HERE / "fixtures" / args.task).is_dir():
        parser.error(f"no fixture {args.task} in {HERE / 'fixtures'}")
    json.dump(script(args.task, wrong=args.wrong, state_path=args.state_path), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
