"""The bench report: tables and charts from results rows, as Markdown and as one self-contained HTML page.

`build_report(rows)` computes everything as typed records (so tests assert numbers,
not text): per mode × executor the success and RFC rates with Wilson intervals and the
mean tokens, steps and latency; mean tokens per task; mean tokens against the horizon
where tasks have one; and, for every pair of modes on the same executor, a paired
comparison over the same (task, repeat) cells — the exact McNemar test on success and
seeded bootstrap intervals of the success and token differences. `to_markdown` and
`to_html` render it; the HTML page embeds its charts (matplotlib, Agg) as base64 PNG
and references nothing outside itself.

The page says when, by which skillc (version and git commit) and with which command it was built, on which
Python and platform (`ReportMeta`); tasks are listed in natural order (T25 before T100); wide tables scroll
inside their own box instead of widening the page, and the charts keep their labels and legends inside the
image and outside the data.

A row whose `success` is None (the cell failed before it could be verified) counts in
`cells` and `errors` but not in the success rate; an RFC of None (unverifiable) is left
out of the RFC rate the same way, and the table shows both denominators.
"""

from __future__ import annotations

import base64
import datetime
import html
import io
import math
import os
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.bench.results import Row
from skillc.bench.stats import Interval, McNemar, mcnemar_pairs, paired_bootstrap, wilson
from skillc.diagnostics import Diagnostic, codes, make
from skillc.diagnostics.files import FileProblem, write_output
from skillc.version import __version__

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


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders the numbers inside names by value: T25 before T100, lm-9 before lm-10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part.casefold())
                 for part in re.split(r"(\d+)", text) if part)


def _tasks(values: Iterable[str]) -> list[str]:
    """Distinct task ids in natural order."""
    return sorted(set(values), key=natural_key)


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
    for task in _tasks(r.cell.task for r in rows):
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
    for task in _tasks(t.task for t in report.tokens):
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


def machines_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """One line per machine under test (a `machine` or `machine:LABEL` group, and native beside them), short enough
    for a README table: success and RFC with their intervals, mean tokens, steps and seconds per cell."""
    head = ["build", "executor", "success", "RFC", "mean total tokens", "mean steps", "s/cell"]
    body = [[s.mode.partition(":")[2] or s.mode, s.executor,
             f"{_pct(s.success.estimate)} {_ci(s.success)} (n={s.verified})",
             f"{_pct(s.rfc.estimate)} {_ci(s.rfc)} (n={s.judged})", _num(s.mean_total_tokens), _num(s.mean_steps),
             f"{s.mean_latency_s:.3f}"]
            for s in report.summaries if s.mode.partition(":")[0] in ("machine", "native")]
    return head, body


def _markdown_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """A GitHub Markdown table."""
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(head), line(["---"] * len(head)), *(line(r) for r in body)]) + "\n"


def _sections(report: Report) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    """The report's tables with their titles (one line per machine only when several are compared, the horizon
    table only when tasks have a horizon)."""
    sections = [("Success and RFC per mode and executor", summary_table(report))]
    if len({s.mode for s in report.summaries if s.mode.startswith("machine:")}) > 1:  # several builds compared
        sections.append(("One line per machine under test (for a README table)", machines_table(report)))
    sections += [("Paired comparison between modes (same tasks and repeats)", comparison_table(report)),
                 ("Mean total tokens per task", tokens_table(report))]
    if report.horizons:
        sections.append(("Mean total tokens against the horizon", horizon_table(report)))
    return sections


def to_markdown(report: Report, title: str = "skillc bench", meta: ReportMeta | None = None) -> str:
    """The report as Markdown (tables only; the charts are in the HTML page), headed by `meta` when given."""
    parts = [f"# {title}\n"]
    if meta is not None:
        parts.append("".join(f"- {label}: " + (f"`{value}`" if label == "command" else value) + "\n"
                             for label, value in meta.rows()))
    for heading, (head, body) in _sections(report):
        parts.append(f"## {heading}\n\n{_markdown_table(head, body)}")
    return "\n".join(parts)


# ------------------------------------------------------------------ charts and HTML


