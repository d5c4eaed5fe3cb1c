"""The bench report: tables and charts from results rows, as Markdown and as one self-contained HTML page.

`build_report(rows)` computes everything as typed records (so tests assert numbers,
not text): per mode × executor the success and RFC rates with Wilson intervals and the
mean tokens, steps and latency; mean tokens per task; mean tokens against the horizon
where tasks have one; and, for every pair of modes on the same executor, a paired
comparison over the same (task, repeat) cells — the exact McNemar test on success and
seeded bootstrap intervals of the success and token differences. `to_markdown` and
`to_html` render it; the HTML page embeds its charts (matplotlib, Agg) as base64 PNG
and references nothing outside itself.

A row whose `success` is None (the cell failed before it could be verified) counts in
`cells` and `errors` but not in the success rate; an RFC of None (unverifiable) is left
out of the RFC rate the same way, and the table shows both denominators.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.bench.results import Row
from skillc.bench.stats import Interval, McNemar, mcnemar_pairs, paired_bootstrap, wilson
from skillc.diagnostics import Diagnostic, codes, make
from skillc.diagnostics.files import FileProblem, write_output

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@attrs.frozen
class GroupSummary:
    """One mode × executor: rates with intervals and mean costs."""

    mode: str
    executor: str
    cells: int
    successes: int
    verified: int
    success: Interval
    compliant: int
    judged: int
    rfc: Interval
    mean_prompt_tokens: float
    mean_completion_tokens: float
    mean_total_tokens: float
    mean_steps: float
    mean_latency_s: float
    errors: int

    @property
    def label(self) -> str:
        """"mode / executor", for charts and columns."""
        return f"{self.mode} / {self.executor}"


@attrs.frozen
class TaskTokens:
    """The mean total tokens of one task in one mode × executor."""

    task: str
    horizon: int | None
    mode: str
    executor: str
    mean_total_tokens: float


@attrs.frozen
class HorizonPoint:
    """The mean total tokens of a mode × executor over the tasks of one horizon."""

    horizon: int
    mode: str
    executor: str
    cells: int
    mean_total_tokens: float


@attrs.frozen
class Comparison:
    """Mode `first` against mode `second` on one executor, over the cells both ran."""

    executor: str
    first: str
    second: str
    pairs: int
    first_successes: int
    second_successes: int
    mcnemar: McNemar
    success_difference: Interval
    token_pairs: int
    token_difference: Interval


@attrs.frozen
class Report:
    """Everything the report shows."""

    summaries: tuple[GroupSummary, ...]
    tokens: tuple[TaskTokens, ...]
    horizons: tuple[HorizonPoint, ...]
    comparisons: tuple[Comparison, ...]
    confidence: float = 0.95


def _mean(values: Iterable[float]) -> float:
    """The mean, NaN for none."""
    items = list(values)
    return sum(items) / len(items) if items else math.nan


def _ordered(values: Iterable[str]) -> list[str]:
    """Distinct values in order of first appearance."""
    return list(dict.fromkeys(values))


def _summary(mode: str, executor: str, rows: Sequence[Row], confidence: float) -> GroupSummary:
    """The summary of one group's rows."""
    verified = [r.success for r in rows if r.success is not None]
    judged = [r.rfc for r in rows if r.rfc is not None]
    return GroupSummary(
        mode, executor, len(rows), sum(verified), len(verified), wilson(sum(verified), len(verified), confidence),
        sum(judged), len(judged), wilson(sum(judged), len(judged), confidence),
        _mean(r.prompt_tokens for r in rows), _mean(r.completion_tokens for r in rows),
        _mean(r.total_tokens for r in rows), _mean(r.steps for r in rows), _mean(r.latency_s for r in rows),
        sum(1 for r in rows if r.error is not None))


def _groups(rows: Sequence[Row]) -> list[tuple[str, str]]:
    """The (mode, executor) pairs in order of first appearance."""
    return list(dict.fromkeys((r.cell.mode, r.cell.executor) for r in rows))


def _task_tokens(rows: Sequence[Row]) -> list[TaskTokens]:
    """Mean tokens per task and group."""
    out = []
    for task in _ordered(r.cell.task for r in rows):
        mine = [r for r in rows if r.cell.task == task]
        horizon = next((r.horizon for r in mine if r.horizon is not None), None)
        for mode, executor in _groups(mine):
            group = [r for r in mine if (r.cell.mode, r.cell.executor) == (mode, executor)]
            out.append(TaskTokens(task, horizon, mode, executor, _mean(r.total_tokens for r in group)))
    return out


