"""`skillc conform`: align native transcripts to a machine and report the rules each one broke.

No model is replayed and no tool runs: every transcript file is imported by refine's trace import
(`load_traces`: skillc run traces of any mode, chat transcripts, Claude Code `stream-json` logs), its tool calls
are read in the machine's spelling (`normalize`), its events aligned to states by refine's aligner (`align`) and
the aligned run judged against the machine's rules and success evidence (`rules.judge`). Each violation is also a
coded diagnostic (SKM860–SKM864) at the event's line in the transcript file, with the rule's line in the machine
as a related location, so the SARIF log points at both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from skillc.conform import codes
from skillc.conform.rules import Judgement, Violation, excerpt, judge
from skillc.diagnostics.code import Code
from skillc.diagnostics.diagnostic import Diagnostic, Label, make
from skillc.diagnostics.files import FileProblem, open_input
from skillc.diagnostics.source import SourceFile, Span
from skillc.improve.events import DevTrace
from skillc.improve.refine.align import align
from skillc.improve.refine.traces import load_traces
from skillc.improve.spelling import Spelling, normalize
from skillc.ir.machine import Machine

_CODES: dict[str, Code] = {"required": codes.REQUIRED_OPERATION_SKIPPED, "order": codes.OPERATION_OUT_OF_ORDER,
                           "forbid": codes.FORBIDDEN_OPERATION_PERFORMED, "ends": codes.RUN_ENDED_AGAINST_RULE,
                           "evidence": codes.SUCCESS_WITHOUT_EVIDENCE}


@attrs.frozen
class TranscriptReport:
    """One transcript: where it came from, what it shows, the state of each event, what it broke."""

    source: str
    number: int  # 1-based position of the transcript in its file (a chat file holds one per line)
    format: str
    mode: str | None
    outcome: str
    events: int
    states: tuple[str | None, ...]  # the state each event was aligned to (None: it realises no operation)
    judgement: Judgement
    spellings: tuple[Spelling, ...] = ()

    @property
    def violations(self) -> tuple[Violation, ...]:
        return self.judgement.violations

    @property
    def ok(self) -> bool:
        """No rule broken."""
        return not self.judgement.violations

    @property
    def name(self) -> str:
        """`FILE` for a file's only transcript, `FILE#N` for one of several."""
        return self.source if self.number == 0 else f"{self.source}#{self.number}"

    def to_json(self) -> dict[str, object]:
        """The transcript's report as the JSON report writes it."""
        return {"source": self.source, "number": self.number, "format": self.format, "mode": self.mode,
                "outcome": self.outcome, "events": self.events, "states": list(self.states), "ok": self.ok,
                "violations": [v.to_json() for v in self.violations],
                "not_judged": [{"rule": u.head, "reason": u.reason} for u in self.judgement.unjudged],
                "spellings": [str(s) for s in self.spellings]}


@attrs.frozen
class ConformReport:
    """Every transcript's report, the files' import problems (SKM800–SKM806) and the violations as diagnostics
    (SKM860–SKM865)."""

    machine: str
    transcripts: tuple[TranscriptReport, ...]
    problems: tuple[Diagnostic, ...]
    findings: tuple[Diagnostic, ...] = ()

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """The import problems, then the findings."""
        return self.problems + self.findings

    @property
    def broken(self) -> int:
        """Transcripts that broke at least one rule."""
        return sum(not t.ok for t in self.transcripts)

    @property
    def violations(self) -> int:
        return sum(len(t.violations) for t in self.transcripts)


def conform_trace(machine: Machine, trace: DevTrace, number: int = 0) -> TranscriptReport:
    """Align one development trace to the machine and judge it (nothing is replayed)."""
    spelled, spellings = normalize(machine, trace)
    aligned = align(machine, spelled)
    states = aligned.alignment.states
    judged = judge(machine, spelled, states)
    if spellings:  # excerpts show the events as the transcript wrote them
        judged = attrs.evolve(judged, violations=tuple(
            attrs.evolve(v, excerpt=excerpt(trace.events[v.event])) if v.event is not None else v
            for v in judged.violations))
    return TranscriptReport(trace.source, number, trace.format, trace.mode, trace.outcome, len(trace.events),
                            states, judged, spellings)


def conform_files(machine: Machine, paths: Sequence[str | Path], *, fmt: str | None = None) -> ConformReport:
    """Conform every transcript of every file; bad files and records are diagnostics, never exceptions."""
    reports: list[TranscriptReport] = []
    problems: list[Diagnostic] = []
    findings: list[Diagnostic] = []
    for path in paths:
        traces, found = load_traces(path, fmt)
        problems += found
        source = _source(path) if traces else None
        several = len(traces) > 1
        for i, trace in enumerate(traces, 1):
            report = conform_trace(machine, trace, i if several else 0)
            reports.append(report)
            findings += violation_diagnostics(machine, report, source)
    return ConformReport(machine.name, tuple(reports), tuple(problems), tuple(findings))


def _source(path: str | Path) -> SourceFile | None:
    """The transcript file's text, for spans at its lines (None when it cannot be read again)."""
    try:
        text = open_input(path).decode("utf-8", errors="replace").removeprefix("\ufeff")
    except FileProblem:
        return None
    return SourceFile.from_text(str(path), text)


def _line_span(source: SourceFile | None, line: int) -> Span | None:
    if source is None or line <= 0 or line > len(source.line_starts):
        return None
    start = source.line_starts[line - 1]
    return Span(source, start, start + len(source.line_text(line)))


def violation_diagnostics(machine: Machine, report: TranscriptReport,
                          source: SourceFile | None) -> Iterable[Diagnostic]:
    """Each violation as its coded diagnostic (at the event's line; the rule's own line related), then the notes
    for the rules not judged."""
    for v in report.violations:
        rule = machine.rules[v.rule] if v.rule is not None else None
        related = [Label(rule.span, f"the rule: {_quoted(rule.quote)}")] if rule is not None and rule.span else []
        notes = [f"{report.name}, event {v.event}: {v.excerpt}"] if v.event is not None else []
        if rule is not None and rule.provenance is not None:
            notes.append(f"the rule quotes {rule.provenance}: {_quoted(rule.quote)}")
        elif rule is not None:
            notes.append(f"the rule quotes: {_quoted(rule.quote)}")
        yield make(_CODES[v.kind], f"{v.head}: {v.message}", _line_span(source, v.line), label=v.kind,
                   secondary=related, notes=notes)
    for u in report.judgement.unjudged:
        yield make(codes.RULE_NOT_JUDGED, f"{u.head} is not judged on {report.name}: {u.reason}",
                   _line_span(source, 1))


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'
