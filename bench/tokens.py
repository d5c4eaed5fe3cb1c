"""Prompt tokens of the warehouse procedure: machine mode versus a real native agent run, per horizon T.

    python bench/tokens.py [--events 25,50,100,200] [--shelves 500]
    python bench/tokens.py --livemath   # the first request of livemath's native and prompt-only baselines

Both runs use real tools (`examples/warehouse/env.py`, bash, python) in a fresh
folder and an oracle that answers correctly, so the figures are those of a
perfect model: machine mode with `WarehouseOracle` (each state answered from
what that state sees), native mode through `run_baseline` with
`NativeWarehouseOracle` (it reads the transcript and replies the next correct
tool call: read the line, look up its shelves, apply and save, then totals and
finish). Every request the runtime sends is counted with the local model's
tokenizer (llama.cpp, vocabulary only) exactly as the local executor would send
it: system turns merged into the first user turn, Gemma's chat template, BOS.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "warehouse"))

from env import Warehouse, accuracy  # type: ignore[import-not-found]  # noqa: E402

import skillc  # noqa: E402
from bench.warehouse_oracle import NativeWarehouseOracle, WarehouseOracle  # noqa: E402
from skillc.runtime import Interpreter, RunOptions, ToolBox  # noqa: E402
from skillc.runtime.baselines import run_baseline, skill_document  # noqa: E402
from skillc.runtime.interpreter import RunResult  # noqa: E402

MACHINE = ROOT / "examples" / "warehouse" / "warehouse.skm"
ENV = str(ROOT / "examples" / "warehouse" / "env.py")


class PromptTokens:
    """Tokens of a request's prompt as the local executor sends it (each turn tokenised once, then summed)."""

    def __init__(self) -> None:
        from skillc.runtime.executors.local import vocabulary

        self.vocab = vocabulary()
        self.cache: dict[tuple[str, str], int] = {}
        self.fixed = self._count("<start_of_turn>model\n", bos=True)  # BOS and the open model turn
        arch = self.vocab.metadata.get("general.architecture", "")
        self.context = int(self.vocab.metadata.get(f"{arch}.context_length", 0))  # the model's trained context

    def _count(self, text: str, bos: bool = False) -> int:
        return len(self.vocab.tokenize(text.encode("utf-8"), add_bos=bos, special=True))

    def text(self, text: str) -> int:
        """Tokens of a bare text (no template, no BOS), as LocalExecutor.count_tokens counts it."""
        return len(self.vocab.tokenize(text.encode("utf-8"), add_bos=False))

    def __call__(self, messages) -> int:
        from skillc.runtime.executors.local import merge_system

        total = self.fixed
        for m in merge_system(list(messages)):
            role = "model" if m["role"] == "assistant" else m["role"]
            key = (role, m["content"])
            if key not in self.cache:
                self.cache[key] = self._count(f"<start_of_turn>{role}\n{m['content']}<end_of_turn>\n")
            total += self.cache[key]
        return total

    def exact(self, messages) -> int:
        """The same count from the whole prompt, formatted by llama-cpp-python's Gemma template (a check)."""
        from llama_cpp.llama_chat_format import format_gemma

        from skillc.runtime.executors.local import merge_system

        return self._count(format_gemma(merge_system(list(messages))).prompt, bos=True)


def recording(executor_class: type) -> tuple[Any, list]:
    """An instance of the oracle class that keeps every request it answers."""
    seen: list = []

    class Recording(executor_class):
        def complete(self, request):
            seen.append(request)
            return super().complete(request)

    return Recording(), seen


def run_mode(mode: str, events: int, shelves: int, folder: Path) -> tuple[RunResult, list, dict]:
    """One run of `mode` on a fresh warehouse of `events` events; the result, the requests and the accuracy."""
    wh = Warehouse(shelves=shelves, events=events, seed=events)
    records, log = wh.write(folder)
    machine = skillc.check(MACHINE).machine
    assert machine is not None
    tools = ToolBox.default([ENV], cwd=str(folder))
    inputs = {"events_path": str(log), "records_path": str(records), "state_path": str(folder / "state.json")}
    options = RunOptions(trace=folder / f"{mode}.jsonl", max_steps=20 * events + 50)
    if mode == "machine":
        executor, requests = recording(WarehouseOracle)
        result = Interpreter(machine, executor, tools, options, MACHINE.read_text()).run(inputs)
    else:
        executor, requests = recording(NativeWarehouseOracle)
        result = run_baseline(machine, "native", executor, tools, options, inputs, skill_document(machine))
    return result, requests, accuracy(folder / "state.json", wh.expected)


