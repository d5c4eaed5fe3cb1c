"""The bench's HTML report as a reader sees it: loaded in headless Chromium at 1,280 px, the page does not scroll
sideways, its tables and charts fit, tasks are in natural order, and it says when, by which skillc and commit,
with which command and on what it was made.

The page is measured by a copy of it with one script appended that writes the measurements into the DOM, which
`chromium --headless --dump-dom` prints (the report itself has no scripts). Chromium is Debian's `chromium`
package; without it the test skips, and SKILLC_REQUIRE_CHROMIUM=1 (set by .ci/run) makes it fail instead.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from skillc.bench.report import ReportMeta, build_report, natural_key, write_report
from skillc.bench.results import Cell, Row
from skillc.version import __version__

REQUIRE = bool(os.environ.get("SKILLC_REQUIRE_CHROMIUM"))
WIDTH = 1280

MEASURE = """
<script>
addEventListener("load", () => {
  const d = document.documentElement, box = e => e.getBoundingClientRect();
  const out = {
    scrollWidth: d.scrollWidth, clientWidth: d.clientWidth, innerWidth: innerWidth,
    tables: [...document.querySelectorAll("div.scroll")].map(s => ({
      table: s.querySelector("table").scrollWidth, box: s.clientWidth, right: box(s).right})),
    images: [...document.images].map(i => ({natural: i.naturalWidth, shown: box(i).width, right: box(i).right,
                                             loaded: i.complete && i.naturalWidth > 0})),
    meta: [...document.querySelectorAll("dl.meta dt")].map(dt => [dt.textContent, dt.nextElementSibling.textContent]),
    tasks: [...document.querySelectorAll("h2")].filter(h => h.textContent === "Mean total tokens per task")
      .map(h => [...h.parentElement.querySelectorAll("h2 ~ .scroll")]
        .find(s => s.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_PRECEDING))
      .flatMap(s => [...s.querySelectorAll("tbody tr td:first-child")].map(td => td.textContent)),
  };
  const pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    reason = "no headless Chromium (Debian: apt-get install chromium) for the report's browser check"
    if REQUIRE:
        pytest.fail(f"{reason} (SKILLC_REQUIRE_CHROMIUM is set)")
    pytest.skip(reason)


def _rows() -> list[Row]:
    """A bench wide enough to stress the page: 3 modes × 2 executors with long specs, tasks T25 … T200 given out
    of order, one cell that failed before it was verified."""
    executors = ["local?n_ctx=8192&max_tokens=256&threads=1",
                 "scripted:/home/someone/projects/skills/warehouse/bench/fixtures/oracle-script-answers.json"]
    rows = []
    for task, horizon in (("T100", 100), ("T25", 25), ("T200", 200), ("T50", 50)):
        for mode in ("machine", "native", "prompt-only"):
            for executor in executors:
                rows.append(Row(Cell(task, mode, executor, 0), mode == "machine", mode != "native", steps=5,
                                prompt_tokens=400 if mode == "machine" else 100 * horizon, completion_tokens=20,
                                latency_s=1.5, outcome="success", horizon=horizon))
    rows.append(Row(Cell("T25", "machine", executors[0], 1), None, None, outcome="unfinished", error="timed out"))
    return rows


def measure(page: Path, tmp_path: Path) -> dict:
    """Load `page` at 1,280 px in headless Chromium and return what the appended script measured."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},900",
                        "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                       capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="measured">(.*?)</pre>', r.stdout, re.S)
    assert found, (r.returncode, r.stderr[-2000:])
    return json.loads(html.unescape(found.group(1)))


def test_natural_order() -> None:
    assert sorted(["T100", "T25", "t9", "T200", "lm-010", "lm-9"], key=natural_key) == \
        ["lm-9", "lm-010", "t9", "T25", "T100", "T200"]


def test_the_report_fits_a_1280_px_window_and_says_where_it_comes_from(tmp_path: Path) -> None:
    meta = ReportMeta.current(["/venv/bin/skillc", "bench", "suite.toml", "--executor", "local?n_ctx=8192", "-o",
                               "out dir"])
    assert write_report(build_report(_rows(), resamples=200), tmp_path / "out", "skillc bench: warehouse",
                        meta) is None
    m = measure(tmp_path / "out" / "report.html", tmp_path)
    # No horizontal scrolling of the page at 1,280 px; every table fits its box (no box needs to scroll here).
    assert m["innerWidth"] == WIDTH and m["scrollWidth"] <= m["clientWidth"], m
    assert len(m["tables"]) == 4 and all(t["table"] <= t["box"] and t["right"] <= WIDTH for t in m["tables"]), m
    # Three charts, loaded, none wider than the page.
    assert len(m["images"]) == 3 and all(i["loaded"] and i["right"] <= WIDTH for i in m["images"]), m["images"]
    # Natural order: T25 before T100.
    assert m["tasks"] == ["T25", "T50", "T100", "T200"], m["tasks"]
    meta_shown = dict(m["meta"])
    assert meta_shown["skillc"].startswith(f"{__version__} (commit ")
    assert meta_shown["command"] == "skillc bench suite.toml --executor 'local?n_ctx=8192' -o 'out dir'"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", meta_shown["built"])
    assert meta_shown["environment"].startswith("CPython 3.") and " on Linux" in meta_shown["environment"]
    # The Markdown report carries the same lines.
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"- skillc: {meta_shown['skillc']}\n" in text and "- command: `skillc bench suite.toml" in text


def test_a_table_too_wide_for_the_page_scrolls_in_its_own_box(tmp_path: Path) -> None:
    """Twelve executors make the tokens table wider than any page: its box scrolls, the page does not."""
    rows = [Row(Cell(f"T{t}", "machine", f"scripted:fixtures/executor-number-{e:02d}.json", 0), True, True,
                prompt_tokens=1000 * t + e, outcome="success") for t in (25, 50) for e in range(12)]
    assert write_report(build_report(rows, resamples=100), tmp_path / "out") is None
    m = measure(tmp_path / "out" / "report.html", tmp_path)
    assert m["scrollWidth"] <= m["clientWidth"], m
    widest = max(m["tables"], key=lambda t: t["table"])
    assert widest["table"] > widest["box"] and widest["right"] <= WIDTH, m["tables"]
