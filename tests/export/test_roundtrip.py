"""`skillc export langgraph` then `skillc import langgraph`: the machine comes back, for every example machine and
every fragment of the standard library (in a small machine that uses it).

Two ways back are measured. Through the exported module's own reading (`skillc.export.readback`, what `skillc
import langgraph` does for a graph it exported) the machine is equal to the original up to names — here the names
are kept too. Through the generic LangGraph importer, which sees only nodes and edges (every node a tool state,
routers as free choices), the graph's skeleton — states, start, successors in order — comes back, except for
machines whose names hold dots (fragment instances): that importer writes channel names as they are, and
`save.status` is not a `.skm` identifier (docs/importers.md, "Export").
"""

from __future__ import annotations

from pathlib import Path

import pytest

import skillc
from skillc import api
from skillc.export.compare import differences, skeleton_differences
from skillc.frontends.importers.langgraph import import_graph
from skillc.syntax.printer import print_module
from tests.conftest import ROOT, STDLIB

EXAMPLE_MACHINES = sorted(p for p in (ROOT / "examples").rglob("*.skm")
                          if (checked := api.check(p)).ok and checked.machine is not None)
#: A machine using each fragment of the standard library.
HOSTS = {
    "write_verify": """import "stdlib/write_verify.skm"
machine host {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input question: str
  input target: str = "answer.txt"
  var letter: str
  start choose
  model choose {
    reads question
    writes letter
    prompt "Answer with one letter."
    -> save
  }
  use write_verify as save(content: letter, path: target) -> (verified: done, unverified: partly)
  terminal done: success
  terminal partly: partial
  fallback
}
""",
    "retry": """import "stdlib/retry.skm"
machine host {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input fetch_cmd: str
  var page: str
  start fetch
  use retry as fetch(command: fetch_cmd, output: page) -> (ok: done, failed: fallback)
  terminal done: success { requires page }
  fallback
}
""",
    "judge_revise": """import "stdlib/judge_revise.skm"
machine host {
  input question: str
  input rubric: str
  var answer: str
  start draft
  model draft {
    reads question
    writes answer
    prompt "Answer the question."
    -> review
  }
  use judge_revise as review(draft: answer, criteria: rubric) -> (accepted: deliver, rejected: report)
  terminal deliver: success { requires answer }
  terminal report: partial
  fallback
}
""",
}
#: Example machines the generic importer cannot give back, and why.
GENERIC_FAILS = {"spreadsheet.skm": "dotted", "data-analysis.skm": "dotted"}


def test_every_stdlib_fragment_has_a_host() -> None:
    assert sorted(HOSTS) == sorted(p.stem for p in STDLIB.glob("*.skm"))


def _label(p: Path) -> str:
    return str(p.relative_to(ROOT))


@pytest.mark.parametrize("path", EXAMPLE_MACHINES, ids=_label)
def test_example_round_trips_through_the_exported_module(path: Path, exported) -> None:
    name, _module = exported(path)
    back = api.import_graph("langgraph", f"{name}:builder")
    assert back.text is not None, [(str(d.code), d.message) for d in back.diagnostics]
    assert [d for d in back.diagnostics if d.is_error] == []
    machine = api.check(path).machine
    returned = skillc.load(back.text, path=str(path)).machine
    assert machine is not None and returned is not None
    assert differences(machine, returned) == []


@pytest.mark.parametrize("fragment", sorted(HOSTS))
def test_stdlib_fragment_round_trips(fragment: str, tmp_path: Path, exported) -> None:
    host = tmp_path / f"host_{fragment}.skm"
    host.write_text(HOSTS[fragment], encoding="utf-8")
    name, _ = exported(host)
    back = api.import_graph("langgraph", f"{name}:builder")
    assert back.text is not None and back.text.startswith(f'import "stdlib/{fragment}.skm"')
    assert differences(api.check(host).machine, skillc.load(back.text, path=str(host)).machine) == []


