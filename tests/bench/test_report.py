"""The report from synthetic rows: the numbers in its tables, and a self-contained HTML page with its charts."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from skillc.bench.report import build_report, comparison_table, summary_table, to_html, to_markdown, write_report
from skillc.bench.results import Cell, Row
from skillc.bench.stats import mcnemar, wilson


def _rows() -> list[Row]:
    """10 tasks × 2 repeats; the machine succeeds on every cell, native on tasks 0–4 only and never reads back."""
    rows = []
    for t in range(10):
        horizon = (25, 50)[t % 2]
        for repeat in range(2):
            rows.append(Row(Cell(f"t{t}", "machine", "scripted", repeat), True, True, steps=5,
                            prompt_tokens=100 + horizon, completion_tokens=20, latency_s=0.5, outcome="success",
                            horizon=horizon))
            native_ok = t < 5
            rows.append(Row(Cell(f"t{t}", "native", "scripted", repeat), native_ok, False, steps=4,
                            prompt_tokens=100 + 4 * horizon, completion_tokens=40, latency_s=0.25,
                            outcome="success" if native_ok else "failed", horizon=horizon, violated=("readback",)))
    rows.append(Row(Cell("t0", "machine", "scripted", 2), None, None, outcome="unfinished", error="executor crashed"))
    return rows


def test_summary_numbers() -> None:
    report = build_report(_rows())
    machine, native = report.summaries
    assert (machine.mode, machine.cells, machine.successes, machine.verified, machine.errors) == (
        "machine", 21, 20, 20, 1)
    assert machine.success == wilson(20, 20)
    assert (native.successes, native.verified, native.compliant, native.judged) == (10, 20, 0, 20)
    assert native.success == wilson(10, 20) and native.rfc == wilson(0, 20)
    assert native.mean_prompt_tokens == pytest.approx(100 + 4 * 37.5)
    assert native.mean_total_tokens == pytest.approx(100 + 4 * 37.5 + 40)
    _head, body = summary_table(report)
    assert body[1][:7] == ["native", "scripted", "20", "10/20 (50.0%)", "[29.9%, 70.1%]", "0/20 (0.0%)",
                           "[0.0%, 16.1%]"]
    assert body[0][3] == "20/20 (100.0%)" and body[0][-1] == "1"


def test_paired_comparison() -> None:
    report = build_report(_rows(), seed=1)
    (c,) = report.comparisons
    assert (c.executor, c.first, c.second, c.pairs, c.first_successes, c.second_successes) == (
        "scripted", "machine", "native", 20, 20, 10)
    assert c.mcnemar == mcnemar(10, 0)
    assert c.mcnemar.p == pytest.approx(2 / 1024)
    assert c.success_difference.estimate == pytest.approx(0.5)
    assert 0.2 < c.success_difference.low < 0.5 < c.success_difference.high <= 0.8
    assert c.token_pairs == 20
    assert c.token_difference.estimate == pytest.approx((120 + 37.5) - (140 + 4 * 37.5))
    _head, body = comparison_table(report)
    assert body[0][:10] == ["scripted", "machine", "native", "20", "20", "10", "10", "0", "0.00195", "0.000977"]
    assert body[0][10].startswith("+50.0 pp [")


def test_tokens_and_horizon() -> None:
    report = build_report(_rows())
    t1 = [t for t in report.tokens if t.task == "t1"]
    assert [(t.mode, t.horizon, t.mean_total_tokens) for t in t1] == [("machine", 50, 170.0), ("native", 50, 340.0)]
    assert [(p.mode, p.horizon, p.cells, p.mean_total_tokens) for p in report.horizons] == [
        ("machine", 25, 10, 145.0), ("machine", 50, 10, 170.0), ("native", 25, 10, 240.0),
        ("native", 50, 10, 340.0)]


def test_markdown() -> None:
    text = to_markdown(build_report(_rows()), "demo bench")
    assert text.startswith("# demo bench\n")
    assert "| native | scripted | 20 | 10/20 (50.0%) | [29.9%, 70.1%] |" in text
    assert "| horizon | machine / scripted | native / scripted |\n| --- | --- | --- |\n| 25 | 145.0 | 240.0 |" in text
    assert "| t1 | 50 | 170.0 | 340.0 |" in text


def test_no_horizon_section_without_horizons() -> None:
    rows = [Row(Cell("a", "machine", "e", 0), True, True, outcome="success")]
    report = build_report(rows)
    assert report.horizons == () and report.comparisons == ()
    assert "against the horizon" not in to_markdown(report)
    assert to_html(report).count("data:image/png;base64,") == 2


def test_html_is_self_contained_with_its_charts(tmp_path: Path) -> None:
    assert write_report(build_report(_rows(), resamples=1000), tmp_path / "report", "demo <bench>") is None
    assert (tmp_path / "report" / "report.md").read_text(encoding="utf-8").startswith("# demo <bench>\n")
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 3  # success and RFC, tokens per task, tokens against horizon
    assert all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in images)
    assert "<title>demo &lt;bench&gt;</title>" in page
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert not re.search(r"https?:|//[a-z]|<script|<link|@import|url\(", text)  # nothing fetched from elsewhere
    assert re.findall(r'(?:src|href)="([^"]{0,22})', page) == ["data:image/png;base64,"] * 3
    assert "<td>10/20 (50.0%)</td>" in page


def test_unwritable_report_folder_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    problem = write_report(build_report(_rows(), resamples=200), tmp_path / "file")
    assert problem is not None and str(problem.code) == "SKM901"


def test_many_tasks_draw_a_box_per_group_not_a_bar_per_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hundreds of tasks: the tokens chart summarises each mode's distribution (bars would be unreadable and slow)."""
    import matplotlib.axes

    from skillc.bench import report as rep

    rows = [Row(Cell(f"t{t}", mode, "scripted", 0), True, True, prompt_tokens=100 + t, outcome="success")
            for t in range(rep.MAX_TASK_BARS + 1) for mode in ("machine", "native")]
    calls: list[str] = []
    monkeypatch.setattr(matplotlib.axes.Axes, "boxplot", lambda self, data, *a, **k: calls.append(f"box {len(data)}"))
    monkeypatch.setattr(matplotlib.axes.Axes, "bar", lambda self, *a, **k: calls.append("bar"))
    monkeypatch.setattr(matplotlib.axes.Axes, "legend", lambda self, *a, **k: None)
    png = base64.b64decode(rep.tokens_chart(build_report(rows, resamples=100)).split(",", 1)[1])
    assert png.startswith(b"\x89PNG") and calls == ["box 2"]
    few = [r for r in rows if r.cell.task in ("t0", "t1")]
    calls.clear()
    rep.tokens_chart(build_report(few, resamples=100))
    assert calls == ["bar", "bar"]


