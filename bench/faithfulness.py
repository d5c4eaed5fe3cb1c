"""Faithfulness of `skillc build` on the requirements corpus: per skill correct/total, and the total.

Run: python bench/faithfulness.py [--verbose] [--corpus DIR]
     python bench/faithfulness.py --real [--split dev|test] [--verbose] [--recorded [--exchanges DIR]]

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

With `--real`, the corpus is the real skill folders of `corpus/`: for each id of
the split (`corpus/split.toml`, `--split dev` by default), `corpus/requirements/ID.req`
is scored against `corpus/skills/ID/SKILL.md`, the build getting the skill's
folder. A skill without a requirements file yet is listed and not counted; a
build that fails (or raises, or whose requirements file does not read against
the document) scores 0 of its requirements, with the reason. With `--recorded`,
the LLM compiler replays `corpus/llm/ID.exchange.jsonl`; `--exchanges DIR` replays
another play of the same requests instead (`corpus/llm-play2/`, the test half
answered a second time).

With `--reviewed [TABLE]` (with `--real`), a last column counts, besides the
requirements the measure found met, the failures a second look judged met
(verdict `Q` in `corpus/review/SPLIT-failures.tsv`: the machine does it, the
query missed it), only where the review saw the same machine (its
`machine_key`) and the same requirement; a skill whose machine changed since
is marked stale and gets nothing. How the review was made: corpus/review/README.md.

With `--judged [TABLE]` (with `--real`), a column gives the requirements a blind
judge found met (answer `Y` in `corpus/review/SPLIT-blind.tsv`: every requirement
of both builds judged without the measure's verdict), again only on the machine
judged, and the last line how often the measure and the judges agree.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.frontends.markdown import build
from skillc.frontends.markdown.faithfulness import (
    Score,
    accepted,
    judged_answers,
    load,
    load_judged,
    load_review,
    machine_key,
    reviewed_failures,
    score,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "frontends" / "markdown" / "faithfulness"
REAL = ROOT / "corpus"


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


def split_ids(real: Path, split: str) -> list[str]:
    """The skill ids of one half of the real corpus's split."""
    import tomllib

    return list(tomllib.loads((real / "split.toml").read_text(encoding="utf-8"))[split])


def count_requirements(req: Path) -> int:
    """How many requirements a file states (its non-blank, non-comment lines), without reading them."""
    lines = (ln.split(" #")[0].strip() for ln in req.read_text(encoding="utf-8").split("\n"))
    return sum(bool(ln) and not ln.startswith("#") for ln in lines)


class Measured(NamedTuple):
    """One real skill measured: correct/total, why it scored 0 ('' when it was scored), the verdicts, and the
    machine_key of the built machine ('' without one)."""

    ok: int
    total: int
    why: str
    verdict: Score | None
    key: str


def measure_real(folder: Path, req: Path, executor: object = None) -> Measured:
    """One real skill's score; never raises.

    `executor`: None for the offline build, else the LLM compiler's executor (a recorded exchange)."""
    total = count_requirements(req)
    doc = folder / "SKILL.md"
    try:
        requirements = load(req, doc)
    except Exception as exc:  # noqa: BLE001 - a bad requirements file scores 0, with the reason
        return Measured(0, total, f"requirements do not read: {exc}", None, "")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            result = build(folder, output=Path(tmp) / "built.skm", executor=executor)
    except Exception as exc:  # noqa: BLE001 - an internal error of the build scores 0
        return Measured(0, len(requirements), f"build raised {type(exc).__name__}: {exc}", None, "")
    if not result.ok or result.machine is None or result.text is None:
        errors = [d for d in result.diagnostics if d.is_error]
        codes = ", ".join(sorted({str(d.code) for d in errors})) or "no machine"
        first = f" ({errors[0].message})" if errors else ""
        return Measured(0, len(requirements), f"build failed: {codes}{first}", None, "")
    verdict = score(result.machine, requirements)
    return Measured(verdict.correct, verdict.total, "", verdict, machine_key(result.text))


