"""The syntax of wave 3: `use tools`, `allow`, evidence predicates; printed canonically and exported."""

from __future__ import annotations

import jsonschema
import pytest

from skillc.api import format_text
from skillc.frontends.markdown.schema import MACHINE_SCHEMA, to_json, to_skm
from skillc.syntax import nodes as n
from skillc.syntax.export import gbnf_grammar, lark_grammar
from skillc.syntax.parser import parse
from skillc.syntax.printer import print_module
from tests.conftest import codes


def _items(body: str) -> tuple[n.Stmt, ...]:
    module, diags = parse("machine m {\n" + body + "\n}\n")
    assert diags == [], codes(diags)
    return module.machines[0].items


def test_use_tools_whole_kit_and_subset() -> None:
    whole, some = _items("  use tools std\n  use tools std(read, bash,)")
    assert whole == n.UseTools("std", ())
    assert some == n.UseTools("std", ("read", "bash"))
    assert print_module(n.Module((n.Machine("m", (whole, some)),))) == \
        "machine m {\n  use tools std\n  use tools std(read, bash)\n}\n"


def test_tools_stays_a_name_where_no_keyword_fits() -> None:
    use, var, other = _items("  use tools as tools(tools: tools)\n  var tools: str\n  use f as g()")
    assert use == n.Use("tools", "tools", (n.Binding("tools", "tools"),))
    assert var.name == "tools"
    assert other == n.Use("f", "g", ())


def test_allow_keeps_its_strings_with_their_spans() -> None:
    [allow] = _items('  allow "Read", """Bash(git diff:*) Grep"""')
    assert allow == n.Allow(("Read", "Bash(git diff:*) Grep"))
    assert [s.text() for s in allow.entry_spans] == ['"Read"', '"""Bash(git diff:*) Grep"""']
    text, _ = format_text('machine m {\n  allow "Read",   """Bash(x:*)"""\n}\n')
    assert text == 'machine m {\n  allow "Read", "Bash(x:*)"\n}\n'


def test_requires_takes_names_and_predicates_in_order() -> None:
    [terminal] = _items('  terminal done: success { requires a, b.c, s == 0, exists("r.md") }')
    [req] = terminal.items
    assert req.names == ("a", "b.c")
    assert [type(e).__name__ for e in req.evidence] == ["Name", "Field", "BinOp", "CallExpr"]
    # names may still be given as text: the node is the same
    assert n.Requires(("a", "b.c")) == n.Requires((n.Name("a"), n.Field(n.Name("b"), "c")))
    assert (n.dotted_name(n.Field(n.Name("b"), "c")) == "b.c"
            and n.dotted_name(n.Index(n.Name("b"), n.IntLit(0))) is None)


@pytest.mark.parametrize(("text", "code"), [
    ("machine m { use tools std() }", "SKM004"),
    ("machine m { use tools }", "SKM004"),
    ("machine m { allow }", "SKM004"),
    ("machine m { allow Read }", "SKM004"),
    ("machine m { terminal t: success { requires } }", "SKM013"),
])
def test_malformed_new_syntax_is_a_syntax_error(text: str, code: str) -> None:
    module, diags = parse(text)
    assert module is None and codes(diags) == [code]


def test_a_misplaced_item_names_allow_among_the_declarations() -> None:
    _, [d] = parse("machine m { bogus }")
    assert "`use` or `allow`" in (d.hint or "")


def test_exports_cover_the_new_syntax() -> None:
    assert "use_tools:" in lark_grammar() and "allow_decl:" in lark_grammar()
    gbnf = gbnf_grammar()
    assert '"tools"' in gbnf and '"allow"' in gbnf


def test_the_machine_json_schema_carries_kit_allow_and_predicates() -> None:
    text = """machine m {
  use tools std(read, bash)
  allow "Read", "Bash(git diff:*)"
  var out: str
  var status: int
  start run
  tool run {
    call bash(command: "git diff")
    writes out = stdout, status = exit_code
    -> done
  }
  terminal done: success { requires out, status == 0, exists("x") }
  fallback
}
"""
    module, _ = parse(text)
    draft = to_json(module)
    jsonschema.validate(draft, MACHINE_SCHEMA)
    assert draft["kit"] == ["read", "bash"] and draft["allow"] == ["Read", "Bash(git diff:*)"]
    assert draft["terminals"][0]["requires"] == ["out", "status == 0", 'exists("x")']
    again, diags = parse(to_skm(draft, "SKILL.md"))
    assert diags == []
    assert to_json(again) == draft
