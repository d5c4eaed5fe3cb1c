"""bench.json's fingerprints: a resumed bench refuses tasks, verifiers and requirements that changed since their
rows ran (SKM738, naming each task and what changed), accepts changes that mix nothing, and records the
fingerprints in an older bench.json with a warning (SKM739)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillc.bench.manifest import MANIFEST, suite_fingerprint, task_fingerprint
from skillc.bench.runner import BenchConfig, BenchOutcome, run_bench
from skillc.bench.suite import load_suite

BEATS = Path(__file__).parent / "fixtures" / "beats"


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    """A copy of the runner's beats suite, to edit."""
    shutil.copytree(BEATS, tmp_path / "beats")
    return tmp_path / "beats" / "suite.toml"


def _bench(suite: Path, out: Path) -> BenchOutcome:
    """The machine mode of the suite's bench, with the beats script, into `out`."""
    script = f"scripted:{suite.parent / 'script.json'}"
    return run_bench(BenchConfig(str(suite), modes=("machine",), executors=(script,), output=str(out)))


def _edit(path: Path, old: str, new: str) -> None:
    """Replace one text in a file (it must be there)."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _codes(outcome: BenchOutcome) -> list[str]:
    return [str(d.code) for d in outcome.diagnostics]


def test_an_edited_task_with_rows_is_refused_naming_it_and_what_changed(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _bench(suite, out).ran == 4
    manifest = (out / MANIFEST).read_text(encoding="utf-8")
    results = (out / "results.jsonl").read_bytes()
    _edit(suite, 'question = "six times seven?"', 'question = "seven times six?"')
    _edit(suite, 'id = "t3"\ninputs = { question = "eighty-four halved?" }',
          'id = "t3"\ninputs = { question = "eighty-four halved?" }\nhorizon = 3')
    refused = _bench(suite, out)
    assert refused.usage and refused.ran == 0 and _codes(refused) == ["SKM738"]
    found = refused.diagnostics[0]
    assert "t1 (inputs); t3 (horizon)" in found.message and "2 tasks" in found.message
    assert found.span is not None and found.span.start_pos[0] == 14  # t1's `id`, where the task is written
    assert [label.message for label in found.secondary] == ["horizon changed"]
    assert "new output folder (-o)" in (found.hint or "")
    assert (out / MANIFEST).read_text(encoding="utf-8") == manifest  # nothing recorded, nothing run
    assert (out / "results.jsonl").read_bytes() == results
    assert _bench(suite, tmp_path / "fresh").ran == 4  # the hint works


def test_suite_wide_changes_are_refused(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _bench(suite, out)
    _edit(suite.parent / "marks.py", '"""', '"""Edited. ')  # a tools module's content
    _edit(suite, 'path = "answer.txt"\nquote', 'path = "answer.txt"\nmatches = "42"\nquote')  # a requirement
    refused = _bench(suite, out)
    assert _codes(refused) == ["SKM738"]
    assert "the suite's requirements, tools changed" in refused.diagnostics[0].message


def test_the_machine_is_still_compared_first(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _bench(suite, out)
    _edit(suite, 'question = "six times seven?"', 'question = "seven times six?"')
    script = f"scripted:{suite.parent / 'script.json'}"
    refused = run_bench(BenchConfig(str(suite), modes=("machine",), executors=(script,), output=str(out),
                                    max_steps=7))
    assert _codes(refused) == ["SKM737"]


def test_changes_that_mix_nothing_are_accepted(suite: Path, tmp_path: Path) -> None:
    """A task without rows may change, a new task is new cells, a dropped task keeps its fingerprint."""
    out = tmp_path / "out"
    _bench(suite, out)
    results = out / "results.jsonl"
    kept = [line for line in results.read_text(encoding="utf-8").splitlines() if '"task": "t2"' not in line]
    results.write_text("\n".join(kept) + "\n", encoding="utf-8")  # t2 never ran
    _edit(suite, 'question = "forty plus two?"', 'question = "two plus forty?"')
    with suite.open("a", encoding="utf-8") as f:
        f.write('\n[[task]]\nid = "t5"\ninputs = { question = "and now?" }\n')
    _edit(suite, 'quote = "Write the answer to answer.txt."', 'quote = "Write the answer in answer.txt."')
    resumed = _bench(suite, out)  # a requirement's quote is words for the report, not what is judged
    assert not resumed.diagnostics and (resumed.ran, resumed.resumed) == (2, 3)
    recorded = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["tasks"]
    assert recorded["t2"] == task_fingerprint(next(t for t in load_suite(suite).suite.tasks if t.id == "t2"))
    _edit(suite, '[[task]]\nid = "t4"\ninputs = { question = "the answer?" }\n', "")  # t4 dropped: rows stay
    assert not _bench(suite, out).diagnostics
    assert "t4" in json.loads((out / MANIFEST).read_text(encoding="utf-8"))["tasks"]
    with suite.open("a", encoding="utf-8") as f:
        f.write('\n[[task]]\nid = "t4"\ninputs = { question = "another answer?" }\n')
    refused = _bench(suite, out)  # back, edited: its old rows are still there
    assert _codes(refused) == ["SKM738"] and "t4 (inputs)" in refused.diagnostics[0].message


def test_an_older_bench_json_is_a_warning_and_gets_the_fingerprints(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _bench(suite, out)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    older = {k: manifest[k] for k in ("machine_hash", "skill_hash", "limits")}
    (out / MANIFEST).write_text(json.dumps({"v": 1, **older}), encoding="utf-8")
    _edit(suite, 'question = "six times seven?"', 'question = "seven times six?"')
    warned = _bench(suite, out)  # the edit cannot be seen: said, not refused
    assert _codes(warned) == ["SKM739"] and not warned.usage and warned.resumed == 4
    assert warned.diagnostics[0].severity.name == "WARNING"
    assert json.loads((out / MANIFEST).read_text(encoding="utf-8"))["tasks"].keys() == {"t1", "t2", "t3", "t4"}
    assert _codes(_bench(suite, out)) == []  # recorded: the next resumption checks them
    (out / MANIFEST).unlink()
    assert _codes(_bench(suite, out)) == ["SKM739"]  # rows without any bench.json: the same


def test_the_fingerprint_follows_content_not_the_folder(tmp_path: Path) -> None:
    """A Python verifier's module, a fixture file and a tools module count by content; moving the suite does not."""
    folder = tmp_path / "a"
    (folder / "fixture").mkdir(parents=True)
    (folder / "fixture" / "data.txt").write_text("1\n", encoding="utf-8")
    (folder / "check.py").write_text("def ok(workdir, outputs, trace):\n    return True\n", encoding="utf-8")
    (folder / "tools.py").write_text("def noop() -> dict:\n    return {}\n", encoding="utf-8")
    (folder / "SKILL.md").write_text("# demo\n", encoding="utf-8")
    (folder / "suite.toml").write_text('[suite]\nskill = "SKILL.md"\ntools = ["tools.py"]\n\n[[task]]\nid = "q1"\n'
                                       'workdir = "fixture"\nverify = { python = "check:ok" }\n', encoding="utf-8")

    def prints(where: Path) -> tuple[dict[str, str], dict[str, str]]:
        loaded = load_suite(where / "suite.toml")
        assert loaded.suite is not None, loaded.diagnostics
        return suite_fingerprint(loaded.suite), task_fingerprint(loaded.suite.tasks[0])

    before = prints(folder)
    shutil.copytree(folder, tmp_path / "b")
    assert prints(tmp_path / "b") == before
    _edit(folder / "check.py", "return True", "return False")
    assert prints(folder)[1]["verifier"] != before[1]["verifier"]
    (folder / "fixture" / "data.txt").write_text("2\n", encoding="utf-8")
    assert prints(folder)[1]["workdir"] != before[1]["workdir"]
    _edit(folder / "tools.py", "return {}", "return {'x': 1}")
    assert prints(folder)[0]["tools"] != before[0]["tools"]
    assert prints(folder)[1]["inputs"] == before[1]["inputs"]


