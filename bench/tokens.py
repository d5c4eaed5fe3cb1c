"""Prompt tokens of the warehouse procedure: machine mode versus the native transcript of the same run.

    python bench/tokens.py [--events 25,50,100,200] [--shelves 500]

Each run uses the oracle executor (correct answers from what each state sees)
and real tools; tokens are counted with the local model's tokenizer
(llama.cpp, vocabulary only). The native transcript is rebuilt from the same
run: the whole SKILL.md and tool list, then every action and observation so far,
as a native agent would see them at each step (structured tool arguments are
shown by name only, which keeps the native figure conservative).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "warehouse"))

import skillc  # noqa: E402
from bench.warehouse_oracle import WarehouseOracle  # noqa: E402
from env import Warehouse, accuracy  # noqa: E402
from skillc.runtime import Interpreter, RunOptions, ToolBox  # noqa: E402
from skillc.runtime.trace import read_trace  # noqa: E402


def tokenizer():
    """Token counter of the bundled local model (vocabulary only: no weights are loaded)."""
    from llama_cpp import Llama

    from skillc.runtime.executors.local import default_model_path, quiet_llama

    quiet_llama()
    vocab = Llama(model_path=default_model_path(), vocab_only=True, verbose=True)
    return lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def run_once(events: int, shelves: int, folder: Path):
    wh = Warehouse(shelves=shelves, events=events, seed=events)
    records, log = wh.write(folder)
    machine_file = ROOT / "examples" / "warehouse" / "warehouse.skm"
    machine = skillc.check(machine_file).machine
    prompts = []

    class Recording(WarehouseOracle):
        def complete(self, request):
            prompts.append(request)
            return super().complete(request)

    tools = ToolBox.default([str(ROOT / "examples" / "warehouse" / "env.py")], cwd=str(folder))
    trace = folder / "trace.jsonl"
    interp = Interpreter(machine, Recording(), tools, RunOptions(trace=trace, max_steps=20 * events + 50),
                         machine_file.read_text())
    result = interp.run({"events_path": str(log), "records_path": str(records),
                         "state_path": str(folder / "state.json")})
    return machine, result, prompts, trace, accuracy(folder / "state.json", wh.expected)


def native_prompt_tokens(machine, trace: Path, count) -> list[int]:
    """Tokens of the prompt a native agent would send at each step of the same run.

    The native prompt only grows: the skill, the tool list and the inputs, then
    every action and observation so far. Its size at each step is the base plus
    the tokens of every piece appended before it (each piece is tokenised once).
    """
    skill = (ROOT / "examples" / "warehouse" / "SKILL.md").read_text()
    tools = "\n".join(f"- {t.name}" for t in machine.tools.values())
    header, steps, _ = read_trace(trace)
    size = count(skill + "\n\nTools:\n" + tools + "\n\nInputs:\n" + json.dumps(header["inputs"]))
    sizes = []
    for s in steps:
        sizes.append(size)
        call = s.get("tool_call")
        if call:  # structured arguments (the whole state) are shown by name only: a conservative native estimate
            call = {"tool": call["tool"], "args": {k: v if not isinstance(v, (dict, list)) else f"<{k}>"
                                                   for k, v in call["args"].items()}}
        action = {"step": s["state"], "call": call, "output": s.get("output")}
        observation = s.get("tool_result")
        size += count("\n" + json.dumps(action) + ("\nObservation: " + json.dumps(observation) if observation else ""))
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--events", default="25,50,100,200")
    ap.add_argument("--shelves", type=int, default=500)
    args = ap.parse_args()
    count = tokenizer()
    print(f"{'T':>5} {'steps':>6} {'mean prompt (machine)':>22} {'max':>6} {'total (machine)':>16} "
          f"{'mean prompt (native)':>21} {'total (native)':>15} {'ratio':>7} {'accuracy':>9} {'s':>6}")
    for t in (int(x) for x in args.events.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            machine, result, prompts, trace, acc = run_once(t, args.shelves, Path(tmp))
            elapsed = time.perf_counter() - start
            machine_tokens = [count("\n".join(m["content"] for m in p.messages)) for p in prompts]
            native_tokens = native_prompt_tokens(machine, trace, count)
        mt, nt = sum(machine_tokens), sum(native_tokens)
        print(f"{t:>5} {result.steps:>6} {statistics.mean(machine_tokens):>22.0f} {max(machine_tokens):>6} {mt:>16,} "
              f"{statistics.mean(native_tokens):>21,.0f} {nt:>15,} {nt / mt:>6.1f}x {acc['shelf_accuracy']:>8.1%} "
              f"{elapsed:>6.1f}")
        assert result.outcome == "success", result


if __name__ == "__main__":
    main()
