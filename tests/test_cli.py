"""The command line: formats, exit codes, colour, explain, show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from skillc import api
from skillc.diagnostics import codes as diagnostics_codes
from tests.conftest import BROKEN, ROOT


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=120)


def _broken(tmp_path: Path) -> Path:
    f = tmp_path / "broken.skm"
    f.write_text(BROKEN)
    return f


def test_full_format_is_rustc_style(tmp_path: Path) -> None:
    r = run("check", str(_broken(tmp_path)), env={"NO_COLOR": "1"})
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "error[SKM103]: undefined variable `answr` in `writes`"
    assert lines[1].endswith("broken.skm:6:12")
    assert lines[1].lstrip().startswith("-->")
    assert "6 |     writes answr" in r.stdout
    assert "^^^^^ not declared" in r.stdout
    assert "= help: did you mean `answer`?" in r.stdout
    assert "\x1b[" not in r.stdout
    assert "1 error, 0 warnings" in r.stderr


def test_colour_only_when_forced_and_never_with_no_color(tmp_path: Path) -> None:
    f = _broken(tmp_path)
    assert "\x1b[" in run("check", str(f), env={"FORCE_COLOR": "1", "NO_COLOR": ""}).stdout
    assert "\x1b[" not in run("check", str(f), env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


def test_json_format(tmp_path: Path) -> None:
    r = run("check", str(_broken(tmp_path)), "--format", "json")
    assert r.returncode == 1
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(objs) == 1
    o = objs[0]
    assert o["code"] == "SKM103" and o["severity"] == "error"
    assert (o["line"], o["column"], o["end_line"], o["end_column"]) == (6, 12, 6, 17)
    assert o["file"].endswith("broken.skm") and o["hint"] == "did you mean `answer`?"
    assert set(o) >= {"file", "line", "column", "end_line", "end_column", "code", "severity", "message", "hint"}


def test_concise_and_github_formats(tmp_path: Path) -> None:
    f = _broken(tmp_path)
    r = run("check", str(f), "--format", "concise")
    assert r.stdout.strip().endswith("broken.skm:6:12: error[SKM103]: undefined variable `answr` in `writes`")
    r = run("check", str(f), "--format", "github")
    assert r.stdout.startswith("::error file=") and ",line=6,col=12,endLine=6,endColumn=17,title=SKM103::" in r.stdout


def test_exit_codes(tmp_path: Path) -> None:
    assert run("check", str(ROOT / "stdlib")).returncode == 0
    assert run("check", str(_broken(tmp_path))).returncode == 1
    assert run("check", str(tmp_path / "missing.skm")).returncode == 2
    assert run("check", "--format", "xml", str(ROOT / "stdlib")).returncode == 2
    assert run("check").returncode == 2


def test_folders_are_searched(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    _broken(tmp_path / "a")
    (tmp_path / "a" / "notes.txt").write_text("not skm")
    r = run("check", str(tmp_path), "--format", "concise")
    assert r.returncode == 1 and r.stdout.count("SKM103") == 1


def test_explain() -> None:
    r = run("explain", "SKM104")
    assert r.returncode == 0 and r.stdout.startswith("SKM104 (undefined-tool, error)")
    assert run("explain", "undefined-tool").stdout == r.stdout
    assert run("explain", "SKM999").returncode == 2
    listing = run("explain").stdout
    assert "SKM001" in listing and "SKM136" in listing


def test_show_prints_a_summary() -> None:
    r = run("show", str(ROOT / "stdlib" / "retry.skm"))
    # A fragment library has no machine: each fragment is shown as the machine it checks as (issue 17:
    # it used to exit 1 and print nothing while `check` called it clean).
    assert r.returncode == 0 and r.stdout.startswith("fragment retry") and "tool     run" in r.stdout
    r = run("show", str(ROOT / "examples" / "livemath" / "livemath.skm"))
    assert r.returncode == 0
    assert r.stdout.startswith("machine livemath")
    assert "states" in r.stdout and "transitions" in r.stdout


def test_version_and_module_entry_point() -> None:
    r = run("--version")
    assert r.returncode == 0 and "skillc, version" in r.stdout


def test_long_lines_are_shown_as_a_window(tmp_path: Path) -> None:
    f = tmp_path / "long.skm"
    f.write_text("machine m { " + "var x: str " * 300 + " model s { when -> x } }\n")
    r = run("check", str(f), env={"NO_COLOR": "1"})
    excerpt = next(line for line in r.stdout.splitlines() if line.startswith("1 |"))
    assert len(excerpt) < 200 and "when -> x" in excerpt
    marker = next(line for line in r.stdout.splitlines() if "^^" in line)
    assert excerpt[marker.index("^^") : marker.index("^^") + 2] == "->"


def test_internal_errors_are_reported_as_bugs(monkeypatch, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc import cli
    from skillc.check import source

    def boom(*args, **kwargs):
        raise RuntimeError("simulated defect")

    monkeypatch.setattr(source, "check_source", boom)  # the call behind `skillc check` of a file
    f = _broken(tmp_path)
    result = CliRunner().invoke(cli.main, ["check", str(f), "--format", "concise"])
    assert result.exit_code == 3
    assert "error[SKM900]: internal error in skillc (this is a bug" in result.output
    assert "Traceback" not in result.output


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `code`."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, check=True, timeout=120).stdout
    return set(out.split())


HEAVY = ("skillc.check", "skillc.syntax.parser", "skillc.ir.loader", "skillc.runtime", "z3", "lark")


def test_import_skillc_and_version_load_no_stage() -> None:
    # Start-up (issue 13): the stages are imported by the command that needs them, not by `import skillc`.
    for code in ("import skillc", "import skillc.api",
                 "import sys; sys.argv = ['skillc', '--version']\nimport skillc.__main__ as m\n"
                 "try:\n    m.main()\nexcept SystemExit:\n    pass"):
        loaded = _modules_after(code)
        assert not [m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(HEAVY)], code
    assert "click" not in _modules_after("import sys; sys.argv = ['skillc', '--version']\nimport skillc.__main__ as m\n"
                                         "try:\n    m.main()\nexcept SystemExit:\n    pass")


def test_fmt_check_loads_no_checker(tmp_path: Path) -> None:
    f = tmp_path / "m.skm"
    f.write_text("machine m {\n  start d\n\n  terminal d: success\n  fallback\n}\n")
    loaded = _modules_after(f"import sys; sys.argv = ['skillc', 'fmt', '--check', {str(f)!r}]\n"
                            "import skillc.__main__ as m\ntry:\n    m.main()\nexcept SystemExit:\n    pass")
    assert "skillc.syntax.parser" in loaded
    assert not {"skillc.check", "z3", "skillc.ir.loader"} & loaded


def test_check_loads_no_front_end() -> None:
    # Diagnostics name their `Code` values, so checking needs neither the registry nor another stage's table.
    machine = ROOT / "examples" / "livemath" / "livemath.skm"
    loaded = _modules_after(f"import sys; sys.argv = ['skillc', 'check', {str(machine)!r}]\n"
                            "import skillc.__main__ as m\ntry:\n    m.main()\nexcept SystemExit:\n    pass")
    assert "skillc.check.guards" in loaded  # the probe really ran the checker
    assert not {"skillc.registry", "skillc.frontends.markdown.codes", "skillc.frontends.distill.codes"} & loaded
    assert not {"skillc.frontends.markdown.pipeline", "skillc.frontends.markdown.structural", "markdown_it",
                "skillc.frontends.distill.pipeline", "skillc.frontends.distill.cluster",
                "skillc.frontends.importers.asl"} & loaded


def test_skillc_check_stays_the_api_function() -> None:
    import skillc
    import skillc.check.config

    assert callable(skillc.check) and skillc.check is skillc.api.check


def test_run_refuses_seconds_that_are_not_finite_numbers() -> None:
    """`nan`, `inf` and huge values slip past a plain FloatRange; every run timeout refuses them (exit 2), the API
    once (click only parses the number), for the command line and Python callers alike."""
    from click.testing import CliRunner

    from skillc.cli import main

    machine = str(ROOT / "examples" / "livemath" / "livemath.skm")
    for flag in ("--tool-timeout", "--model-timeout", "--step-deadline"):
        for value in ("nan", "inf", "1e300", "0", "-1"):
            result = CliRunner().invoke(main, ["run", machine, "--executor", "scripted:x.json", flag, value])
            assert result.exit_code == 2, (flag, value, result.output)
            assert f"{flag} takes a number of seconds" in result.output and "Traceback" not in result.output
        result = CliRunner().invoke(main, ["run", machine, "--executor", "scripted:x.json", flag, "soon"])
        assert result.exit_code == 2 and f"Invalid value for '{flag}': 'soon' is not a number" in result.output
        field = {"--tool-timeout": "tool_timeout_s", "--model-timeout": "model_timeout_s",
                 "--step-deadline": "step_deadline_s"}[flag]
        report = api.run(api.RunConfig(machine=machine, executor="scripted:x.json", **{field: float("nan")}))
        assert report.usage is not None and flag in report.usage.message and report.result is None
        assert [str(d.code) for d in report.diagnostics] == [diagnostics_codes.IO_ERROR.code]


def test_build_and_serve_refuse_seconds_through_the_api(tmp_path: Path) -> None:
    """`build --model-timeout` and `serve`'s timeouts are the API's to refuse (SKM901 / a usage error)."""
    skill = tmp_path / "SKILL.md"
    skill.write_text("# s\n\n1. Do it.\n", encoding="utf-8")
    outcome = api.build(str(skill), model_timeout_s=0.0)
    assert outcome.usage and [str(d.code) for d in outcome.diagnostics] == [diagnostics_codes.IO_ERROR.code]
    assert not (tmp_path / "SKILL.skm").exists()
    served = api.serve(api.ServeConfig(machines=("m.skm",), input_timeout_s=float("inf")))
    assert served.usage is not None and "--input-timeout" in served.usage


def test_output_format_is_the_one_spelling_of_machine_readable_output(tmp_path: Path) -> None:
    """Every command with machine-readable output takes --output-format; --json and --format stay as aliases."""
    from tests.runtime.helpers import ECHO

    for command in (["run"], ["score"], ["refine"], ["bench"], ["evolve"], ["conform"], ["import", "asl"],
                    ["import", "langgraph"], ["check"], ["show"], ["build"], ["distill"]):
        help_text = run(*command, "--help").stdout
        assert "--output-format" in help_text, command
        if command[0] in ("run", "score", "refine", "bench", "evolve"):
            assert "--json" in help_text and "[text|json]" in help_text, command
    machine = tmp_path / "echo.skm"
    machine.write_text(ECHO)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"outputs": {"think": [{"answer": "hi"}]}}))
    outputs = []
    for flags in (["--json"], ["--output-format", "json"], ["--output-format", "text"], []):
        trace = tmp_path / f"t{len(outputs)}.jsonl"
        r = run("run", str(machine), "--executor", f"scripted:{script}", "--input", "q=hello", "--journal",
                str(tmp_path / "runs.sqlite"), "--workdir", str(tmp_path), "--trace", str(trace), *flags)
        assert r.returncode == 0, r.stderr
        scored = run("score", str(machine), str(trace), *flags)
        assert scored.returncode == 0, scored.stderr
        outputs.append((r.stdout, scored.stdout))
    as_json, as_format, as_text, default = outputs
    for (ran, scored), (ran_too, scored_too) in ((as_json, as_format), (as_text, default)):
        assert _same_but_ids(ran, ran_too) and _same_but_ids(scored, scored_too)
    assert json.loads(as_format[0])["outcome"] == "success" and json.loads(as_json[0])["outcome"] == "success"
    assert as_text[0].startswith("outcome: success") and not default[0].startswith("{")
    assert [json.loads(line) for line in as_json[1].splitlines()][-1].keys() == \
        [json.loads(line) for line in as_format[1].splitlines()][-1].keys()
    conform = run("conform", str(machine), str(tmp_path / "t0.jsonl"), "--output-format", "json")
    assert conform.returncode == 0 and json.loads(conform.stdout) == json.loads(
        run("conform", str(machine), str(tmp_path / "t0.jsonl"), "--format", "json").stdout)


def _same_but_ids(a: str, b: str) -> bool:
    """Two outputs of the same run that differ only in run ids, trace names and timings."""
    import re

    def norm(text: str) -> str:
        return re.sub(r'[0-9a-f]{8,}|t\d\.jsonl|"[a-z_]*(?:ms|_s|seconds|time|at)": [0-9.e+-]+', "X", text)

    return norm(a) == norm(b)
