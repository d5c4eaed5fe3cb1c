"""Secrets, data loss, bounds and words (issue 34): each test is a case a user hit, and fails on the code before.

The refine cases use the smallest machine with a model step and a tool step (`ECHO`) and a trace of it made by
`skillc run`; most commands run in-process through click's runner, the concurrent ones as processes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from skillc.cli import main
from tests.conftest import ROOT
from tests.runtime.helpers import ECHO

SECRET = "sk-ISSUE34-SECRET-0042"


def cli(*args: str | Path, env: dict | None = None) -> tuple[int, str]:
    """Exit code and output (stdout and stderr) of one command, in this process."""
    r = CliRunner().invoke(main, [str(a) for a in args], env={"NO_COLOR": "1", **(env or {})})
    return r.exit_code, r.output + (r.stderr if r.stderr_bytes is not None else "")


def no_internal_error(out: str) -> None:
    assert "SKM900" not in out and "Traceback" not in out, out


@pytest.fixture
def traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """ECHO and a trace of one run whose answer holds SECRET (made while SECRET was not in the environment)."""
    monkeypatch.delenv("ISSUE34_API_KEY", raising=False)
    machine = tmp_path / "m.skm"
    machine.write_text(ECHO)
    trace = tmp_path / "t.jsonl"
    _trace(tmp_path, trace, f"uses {SECRET} here")
    return machine, trace


def _trace(folder: Path, trace: Path, answer: str, q: str = "hi") -> None:
    script = folder / f"{trace.stem}.script.json"
    script.write_text(json.dumps({"outputs": {"think": [{"answer": answer}]}}))
    code, out = cli("run", folder / "m.skm", "--input", f"q={q}", "--executor", f"scripted:{script}", "--trace",
                    trace, "--journal", folder / "j.sqlite", "--workdir", folder)
    assert code == 0, out
    script.unlink()


# ---------------------------------------------------------------- secrets


def test_refine_writes_no_secret_into_its_archive_or_machine(traced: tuple[Path, Path],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    machine, trace = traced
    assert SECRET in trace.read_text()  # the trace was written while the secret was not known as one
    monkeypatch.setenv("ISSUE34_API_KEY", SECRET)
    code, out = cli("refine", machine, trace, "--json")
    assert code == 0, out
    written = [p for p in machine.parent.rglob("*") if p.is_file() and p != trace and not p.name.startswith("j.")]
    assert any("archive" in str(p) for p in written)
    assert [p.name for p in written if SECRET in p.read_text(errors="replace")] == []
    assert SECRET not in out
    archived = next(machine.parent.glob("m.archive/objects/traces/*.json")).read_text()
    assert "[redacted]" in archived


# ---------------------------------------------------------------- data loss


def test_a_refine_of_a_leased_archive_is_refused(traced: tuple[Path, Path]) -> None:
    from skillc.runtime.journal import Lease

    machine, trace = traced
    folder = machine.with_name("m.archive")
    folder.mkdir()
    held = Lease(folder / "lease", "other").acquire()  # another refine at work
    try:
        code, out = cli("refine", machine, trace)
    finally:
        held.release()
    assert code == 2 and "SKM540" in out and "refined by" in out, out
    assert not (folder / "manifest.json").exists() and machine.read_text() == ECHO
    code, out = cli("refine", machine, trace)  # once the other one is done
    assert code == 0 and (folder / "manifest.json").exists(), out


def test_two_refines_at_once_lose_no_accepted_trace(traced: tuple[Path, Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from skillc.improve.archive import open_archive
    from skillc.improve.refine import refine as pipeline

    machine, first = traced
    second = machine.with_name("t2.jsonl")
    _trace(machine.parent, second, "another answer", q="other")
    started, go = threading.Event(), threading.Event()
    real_accept = pipeline.accept

    def slow_accept(*args, **kwargs):
        started.set()  # the first refine has opened the archive and is at work on its trace
        assert go.wait(60)
        return real_accept(*args, **kwargs)

    monkeypatch.setattr(pipeline, "accept", slow_accept)
    results: dict[str, pipeline.RefineResult] = {}
    one = threading.Thread(target=lambda: results.update(
        first=pipeline.refine(pipeline.RefineOptions(str(machine), (str(first),)))))
    one.start()
    assert started.wait(60)
    monkeypatch.setattr(pipeline, "accept", real_accept)
    results["second"] = pipeline.refine(pipeline.RefineOptions(str(machine), (str(second),)))
    go.set()
    one.join(60)
    archive, problems = open_archive(machine)
    assert archive is not None and not problems
    for name, result in results.items():
        accepted = [s.trace for s in result.summaries if s.status == "accepted"]
        assert all(t in archive.entries for t in accepted), name  # what it reported accepted is kept
        assert accepted or [str(d.code) for d in result.diagnostics] == ["SKM540"], name  # else refused, whole
    assert [str(d.code) for d in results["second"].diagnostics] == ["SKM540"]


def test_refine_o_naming_one_of_its_traces_is_refused(traced: tuple[Path, Path]) -> None:
    machine, trace = traced
    before = trace.read_bytes()
    code, out = cli("refine", machine, trace, "-o", trace)
    assert code == 2 and "SKM541" in out, out
    assert trace.read_bytes() == before


def test_refine_o_fifo_or_device_is_refused_before_anything(traced: tuple[Path, Path]) -> None:
    machine, trace = traced
    fifo = machine.with_name("out.fifo")
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        started = time.monotonic()
        code, out = cli("refine", machine, trace, "-o", target)
        assert code == 2 and "SKM542" in out and time.monotonic() - started < 30, out
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_import_asl_o_naming_its_input_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "g.asl.json"
    source.write_text('{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}')
    before = source.read_bytes()
    code, out = cli("import", "asl", source, "-o", source)
    assert code == 2 and "SKM541" in out, out
    assert source.read_bytes() == before
    link = tmp_path / "alias.json"
    link.symlink_to(source)
    code, out = cli("import", "asl", source, "-o", link)
    assert code == 2 and source.read_bytes() == before


def test_import_langgraph_o_naming_its_module_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.console import output

    module = tmp_path / "agent.py"
    module.write_text("graph = None\n")
    monkeypatch.chdir(tmp_path)
    from skillc.diagnostics.files import module_files

    found = module_files("agent", ["."])
    assert [p.resolve() for p in found] == [module.resolve()]
    assert output("machine m {}\n", str(module), inputs=found) == 2  # what `import langgraph -o` calls
    assert module.read_text() == "graph = None\n"


def test_archive_object_names_never_leave_the_archive(traced: tuple[Path, Path]) -> None:
    machine, trace = traced
    assert cli("refine", machine, trace)[0] == 0
    folder = machine.with_name("m.archive")
    manifest = json.loads((folder / "manifest.json").read_text())
    (machine.parent / "outside.json").write_text("{}")
    manifest["entries"] = {"../../outside": "../../outside"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, out = cli("refine", machine, trace)
    assert code == 1 and "SKM543" in out and "not a content address" in out, out


def test_an_output_never_follows_a_link_out_of_its_folder(tmp_path: Path) -> None:
    from skillc.diagnostics.files import FileProblem, write_output

    (tmp_path / "out").mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    link = tmp_path / "out" / "m.dot"
    link.symlink_to(precious)
    with pytest.raises(FileProblem) as caught:
        write_output(link, "digraph {}")
    assert caught.value.code.code == "SKM542" and precious.read_text() == "keep"
    inside = tmp_path / "out" / "real.dot"
    inside.write_text("old")
    near = tmp_path / "out" / "near.dot"
    near.symlink_to(inside)
    write_output(near, "new")  # a link inside its folder is written through, and stays a link
    assert near.is_symlink() and inside.read_text() == "new"


# ---------------------------------------------------------------- internal errors (SKM900)


def test_refine_of_a_transcript_with_a_lone_surrogate(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(ECHO)
    (tmp_path / "t.jsonl").write_text(
        '{"messages": [{"role": "user", "content": "a \\ud800 b"}, {"role": "assistant", "content": '
        '"{\\"answer\\": \\"x\\\\ud800\\"}"}], "outcome": "success", "inputs": {"q": "\\ud800"}}\n')
    code, out = cli("refine", tmp_path / "m.skm", tmp_path / "t.jsonl")
    no_internal_error(out)
    assert code in (0, 4), out


def test_test_traces_on_dev_full(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(ECHO)
    code, out = cli("test", tmp_path / "m.skm", "--traces", "/dev/full", "--examples", "2")
    no_internal_error(out)
    assert code == 2 and "SKM901" in out and "/dev/full" in out, out


def test_an_evolve_patch_holding_nul_is_a_patch_error() -> None:
    from skillc.improve.edits import Edit, Patch, PatchError, SkillEdit
    from skillc.improve.evolve.patch import apply_patch

    with pytest.raises(PatchError, match="NUL"):
        apply_patch(ECHO, None, Patch(machine=(Edit("set_prompt", state="think", text="a\x00b"),)))
    with pytest.raises(PatchError, match="NUL"):
        apply_patch(ECHO, "# S\n\nDo it.\n", Patch(skill=(SkillEdit("Do it.", "Do\x00 it."),)))


def test_distill_profiles_are_read_bounded_and_beside_the_trace(tmp_path: Path) -> None:
    from skillc.frontends.distill import distill
    from tests.frontends.distill.test_profile import runs

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "deep.json").write_text('{"templates": ' + "[" * 50_000 + "]" * 50_000 + "}")
    (tmp_path.parent / "outside.json").write_text('{"templates": []}')
    cases = {"fifo.json": "FIFO", "deep.json": "levels deep", "../outside.json": "outside"}
    for name, words in cases.items():
        traced = [attrs.evolve(t, profile=name, span=None) for t in runs()]
        started = time.monotonic()
        result = _distill_in(tmp_path, distill, traced)
        assert time.monotonic() - started < 30
        assert any(words in d.message for d in result.diagnostics), (name, [d.message for d in result.diagnostics])


def _distill_in(folder: Path, distill, traces):
    """Distil with the current folder as the traces' folder (traces made in memory have no file)."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        return distill(traces)
    finally:
        os.chdir(before)


