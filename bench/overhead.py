"""Per-transition runtime overhead with instant executors: skillc's interpreter beside LangGraph.

    python bench/overhead.py [--states 50] [--laps 20]

Both run the same 50-state graph in this process: a chain of model-like steps
with a counted loop back to the start. Executors answer instantly, so the time
per transition is the runtime's own overhead (for skillc: building the prompt
from the read set, parsing and validating the output, evaluating guards and
assignments; for LangGraph: its state channels and routing).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import skillc
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.base import BaseExecutor, Response


def machine_text(n: int, laps: int) -> str:
    lines = ["machine chain {", "  var note: str = \"\"", f"  counter laps max {laps}", "  start s0", ""]
    for i in range(n):
        edges = [f"    -> s{i + 1}"] if i + 1 < n else [f"    when laps < {laps} -> s0 {{ laps += 1 }}", "    -> done"]
        lines += [f"  model s{i} {{", "    reads note", "    writes note", f'    prompt "Step {i}."', *edges, "  }", ""]
    lines += ["  terminal done: success { requires note }", "  fallback", "}"]
    return "\n".join(lines) + "\n"


class Instant(BaseExecutor):
    name = "instant"
    reply = Response(json.dumps({"note": "ok"}))

    def complete(self, request):
        return self.reply


def bench_skillc(n: int, laps: int) -> tuple[float, int]:
    text = machine_text(n, laps)
    machine = skillc.check(text).machine
    interp = Interpreter(machine, Instant(), ToolBox(), RunOptions(max_steps=10**7), text)
    start = time.perf_counter()
    result = interp.run({})
    elapsed = time.perf_counter() - start
    assert result.outcome == "success"
    return elapsed, result.steps


def bench_langgraph(n: int, laps: int) -> tuple[float, int] | None:
    try:
        from typing import TypedDict

        from langgraph.graph import END, StateGraph
    except ImportError:
        return None

    class S(TypedDict):
        note: str
        laps: int
        steps: int

    g = StateGraph(S)
    for i in range(n):
        g.add_node(f"s{i}", lambda state: {"note": "ok", "steps": state["steps"] + 1})
    for i in range(n - 1):
        g.add_edge(f"s{i}", f"s{i + 1}")

    def route(state):
        return "again" if state["laps"] < laps else "done"

    g.add_node("count", lambda state: {"laps": state["laps"] + 1})
    g.add_conditional_edges(f"s{n - 1}", route, {"again": "count", "done": END})
    g.add_edge("count", "s0")
    g.set_entry_point("s0")
    app = g.compile()
    start = time.perf_counter()
    out = app.invoke({"note": "", "laps": 0, "steps": 0}, {"recursion_limit": 10**7})
    return time.perf_counter() - start, out["steps"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--laps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    sk = [bench_skillc(args.states, args.laps) for _ in range(args.repeat)]
    rows.append(("skillc", statistics.median(t / s for t, s in sk), sk[0][1]))
    lg = [bench_langgraph(args.states, args.laps) for _ in range(args.repeat)]
    if lg[0] is not None:
        rows.append(("langgraph", statistics.median(t / s for t, s in lg), lg[0][1]))
    print(f"{'runtime':<10} {'steps':>7} {'µs/transition':>14}")
    for name, per, steps in rows:
        print(f"{name:<10} {steps:>7} {per * 1e6:>14.1f}")
    if len(rows) == 2:
        print(f"skillc / langgraph = {rows[0][1] / rows[1][1]:.2f}")
    else:
        print("langgraph is not installed (pip install langgraph) — no comparison")


if __name__ == "__main__":
    main()