def test_chart_labels_name_files_not_their_folders() -> None:
    from skillc.bench.report import MAX_LABEL, chart_label

    assert chart_label("native / scripted:/work/x/fixtures/script.json") == "native / scripted:script.json"
    assert chart_label("machine / local?n_ctx=8192&max_tokens=256&threads=1") == \
        "machine / local?n_ctx=8192&max_tokens=256&threads=1"
    long = chart_label("machine / openai:" + "m" * 80)
    assert len(long) <= MAX_LABEL and "…" in long and long.startswith("machine / ")


def test_token_axes_start_at_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """Token counts are never negative: every token chart's axis starts at 0, even when no tokens were recorded
    (a scripted executor's), where matplotlib alone would centre the zero bars on the axis."""
    from skillc.bench import report as rep

    seen: list[tuple[float, float]] = []
    real = rep._png

    def recording(draw: object, size: tuple[float, float]) -> str:
        def wrapped(ax: object) -> None:
            draw(ax)  # type: ignore[operator]
            seen.append(ax.get_ylim())  # type: ignore[attr-defined]
        return real(wrapped, size)

    monkeypatch.setattr(rep, "_png", recording)
    zero = [Row(Cell(f"t{t}", mode, "scripted", 0), True, True, outcome="success", horizon=25 * (t + 1))
            for t in range(3) for mode in ("machine", "native")]
    for rows in (zero, _rows()):
        seen.clear()
        report = build_report(rows, resamples=100)
        rep.tokens_chart(report)
        rep.horizon_chart(report)
        assert len(seen) == 2 and all(low == 0 and high >= 1 for low, high in seen), seen
    many = [Row(Cell(f"t{t}", "machine", "scripted", 0), True, True, outcome="success")
            for t in range(rep.MAX_TASK_BARS + 1)]
    seen.clear()
    rep.tokens_chart(build_report(many, resamples=100))
    assert seen and seen[0][0] == 0


def test_legends_sit_beside_the_data_and_the_image_holds_every_label(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chart's legend is to the right of its axes (it covers no bar, point or error bar), and the PNG is the
    tight box around everything drawn: rotated tick labels and the legend are never cut off."""
    import struct

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from skillc.bench import report as rep

    drawn: list[object] = []
    real = rep._png

    def recording(draw: object, size: tuple[float, float]) -> str:
        def wrapped(ax: object) -> None:
            draw(ax)  # type: ignore[operator]
            drawn.append(ax)
        return real(wrapped, size)

    monkeypatch.setattr(rep, "_png", recording)
    report = build_report(_rows(), resamples=100)
    for chart in (rep.success_chart, rep.tokens_chart, rep.horizon_chart):
        drawn.clear()
        png = base64.b64decode(chart(report).split(",", 1)[1])
        [ax] = drawn
        fig = ax.figure  # type: ignore[attr-defined]
        FigureCanvasAgg(fig).draw()  # lay the figure out again as savefig did, on a canvas that can measure
        renderer = fig.canvas.get_renderer()
        legend = ax.get_legend().get_window_extent(renderer)  # type: ignore[attr-defined]
        axes_box = ax.get_window_extent(renderer)  # type: ignore[attr-defined]
        assert legend.x0 >= axes_box.x1, (chart.__name__, legend, axes_box)
        width, height = struct.unpack(">II", png[16:24])
        tight = fig.get_tightbbox(renderer)
        assert abs(width - (tight.width + 0.2) * fig.dpi) <= 2 and abs(height - (tight.height + 0.2) * fig.dpi) <= 2