def test_a_project_fragment_is_inlined(tmp_path: Path, exported) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "steps.skm").write_text(
        (STDLIB / "retry.skm").read_text(encoding="utf-8").replace("fragment retry", "fragment again"),
        encoding="utf-8")
    host = tmp_path / "host.skm"
    host.write_text(HOSTS["retry"].replace('import "stdlib/retry.skm"', 'import "lib/steps.skm"')
                    .replace("use retry", "use again"), encoding="utf-8")
    name, module = exported(host)
    assert not [line for line in module.MACHINE.splitlines() if line.startswith("import ")]
    assert "fragment again" in module.MACHINE
    back = api.import_graph("langgraph", f"{name}:builder")
    assert differences(api.check(host).machine, skillc.load(back.text, path=str(host)).machine) == []


@pytest.mark.parametrize("path", EXAMPLE_MACHINES, ids=_label)
def test_generic_import_keeps_the_skeleton(path: Path, exported) -> None:
    """The generic importer (nodes and edges only) gives the same states, start and successors in order."""
    _, module = exported(path)
    imported = import_graph(module.builder, "g")
    assert imported.module is not None
    loaded = skillc.load(print_module(imported.module), path=str(path.parent / "g.skm"))
    if path.name in GENERIC_FAILS:
        assert loaded.machine is None and "SKM004" in [str(d.code) for d in loaded.diagnostics]
        return
    assert loaded.machine is not None, [(str(d.code), d.message) for d in loaded.diagnostics]
    names = {original: skm for skm, original in imported.names.items()}
    assert skeleton_differences(api.check(path).machine, loaded.machine, names) == []
    kinds = {st.kind for st in loaded.machine.states.values() if not st.is_terminal}
    assert kinds == {"tool"}  # what the generic import loses: kinds, guards, counters, outcomes


def test_a_graph_edited_by_hand_is_imported_as_any_graph(exported) -> None:
    name, module = exported(ROOT / "examples" / "livemath" / "livemath.skm")
    module.builder.add_node("audit", lambda state: {})
    module.builder.add_edge("audit", "write")
    back = api.import_graph("langgraph", f"{name}:builder")
    changed = [d for d in back.diagnostics if str(d.code) == "SKM871"]
    assert changed and "node `audit` is not a state of `livemath`" in changed[0].notes
    assert back.text is not None and "tool audit" in back.text  # the generic importer's translation


def test_a_machine_text_edited_so_that_it_no_longer_checks_is_refused(exported) -> None:
    name, module = exported(ROOT / "examples" / "livemath" / "livemath.skm")
    module.STEPS.text = module.STEPS.text.replace("start analyze", "start nowhere")
    module.STEPS._machine = None
    back = api.import_graph("langgraph", f"{name}:builder")
    assert back.text is None and [str(d.code) for d in back.diagnostics] == ["SKM872"]


def test_reserved_names_are_refused(tmp_path: Path) -> None:
    from skillc.export.codes import RESERVED_EXPORT_NAME

    bad = tmp_path / "bad.skm"
    bad.write_text(RESERVED_EXPORT_NAME.bad, encoding="utf-8")
    result = api.export_graph("langgraph", str(bad))
    assert result.text is None and [str(d.code) for d in result.diagnostics] == ["SKM870"]
    good = tmp_path / "good.skm"
    good.write_text(RESERVED_EXPORT_NAME.good, encoding="utf-8")
    assert api.export_graph("langgraph", str(good)).text is not None


def test_an_unreadable_import_is_not_standalone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.export import langgraph

    host = tmp_path / "host.skm"
    host.write_text(HOSTS["retry"], encoding="utf-8")
    machine = api.check(host).machine
    monkeypatch.setattr("skillc.export.langgraph.standalone", lambda path: (None, []))
    text, found = langgraph.export(machine, str(host))
    assert text is None and [str(d.code) for d in found] == ["SKM873"]


def test_kit_tools_capabilities_and_predicates_round_trip(tmp_path: Path, exported) -> None:
    from tests.export.test_run import KIT

    machine = tmp_path / "kit.skm"
    machine.write_text(KIT.replace("WANT", "notes"), encoding="utf-8")
    name, _ = exported(machine)
    back = api.import_graph("langgraph", f"{name}:builder")
    assert back.text is not None and 'allow "Read", "Write"' in back.text and "use tools std(read, write)" in back.text
    assert differences(api.check(machine).machine, skillc.load(back.text, path=str(machine)).machine) == []