def _horizon_points(rows: Sequence[Row]) -> list[HorizonPoint]:
    """Mean tokens per horizon and group, horizons ascending."""
    with_horizon = [r for r in rows if r.horizon is not None]
    points = []
    for mode, executor in _groups(with_horizon):
        group = [r for r in with_horizon if (r.cell.mode, r.cell.executor) == (mode, executor)]
        for horizon in sorted({r.horizon for r in group if r.horizon is not None}):
            at = [r for r in group if r.horizon == horizon]
            points.append(HorizonPoint(horizon, mode, executor, len(at), _mean(r.total_tokens for r in at)))
    return points


def _compare(rows: Sequence[Row], executor: str, first: str, second: str, confidence: float, resamples: int,
             seed: int) -> Comparison:
    """The paired comparison of two modes over the (task, repeat) cells both have."""
    def by_cell(mode: str) -> dict[tuple[str, int], Row]:
        return {(r.cell.task, r.cell.repeat): r for r in rows if r.cell.mode == mode and r.cell.executor == executor}

    a, b = by_cell(first), by_cell(second)
    common = [k for k in a if k in b]
    pairs = [(bool(a[k].success), bool(b[k].success)) for k in common
             if a[k].success is not None and b[k].success is not None]
    success = paired_bootstrap([float(x) for x, _ in pairs], [float(y) for _, y in pairs], resamples=resamples,
                               confidence=confidence, seed=seed)
    tokens = paired_bootstrap([a[k].total_tokens for k in common], [b[k].total_tokens for k in common],
                              resamples=resamples, confidence=confidence, seed=seed)
    return Comparison(executor, first, second, len(pairs), sum(x for x, _ in pairs), sum(y for _, y in pairs),
                      mcnemar_pairs(pairs), success, len(common), tokens)


def build_report(rows: Sequence[Row], *, confidence: float = 0.95, resamples: int = 10_000,
                 seed: int = 0) -> Report:
    """The report of a bench's rows."""
    summaries = []
    for mode, executor in _groups(rows):
        group = [r for r in rows if (r.cell.mode, r.cell.executor) == (mode, executor)]
        summaries.append(_summary(mode, executor, group, confidence))
    comparisons = []
    for executor in _ordered(r.cell.executor for r in rows):
        modes = _ordered(r.cell.mode for r in rows if r.cell.executor == executor)
        for i, first in enumerate(modes):
            for second in modes[i + 1:]:
                comparisons.append(_compare(rows, executor, first, second, confidence, resamples, seed))
    return Report(tuple(summaries), tuple(_task_tokens(rows)), tuple(_horizon_points(rows)), tuple(comparisons),
                  confidence)


# ------------------------------------------------------------------ text


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f}%"


def _ci(i: Interval, scale: Callable[[float], str] = _pct) -> str:
    return "–" if math.isnan(i.low) else f"[{scale(i.low)}, {scale(i.high)}]"


def _num(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:,.1f}"


def _signed(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:+,.1f}"


def _signed_pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:+.1f} pp"


def _p(x: float) -> str:
    return f"{x:.3g}"


def summary_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """The header and cells of the per-group table."""
    level = f"{100 * report.confidence:g}% CI"
    head = ["mode", "executor", "cells", "success", level, "RFC", level, "mean prompt tokens",
            "mean completion tokens", "mean total tokens", "mean steps", "mean latency (s)", "errors"]
    body = [[s.mode, s.executor, str(s.cells), f"{s.successes}/{s.verified} ({_pct(s.success.estimate)})",
             _ci(s.success), f"{s.compliant}/{s.judged} ({_pct(s.rfc.estimate)})", _ci(s.rfc),
             _num(s.mean_prompt_tokens), _num(s.mean_completion_tokens), _num(s.mean_total_tokens),
             _num(s.mean_steps), f"{s.mean_latency_s:.3f}", str(s.errors)] for s in report.summaries]
    return head, body


