"""The LLM compiler's real exchanges on the corpus, replayed: every recording still answers every request of
today's build (a changed request is SKM346), and the faithfulness the docs report is what they give. The test half
replays in every run; the dev half (tuning material) with SKILLC_CORPUS_DEV=1 (another minute or two).

The replies were written by a capable model played by a helper that saw only the request files (tools/standin.py,
tools/record_corpus.py; corpus/llm/README.md says how). Re-record a skill whose request changed on purpose.
"""

from __future__ import annotations

import os

import pytest

from tests.frontends.markdown.corpus import (
    BLIND_ROW,
    CORPUS,
    SPLIT,
    Scored,
    documented,
    judged,
    scores,
    totals,
)

TEST_IDS = SPLIT["test"]


@pytest.fixture(scope="module")
def scored() -> dict[str, Scored]:
    return scores(TEST_IDS, recorded=True)


def test_every_corpus_skill_has_a_recorded_exchange() -> None:
    assert sorted(p.name.removesuffix(".exchange.jsonl") for p in (CORPUS / "llm").glob("*.exchange.jsonl")) \
        == sorted(TEST_IDS + SPLIT["dev"])


#: Recordings today's compiler asks other questions of, to re-record (tools/record_corpus.py) — each for a reason that
#: changed the build on purpose. Until then they count as failed builds (0 of their requirements) in the figure.
STALE: dict[str, str] = {}


def test_every_recording_replays_to_a_checked_machine(scored: dict[str, Scored]) -> None:
    failed = {sid: s.why for sid, s in scored.items() if s.why}
    assert {sid: code for sid, code in STALE.items() if code not in failed.get(sid, "")} == {}, failed
    assert {sid: why for sid, why in failed.items() if sid not in STALE} == {}


def test_the_docs_report_the_replayed_figure(scored: dict[str, Scored]) -> None:
    assert documented(r"LLM compiler replaying the recorded exchanges: ([\d,]+)/([\d,]+)") == totals(scored)


def test_the_docs_report_the_reviewed_figure(scored: dict[str, Scored]) -> None:
    """corpus/review/test-failures.tsv judged each failure of these machines; a machine that changed since gets none of
    its Q verdicts, so the figure falls back towards the measured one until the review is made again."""
    assert documented(r"reviewed figure on test: ([\d,]+)/([\d,]+)") == totals(scored, reviewed=True)


@pytest.mark.skipif(not os.environ.get("SKILLC_CORPUS_DEV"), reason="the dev half replays with SKILLC_CORPUS_DEV=1")
def test_the_dev_half_replays_to_the_documented_figure() -> None:
    scored = scores(SPLIT["dev"], recorded=True, blind="dev-blind.tsv")
    assert {sid: s.why for sid, s in scored.items() if s.why} == {}
    assert documented(r"dev \(28 skills, 413 requirements\) \| [^|]+ \| ([\d,]+)/([\d,]+)") == totals(scored)
    assert documented(r"reviewed figure on dev: ([\d,]+)/([\d,]+)") == totals(scored, reviewed=True)
    met, seen, agree, met_judged_n, failed_judged_y = judged(scored)  # corpus/review/dev-blind.tsv
    assert seen == totals(scored)[1]
    assert documented(BLIND_ROW.format("LLM, dev")) == [*totals(scored), met, agree, met_judged_n, failed_judged_y]


@pytest.mark.skipif(not os.environ.get("SKILLC_CORPUS_DEV"), reason="the second play replays with SKILLC_CORPUS_DEV=1")
def test_the_second_play_of_the_test_half_replays_to_the_documented_figure() -> None:
    """corpus/llm-play2/: the same requests answered again by other helpers, for the play-to-play spread."""
    assert sorted(p.name.removesuffix(".exchange.jsonl") for p in (CORPUS / "llm-play2").glob("*.exchange.jsonl")) \
        == sorted(TEST_IDS)
    scored = scores(TEST_IDS, recorded=True, play="llm-play2", blind="test-blind.play2.tsv")
    assert {sid: s.why for sid, s in scored.items() if s.why} == {}
    assert documented(r"second play of the test half: ([\d,]+)/([\d,]+)") == totals(scored)
    met, seen, agree, met_judged_n, failed_judged_y = judged(scored)  # corpus/review/test-blind.play2.tsv
    assert seen == totals(scored)[1]
    assert documented(BLIND_ROW.format("LLM, test, second play")) == [*totals(scored), met, agree, met_judged_n,
                                                                       failed_judged_y]


def test_the_two_passes_of_the_test_review_saw_the_same_failures_and_agree_as_documented() -> None:
    """test-failures.second.tsv is another pass over the same failures; docs/build.md gives the agreement."""
    from skillc.frontends.markdown.faithfulness import load_review

    first, second = (load_review(CORPUS / "review" / f"test-failures{tail}.tsv") for tail in ("", ".second"))
    verdicts = {(r.skill, r.machine, r.requirement): r.verdict for r in second}
    assert sorted(verdicts) == sorted((r.skill, r.machine, r.requirement) for r in first)
    agreed = sum(verdicts[(r.skill, r.machine, r.requirement)] == r.verdict for r in first)
    assert documented(r"agreed with the first on ([\d,]+) of ([\d,]+) verdicts") == [agreed, len(first)]


def test_the_docs_report_the_blind_judgement_of_these_machines(scored: dict[str, Scored]) -> None:
    """corpus/review/test-blind.tsv judged every requirement of these machines without the measure's verdict; a machine
    that changed since gets no answers, and the documented row stops matching until it is judged again."""
    met, seen, agree, met_judged_n, failed_judged_y = judged(scored)
    assert seen == totals(scored)[1]
    assert documented(BLIND_ROW.format("LLM, test")) == [*totals(scored), met, agree, met_judged_n, failed_judged_y]


def test_the_two_blind_passes_judged_the_same_machines_and_agree_as_documented() -> None:
    """test-blind.second.tsv: the same packets, dealt in another order to sixteen other judges."""
    from skillc.frontends.markdown.faithfulness import load_judged

    first, second = (load_judged(CORPUS / "review" / f"test-blind{tail}.tsv") for tail in ("", ".second"))
    answers = {(j.skill, j.build, j.machine, j.requirement): j.answer for j in second}
    assert sorted(answers) == sorted((j.skill, j.build, j.machine, j.requirement) for j in first)
    for build in ("llm", "offline"):
        mine = [j for j in first if j.build == build]
        agreed = sum(answers[(j.skill, j.build, j.machine, j.requirement)] == j.answer for j in mine)
        assert documented(rf"on the {build} machines the two blind passes agree on ([\d,]+) of ([\d,]+) answers") \
            == [agreed, len(mine)]
