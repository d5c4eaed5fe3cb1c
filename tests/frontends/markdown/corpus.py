"""The real corpus as the corpus tests read it: the split, each skill scored, and the figures docs/build.md gives."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "corpus"
SPLIT = tomllib.loads((CORPUS / "split.toml").read_text(encoding="utf-8"))


#: The recorded replays, in a process of their own, as `bench/faithfulness.py --recorded` and `skillc build` run them.
#: Z3 spends a varying number of resource units on the same formula depending on the process's history, so after
#: other test files (or ~170 builds) a capability question of `expo__eas-simulator` once ran out of its budget and
#: the warning changed the request (SKM346). Such warnings are no longer sent to the model (`solver = undecided`,
#: docs/checks.md), but a verdict that flips between decided and refuted would still change one: a fresh process
#: gives every replay the history its recording had.
REPLAY = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench.faithfulness import measure_real
from skillc.frontends.markdown.faithfulness import accepted, judged_answers, load_judged, load_review
from skillc.runtime.executors.recorded import RecordedExecutor
corpus, played, blind, out = Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), {}
review = [r for half in ("dev", "test") for r in load_review(corpus / "review" / f"{half}-failures.tsv")]
judged = load_judged(blind)
for sid in sys.argv[5:]:
    executor = RecordedExecutor(played / f"{sid}.exchange.jsonl")
    ok, total, why, verdict, key = measure_real(corpus / "skills" / sid, corpus / "requirements" / f"{sid}.req",
                                                executor)
    plus = len(accepted(sid, key, verdict.verdicts, review)) if verdict is not None else 0
    answers = judged_answers(sid, key, verdict.verdicts, judged) if verdict is not None else []
    out[sid] = [ok, total, why, ok + plus, answers, [v.ok for v in verdict.verdicts] if verdict is not None else []]
print(json.dumps(out))
"""


class Scored(NamedTuple):
    """One skill scored: correct, total, why it scored 0 ('' when it was scored), and correct with the failures its
    recorded review (corpus/review/) judged met on the same machine (the replays only; `ok` for an offline build);
    the blind judges' answer to each requirement of this machine (corpus/review/test-blind.tsv; none where they judged
    another machine) and the measure's verdict on each."""

    ok: int
    total: int
    why: str
    reviewed: int
    answers: list[str]
    met: list[bool]


def scores(ids: list[str], *, recorded: bool, play: str = "llm", blind: str = "test-blind.tsv") -> dict[str, Scored]:
    """Each skill scored: built offline here, or by the LLM compiler replaying its recording (of `corpus/PLAY/`) in a
    fresh process (`REPLAY`); the answers of the blind judgement `corpus/review/BLIND` on the same machines."""
    table = CORPUS / "review" / blind
    if recorded:
        r = subprocess.run([sys.executable, "-c", REPLAY, str(ROOT), str(CORPUS), str(CORPUS / play), str(table), *ids],
                           capture_output=True, text=True, timeout=280, check=False)
        assert r.returncode == 0, r.stderr[-3000:]
        return {sid: Scored(*row) for sid, row in json.loads(r.stdout).items()}
    sys.path.insert(0, str(ROOT))
    from bench.faithfulness import measure_real
    from skillc.frontends.markdown.faithfulness import judged_answers, load_judged

    judged = load_judged(table)
    out = {}
    for sid in ids:
        m = measure_real(CORPUS / "skills" / sid, CORPUS / "requirements" / f"{sid}.req", None)
        verdicts = m.verdict.verdicts if m.verdict is not None else ()
        out[sid] = Scored(m.ok, m.total, m.why, m.ok, judged_answers(sid, m.key, verdicts, judged),
                          [v.ok for v in verdicts])
    return out


def totals(scored: dict[str, Scored], reviewed: bool = False) -> list[int]:
    """[correct, total] over the skills; `reviewed`: correct with the review's Q verdicts met."""
    return [sum(s.reviewed if reviewed else s.ok for s in scored.values()), sum(s.total for s in scored.values())]


def judged(scored: dict[str, Scored]) -> list[int]:
    """[met by the judges, judged, the measure agreeing, met and judged N, failed and judged Y] over the machines the
    blind judges saw (corpus/review/test-blind.tsv)."""
    pairs = [(m, a) for s in scored.values() for m, a in zip(s.met, s.answers)]
    agree = sum((m and a == "Y") or (not m and a == "N") for m, a in pairs)
    return [sum(a == "Y" for _, a in pairs), len(pairs), agree, sum(m and a == "N" for m, a in pairs),
            sum(not m and a == "Y" for m, a in pairs)]


#: docs/build.md's row of the blind judgement (`.format(build)`): the measure's [correct, total], then the judges'
#: met, the agreement, met by the measure and judged N, failed by it and judged Y.
BLIND_ROW = r"\| {} \| ([\d,]+)/([\d,]+) \| ([\d,]+)/[\d,]+ \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|"


def documented(pattern: str) -> list[int]:
    """The [correct, total] docs/build.md gives where `pattern` (two number groups) matches its text."""
    text = " ".join((ROOT / "docs" / "build.md").read_text(encoding="utf-8").split())
    shown = re.search(pattern, text)
    assert shown is not None, f"docs/build.md has no figure matching {pattern}"
    return [int(x.replace(",", "")) for x in shown.groups()]
