"""A deterministic warehouse simulator for the `warehouse` machine, and its tools.

    python examples/warehouse/env.py --shelves 500 --events 200 --seed 1 --out /tmp/wh

writes `records.json` (the starting shelf records) and `events.jsonl` (the
event log) and prints the expected final state's summary. Run the machine with
`--tools examples/warehouse/env.py`, which provides `load_state`, `save_state`,
`shelves_for` and `python`; `accuracy(state.json, expected)` scores the result.

Events follow the skill's rules: receive adds stock (a different sku on a
stocked shelf is a discrepancy), pick removes it (more than is there is a
discrepancy), move is a pick and a receive, count corrects the quantity (a
different count is a discrepancy). Unknown shelves are discrepancies.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import sys
from pathlib import Path

SKUS = [f"SKU-{i:03d}" for i in range(40)]


class Warehouse:
    """Shelves, an event log generated from a seed, and the ground truth of applying it."""

    def __init__(self, shelves: int = 500, events: int = 100, seed: int = 0) -> None:
        rng = random.Random(seed)
        self.records = {}
        for i in range(shelves):
            sku = rng.choice(SKUS) if rng.random() < 0.8 else ""
            self.records[f"S{i:03d}"] = {"sku": sku, "quantity": rng.randint(1, 40) if sku else 0,
                                         "location": f"aisle {i // 50 + 1}, bay {i % 50 + 1}", "last_event": ""}
        truth = copy.deepcopy(self.records)
        self.events = []
        for n in range(events):
            eid = f"E{n + 1:04d}"
            kind = rng.choice(["receive", "pick", "pick", "move", "count"])
            shelf = rng.choice(list(truth)) if rng.random() > 0.03 else "S999"
            ev = {"id": eid, "kind": kind, "shelf": shelf, "to_shelf": "", "sku": "", "quantity": 0}
            rec = truth.get(shelf)
            if kind == "receive":
                ev["sku"] = rec["sku"] if rec and rec["sku"] and rng.random() < 0.9 else rng.choice(SKUS)
                ev["quantity"] = rng.randint(1, 20)
            elif kind == "pick":
                have = rec["quantity"] if rec else 5
                ev["quantity"] = rng.randint(1, max(1, have + (3 if rng.random() < 0.1 else 0)))
            elif kind == "move":
                ev["to_shelf"] = rng.choice([s for s, r in truth.items() if not r["sku"] or (rec and r["sku"] == rec["sku"])]
                                            or list(truth))
                ev["quantity"] = rng.randint(1, max(1, rec["quantity"] if rec else 1))
            else:
                have = rec["quantity"] if rec else 0
                ev["quantity"] = have if rng.random() < 0.8 else max(0, have + rng.choice([-2, -1, 1, 2]))
            self.events.append(ev)
            apply_event(truth, {}, ev)
        self.expected = {"shelves": truth, "discrepancies": {}}
        check = copy.deepcopy(self.records)
        for ev in self.events:
            apply_event(check, self.expected["discrepancies"], ev)

    def write(self, folder: str | Path) -> tuple[Path, Path]:
        """Write records.json and events.jsonl; returns their paths."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        records = folder / "records.json"
        records.write_text(json.dumps(self.records, indent=1))
        events = folder / "events.jsonl"
        events.write_text("".join(json.dumps(e) + "\n" for e in self.events))
        (folder / "expected.json").write_text(json.dumps(self.expected, indent=1))
        return records, events


def _discrepancy(ev, shelf, expected, counted, note):
    return {"event_id": ev["id"], "shelf": shelf, "expected": expected, "counted": counted, "note": note}


