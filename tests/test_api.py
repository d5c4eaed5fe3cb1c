"""The Python API: each command as a function whose typed result carries its diagnostics (issue 13)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
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
        assert text_out is None and [str(d.code) for d in diagnostics] == ["SKM900"]


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
    assert [str(d.code) for d in result.diagnostics] == ["SKM103"]
    assert api.check_files([str(LIVEMATH)], select="NOPE").usage


def test_explain_and_describe() -> None:
    assert [c.code for c in api.explain(["skm104", "undefined-variable"]).codes] == ["SKM104", "SKM103"]
    assert api.explain(["SKM104", "SKM999"]).unknown == "SKM999"
    shown = api.describe(str(LIVEMATH))
    assert shown.text is not None and shown.text.startswith("machine livemath")
    missing = api.describe("no/such.skm")
    assert missing.text is None and [str(d.code) for d in missing.diagnostics] == ["SKM901"]


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
    assert api.run(api.RunConfig(journal=journal)).usage == api.Usage(
        "give MACHINE and --executor (or --resume RUN_ID)")
    broken = tmp_path / "broken.skm"
    broken.write_text(BROKEN)
    report = api.run(api.RunConfig(machine=str(broken), executor="scripted:x", journal=journal))
    assert report.result is None and report.unchecked and report.machine_path == str(broken)
    assert [str(d.code) for d in report.diagnostics] == ["SKM103"]



def test_run_reports_a_runtime_error_as_a_coded_diagnostic(tmp_path: Path) -> None:
    """`RunReport.error` is a diagnostic: the runtime's own code (a journal without the run: SKM500), or SKM501
    for a refusal that has none, shown then as the message alone (`error_line`, what `skillc run` prints)."""
    from skillc.diagnostics import codes as diagnostics_codes
    from skillc.runtime.journal import Journal

    machine = tmp_path / "echo.skm"
    machine.write_text(ECHO)
    journal = str(tmp_path / "runs.sqlite")
    nowhere = api.run(api.RunConfig(resume="nope", journal=journal))  # no journal there: refused, none made
    assert nowhere.error is not None and nowhere.error.code == diagnostics_codes.JOURNAL_ERROR
    assert "no run journal at" in nowhere.error.message and not Path(journal).exists()
    Journal(journal).close()  # a journal without the run
    missing = api.run(api.RunConfig(resume="nope", journal=journal))
    assert missing.result is None and missing.error is not None and missing.diagnostics == [missing.error]
    assert missing.error.code == diagnostics_codes.JOURNAL_ERROR and missing.error_coded
    assert missing.error_line == f"error[SKM500]: {missing.error.message}" and "nope" in missing.error.message
    unknown = api.run(api.RunConfig(machine=str(machine), executor="bogus:x", journal=journal))
    assert unknown.error is not None and unknown.error.code == diagnostics_codes.RUN_REFUSED
    assert not unknown.error_coded and unknown.error_line == unknown.error.message
    assert unknown.error.message.startswith("unknown executor 'bogus:x'")


def test_every_command_lives_in_its_package_and_api_names_it() -> None:
    """`skillc.api.X` is the command's own config, driver and result, imported from its package when first asked."""
    homes = {"RunConfig": "skillc.runtime.command", "run": "skillc.runtime.command", "replay": "skillc.runtime.command",
             "ScoreResult": "skillc.runtime.command", "explore": "skillc.runtime.command",
             "build": "skillc.frontends.markdown.command", "distill": "skillc.frontends.distill.command",
             "collect": "skillc.frontends.distill.command", "draw": "skillc.render.command",
             "conform": "skillc.conform.command", "export_graph": "skillc.export.command",
             "export_otel": "skillc.otel.command", "run_with_otel": "skillc.otel.command",
             "ServeConfig": "skillc.serve.command", "EvolveConfig": "skillc.improve.evolve.command",
             "bench": "skillc.bench.command", "BenchResult": "skillc.bench.command",
             "check": "skillc.language", "load_checked": "skillc.language", "parse": "skillc.language",
             "internal_error": "skillc.diagnostics.diagnostic", "unique": "skillc.diagnostics.diagnostic"}
    for name, home in homes.items():
        assert getattr(api, name).__module__ == home, name
    code = ("import sys, skillc.api; print(sorted(m for m in sys.modules if m.startswith('skillc.') and "
            "m.split('.')[1] not in ('api', 'language', 'diagnostics', 'lazy', 'version')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    assert out.strip() == "[]"  # importing the API loads no stage and no command module


def test_command_modules_import_only_downwards() -> None:
    """Only the facade's users (the command line, its renderers, the package root) import `skillc.api`: every
    command module takes what it shares from `skillc.language` and `skillc.diagnostics`, below the facade."""
    import ast

    package = Path(api.__file__).parent
    upward = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel in ("api.py", "cli.py", "console.py", "__init__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) else [])
            if any(name == "skillc.api" for name in names):
                upward.append(f"{rel}:{node.lineno}")
    assert upward == []


def test_the_api_page_documents_every_command() -> None:
    """`__all__` (what the docs' static reader documents) names every re-exported command, and only real names."""
    exported = {name for names in api._COMMANDS.values() for name in names}
    assert exported <= set(api.__all__) and all(hasattr(api, name) for name in api.__all__)
