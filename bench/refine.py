"""Re-validation after one edit: incremental versus full replay of an archive of traces (issue 19).

The machine: a judge that routes to one of `--branches` chains, each a chain of model and tool states
(every third a tool state), so that every trace is `--steps` steps long; each chain state has a guard to a
failed terminal and a default edge on. The archive: `--traces` traces spread evenly over the branches, each
replayed once on the machine (its path indexed, as the archive stores it). Then one edit, made to the
`.skm` text and checked by the real checker, and the archive re-validated both ways:

- full: every trace replayed on the edited machine (`replay_trace`, the real interpreter);
- incremental: `diff_machines(old, new)` + `affected(index, diff)`, then only those traces replayed.

Two edits are measured: a guard inside one chain (`local`: the traces of that branch are affected) and two
of the router's edges swapped (`router`: every trace looks at its first edge, so every trace is affected).
The incremental verdicts are checked to equal the full ones. The last section times `skillc refine`
(skillc.improve.refine.refine) of examples/refine/livemath-partial.skm from 100 chat transcripts of the
full procedure, each its own question.

Run: python bench/refine.py [--traces 10000 --steps 30 --branches 40]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import skillc
from skillc.improve.diff import diff_machines
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.index import affected, build_index
from skillc.improve.refine.refine import RefineOptions, refine
from skillc.improve.replay import ReplayVerdict, replay_trace
from skillc.ir.machine import Machine


def chain_state(b: int, i: int, length: int) -> str:
    """One state of branch `b`'s chain: a tool state every third step, else a model state."""
    name, nxt = f"s{b}_{i}", (f"s{b}_{i + 1}" if i + 1 < length else "done")
    if i % 3 == 2:
        return (f"  tool {name} {{\n    call bash(command: \"step {b} {i}\")\n    writes status = exit_code\n"
                f"    when status != 0 -> failed_run\n    -> {nxt}\n  }}\n")
    return (f"  model {name} {{\n    writes note\n    prompt \"Step {i} of branch {b}.\"\n"
            f"    when note == \"stop\" -> failed_run\n    -> {nxt}\n  }}\n")


def machine_text(branches: int, steps: int) -> str:
    """The benchmark machine: a router judge and `branches` chains of `steps - 1` states."""
    labels = ", ".join(f"b{b}" for b in range(branches))
    routes = "".join(f"    when route == b{b} -> s{b}_0\n" for b in range(branches - 1))
    text = ["machine wide {\n  tool bash(command: str) -> (stdout: str, exit_code: int)\n",
            f"  var route: enum {{ {labels} }}\n  var note: str\n  var status: int\n  start router\n",
            f"  judge router {{\n    writes route\n    prompt \"Pick a branch.\"\n{routes}"
            f"    -> s{branches - 1}_0\n  }}\n"]
    text += [chain_state(b, i, steps - 1) for b in range(branches) for i in range(steps - 1)]
    text.append("  terminal done: success { requires status }\n  terminal failed_run: failed\n  fallback\n}\n")
    return "".join(text)


def checked(text: str) -> Machine:
    """The machine of `text`, through the real checker (the edit must pass it, as in refine)."""
    result = skillc.check(text, path="wide.skm")
    errors = [d for d in result.diagnostics if d.is_error]
    if result.machine is None or errors:
        raise SystemExit(f"the benchmark machine does not check: {errors[:3]}")
    return result.machine


def traces(n: int, branches: int, steps: int) -> list[tuple[DevTrace, Alignment]]:
    """`n` successful traces spread over the branches, each with its alignment."""
    out = []
    for k in range(n):
        b = k % branches
        events = [Event("model", text="routing", output={"route": f"b{b}"}, state="router")]
        for i in range(steps - 1):
            if i % 3 == 2:
                events.append(Event("tool", tool="bash", args={"command": f"step {b} {i}"},
                                    result={"stdout": str(k), "exit_code": 0}, state=f"s{b}_{i}"))
            else:
                events.append(Event("model", text=f"trace {k}", output={"note": f"n{k}"}, state=f"s{b}_{i}"))
        trace = DevTrace(tuple(events), "success", "skillc", inputs={"k": k})
        out.append((trace, Alignment(trace.id, tuple(e.state for e in events))))
    return out