# ---------------------------------------------------------------- bounds and words


def test_a_2000_rule_choice_is_refused_at_once(tmp_path: Path) -> None:
    rules = [{"Variable": "$.x", "NumericEquals": i, "Next": "Done"} for i in range(2000)]
    source = tmp_path / "c.asl.json"
    source.write_text(json.dumps({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": rules, "Default": "Done"}, "Done": {"Type": "Succeed"}}}))
    started = time.monotonic()
    code, out = cli("import", "asl", source)
    assert code == 1 and "SKM544" in out and time.monotonic() - started < 20, out


def test_a_lone_surrogate_in_json_is_invalid_json_not_yaml(tmp_path: Path) -> None:
    source = tmp_path / "s.asl.json"
    source.write_text('{"StartAt": "A", "Comment": "x \\ud800", "States": {"A": {"Type": "Pass", "End": true}}}')
    code, out = cli("import", "asl", source)
    assert code == 1 and "invalid JSON" in out and "surrogate" in out and "YAML" not in out, out


def test_fifos_devices_and_loops_are_named_not_missing(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(ECHO)
    os.mkfifo(tmp_path / "f.asl.json")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    cases = [(["import", "asl", tmp_path / "f.asl.json"], "FIFO"), (["import", "asl", "/dev/zero"], "device"),
             (["import", "asl", tmp_path / "a"], "symlink loop"), (["refine", tmp_path / "m.skm", tmp_path / "a"],
                                                                    "symlink loop"),
             (["replay", tmp_path / "m.skm", tmp_path / "a"], "symlink loop")]
    for args, words in cases:
        code, out = cli(*args)
        assert code == 2 and words in out and "does not exist" not in out and "no such file" not in out, (args, out)


def test_a_loop_bound_check_accepts_is_not_called_non_terminating_by_test(tmp_path: Path) -> None:
    machine = tmp_path / "loop.skm"
    machine.write_text("""machine loop {
  var answer: str
  counter i max 150000
  start think
  model think {
    reads i
    writes answer
    prompt "Again?"
    when i < 150000 -> think { i += 1 }
    -> done
  }
  terminal done: success { requires answer }
  fallback
}
""")
    assert cli("check", machine)[0] == 0
    started = time.monotonic()
    code, out = cli("test", machine, "--examples", "3")
    assert code == 0 and "termination" not in out and "unfinished" in out, out
    assert time.monotonic() - started < 60


def test_collect_names_the_games_it_could_not_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc import api
    from skillc.frontends.distill import textworld as tw

    def refuse(spec, folder):
        raise tw.Unavailable("TextWorld refuses these settings")

    monkeypatch.setattr(tw, "import_textworld", lambda: None)
    monkeypatch.setattr(tw, "make_game", refuse)
    result = api.collect(str(tmp_path / "out.jsonl"), count=2, games=str(tmp_path / "games"))
    assert result.text is None and not (tmp_path / "out.jsonl").exists()
    assert [str(d.code) for d in result.diagnostics] == ["SKM406", "SKM406", "SKM400"]
    assert "TextWorld refuses" in result.diagnostics[0].message


# ---------------------------------------------------------------- what the file fuzzer found (bench/fuzz.py --files)


def test_refine_of_a_log_whose_first_type_is_an_object(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(ECHO)
    (tmp_path / "t.jsonl").write_text('{"type": {"a": 1}, "messages_": []}\n')
    code, out = cli("refine", tmp_path / "m.skm", tmp_path / "t.jsonl", "--dry-run")
    no_internal_error(out)
    assert code == 1, out


def test_refine_of_a_log_with_a_repeated_tool_call(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(ECHO)
    lines = (ROOT / "examples" / "refine" / "traces" / "claude-code.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "t.jsonl").write_text("".join(lines[:5] + lines[4:5] * 3 + lines[5:]))
    code, out = cli("refine", tmp_path / "m.skm", tmp_path / "t.jsonl", "--dry-run")
    no_internal_error(out)
    assert code in (0, 4), out


def test_run_trace_never_follows_a_link_out_of_its_folder(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(ECHO)
    (tmp_path / "s.json").write_text(json.dumps({"outputs": {"think": [{"answer": "a"}]}}))
    (tmp_path / "runs").mkdir()
    outside = tmp_path / "elsewhere.jsonl"
    (tmp_path / "runs" / "t.jsonl").symlink_to(outside)
    code, out = cli("run", tmp_path / "m.skm", "--input", "q=x", "--executor", f"scripted:{tmp_path / 's.json'}",
                    "--journal", tmp_path / "j.sqlite", "--trace", tmp_path / "runs" / "t.jsonl")
    assert code == 2 and "out of its folder" in out and not outside.exists(), out


def test_a_game_file_named_by_a_trace_is_used_only_beside_it(tmp_path: Path) -> None:
    from skillc.frontends.distill import textworld as tw
    from tests.frontends.distill.conftest import trace

    (tmp_path / "traces").mkdir()
    (tmp_path / "secret.z8").write_text("not a game of yours")
    (tmp_path / "traces" / "mine.z8").write_text("a game")
    named = attrs.evolve(trace(["eat apple"]), game={"file": "../secret.z8"})
    with pytest.raises(tw.Unavailable):
        tw.game_path(named, tmp_path / "games", relative_to=tmp_path / "traces")
    mine = attrs.evolve(trace(["eat apple"]), game={"file": "mine.z8"})
    assert tw.game_path(mine, tmp_path / "games", relative_to=tmp_path / "traces") == tmp_path / "traces" / "mine.z8"


def test_test_examples_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "m.skm").write_text(ECHO)
    code, out = cli("test", tmp_path / "m.skm", "--examples", "1000000000")
    assert code == 2 and "10000" in out.replace(",", ""), out


def test_import_langgraph_o_naming_its_module_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    import textwrap

    from tests.frontends.importers.test_langgraph import AGENT

    module = tmp_path / "my_agent.py"
    module.write_text(textwrap.dedent(AGENT))
    before = module.read_bytes()
    r = subprocess.run([sys.executable, "-m", "skillc", "import", "langgraph", "my_agent:graph", "-o", "my_agent.py"],
                       capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "NO_COLOR": "1"}, timeout=120)
    assert r.returncode == 2 and "SKM541" in r.stdout + r.stderr, r.stdout + r.stderr
    assert module.read_bytes() == before