def test_a_shell_verifier_counts_the_files_it_names_by_absolute_path(tmp_path: Path) -> None:
    script = tmp_path / "check.sh"
    script.write_text("exit 0\n", encoding="utf-8")
    (tmp_path / "SKILL.md").write_text("# demo\n", encoding="utf-8")
    (tmp_path / "suite.toml").write_text(f'[suite]\nskill = "SKILL.md"\n\n[[task]]\nid = "q1"\n'
                                         f'verify = {{ shell = "sh {script} answer.txt" }}\n', encoding="utf-8")

    def verifier() -> str:
        loaded = load_suite(tmp_path / "suite.toml")
        assert loaded.suite is not None
        return task_fingerprint(loaded.suite.tasks[0])["verifier"]

    before = verifier()
    script.write_text("exit 1\n", encoding="utf-8")
    assert verifier() != before


def test_suite_and_task_changes_are_both_named(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _bench(suite, out)
    _edit(suite, 'path = "answer.txt"\nquote', 'path = "answer.txt"\nmatches = "42"\nquote')
    _edit(suite, 'question = "six times seven?"', 'question = "seven times six?"')
    refused = _bench(suite, out)
    assert _codes(refused) == ["SKM738", "SKM738"]
    assert "requirements" in refused.diagnostics[0].message and "t1 (inputs)" in refused.diagnostics[1].message


def test_an_unreadable_bench_json_with_rows_is_refused(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _bench(suite, out)
    (out / MANIFEST).write_text("[1, 2", encoding="utf-8")
    refused = _bench(suite, out)
    assert _codes(refused) == ["SKM737"] and "cannot be read" in refused.diagnostics[0].message
    assert (out / MANIFEST).read_text(encoding="utf-8") == "[1, 2"  # left as it was


def _python_verified(suite: Path) -> None:
    """The suite verified by `imports_check:verify`, which imports a helper, which imports a package's module (names
    no other test's suite uses: a verifier's neighbours stay in sys.modules)."""
    folder = suite.parent
    (folder / "imports_check.py").write_text("import imports_helper\n\n\ndef verify(workdir, outputs, trace):\n"
                                     "    return imports_helper.holds(workdir)\n", encoding="utf-8")
    (folder / "imports_helper.py").write_text("from imports_pkg.answer import EXPECTED\n\n\ndef holds(workdir):\n"
                                      "    return (workdir / 'answer.txt').read_text() == EXPECTED\n", encoding="utf-8")
    (folder / "imports_pkg").mkdir()
    (folder / "imports_pkg" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "imports_pkg" / "answer.py").write_text("import json\nfrom . import __name__ as _\nEXPECTED = '42\\n'\n",
                                                encoding="utf-8")
    _edit(suite, '[verify]\nfile = "answer.txt"\nequals = "42\\n"', '[verify]\npython = "imports_check:verify"')


def test_a_python_verifiers_local_imports_are_fingerprinted(suite: Path, tmp_path: Path) -> None:
    """Editing a module the verifier imports (through another, and in a package) refuses a resumption; the
    standard library's modules are not the suite's."""
    _python_verified(suite)
    out = tmp_path / "out"
    first = _bench(suite, out)
    assert first.ran == 4 and [r.success for r in first.rows] == [True] * 4, first.diagnostics
    tasks = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["tasks"]
    assert all("imports" in t for t in tasks.values())
    _edit(suite.parent / "imports_pkg" / "answer.py", "'42\\n'", "'41\\n'")
    refused = _bench(suite, out)
    assert _codes(refused) == ["SKM738"] and "t1 (verifier's imports)" in refused.diagnostics[0].message


def test_a_bench_json_from_before_imports_were_recorded_still_resumes(suite: Path, tmp_path: Path) -> None:
    """Rows recorded without the imports' digest resume (the part is new, not changed); the digest is kept after."""
    _python_verified(suite)
    out = tmp_path / "out"
    assert _bench(suite, out).ran == 4
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    for task in manifest["tasks"].values():
        del task["imports"]
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    again = _bench(suite, out)
    assert _codes(again) == [] and again.ran == 0 and again.resumed == 4
