"""Generate the warehouse bench's fixtures and task list with ../env.py, deterministically.

    python examples/warehouse/bench/make_fixtures.py

writes, for every horizon T in 25, 50, 100, 200 and seed in 1, 2, the folder `fixtures/T<T>-s<seed>/`
(`records.json`, the starting shelf records, and `events.jsonl`, T events) and `tasks.jsonl`, one task per
folder with `horizon = T`. Only the inputs go into a fixture: the expected final state is not written
anywhere a run could read it; `verifiers.py` recomputes it by replaying the pristine fixture with
env.apply_event. Few shelves keep the committed files small; the horizon is the number of events.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
HORIZONS = (25, 50, 100, 200)
SEEDS = (1, 2)
SHELVES = 8


def load_env() -> ModuleType:
    """examples/warehouse/env.py, the simulator, imported by path."""
    spec = importlib.util.spec_from_file_location("warehouse_env", HERE.parent / "env.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def task_id(horizon: int, seed: int) -> str:
    """The task's id, which is also its fixture folder's name."""
    return f"T{horizon}-s{seed}"


def fixture_files(horizon: int, seed: int) -> dict[str, str]:
    """The fixture's file names and texts, exactly as committed."""
    w = load_env().Warehouse(shelves=SHELVES, events=horizon, seed=seed)
    return {"records.json": json.dumps(w.records, indent=1) + "\n",
            "events.jsonl": "".join(json.dumps(e) + "\n" for e in w.events)}


def task_line(horizon: int, seed: int) -> str:
    """The task's JSONL line: its fixture folder and its horizon (the inputs are the suite's defaults)."""
    return json.dumps({"id": task_id(horizon, seed), "workdir": f"fixtures/{task_id(horizon, seed)}",
                       "horizon": horizon}) + "\n"


def expected_files() -> dict[str, str]:
    """Every generated file, by path relative to this folder."""
    files = {"tasks.jsonl": "".join(task_line(t, s) for t in HORIZONS for s in SEEDS)}
    for t in HORIZONS:
        for s in SEEDS:
            for name, text in fixture_files(t, s).items():
                files[f"fixtures/{task_id(t, s)}/{name}"] = text
    return files


def main(argv: list[str] | None = None) -> int:
    """Write the fixtures and tasks.jsonl next to this file (or into --out)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="the folder to write into (default: this one)")
    args = parser.parse_args(argv)
    for rel, text in expected_files().items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(HORIZONS) * len(SEEDS)} fixtures and tasks.jsonl into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