def comparison_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """The header and cells of the paired comparison table."""
    level = f"{100 * report.confidence:g}% CI"
    head = ["executor", "A", "B", "pairs", "A succeeded", "B succeeded", "only A", "only B", "McNemar exact p",
            "mid-p", f"success A−B [{level}]", f"tokens A−B [{level}]"]
    body = [[c.executor, c.first, c.second, str(c.pairs), str(c.first_successes), str(c.second_successes),
             str(c.mcnemar.b), str(c.mcnemar.c), _p(c.mcnemar.p), _p(c.mcnemar.mid_p),
             f"{_signed_pct(c.success_difference.estimate)} {_ci(c.success_difference, _signed_pct)}",
             f"{_signed(c.token_difference.estimate)} {_ci(c.token_difference, _signed)}"]
            for c in report.comparisons]
    return head, body


def tokens_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """Mean total tokens: one row per task, one column per group."""
    groups = _ordered(f"{t.mode} / {t.executor}" for t in report.tokens)
    body = []
    for task in _ordered(t.task for t in report.tokens):
        mine = {f"{t.mode} / {t.executor}": t for t in report.tokens if t.task == task}
        horizon = next(iter(mine.values())).horizon
        body.append([task, "" if horizon is None else str(horizon)]
                    + [_num(mine[g].mean_total_tokens) if g in mine else "" for g in groups])
    return ["task", "horizon", *groups], body


def horizon_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """Mean total tokens: one row per horizon, one column per group."""
    groups = _ordered(f"{p.mode} / {p.executor}" for p in report.horizons)
    body = []
    for horizon in sorted({p.horizon for p in report.horizons}):
        at = {f"{p.mode} / {p.executor}": p for p in report.horizons if p.horizon == horizon}
        body.append([str(horizon)] + [_num(at[g].mean_total_tokens) if g in at else "" for g in groups])
    return ["horizon", *groups], body


def _markdown_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """A GitHub Markdown table."""
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(head), line(["---"] * len(head)), *(line(r) for r in body)]) + "\n"


def _sections(report: Report) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    """The report's tables with their titles (the horizon table only when tasks have a horizon)."""
    sections = [("Success and RFC per mode and executor", summary_table(report)),
                ("Paired comparison between modes (same tasks and repeats)", comparison_table(report)),
                ("Mean total tokens per task", tokens_table(report))]
    if report.horizons:
        sections.append(("Mean total tokens against the horizon", horizon_table(report)))
    return sections


def to_markdown(report: Report, title: str = "skillc bench") -> str:
    """The report as Markdown (tables only; the charts are in the HTML page)."""
    parts = [f"# {title}\n"]
    for heading, (head, body) in _sections(report):
        parts.append(f"## {heading}\n\n{_markdown_table(head, body)}")
    return "\n".join(parts)


# ------------------------------------------------------------------ charts and HTML


