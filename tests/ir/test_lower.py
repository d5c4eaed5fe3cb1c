"""Lowering: name resolution, typing, fragments, imports."""

from __future__ import annotations

from pathlib import Path

import skillc
from skillc.ir import expr as ir
from skillc.ir import types as T
from tests.conftest import codes, load_text

HEAD = 'import "stdlib/retry.skm"\n'


def _machine(body: str, head: str = "") -> str:
    return head + "machine m {\n" + body + "\n  fallback\n}\n"


def test_fragment_instance_is_expanded_with_renaming() -> None:
    text = _machine("""
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input cmd: str
  var page: str
  start fetch
  use retry as fetch(command: cmd, output: page) -> (ok: done, failed: fallback)
  terminal done: success { requires page }
""", HEAD)
    result = load_text(text)
    assert result.diagnostics == []
    m = result.machine
    assert m.start == "fetch.run"
    run = m.states["fetch.run"]
    assert run.instance == "fetch"
    assert run.reads == ("cmd",)
    assert dict(run.bindings) == {"page": "stdout", "fetch.status": "exit_code"}
    assert [e.target for e in run.edges] == ["done", "fetch.run", "fallback"]
    assert "fetch.attempts" in m.variables and m.variables["fetch.attempts"].max == 2
    assert ir.variables(run.edges[1].guard) == {"fetch.attempts"}
    assert run.edges[1].assigns[0].var == "fetch.attempts"


def test_two_instances_of_one_fragment_do_not_collide() -> None:
    text = _machine("""
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input a: str
  input b: str
  var x: str
  var y: str
  start first
  use retry as first(command: a, output: x) -> (ok: second, failed: fallback)
  use retry as second(command: b, output: y) -> (ok: done, failed: fallback)
  terminal done: success { requires x, y }
""", HEAD)
    result = load_text(text)
    assert result.diagnostics == []
    m = result.machine
    assert m.states["first.run"].edges[0].target == "second.run"
    assert {"first.status", "second.status", "first.attempts", "second.attempts"} <= set(m.variables)


def test_nested_fragments_and_forward_references(tmp_path: Path) -> None:
    (tmp_path / "skillc.toml").write_text("")
    (tmp_path / "lib.skm").write_text("""
fragment outer(v: str) -> (out) {
  start inner
  use step as inner(v: v) -> (next: out)
}

fragment step(v: str) -> (next) {
  start s
  model s {
    writes v
    prompt "Write v."
    -> next
  }
}
""")
    main = tmp_path / "main.skm"
    main.write_text('import "lib.skm"\n' + _machine("""
  var v: str
  start o
  use outer as o(v: v) -> (out: done)
  terminal done: success { requires v }
"""))
    result = skillc.load(main)
    assert result.diagnostics == []
    assert result.machine.start == "o.inner.s"
    assert result.machine.states["o.inner.s"].writes == ("v",)
    assert result.machine.states["o.inner.s"].instance == "o.inner"


def test_rules_resolve_performers() -> None:
    text = _machine("""
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input cmd: str
  var out: str
  start a
  tool a {
    reads cmd
    call bash(command: cmd)
    writes out = stdout
    -> b
  }
  tool b {
    reads cmd
    call bash(command: cmd)
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  rule forbid bash "Never use the shell."
  rule order a before b "A then B."
""")
    m = load_text(text).machine
    forbid, order = m.rules
    assert forbid.performers == (("a", "b"),)
    assert order.performers == (("a",), ("b",))


def test_labels_resolve_against_the_enum_on_either_side() -> None:
    text = _machine("""
  var v: enum { yes, no } = yes
  start s
  model s {
    writes v
    prompt "p"
    when yes == v -> s
    when v in {yes, no} -> s
    -> s
  }
""")
    result = load_text(text)
    assert result.diagnostics == []
    g = result.machine.states["s"].edges[0].guard
    assert isinstance(g.left, ir.Label) and g.left.value == "yes"


def test_types_of_records_maps_and_optionals() -> None:
    text = _machine("""
  record Shelf {
    sku: str
    quantity: int
  }
  var shelves: map[str, Shelf]
  var key: str = "A1"
  var note: str?
  var ratio: float = 1
  start s
  model s {
    reads shelves, key
    writes note, ratio
    prompt "p"
    when shelves[key].quantity > 0 and note == none and ratio / 2 > 0.1 -> s { ratio = 3 }
    when len(shelves) > 400 and contains(shelves, key) -> s
    -> s
  }
""")
    result = load_text(text)
    assert result.diagnostics == []
    assert result.machine.variables["shelves"].type == T.MapT(T.RecordT("Shelf", (("sku", T.STR), ("quantity", T.INT))))


def test_did_you_mean_and_secondary_labels() -> None:
    text = _machine("""
  var answer: str
  start think
  model think {
    writes anser
    prompt "p"
    -> dnoe
  }
  terminal done: success
""")
    diags = load_text(text).diagnostics
    assert codes(diags) == ["SKM102", "SKM103"]
    by = {str(d.code): d for d in diags}
    assert by["SKM103"].hint == "did you mean `answer`?"
    assert by["SKM102"].hint == "did you mean `done`?"
    dup = load_text(_machine("  var a: str\n  var a: int\n  start s\n  model s { writes a prompt \"p\" -> s }"))
    d = next(x for x in dup.diagnostics if str(x.code) == "SKM108")
    assert d.secondary and d.secondary[0].message == "first declared here"
    assert d.secondary[0].span.start_pos[0] == 2


