"""The Python API: each command as a function whose typed result carries its diagnostics (issue 13)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from skillc import api
from tests.conftest import BROKEN, ROOT
from tests.runtime.helpers import ECHO

LIVEMATH = ROOT / "examples" / "livemath" / "livemath.skm"


def test_format_refuses_output_that_does_not_parse_back(monkeypatch) -> None:
    text = "machine m {\n  start d\n  terminal d: success\n  fallback\n}\n"
    assert api.format(text).text == api.format_text(text)[0] is not None
    import skillc.syntax.printer as printer

    monkeypatch.setattr(printer, "print_module", lambda module: "machine other {\n  start d\n  terminal d: success\n"
                                                                 "  fallback\n}\n")
    for text_out, diagnostics in (api.format(text), api.format_text(text)):
        assert text_out is None and [d.code for d in diagnostics] == ["SKM900"]


def test_format_files_keeps_line_ends_and_writes_nothing(tmp_path: Path) -> None:
    f = tmp_path / "m.skm"
    f.write_bytes(b"machine m { start d terminal d: success fallback }\r\n")
    result = api.format_files([str(tmp_path)])
    assert result.ok and [x.path for x in result.files] == [str(f)]
    assert result.files[0].changed and "\r\n" in result.files[0].after
    assert f.read_bytes() == b"machine m { start d terminal d: success fallback }\r\n"
    assert api.format_files([], stdin_text="machine m {").files == []


def test_check_files_counts_and_reads_a_stream(tmp_path: Path) -> None:
    (tmp_path / "broken.skm").write_text(BROKEN)
    result = api.check_files([str(tmp_path), "-"], stdin=io.BytesIO(LIVEMATH.read_bytes()),
                             stdin_filename=str(LIVEMATH))
    assert result.files == 2 and not result.usage
    assert [d.code for d in result.diagnostics] == ["SKM103"]
    assert api.check_files([str(LIVEMATH)], select="NOPE").usage


def test_explain_and_describe() -> None:
    assert [c.code for c in api.explain(["skm104", "undefined-variable"]).codes] == ["SKM104", "SKM103"]
    assert api.explain(["SKM104", "SKM999"]).unknown == "SKM999"
    shown = api.describe(str(LIVEMATH))
    assert shown.text is not None and shown.text.startswith("machine livemath")
    missing = api.describe("no/such.skm")
    assert missing.text is None and [d.code for d in missing.diagnostics] == ["SKM901"]


def test_run_replay_and_score_from_one_config(tmp_path: Path) -> None:
    machine = tmp_path / "echo.skm"
    machine.write_text(ECHO)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"outputs": {"think": [{"answer": "hi"}]}}))
    trace = tmp_path / "t.jsonl"
    config = api.RunConfig(machine=str(machine), executor=f"scripted:{script}", inputs=("q=hello",),
                           trace=str(trace), journal=str(tmp_path / "runs.sqlite"), workdir=str(tmp_path))
    report = api.run(config)
    assert report.error is None and report.usage is None and report.result is not None
    assert report.result.outcome == "success"
    replayed = api.replay(str(machine), str(trace))
    assert replayed.report is not None and replayed.report.ok
    scored = api.score(str(machine), [str(trace)])
    assert len(scored.scores) == 1 and scored.compliance == 1.0
    assert scored.success is None  # no suite, no verifier: the declared success is not task success


def test_run_reports_usage_and_unchecked_machines(tmp_path: Path) -> None:
    journal = str(tmp_path / "runs.sqlite")
    assert api.run(api.RunConfig(journal=journal)).usage == api.Usage("give MACHINE and --executor (or --resume RUN_ID)")
    broken = tmp_path / "broken.skm"
    broken.write_text(BROKEN)
    report = api.run(api.RunConfig(machine=str(broken), executor="scripted:x", journal=journal))
    assert report.result is None and report.unchecked and report.machine_path == str(broken)
    assert [d.code for d in report.diagnostics] == ["SKM103"]