def main_real(real: Path, split: str, verbose: bool, recorded: bool = False, exchanges: Path | None = None,
              reviewed: Path | None = None, judged: Path | None = None) -> int:
    """Score the offline build (or, with `recorded`, the LLM compiler replaying corpus/llm/ or `exchanges`) on one
    half."""
    from skillc.runtime.executors.recorded import RecordedExecutor

    correct = total = met = looked = 0
    review = load_review(reviewed) if reviewed is not None else None
    judges = load_judged(judged) if judged is not None else None
    agree: collections.Counter[tuple[bool, str]] = collections.Counter()
    played = exchanges or real / "llm"
    where = "corpus/llm/" if exchanges is None else str(exchanges)
    print(f"== {f'llm (recorded exchanges of {where})' if recorded else 'structural'}, real skills ({split})")
    print(f"{'skill':<40} {'correct':>7} {'total':>5}  {'share':>6}" + ("  reviewed" if review is not None else "")
          + ("  judged" if judges is not None else ""))
    for sid in split_ids(real, split):
        req = real / "requirements" / f"{sid}.req"
        if not req.is_file():
            print(f"{sid:<40} {'-':>7} {'-':>5}  no requirements file yet (not counted)")
            continue
        executor = None
        if recorded:
            exchange = played / f"{sid}.exchange.jsonl"
            if not exchange.is_file():
                print(f"{sid:<40} {'-':>7} {'-':>5}  no recorded exchange (not counted)")
                continue
            executor = RecordedExecutor(exchange)
        ok, n, why, verdict, key = measure_real(real / "skills" / sid, req, executor)
        drift = getattr(executor, "card_drift", 0)
        why = why + (f"  (replies given to an older language card: {drift} requests)" if drift else "")
        correct += ok
        total += n
        share = f"{100 * ok / n:5.1f}%" if n else "   -  "
        extra = ""
        if review is not None:
            plus = accepted(sid, key, verdict.verdicts, review) if verdict is not None else []
            met += ok + len(plus)
            looked += len(reviewed_failures(sid, key, verdict.verdicts, review)) if verdict is not None else 0
            seen = any(r.skill == sid and r.machine == key for r in review)
            stale = ok < n and not seen and any(r.skill == sid for r in review)
            extra = f"  {ok + len(plus):>8}" + ("  (review stale: another machine)" if stale else "")
        if judges is not None:
            answers = judged_answers(sid, key, verdict.verdicts, judges) if verdict is not None else []
            if verdict is not None:
                agree.update(zip((v.ok for v in verdict.verdicts), answers))
            if answers:
                extra += f"  {answers.count('Y'):>6}"
            else:
                extra += "       -" + ("  (judged another machine)" if any(j.skill == sid for j in judges) else "")
        print(f"{sid:<40} {ok:>7} {n:>5}  {share}{extra}" + (f"  {why}" if why else ""))
        if verbose and verdict is not None:
            for v in verdict.verdicts:
                if not v.ok:
                    print(f"    FAIL {v.requirement.text}\n         {v.why}")
    overall = 100 * correct / total if total else 100.0
    print(f"{'total':<40} {correct:>7} {total:>5}  {overall:5.1f}%"
          + (f"  {met:>8}  ({100 * met / total if total else 100.0:.1f}%: {looked} of the {total - correct} failures "
             "reviewed on these machines, those judged Q counted met)" if review is not None else ""))
    if judges is not None:
        seen = sum(agree.values())
        said = {a: sum(n for (_, x), n in agree.items() if x == a) for a in ("Y", "N", "X", "-")}
        print(f"judged: {said['Y']}/{seen} met by the judges on the machines they judged; the measure agrees on "
              f"{agree[(True, 'Y')] + agree[(False, 'N')]} of {seen} (met, judged N: {agree[(True, 'N')]}; failed, "
              f"judged Y: {agree[(False, 'Y')]}; judged X: {said['X']}; no answer: {said['-']})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--verbose", "-v", action="store_true", help="print every failed requirement")
    parser.add_argument("--llm-replies", type=Path, default=None)
    parser.add_argument("--real", action="store_true", help="score the real skill folders of corpus/ instead")
    parser.add_argument("--split", choices=("dev", "test"), default="dev", help="with --real: which half")
    parser.add_argument("--recorded", action="store_true",
                        help="with --real: the LLM compiler replaying the recorded exchanges of corpus/llm/")
    parser.add_argument("--exchanges", type=Path, default=None,
                        help="with --recorded: replay the exchanges of this folder instead of corpus/llm/")
    parser.add_argument("--reviewed", nargs="?", type=Path, const=Path(), default=None, metavar="TABLE",
                        help="with --real: a column counting also the failures a review judged met (Q), from TABLE "
                             "(default corpus/review/SPLIT-failures.tsv), where it reviewed the same machine")
    parser.add_argument("--judged", nargs="?", type=Path, const=Path(), default=None, metavar="TABLE",
                        help="with --real: a column of the requirements a blind judge found met, from TABLE (default "
                             "corpus/review/SPLIT-blind.tsv), where it judged the same machine")
    parser.add_argument("--real-corpus", type=Path, default=REAL, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.real:
        table = args.reviewed
        if table == Path():
            table = args.real_corpus / "review" / f"{args.split}-failures.tsv"
        judged = args.judged
        if judged == Path():
            judged = args.real_corpus / "review" / f"{args.split}-blind.tsv"
        return main_real(args.real_corpus, args.split, args.verbose, args.recorded, args.exchanges, table, judged)
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
                      f"{', '.join(sorted({str(d.code) for d in built.diagnostics if d.is_error}))}")
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