def _png(draw: Callable[[Axes], None], size: tuple[float, float]) -> str:
    """A chart drawn by `draw(axes)` as a base64 PNG data URI."""
    from matplotlib.figure import Figure  # optional extra (skillc[bench])

    fig = Figure(figsize=size, dpi=100, layout="constrained")
    draw(fig.subplots())
    buffer = io.BytesIO()
    # "tight": the saved image grows to hold every label and the legend beside the axes, so nothing is cut off
    fig.savefig(buffer, format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _errors(intervals: Sequence[Interval]) -> list[list[float]]:
    """Asymmetric error bars (below, above) for matplotlib, 0 where undefined."""
    def safe(x: float) -> float:
        return 0.0 if math.isnan(x) else x

    return [[max(0.0, safe(i.estimate) - i.low) for i in intervals],
            [max(0.0, i.high - safe(i.estimate)) for i in intervals]]


def success_chart(report: Report) -> str:
    """Horizontal bars of success and RFC per group with their confidence intervals (one row per mode / executor,
    its label written out level on the left: long executor specs stay readable)."""
    def draw(ax: Axes) -> None:
        import numpy as np  # optional extra (skillc[bench], with matplotlib)

        s = report.summaries
        y = np.arange(len(s))
        for offset, name, rates in ((-0.2, "success", [g.success for g in s]), (0.2, "RFC", [g.rfc for g in s])):
            widths = [0.0 if math.isnan(i.estimate) else i.estimate for i in rates]
            ax.barh(y + offset, widths, 0.4, xerr=_errors(rates), capsize=3, label=name)
        ax.set_yticks(y, [chart_label(g.label) for g in s])
        ax.invert_yaxis()  # the first group on top, as in the table
        ax.set_xlim(0, 1.05)
        ax.set_xlabel(f"rate ({100 * report.confidence:g}% Wilson CI)")
        _legend_outside(ax)

    labels = [chart_label(g.label) for g in report.summaries]
    return _png(draw, (4.5 + _text_width(labels) + _text_width(["success"]), max(2.2, 0.55 * len(labels) + 1.2)))


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
        import numpy as np  # optional extra (skillc[bench], with matplotlib)

        tasks = _tasks(t.task for t in report.tokens)
        groups = _ordered(f"{t.mode} / {t.executor}" for t in report.tokens)
        width = 0.8 / max(1, len(groups))
        for j, group in enumerate(groups):
            values = {t.task: t.mean_total_tokens for t in report.tokens if f"{t.mode} / {t.executor}" == group}
            ax.bar(np.arange(len(tasks)) + (j - (len(groups) - 1) / 2) * width,
                   [values.get(t, 0.0) for t in tasks], width, label=chart_label(group))
        ax.set_xticks(np.arange(len(tasks)), tasks, rotation=30, ha="right", rotation_mode="anchor")
        _tokens_axis(ax, "mean total tokens")
        _legend_outside(ax)

    legend = _text_width(chart_label(f"{t.mode} / {t.executor}") for t in report.tokens)
    return _png(draw, (min(16.0, max(4.0, 0.5 * tasks + 3)) + legend, 3.6))


def _tokens_boxes(ax: Axes, report: Report) -> None:
    """One box per mode / executor over its tasks' mean total tokens."""
    groups = _ordered(f"{t.mode} / {t.executor}" for t in report.tokens)
    data = [[t.mean_total_tokens for t in report.tokens if f"{t.mode} / {t.executor}" == g] for g in groups]
    ax.boxplot(data)
    ax.set_xticks(range(1, len(groups) + 1), [chart_label(g) for g in groups], rotation=15, ha="right")
    _tokens_axis(ax, "mean total tokens per task")


def _text_width(labels: Iterable[str]) -> float:
    """About how many inches the longest of `labels` takes at matplotlib's default 10 pt (room for a legend or
    tick labels beside the axes, so that constrained layout never squeezes the axes to nothing)."""
    return 0.075 * max((len(label) for label in labels), default=0) + 0.5


def _legend_outside(ax: Axes) -> None:
    """The legend to the right of the axes, where it can never cover a bar, a point or an error bar."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)


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
        _legend_outside(ax)

    return _png(draw, (5.5 + _text_width(chart_label(f"{p.mode} / {p.executor}") for p in report.horizons), 3.6))


#: A word longer than this (an executor spec, a path) may break inside; shorter ones never do.
LONG_CELL = 24


def _cell(tag: str, text: str) -> str:
    """One escaped table cell. A long word (an executor spec, a path) may break after `/ ? & :` and, failing that,
    anywhere, instead of widening the table; other text wraps at spaces only."""
    if max((len(word) for word in text.split()), default=0) <= LONG_CELL:
        return f"<{tag}>{html.escape(text)}</{tag}>"
    parts = re.split(r"(?<=[/?&:,])", text)
    return f'<{tag} class="long">' + "<wbr>".join(html.escape(p) for p in parts if p) + f"</{tag}>"


def _html_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """An HTML table, every cell escaped, in a box that scrolls sideways when the table is wider than the page."""
    th = "".join(_cell("th", h) for h in head)
    rows = "".join("<tr>" + "".join(_cell("td", c) for c in r) + "</tr>\n" for r in body)
    return (f"<div class=\"scroll\">\n<table>\n<thead><tr>{th}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n"
            f"</div>\n")


@attrs.frozen
class ReportMeta:
    """Where a report comes from: when and by which skillc it was built, with which command, on what."""

    made: str
    version: str
    commit: str
    command: str
    python: str
    platform: str
    cpus: int | None

    @classmethod
    def current(cls, argv: Sequence[str] | None = None) -> ReportMeta:
        """This process: now (UTC), this skillc and its git commit, the command line it was started with."""

        made = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        python = f"{platform.python_implementation()} {platform.python_version()}"
        return cls(made, __version__, source_commit(), command_line(sys.argv if argv is None else argv), python,
                   platform.platform(), os.cpu_count())

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs as the page shows them."""
        cpus = "" if self.cpus is None else f", {self.cpus} CPUs"
        return [("built", self.made), ("skillc", f"{self.version} (commit {self.commit})"),
                ("command", self.command), ("environment", f"{self.python} on {self.platform}{cpus}")]


def command_line(argv: Sequence[str]) -> str:
    """The command as typed: the console script by its name (`skillc bench …`), `python -m skillc` for the module."""
    if not argv:
        return "(unknown)"
    program = Path(argv[0]).name
    if program == "__main__.py" and Path(argv[0]).parent.name == "skillc":
        program = "python -m skillc"
    elif program.endswith(".py"):
        program = shlex.join(["python", argv[0]])
    return " ".join([program, *(shlex.quote(a) for a in argv[1:])])


def source_commit() -> str:
    """The git commit of the skillc being run, marked when its tracked files were changed since; or why not known."""
    here = Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            r = subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True, timeout=10,
                               stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None

    commit = git("rev-parse", "--short=12", "HEAD")
    if commit is None:
        return "unknown: not run from a git checkout"
    changed = git("status", "--porcelain", "--untracked-files=no")
    return commit if changed == "" else f"{commit}, with uncommitted changes"


_STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:80em;line-height:1.4}"
          "h1{overflow-wrap:anywhere}"
          ".scroll{overflow-x:auto;max-width:100%;margin:1em 0}"
          "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25em .6em;"
          "text-align:right;vertical-align:top}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}"
          ".long{overflow-wrap:anywhere;min-width:7em}"
          "img{max-width:100%;height:auto}"
          "dl.meta{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2em 1em;color:#333}"
          "dl.meta dt{font-weight:600}dl.meta dd{margin:0;overflow-wrap:anywhere}"
          "code{font-family:ui-monospace,monospace;font-size:.92em;white-space:pre-wrap;overflow-wrap:anywhere}")


