"""`skillc.registry`: one list of every code, complete, without duplicates, loaded without side effects."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillc import registry
from skillc.diagnostics.code import Code, Severity

SKILLC = Path(registry.__file__).resolve().parent


def _code(number: str, slug: str) -> Code:
    return Code(number, slug, Severity.WARNING, "summary", "explanation", "", "")


def test_all_is_in_code_order_without_duplicates() -> None:
    numbers = [c.code for c in registry.ALL]
    assert numbers == sorted(numbers)
    assert len(set(numbers)) == len(numbers)
    assert len({c.slug for c in registry.ALL}) == len(numbers)
    assert len(registry.ALL) == sum(len(t.ALL) for t in registry.TABLES)


def test_a_number_declared_twice_is_rejected() -> None:
    with pytest.raises(ValueError, match="SKM777"):
        registry.collect([(_code("SKM777", "one"),), (_code("SKM777", "two"),)])


def test_a_slug_declared_twice_is_rejected() -> None:
    with pytest.raises(ValueError, match="same-slug"):
        registry.collect([(_code("SKM777", "same-slug"), _code("SKM778", "same-slug"))])


def test_collect_sorts_by_code_whatever_the_table_order() -> None:
    a, b, c = _code("SKM001", "a"), _code("SKM500", "b"), _code("SKM200", "c")
    assert registry.collect([(b,), (c, a)]) == (a, c, b)


@pytest.mark.parametrize("table", registry.TABLES, ids=lambda t: t.__name__)
def test_each_table_is_constants_named_after_their_slugs(table) -> None:
    constants = {name: value for name, value in vars(table).items() if isinstance(value, Code)}
    assert constants, table.__name__
    for name, value in constants.items():
        assert name == value.slug.upper().replace("-", "_"), (name, value.code)
    assert set(table.ALL) == set(constants.values())
    assert [c.code for c in table.ALL] == sorted(c.code for c in table.ALL)


def test_every_code_string_in_the_source_tree_is_declared() -> None:
    """A `"SKMnnn"` literal anywhere in skillc/ (a make() call, a helper, a set of codes) names a declared code."""
    unknown = []
    for path in sorted(SKILLC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"SKM\d{3}", node.value) and node.value not in registry.BY_CODE:
                unknown.append(f"{path.relative_to(SKILLC.parent)}:{node.lineno}: {node.value}")
    assert not unknown, unknown


def test_every_declared_code_is_in_all() -> None:
    """A `Code(...)` constant in any codes.py that the registry does not list would be invisible to explain."""
    listed = set(registry.ALL)
    for path in sorted(SKILLC.rglob("codes.py")):
        module = importlib.import_module(".".join(path.relative_to(SKILLC.parent).with_suffix("").parts))
        for value in vars(module).values():
            if isinstance(value, Code):
                assert value in listed, (path, value.code)


def test_lookup_find_and_resolve() -> None:
    entry = registry.lookup("SKM103")
    assert registry.lookup(entry.slug) is entry and registry.find(entry.slug) is entry
    assert registry.resolve("skm103") is entry and registry.resolve(entry.slug) is entry
    assert registry.find("SKM000") is None and registry.resolve("no-such-code") is None
    with pytest.raises(KeyError):
        registry.lookup("SKM000")


def test_loading_the_registry_imports_no_stage() -> None:
    """Only the tables: no checker, no solver, no parser, no front end."""
    probe = ("import sys, skillc.registry\n"
             "heavy = ['z3', 'lark', 'skillc.check.smt', 'skillc.check.guards', 'skillc.syntax.parser', "
             "'skillc.ir.lower', 'skillc.frontends.markdown.structural', 'skillc.frontends.importers.asl', "
             "'skillc.api']\n"
             "print(' '.join(m for m in heavy if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=SKILLC.parent, timeout=120)
    assert out.stdout.split() == []