def apply_event(shelves: dict, discrepancies: dict, ev: dict) -> str:
    """Apply one event in place; returns the effect (applied, corrected, rejected)."""
    rec = shelves.get(ev["shelf"])
    kind = ev["kind"]
    if rec is None:
        discrepancies[ev["id"]] = _discrepancy(ev, ev["shelf"], 0, 0, "unknown shelf")
        return "rejected"
    if kind == "receive":
        if rec["sku"] and rec["sku"] != ev["sku"]:
            discrepancies[ev["id"]] = _discrepancy(ev, ev["shelf"], rec["quantity"], rec["quantity"], "different sku")
            return "rejected"
        rec.update(sku=ev["sku"], quantity=rec["quantity"] + ev["quantity"], last_event=ev["id"])
        return "applied"
    if kind == "pick":
        if ev["quantity"] > rec["quantity"]:
            discrepancies[ev["id"]] = _discrepancy(ev, ev["shelf"], rec["quantity"], ev["quantity"], "pick exceeds stock")
            return "rejected"
        rec.update(quantity=rec["quantity"] - ev["quantity"], last_event=ev["id"])
        return "applied"
    if kind == "move":
        dest = shelves.get(ev["to_shelf"])
        if dest is None or ev["quantity"] > rec["quantity"] or (dest["sku"] and dest["sku"] != rec["sku"]):
            discrepancies[ev["id"]] = _discrepancy(ev, ev["shelf"], rec["quantity"], ev["quantity"], "move not possible")
            return "rejected"
        rec.update(quantity=rec["quantity"] - ev["quantity"], last_event=ev["id"])
        dest.update(sku=rec["sku"], quantity=dest["quantity"] + ev["quantity"], last_event=ev["id"])
        return "applied"
    if ev["quantity"] != rec["quantity"]:
        discrepancies[ev["id"]] = _discrepancy(ev, ev["shelf"], rec["quantity"], ev["quantity"], "count differs")
        rec.update(quantity=ev["quantity"], last_event=ev["id"])
        return "corrected"
    rec.update(last_event=ev["id"])
    return "applied"


def accuracy(state_path: str | Path, expected: dict) -> dict:
    """Share of shelves whose sku and quantity match the ground truth, and discrepancy recall/precision."""
    state = json.loads(Path(state_path).read_text())
    want, got = expected["shelves"], state.get("shelves", {})
    right = sum(1 for k, v in want.items() if k in got and (got[k]["sku"], got[k]["quantity"]) == (v["sku"], v["quantity"]))
    exp_d, got_d = set(expected["discrepancies"]), set(state.get("discrepancies", {}))
    return {"shelf_accuracy": right / max(1, len(want)),
            "discrepancy_recall": len(exp_d & got_d) / max(1, len(exp_d)),
            "discrepancy_precision": len(exp_d & got_d) / max(1, len(got_d))}


# ---------------------------------------------------------------- tools (for --tools env.py)

def load_state(path: str) -> dict:
    """Read state.json as typed values."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {"shelves": {}, "discrepancies": {}, "skipped": {}, "exit_code": 1}
    return {"shelves": data.get("shelves", {}), "discrepancies": data.get("discrepancies", {}),
            "skipped": data.get("skipped", {}), "exit_code": 0}


def save_state(path: str, shelves: dict, discrepancies: dict, skipped: dict, processed: int) -> dict:
    """Write state.json atomically."""
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps({"shelves": shelves, "discrepancies": discrepancies, "skipped": skipped,
                               "processed": processed}, indent=1))
    tmp.replace(path)
    return {"exit_code": 0}


def shelves_for(event: dict, shelves: dict) -> dict:
    """The records of the shelves an event names."""
    names = [event.get("shelf"), event.get("to_shelf")]
    return {"touched": {n: shelves[n] for n in names if n and n in shelves}}


def python(code: str) -> dict:
    """Run Python code in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return {"stdout": proc.stdout, "stderr": proc.stderr, "exit_code": proc.returncode}


def _main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shelves", type=int, default=500)
    ap.add_argument("--events", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    w = Warehouse(a.shelves, a.events, a.seed)
    records, events = w.write(a.out)
    print(f"wrote {records} and {events}; {len(w.expected['discrepancies'])} discrepancies expected")


if __name__ == "__main__":
    _main()