def measure(events: int, shelves: int, count: PromptTokens) -> dict[str, tuple]:
    """Both modes at one horizon: (steps, prompt tokens per call, accuracy, seconds) per mode."""
    out = {}
    for mode in ("machine", "native"):
        # A fixed folder name: its path is in the prompts, so a random one would move the counts by a few tokens.
        # Held under a lock of its own: two processes measuring one horizon at once (the docs tests under xdist,
        # 500 shelves and 8) would otherwise share the folder and read each other's state.
        folder = Path(tempfile.gettempdir()) / f"skillc-tokens-{mode}-{events}"
        with open(folder.with_name(folder.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            shutil.rmtree(folder, ignore_errors=True)
            try:
                start = time.perf_counter()
                result, requests, acc = run_mode(mode, events, shelves, folder)
                elapsed = time.perf_counter() - start
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        assert result.outcome == "success", (mode, result)
        tokens = [count(r.messages) for r in requests]
        for i in {0, len(requests) // 2, len(requests) - 1}:  # the summed count is the whole prompt's count
            assert tokens[i] == count.exact(requests[i].messages), (mode, i)
        out[mode] = (result.steps, tokens, acc["shelf_accuracy"], elapsed)
    return out


def row(t: int, figures: dict[str, tuple], context: int) -> str:
    """One line of the table (`over`: native calls whose prompt is longer than the model's context)."""
    (ms, mt, macc, msec), (ns, nt, nacc, nsec) = figures["machine"], figures["native"]
    over = sum(1 for n in nt if n > context)
    return (f"{t:>5} {ms:>6} {statistics.mean(mt):>8.0f} {max(mt):>7,} {sum(mt):>11,} {ns:>6} "
            f"{statistics.mean(nt):>8,.0f} {max(nt):>8,} {sum(nt):>13,} {over:>5} {sum(nt) / sum(mt):>7.1f}x "
            f"{macc:>6.0%} {nacc:>6.0%} {msec:>6.1f} {nsec:>6.1f}")


LIVEMATH = ROOT / "examples" / "livemath"


def baseline_request(mode: str, count: PromptTokens) -> tuple[int, int, int]:
    """Livemath's first baseline request on the bench's first task: (as sent, the system text, the inputs)."""
    from skillc.runtime.baselines import first_messages, offered_tools
    from skillc.runtime.interpreter import parse_inputs

    machine = skillc.check(LIVEMATH / "livemath.skm").machine
    assert machine is not None
    skill = skill_document(machine)
    task = json.loads((LIVEMATH / "bench" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[0])
    values = parse_inputs(machine, task["inputs"])
    system, user = first_messages(machine, mode, skill, offered_tools(machine, mode, skill), values)
    return count([system, user]), count.text(system["content"]), count.text(user["content"])


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", default="25,50,100,200")
    ap.add_argument("--shelves", type=int, default=500)
    ap.add_argument("--livemath", action="store_true",
                    help="count livemath's first native and prompt-only request instead (the bench's first task)")
    args = ap.parse_args(argv)
    count = PromptTokens()
    if args.livemath:
        out("livemath, first request of a baseline run on task lm-001: prompt tokens as the local executor sends it,")
        out("and the system text and the inputs message alone (no template, no BOS)")
        out(f"{'mode':<12} {'request':>8} {'system':>7} {'inputs':>7}")
        for mode in ("native", "prompt-only"):
            sent, system, inputs = baseline_request(mode, count)
            out(f"{mode:<12} {sent:>8,} {system:>7,} {inputs:>7,}")
        return
    out("prompt tokens per call (mean, max) and per run (total); machine: the interpreter, native: run_baseline;")
    out(f"over: native calls longer than the model's context ({count.context:,} tokens); ratio: total native / machine;"
        " acc: shelf accuracy; s: seconds")
    out(f"{'T':>5} {'steps':>6} {'mean':>8} {'max':>7} {'total':>11} {'steps':>6} {'mean':>8} {'max':>8} "
        f"{'total':>13} {'over':>5} {'ratio':>8} {'acc M':>6} {'acc N':>6} {'s M':>6} {'s N':>6}")
    out(f"{'':>5} {'--- machine ---':>34} {'------------- native -------------':>44}")
    for t in (int(x) for x in args.events.split(",")):
        out(row(t, measure(t, args.shelves, count), count.context))


if __name__ == "__main__":
    main()