def test_errors_inside_a_fragment_are_reported_once_at_the_fragment() -> None:
    text = """
fragment f(x: str) -> (out) {
  start s
  model s {
    writes y
    prompt "p"
    -> out
  }
}
machine m {
  var a: str
  var b: str
  start one
  use f as one(x: a) -> (out: two)
  use f as two(x: b) -> (out: done)
  terminal done: success
  fallback
}
"""
    assert codes(load_text(text).diagnostics) == ["SKM103"]


def test_import_resolution_and_confinement(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    (tmp_path / "outside.skm").write_text("enum E { a }\n")
    (project / "sub" / "a.skm").write_text('import "../b.skm"\nenum Fa { a }\n')
    (project / "b.skm").write_text('import "sub/a.skm"\nenum Fb { b }\n')
    main = project / "main.skm"
    main.write_text('import "../outside.skm"\nimport "sub/a.skm"\n'
                    + _machine("  start done\n  terminal done: success"))
    diags = skillc.load(main).diagnostics
    assert codes(diags) == ["SKM125", "SKM126"]
    cycle = next(d for d in diags if str(d.code) == "SKM126")
    assert "a.skm -> b.skm -> a.skm" in cycle.message


def test_stdlib_import_cannot_escape_the_library() -> None:
    diags = load_text('import "stdlib/../pyproject.toml"\n'
                      + _machine("  start done\n  terminal done: success")).diagnostics
    assert codes(diags) == ["SKM125"]


def test_python_api_shapes() -> None:
    result = skillc.parse("machine m { fallback }")
    module, diags = result
    assert diags == [] and module.machines[0].name == "m"
    machine, diags = skillc.load("machine m { start done terminal done: success fallback }")
    assert diags == [] and machine.start == "done" and machine.fallback.outcome == "failed"
    bad = skillc.load("machine m {")
    assert bad.machine is None and not bad.ok


def test_inputs_cannot_be_written_through_a_fragment() -> None:
    text = 'import "stdlib/write_verify.skm"\n' + _machine("""
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input question: str
  input path: str
  start save
  use write_verify as save(content: question, path: path) -> (verified: done, unverified: fallback)
  terminal done: success
""")
    assert codes(load_text(text).diagnostics) == ["SKM133"]


def test_recursive_records_and_fragments_report_once() -> None:
    assert codes(load_text("record A {\n  b: B\n}\nrecord B {\n  a: A?\n}\n").diagnostics) == ["SKM138"]
    text = "fragment f(x: str) -> (out) {\n  start a\n  use f as a(x: x) -> (out: out)\n}\n"
    assert codes(load_text(text).diagnostics) == ["SKM129"]


def test_list_literals_take_the_expected_item_type() -> None:
    text = _machine('  var lf: list[float] = [1, 2]\n  var lo: list[str?] = ["a", none]\n  start done\n'
                    '  terminal done: success')
    assert load_text(text).diagnostics == []


def test_reserved_variable_names_and_counter_writes() -> None:
    assert codes(load_text(_machine("  var true: bool\n  start done\n  terminal done: success")).diagnostics) == [
        "SKM134"]


def test_nested_instances_can_be_named_in_rules(tmp_path: Path) -> None:
    text = """
fragment inner(v: str) -> (out) {
  start go
  model go {
    writes v
    prompt "p"
    -> out
  }
}
fragment outer(v: str) -> (out) {
  start go
  use inner as go(v: v) -> (out: out)
}
machine m {
  var v: str
  start first
  use outer as first(v: v) -> (out: done)
  terminal done: success { requires v }
  fallback
  rule required first.go "Go."
}
"""
    result = load_text(text)
    assert result.diagnostics == []
    assert result.machine.rules[0].performers == (("first.go.go",),)


def test_empty_map_literal_and_str_of_structures() -> None:
    text = _machine("""
  record Shelf {
    sku: str
  }
  var shelves: map[str, Shelf] = {}
  var dump: str
  start s
  model s {
    reads shelves
    writes dump
    prompt "p"
    when str(shelves) == "{}" -> s { shelves = {} }
    -> s
  }
""")
    assert load_text(text).diagnostics == []
    assert codes(load_text(_machine("  var x: str = {}\n  start done\n  terminal done: success")).diagnostics) == [
        "SKM109"]


def test_rules_from_fragments_are_marked() -> None:
    text = 'import "stdlib/write_verify.skm"\n' + _machine("""
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input path: str
  var content: str = "x"
  start save
  use write_verify as save(content: content, path: path) -> (verified: done, unverified: done)
  terminal done: success
  rule required save "Save it."
""")
    rules = load_text(text).machine.rules
    assert [r.fragment for r in rules] == ["write_verify", "write_verify", None]
    assert rules[0].ops == ("save.read_back",)
