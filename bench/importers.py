"""Importers: import + check time (a 100-state ASL file, a 50-node LangGraph) and findings on the corpora.

Run: python bench/importers.py [--repeat N]

The statelint columns: `spec` is the number of problems awslabs/statelint's own specs expect for the
equivalent fixture; `port` is what the Python port of statelint (`pip install statelint`) reports, when
it is installed. skillc's columns count its errors and warnings (notes are left out).
"""

from __future__ import annotations

import argparse
import collections
import json
import operator
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Literal, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from skillc.diagnostics import Severity, SourceFile
from skillc.frontends.importers.asl import check_asl

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "frontends" / "importers" / "corpus"


def asl_definition(states: int) -> dict:
    """A definition of about `states` states: task chains with retries and catches, typed choices, waits, a
    bounded polling loop in the state data, and a Parallel state every 25 states."""
    out: dict[str, dict] = {}
    i = 0
    while len(out) < states - 2:
        t, c, w = f"Task{i}", f"Choice{i}", f"Wait{i}"
        nxt = f"Task{i + 1}"
        out[t] = {"Type": "Task", "Resource": f"arn:aws:lambda:us-east-1:1:function:f{i}",
                  "ResultPath": f"$.r{i}", "Next": c,
                  "Retry": [{"ErrorEquals": ["Lambda.TooManyRequestsException"], "MaxAttempts": 3}],
                  "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Failed"}]}
        out[c] = {"Type": "Choice", "Choices": [
            {"Variable": f"$.r{i}.status", "StringEquals": "DONE", "Next": nxt},
            {"And": [{"Variable": f"$.r{i}.progress", "NumericGreaterThan": 0},
                     {"Variable": f"$.r{i}.progress", "NumericLessThan": 100}], "Next": w}],
            "Default": "Failed"}
        out[w] = {"Type": "Wait", "Seconds": 5, "Next": t}
        if i % 8 == 7:
            out[f"Fan{i}"] = {"Type": "Parallel", "ResultPath": f"$.fan{i}", "Next": nxt, "Branches": [
                {"StartAt": f"B{i}x", "States": {f"B{i}x": {"Type": "Pass", "End": True}}},
                {"StartAt": f"B{i}y", "States": {f"B{i}y": {"Type": "Task", "Resource": "arn:aws:lambda:b",
                                                            "End": True}}}]}
            out[c]["Choices"][0]["Next"] = f"Fan{i}"
        i += 1
    last = f"Task{i}"
    for st in out.values():
        if st.get("Next") == last or any(r.get("Next") == last for r in st.get("Choices", [])):
            break
    out[last] = {"Type": "Succeed"}
    out["Failed"] = {"Type": "Fail", "Error": "Failed"}
    return {"StartAt": "Task0", "States": out}


def time_asl(states: int, repeat: int) -> tuple[int, float, float, int]:
    """(states, median ms, best ms, findings) for a generated definition."""
    text = json.dumps(asl_definition(states), indent=2)
    times, found = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        _imported, checked = check_asl(SourceFile.from_text("bench.asl.json", text), as_json=True)
        times.append((time.perf_counter() - t0) * 1000)
        found = len([d for d in checked.diagnostics if d.severity is not Severity.NOTE])
    total = len(json.loads(text)["States"])
    return total, statistics.median(times), min(times), found


class _State(TypedDict):
    question: str
    draft: str
    verdict: str
    tries: int
    notes: Annotated[list[str], operator.add]


def _work(state: _State):
    return {"draft": "x", "notes": ["n"]}


def _route(state: _State) -> Literal["retry", "next"]:
    return "retry" if state["tries"] < 3 else "next"


def langgraph_builder(nodes: int):
    """A chain of `nodes` nodes; every fifth node routes back to the previous one while a counter allows."""
    from langgraph.graph import END, START, StateGraph

    b = StateGraph(_State)
    for i in range(nodes):
        b.add_node(f"n{i}", _work)
    b.add_edge(START, "n0")
    for i in range(nodes - 1):
        if i % 5 == 4:
            b.add_conditional_edges(f"n{i}", _route, {"retry": f"n{i - 1}", "next": f"n{i + 1}"})
        else:
            b.add_edge(f"n{i}", f"n{i + 1}")
    b.add_edge(f"n{nodes - 1}", END)
    return b


