"""Labelled transcripts: the violations a transcript really has, and the precision and recall of a conform run.

A label file sits beside its transcript file (`run.jsonl` → `run.labels.json`) and lists, per transcript of the
file, the violations it really has:

```json
{"violations": [{"rule": "required read_back"}, {"rule": "order backup before apply", "event": 2}]}
{"transcripts": [{"violations": []}, {"violations": [{"rule": "evidence"}]}]}
```

The first form is for a file with one transcript, the second for a file with several, in order. `rule` is the
rule as written without its quotation (`order pick before write`, `forbid wipe_server`, `ends show_log in
failed`) or `evidence` for the success evidence; `quote` (a part of the quotation) tells two rules with the same
head apart; `event`, when given, is the index of the event that must be reported. A reported violation matches a
label with the same rule (and quotation and event, where the label gives them); each label matches once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import attrs

from skillc.conform.conform import TranscriptReport
from skillc.conform.rules import Violation


@attrs.frozen
class Label:
    """One violation a transcript really has."""

    rule: str
    quote: str | None = None
    event: int | None = None

    def matches(self, v: Violation) -> bool:
        return v.head == self.rule and (self.quote is None or (v.quote is not None and self.quote in v.quote)) \
            and (self.event is None or v.event == self.event)


class LabelError(ValueError):
    """A label file that does not have the shape above (the message says what is wrong)."""


def labels_path(transcript: str | Path) -> Path:
    """Where the labels of a transcript file are kept."""
    p = Path(transcript)
    return p.with_name(p.name.removesuffix(".jsonl") + ".labels.json")


def read_labels(path: str | Path) -> list[list[Label]]:
    """The labels of every transcript of a file, in order (LabelError when the file is not a label file)."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LabelError(f"{path}: {exc}") from None
    if not isinstance(obj, dict):
        raise LabelError(f"{path}: a label file is a JSON object")
    groups = obj.get("transcripts", [obj])
    if not isinstance(groups, list):
        raise LabelError(f"{path}: `transcripts` must be a list")
    out = []
    for group in groups:
        items = group.get("violations") if isinstance(group, dict) else None
        if not isinstance(items, list):
            raise LabelError(f"{path}: each transcript needs a list of `violations`")
        labels = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("rule"), str):
                raise LabelError(f"{path}: each violation needs a `rule`")
            event = item.get("event")
            quote = item.get("quote")
            if not (event is None or isinstance(event, int)) or not (quote is None or isinstance(quote, str)):
                raise LabelError(f"{path}: `event` is an index and `quote` a text")
            labels.append(Label(item["rule"], quote, event))
        out.append(labels)
    return out


@attrs.frozen
class Score:
    """Reported violations against the labels: true positives, false positives, false negatives."""

    transcripts: int = 0
    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0
    misses: tuple[str, ...] = ()  # what went wrong, one line per false positive or negative

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        real = self.true_positives + self.false_negatives
        return self.true_positives / real if real else 1.0

    def __add__(self, other: Score) -> Score:
        return Score(self.transcripts + other.transcripts, self.true_positives + other.true_positives,
                     self.false_positives + other.false_positives, self.false_negatives + other.false_negatives,
                     self.misses + other.misses)


def score(report: TranscriptReport, labels: Sequence[Label]) -> Score:
    """One transcript's reported violations against its labels."""
    left = list(labels)
    false_positives = []
    for v in report.violations:
        hit = next((lab for lab in left if lab.matches(v)), None)
        if hit is None:
            false_positives.append(f"{report.name}: reported {v.head} at event {v.event}, not labelled")
        else:
            left.remove(hit)
    misses = false_positives + [f"{report.name}: missed {lab.rule}" + (f" at event {lab.event}" if lab.event
                                                                        is not None else "") for lab in left]
    return Score(1, len(report.violations) - len(false_positives), len(false_positives), len(left), tuple(misses))