def _png(draw: Callable[[Axes], None], size: tuple[float, float]) -> str:
    """A chart drawn by `draw(axes)` as a base64 PNG data URI."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=100, layout="constrained")
    draw(fig.subplots())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _errors(intervals: Sequence[Interval]) -> list[list[float]]:
    """Asymmetric error bars (below, above) for matplotlib, 0 where undefined."""
    def safe(x: float) -> float:
        return 0.0 if math.isnan(x) else x

    return [[max(0.0, safe(i.estimate) - i.low) for i in intervals],
            [max(0.0, i.high - safe(i.estimate)) for i in intervals]]


def success_chart(report: Report) -> str:
    """Bars of success and RFC per group with their confidence intervals."""
    def draw(ax: Axes) -> None:
        import numpy as np

        s = report.summaries
        x = np.arange(len(s))
        for offset, name, rates in ((-0.2, "success", [g.success for g in s]), (0.2, "RFC", [g.rfc for g in s])):
            heights = [0.0 if math.isnan(i.estimate) else i.estimate for i in rates]
            ax.bar(x + offset, heights, 0.4, yerr=_errors(rates), capsize=4, label=name)
        ax.set_xticks(x, [chart_label(g.label) for g in s], rotation=20, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"rate ({100 * report.confidence:g}% Wilson CI)")
        ax.legend()

    return _png(draw, (max(4.0, 1.4 * len(report.summaries) + 2), 3.6))


#: The longest group label a chart shows; longer ones are cut in the middle (tables keep them whole).
MAX_LABEL = 52


def chart_label(group: str) -> str:
    """A group's label short enough for a chart axis or legend: file paths in executor specs by their name only."""
    short = re.sub(r"(?<=:)(?:[^ ?:]*/)+(?=[^/ ?]+)", "", group)
    return short if len(short) <= MAX_LABEL else short[:MAX_LABEL // 2 - 1] + "…" + short[-(MAX_LABEL // 2 - 1):]


#: Above this many tasks the tokens chart shows each group's distribution over tasks, not one bar group per task
#: (hundreds of bar groups are unreadable and take seconds to draw).
MAX_TASK_BARS = 40


def tokens_chart(report: Report) -> str:
    """Grouped bars of mean total tokens per task; with many tasks, a box plot of them per mode and executor."""
    tasks = len({t.task for t in report.tokens})
    if tasks > MAX_TASK_BARS:
        return _png(lambda ax: _tokens_boxes(ax, report), (max(4.0, 1.6 * len(report.summaries) + 2), 3.6))

    def draw(ax: Axes) -> None:
        import numpy as np

        tasks = _ordered(t.task for t in report.tokens)
        groups = _ordered(f"{t.mode} / {t.executor}" for t in report.tokens)
        width = 0.8 / max(1, len(groups))
        for j, group in enumerate(groups):
            values = {t.task: t.mean_total_tokens for t in report.tokens if f"{t.mode} / {t.executor}" == group}
            ax.bar(np.arange(len(tasks)) + (j - (len(groups) - 1) / 2) * width,
                   [values.get(t, 0.0) for t in tasks], width, label=chart_label(group))
        ax.set_xticks(np.arange(len(tasks)), tasks, rotation=30, ha="right")
        _tokens_axis(ax, "mean total tokens")
        ax.legend()

    return _png(draw, (min(16.0, max(4.0, 0.5 * tasks + 3)), 3.6))


def _tokens_boxes(ax: Axes, report: Report) -> None:
    """One box per mode / executor over its tasks' mean total tokens."""
    groups = _ordered(f"{t.mode} / {t.executor}" for t in report.tokens)
    data = [[t.mean_total_tokens for t in report.tokens if f"{t.mode} / {t.executor}" == g] for g in groups]
    ax.boxplot(data)
    ax.set_xticks(range(1, len(groups) + 1), [chart_label(g) for g in groups], rotation=15, ha="right")
    _tokens_axis(ax, "mean total tokens per task")


def _tokens_axis(ax: Axes, label: str) -> None:
    """A token count's axis: from 0 (a count is never negative, and all-zero bars must not sit mid-axis)."""
    ax.set_ylabel(label)
    ax.set_ylim(bottom=0, top=max(1.0, ax.get_ylim()[1]))


def horizon_chart(report: Report) -> str:
    """Mean total tokens against the horizon, one line per group."""
    def draw(ax: Axes) -> None:
        for group in _ordered(f"{p.mode} / {p.executor}" for p in report.horizons):
            points = [p for p in report.horizons if f"{p.mode} / {p.executor}" == group]
            ax.plot([p.horizon for p in points], [p.mean_total_tokens for p in points],
                    marker="o", label=chart_label(group))
        ax.set_xlabel("horizon")
        _tokens_axis(ax, "mean total tokens")
        ax.legend()

    return _png(draw, (5.5, 3.6))


def _html_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """An HTML table, every cell escaped."""
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>\n" for r in body)
    return f"<table>\n<thead><tr>{th}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n"


_STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}"
          "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.25em .6em;"
          "text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}img{max-width:100%}")


def to_html(report: Report, title: str = "skillc bench") -> str:
    """The report as one HTML page with its charts embedded (no scripts, styles or images from elsewhere)."""
    charts = {"Success and RFC per mode and executor": success_chart(report),
              "Mean total tokens per task": tokens_chart(report)}
    if report.horizons:
        charts["Mean total tokens against the horizon"] = horizon_chart(report)
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
             f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
             f"<h1>{html.escape(title)}</h1>\n"]
    for heading, (head, body) in _sections(report):
        parts.append(f"<h2>{html.escape(heading)}</h2>\n")
        if heading in charts:
            parts.append(f"<img alt=\"{html.escape(heading)}\" src=\"{charts[heading]}\">\n")
        parts.append(_html_table(head, body))
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def write_report(report: Report, folder: str | Path, title: str = "skillc bench") -> Diagnostic | None:
    """Write report.md and report.html into `folder` (created if needed), each atomically; SKM901 if it cannot."""
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_output(out / "report.md", to_markdown(report, title))
        write_output(out / "report.html", to_html(report, title))
    except (FileProblem, OSError) as exc:
        return make(codes.IO_ERROR, f"cannot write the report into {out}: {getattr(exc, 'strerror', None) or exc}")
    return None
