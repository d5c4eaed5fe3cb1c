"""Faithfulness of `skillc build` on the requirements corpus: per skill correct/total, and the total.

Run: python bench/faithfulness.py [--verbose] [--corpus DIR]

Each `NAME.req` of the corpus (tests/frontends/markdown/faithfulness/) lists the control
requirements of `NAME.md`, written from the document alone (a `# document: PATH`
first line names another document). The document is built with the offline
structural compiler and every requirement is answered by a graph or dataflow
query over the built machine (skillc/frontends/markdown/faithfulness.py).
With `--llm-replies DIR` (the corpus has `llm/`), documents that have recorded
LLM replies (`DIR/NAME.json`, a scripted-executor script for the `build_rules`
and `build_draft` calls) are also built by the LLM compiler replaying them, and
scored the same way. The recorded replies are hand-edited drafts, not the
output of a real model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.frontends.markdown import build  # noqa: E402
from skillc.frontends.markdown.faithfulness import load, score  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "frontends" / "markdown" / "faithfulness"


def document_of(req: Path) -> Path:
    """The document a requirements file is about."""
    first = req.read_text(encoding="utf-8").split("\n", 1)[0]
    if first.startswith("# document:"):
        return (req.parent / first.split(":", 1)[1].strip()).resolve()
    return req.with_suffix(".md")


def measure(req: Path, executor=None):
    """(score, build result) of one corpus entry; score None when the build failed."""
    doc = document_of(req)
    with tempfile.TemporaryDirectory() as tmp:
        result = build(doc, output=Path(tmp) / "built.skm", executor=executor)
    if not result.ok or result.machine is None:
        return None, result
    return score(result.machine, load(req, doc)), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--verbose", "-v", action="store_true", help="print every failed requirement")
    parser.add_argument("--llm-replies", type=Path, default=None)
    args = parser.parse_args(argv)
    reqs = sorted(args.corpus.glob("*.req"))
    modes = [("structural", None)]
    if args.llm_replies is not None:
        modes.append(("llm (recorded)", args.llm_replies))
    for mode, replies in modes:
        correct = total = 0
        print(f"== {mode}")
        print(f"{'skill':<32} {'correct':>7} {'total':>5}  {'share':>6}")
        for req in reqs:
            executor = None
            if replies is not None:
                recorded = replies / (req.stem + ".json")
                if not recorded.is_file():
                    continue
                from skillc.runtime.executors.scripted import ScriptedExecutor

                executor = ScriptedExecutor(json.loads(recorded.read_text(encoding="utf-8")))
            result, built = measure(req, executor)
            if result is None:
                n = len(load(req, document_of(req)))
                total += n
                print(f"{req.stem:<32} {0:>7} {n:>5}  build failed: "
                      f"{', '.join(sorted({d.code for d in built.diagnostics if d.is_error}))}")
                continue
            correct += result.correct
            total += result.total
            print(f"{req.stem:<32} {result.correct:>7} {result.total:>5}  {100 * result.correct / result.total:5.1f}%")
            if args.verbose:
                for v in result.verdicts:
                    if not v.ok:
                        print(f"    FAIL {v.requirement.text}\n         {v.why}")
        share = 100 * correct / total if total else 100.0
        print(f"{'total':<32} {correct:>7} {total:>5}  {share:5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
