"""The labelled fixtures: how many, in which formats, and `skillc conform`'s precision and recall on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.conform import FIXTURES, fixture_sets, measure
from skillc.conform.labels import labels_path, read_labels
from skillc.improve.refine.traces import load_traces


def test_at_least_thirty_labelled_transcripts_in_every_format() -> None:
    formats: dict[str, int] = {}
    violations = {"required": 0, "order": 0, "forbid": 0, "ends": 0, "evidence": 0}
    clean = transcripts = 0
    for _, _, files in fixture_sets():
        for f in files:
            traces, problems = load_traces(f)
            assert not [d for d in problems if d.is_error], f
            labels = read_labels(labels_path(f))
            assert len(labels) == len(traces), f
            for trace, found in zip(traces, labels):
                key = trace.format if trace.format != "skillc" else f"skillc {trace.mode}"
                formats[key] = formats.get(key, 0) + 1
                transcripts += 1
                clean += not found
                for label in found:
                    violations[label.rule.split()[0]] += 1
    assert transcripts >= 30
    assert set(formats) == {"skillc native", "skillc machine", "chat", "claude-code"}
    assert clean >= 10
    assert all(n >= 1 for n in violations.values()), violations


def test_every_label_file_says_why() -> None:
    for f in FIXTURES.rglob("*.labels.json"):
        assert json.loads(f.read_text(encoding="utf-8")).get("why"), f


def test_precision_and_recall_stay_at_least_ninety_percent() -> None:
    scores = measure()
    tp = sum(s.true_positives for s in scores.values())
    fp = sum(s.false_positives for s in scores.values())
    fn = sum(s.false_negatives for s in scores.values())
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    misses = [m for s in scores.values() for m in s.misses]
    assert precision >= 0.9, misses
    assert recall >= 0.9, misses


@pytest.mark.parametrize("name", ["chat-backup-cp", "chat-echo-write"])
def test_the_known_misses_are_the_aligners_first_word_rule(name: str) -> None:
    """The two false positives on the fixtures come from alignment by the command's first word (docs/conform.md):
    if one of them goes away, the docs and this list are out of date."""
    scores = measure()
    misses = " ".join(m for s in scores.values() for m in s.misses)
    assert name in misses


def test_the_generator_is_what_wrote_the_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`generate.py` writes exactly the committed files (labels included): the fixtures are reproducible."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", FIXTURES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    (tmp_path / "deploy").mkdir()
    module.main()
    for written in tmp_path.rglob("*.json*"):
        committed = FIXTURES / written.relative_to(tmp_path)
        assert committed.read_text(encoding="utf-8") == written.read_text(encoding="utf-8"), committed