def to_html(report: Report, title: str = "skillc bench", meta: ReportMeta | None = None) -> str:
    """The report as one HTML page with its charts embedded (no scripts, styles or images from elsewhere);
    `meta` (when, which skillc, which command, which environment) heads the page when given."""
    charts = {"Success and RFC per mode and executor": success_chart(report),
              "Mean total tokens per task": tokens_chart(report)}
    if report.horizons:
        charts["Mean total tokens against the horizon"] = horizon_chart(report)
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
             f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
             f"<h1>{html.escape(title)}</h1>\n"]
    if meta is not None:
        items = "".join(f"<dt>{html.escape(label)}</dt><dd>"
                        + (f"<code>{html.escape(value)}</code>" if label == "command" else html.escape(value))
                        + "</dd>\n" for label, value in meta.rows())
        parts.append(f"<dl class=\"meta\">\n{items}</dl>\n")
    for heading, (head, body) in _sections(report):
        parts.append(f"<h2>{html.escape(heading)}</h2>\n")
        if heading in charts:
            parts.append(f"<img alt=\"{html.escape(heading)}\" src=\"{charts[heading]}\">\n")
        parts.append(_html_table(head, body))
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def write_report(report: Report, folder: str | Path, title: str = "skillc bench",
                 meta: ReportMeta | None = None) -> Diagnostic | None:
    """Write report.md and report.html into `folder` (created if needed), each atomically; SKM901 if it cannot.

    Both say where they come from: `meta`, by default this process (`ReportMeta.current()`)."""
    out = Path(folder)
    meta = ReportMeta.current() if meta is None else meta
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_output(out / "report.md", to_markdown(report, title, meta))
        write_output(out / "report.html", to_html(report, title, meta))
    except (FileProblem, OSError) as exc:
        return make(codes.IO_ERROR, f"cannot write the report into {out}: {getattr(exc, 'strerror', None) or exc}")
    return None
