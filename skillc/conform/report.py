"""The reports of `skillc conform`: text for people, one JSON document for programs (SARIF comes from the
diagnostics, `skillc.diagnostics.render`)."""

from __future__ import annotations

from skillc.conform.conform import ConformReport, TranscriptReport
from skillc.diagnostics.render import to_json


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def transcript_text(t: TranscriptReport, verbose: bool = False) -> list[str]:
    """The lines of one transcript's report."""
    head = f"{t.name} ({t.format}{f' {t.mode}' if t.mode and t.format == 'skillc' else ''}, {t.outcome}, " \
           f"{_plural(t.events, 'event')})"
    lines = [f"{head}: " + ("conforms" if t.ok else f"breaks {_plural(len(t.violations), 'rule')}")]
    for v in t.violations:
        quote = f' "{v.quote}"' if v.quote else ""
        lines.append(f"  {v.head}{quote}" if v.kind != "evidence" else "  success evidence")
        where = f"event {v.event}" + (f" (line {v.line})" if v.line else "") if v.event is not None else "no event"
        lines.append(f"    at {where}: {v.excerpt}" if v.excerpt else f"    at {where}")
        lines.append(f"    {v.message}")
    if verbose:
        aligned = ", ".join(f"{i}:{s}" for i, s in enumerate(t.states) if s is not None)
        lines.append(f"  aligned: {aligned or 'nothing'}")
        lines += [f"  read {s}" for s in t.spellings]
        lines += [f"  not judged: {u.head} ({u.reason})" for u in t.judgement.unjudged]
    elif t.judgement.unjudged:
        lines.append(f"  ({_plural(len(t.judgement.unjudged), 'rule')} not judged: the transcript cannot show them; "
                     "-v says which)")
    return lines


def render_text(report: ConformReport, verbose: bool = False) -> str:
    """Every transcript's report, one block each."""
    return "\n".join(line for t in report.transcripts for line in transcript_text(t, verbose)) + \
        ("\n" if report.transcripts else "")


def summary(report: ConformReport) -> str:
    """The one line on stderr: how many transcripts conform."""
    n = len(report.transcripts)
    unread = sum(d.is_error for d in report.problems)
    tail = f" ({_plural(unread, 'import error')}: see above)" if unread else ""
    if n == 0:
        return f"no transcript of `{report.machine}` was read{tail}"
    if report.broken == 0:
        return f"{_plural(n, 'transcript')} of `{report.machine}`: all conform{tail}"
    return (f"{_plural(n, 'transcript')} of `{report.machine}`: {report.broken} broke "
            f"{_plural(report.violations, 'rule')}, {n - report.broken} conform{tail}")


def to_document(report: ConformReport) -> dict[str, object]:
    """The whole report as one JSON object (what `--format json` prints)."""
    return {"machine": report.machine, "transcripts": [t.to_json() for t in report.transcripts],
            "summary": {"transcripts": len(report.transcripts), "broken": report.broken,
                        "violations": report.violations},
            "diagnostics": [to_json(d) for d in report.problems]}
