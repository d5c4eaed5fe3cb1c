"""A diagnostic's code is the `Code` record (printed as its number), and what a finding is about is data."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from skillc.check import codes as check_codes
from skillc.diagnostics import Code, Diagnostic, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.render import render_github, to_json, to_sarif
from skillc.frontends.importers import codes as importers_codes
from skillc.frontends.importers.checking import Remap, translate
from tests.check.helpers import check_text
from tests.conftest import ROOT


def test_the_code_is_the_record_and_prints_as_its_number() -> None:
    d = make(diagnostics_codes.UNDEFINED_VARIABLE, "undefined")
    assert d.code is diagnostics_codes.UNDEFINED_VARIABLE
    assert str(d.code) == "SKM103" and f"{d.code}" == "SKM103"
    assert d.code != "SKM103"  # type: ignore[comparison-overlap]  # a record never equals a string
    assert to_json(d)["code"] == "SKM103" and json.dumps(to_json(d))
    assert "title=SKM103" in render_github(d)
    sarif = to_sarif([d])
    assert sarif["runs"][0]["results"][0]["ruleId"] == "SKM103"
    assert sarif["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "SKM103"


def test_codes_sort_by_number() -> None:
    later = make(check_codes.UNREACHABLE_STATE, "x")
    earlier = make(diagnostics_codes.UNDEFINED_VARIABLE, "x")
    assert sorted([later, earlier], key=Diagnostic.sort_key) == [earlier, later]


def test_data_is_sorted_hashable_and_read_by_key() -> None:
    d = make(diagnostics_codes.UNDEFINED_VARIABLE, "m", data={"var": "x", "state": "s"})
    assert d.data == (("state", "s"), ("var", "x")) and hash(d) == hash(make(
        diagnostics_codes.UNDEFINED_VARIABLE, "m", data={"state": "s", "var": "x"}))
    assert d.datum("state") == "s" and d.datum("nope") is None and make(d.code, "m").data == ()


def test_a_read_before_assignment_names_its_state_and_variable_and_keeps_them_through_an_import() -> None:
    text = check_codes.READ_BEFORE_ASSIGNMENT.bad  # `think` reads `answer` before anything writes it
    (d,) = [d for d in check_text(text).diagnostics if d.code == check_codes.READ_BEFORE_ASSIGNMENT]
    assert (d.datum("state"), d.datum("var")) == ("think", "answer")
    remap = Remap(importers_codes.UNBOUNDED_GRAPH_CYCLE, importers_codes.MAYBE_UNSET_CHANNEL,
                  {"think": "Think", "answer": "answer"})
    (t,) = translate([d], remap)
    assert t.code is importers_codes.MAYBE_UNSET_CHANNEL
    assert (t.datum("state"), t.datum("var")) == ("Think", "answer") and "`Think`" in t.message


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_shared_diagnostics_and_the_checkers_config_do_not_import_the_registry() -> None:
    paths = [*sorted((ROOT / "skillc" / "diagnostics").glob("*.py")), ROOT / "skillc" / "check" / "config.py"]
    for path in paths:
        assert not {m for m in _imports(path) if m.startswith("skillc.registry")}, path
    assert isinstance(diagnostics_codes.UNDEFINED_VARIABLE, Code)


def test_the_build_report_reads_the_unencoded_construct_from_data_as_the_message_says_it(tmp_path: Path) -> None:
    from skillc.frontends.markdown import codes as markdown_codes
    from tests.frontends.markdown.test_real_patterns import UNENCODED, built

    result = built(tmp_path, UNENCODED)
    (d,) = [d for d in result.diagnostics if d.code == markdown_codes.CONSTRUCT_NOT_ENCODED]
    assert d.message == (f"not encoded: {d.datum('construct')}; every run through `{d.datum('state')}` ends in "
                         "`review_required` (partial), never in success")
    assert d.span is not None
    assert result.rules.unencoded == (f"line {d.span.start_pos[0]}: {d.datum('construct')} (at `{d.datum('state')}`)",)


def test_a_diagnostics_repr_names_its_code_briefly() -> None:
    d = make(diagnostics_codes.UNDEFINED_VARIABLE, "undefined")
    assert "code=Code('SKM103', 'undefined-variable')" in repr(d)


def test_a_boxed_imports_answer_brings_back_the_code_record_and_its_data() -> None:
    import pytest

    from skillc.diagnostics import SourceFile, Span
    from skillc.frontends.importers import _graph_box

    span = Span(SourceFile.from_text("g.py", "graph = 1\n"), 0, 5)
    sent = [make(importers_codes.MAYBE_UNSET_CHANNEL, "m", span, data={"state": "a", "var": "b"}),
            make(check_codes.UNREACHABLE_STATE, "u")]
    answer = json.loads(json.dumps(_graph_box.to_json("text", sent)))
    text, back = _graph_box.from_json(answer)
    assert text == "text" and [(d.code, d.data, d.message) for d in back] == [(d.code, d.data, d.message) for d in sent]
    assert back[0].code is importers_codes.MAYBE_UNSET_CHANNEL
    answer["diagnostics"][0]["code"] = "SKM999x"
    with pytest.raises(ValueError, match="unknown diagnostic code"):
        _graph_box.from_json(answer)