class Clock:
    """Wall and CPU seconds of a block (CPU time is what a busy shared machine distorts least)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def replay_all(m: Machine, items: list[tuple[DevTrace, Alignment]]) -> tuple[dict[str, ReplayVerdict], Clock]:
    """Every trace replayed on `m`, and the time it took."""
    with Clock() as clock:
        verdicts = {t.id: replay_trace(m, t, a) for t, a in items}
    return verdicts, clock


def revalidate(name: str, old: Machine, new_text: str, items: list[tuple[DevTrace, Alignment]],
               before: dict[str, ReplayVerdict], index) -> dict[str, object]:
    """One edit re-validated both ways; the row of the table."""
    new = checked(new_text)
    full, full_clock = replay_all(new, items)
    by_id = {t.id: (t, a) for t, a in items}  # the archive's entries are keyed by id already
    with Clock() as inc_clock:
        chosen = affected(index, diff_machines(old, new))
        redo = {tid: replay_trace(new, *by_id[tid]) for tid in chosen}
    incremental = {tid: redo.get(tid, before[tid]) for tid in before}
    same = incremental == full
    return {"edit": name, "affected": len(chosen), "full": full_clock, "inc": inc_clock, "same": same,
            "ok": sum(v.ok for v in full.values())}


def chat_traces(n: int) -> str:
    """`n` chat transcripts of the full livemath procedure (write the letter, read it back), each its own question."""
    lines = []
    for k in range(n):
        letter = "ABCDE"[k % 5]
        calls = [("printf %s " + letter + " > answer.txt", {"stdout": "", "exit_code": 0}),
                 ("cat answer.txt", {"stdout": letter, "exit_code": 0})]
        messages: list[dict] = [{"role": "user", "content": f"Question {k}: which option is right?"}]
        for i, (command, result) in enumerate(calls):
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function",
                 "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]})
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(result)})
        lines.append(json.dumps({"messages": messages, "outcome": "success", "evidence": {"choice": letter,
                                 "readback": letter}, "inputs": {"question": f"Question {k}",
                                                                 "options": ["1", "2", "3", "4", "5"]}}))
    return "\n".join(lines) + "\n"


def refine_section(n: int) -> None:
    """Time refining examples/refine/livemath-partial.skm from `n` chat traces."""
    base = Path(__file__).resolve().parent.parent / "examples" / "refine" / "livemath-partial.skm"
    if not base.exists():
        print(f"\ntime to refine from {n} traces: not measured ({base.name} is missing)")
        return
    with tempfile.TemporaryDirectory() as folder:
        machine = Path(folder) / base.name
        shutil.copy(base, machine)
        shutil.copy(base.parent.parent / "livemath" / "SKILL.md", Path(folder) / "SKILL.md")
        traces = Path(folder) / "traces.jsonl"
        traces.write_text(chat_traces(n), encoding="utf-8")
        with Clock() as clock:
            result = refine(RefineOptions(str(machine), (str(traces),)))
        seconds = clock.wall
        grown = [len(m.states) if (m := skillc.load(t, path=str(machine)).machine) is not None else 0
                 for t in (result.before or "", result.after or "")]
    statuses: dict[str, int] = {}
    for summary in result.summaries:
        statuses[summary.status] = statuses.get(summary.status, 0) + 1
    errors = [d for d in result.diagnostics if d.is_error]
    counts = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    print(f"\ntime to refine {base.name} from {n} chat traces: {seconds:.2f} s wall, {clock.cpu:.2f} s CPU "
          f"({seconds / n * 1e3:.0f} ms a trace); states {grown[0]} -> {grown[1]}; " + counts
          + (f"; {len(errors)} errors, first: {errors[0].code} {errors[0].message}" if errors else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=30, help="steps per trace (router + chain)")
    ap.add_argument("--branches", type=int, default=40)
    args = ap.parse_args()
    text = machine_text(args.branches, args.steps)
    old = checked(text)
    items = traces(args.traces, args.branches, args.steps)
    before, first = replay_all(old, items)
    with Clock() as indexing:
        index = build_index((tid, v.path) for tid, v in before.items())
    assert all(v.ok for v in before.values()), next(v.reason for v in before.values() if not v.ok)
    print(f"archive: {args.traces} traces x {args.steps} steps, {len(old.states)} states; first replay "
          f"{first.cpu:.2f} s CPU ({first.cpu / (args.traces * args.steps) * 1e6:.1f} µs/step), index "
          f"{indexing.cpu * 1e3:.0f} ms CPU")
    local = text.replace('note == "stop" -> failed_run\n    -> s3_11', 'note == "halt" -> failed_run\n    -> s3_11')
    router = text.replace("    when route == b0 -> s0_0\n    when route == b1 -> s1_0\n",
                          "    when route == b1 -> s1_0\n    when route == b0 -> s0_0\n")
    assert local != text and router != text
    rows = [revalidate("local (a guard in one chain)", old, local, items, before, index),
            revalidate("router (edges every trace reads)", old, router, items, before, index)]
    print(f"\n{'edit':<36} {'affected':>9} {'full CPU s':>11} {'incr. CPU s':>12} {'speed-up':>9} "
          f"{'full wall s':>12} {'incr. wall s':>13} {'same':>5} {'ok':>6}")
    for r in rows:
        full, inc = r["full"], r["inc"]
        assert isinstance(full, Clock) and isinstance(inc, Clock)
        speed = full.cpu / inc.cpu if inc.cpu else float("inf")
        print(f"{r['edit']:<36} {r['affected']:>9} {full.cpu:>11.2f} {inc.cpu:>12.3f} {speed:>8.1f}x "
              f"{full.wall:>12.2f} {inc.wall:>13.3f} {'yes' if r['same'] else 'NO':>5} {r['ok']:>6}")
    print("\ngoal: incremental <= 1 s and >= 20x faster than full for a local edit "
          "(an edit every trace passes through is replayed in full, as it must be)")
    refine_section(100)


if __name__ == "__main__":
    main()