def time_langgraph(nodes: int, repeat: int) -> tuple[int, float, float, int] | None:
    try:
        from skillc.frontends.importers.langgraph import check
        builder = langgraph_builder(nodes)
    except ImportError:
        return None
    times, found = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        checked = check(builder)
        times.append((time.perf_counter() - t0) * 1000)
        found = len([d for d in checked.diagnostics if d.severity is not Severity.NOTE])
    return nodes, statistics.median(times), min(times), found


def _port():
    try:
        from statelint.linter import Linter
    except ImportError:
        return None
    return Linter.validate


def _skillc_codes(text: str, name: str) -> list[str]:
    checked = check_asl(SourceFile.from_text(name, text), as_json=name.endswith(".json"))[1]
    return sorted(str(d.code) for d in checked.diagnostics if d.severity is not Severity.NOTE)


def corpus_rows():
    """(corpus, name, statelint spec count or None, port count or None, skillc codes)."""
    port = _port()
    for case in yaml.safe_load((CORPUS / "statelint.yaml").read_text(encoding="utf-8")):
        text = json.dumps(case["definition"], indent=2)
        yield ("statelint", case["name"], case["statelint"], len(port(case["definition"])) if port else None,
               _skillc_codes(text, case["name"] + ".asl.json"))
    for path in sorted((CORPUS / "own").iterdir()):
        text = path.read_text(encoding="utf-8")
        parsed = yaml.safe_load(text)
        yield ("own", path.name, None, len(port(parsed)) if port else None, _skillc_codes(text, path.name))


def report_corpus() -> None:
    rows = list(corpus_rows())
    have_port = any(r[3] is not None for r in rows)
    print(f"\n{'corpus':<10} {'case':<58} {'spec':>4} {'port':>4}  skillc")
    for corpus, name, spec, port, found in rows:
        print(f"{corpus:<10} {name:<58} {'' if spec is None else spec:>4} {'' if port is None else port:>4}  "
              f"{' '.join(found) or '-'}")
    for corpus in ("statelint", "own"):
        mine = [r for r in rows if r[0] == corpus]
        by_code = collections.Counter(c for r in mine for c in r[4])
        print(f"\n{corpus}: {len(mine)} cases; skillc findings by code: "
              + (", ".join(f"{c} {k}" for c, k in sorted(by_code.items())) or "none"))
        for label, col in (("statelint spec", 2), ("statelint port", 3)):
            if col == 3 and not have_port:
                print("  statelint port: not installed (pip install statelint) — not compared")
                continue
            pairs = [(r[col] > 0, bool(r[4])) for r in mine if r[col] is not None]
            if not pairs:
                continue
            both = sum(a and b for a, b in pairs)
            neither = sum(not a and not b for a, b in pairs)
            only_skillc = sum(b and not a for a, b in pairs)
            only_other = sum(a and not b for a, b in pairs)
            print(f"  vs {label}: agree {both + neither}/{len(pairs)} (both flag {both}, both clean {neither}); "
                  f"only skillc flags {only_skillc}; only statelint flags {only_other}")
        extra = [r for r in mine if r[3] is not None and r[3] == 0 and r[4]]
        if extra:
            print("  skillc finds more where the port reports nothing: " + ", ".join(r[1] for r in extra))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    check_asl(SourceFile.from_text("w.asl.json", '{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}'), as_json=True)
    print(f"{'graph':<26} {'size':>6} {'median ms':>10} {'best ms':>9} {'findings':>9}")
    for size in (10, 100, 400):
        n, med, best, found = time_asl(size, args.repeat)
        print(f"{'ASL (JSON)':<26} {n:>6} {med:>10.1f} {best:>9.1f} {found:>9}")
    for size in (10, 50, 200):
        row = time_langgraph(size, args.repeat)
        if row is None:
            print(f"{'LangGraph':<26} {'(langgraph not installed)':>30}")
            break
        n, med, best, found = row
        print(f"{'LangGraph StateGraph':<26} {n:>6} {med:>10.1f} {best:>9.1f} {found:>9}")
    report_corpus()


if __name__ == "__main__":
    main()
