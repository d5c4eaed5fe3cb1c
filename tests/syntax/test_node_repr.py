"""`Node.__repr__` prints what attrs' generated repr printed (issue 31: one repr for all node classes, not one each)."""

from __future__ import annotations

import inspect

import attrs

from skillc.syntax import nodes as n
from skillc.syntax.parser import parse

TEXT = """\
machine m {
  # hi
  start a

  model a {
    prompt "p"
    when x < 1 -> done
    -> done
  }
  terminal done: success
  fallback
}
"""

# What attrs' own `__repr__` gave for these nodes before the change: fields in declaration order, kw-only ones
# (`leading`, `trailing`, …) first, `span` and `blank_before` left out, strings and tuples as `repr` writes them.
EXPECTED = [
    "Start(leading=('# hi',), trailing=None, target='a')",
    "State(leading=(), trailing=None, header=None, end_comments=(), kind='model', name='a', items=("
    "Prompt(leading=(), trailing=None, text='p'), Edge(leading=(), trailing=None, guard=BinOp(op='<', "
    "left=Name(id='x'), right=IntLit(value=1)), target='done', assigns=()), Edge(leading=(), trailing=None, "
    "guard=None, target='done', assigns=())))",
    "Terminal(leading=(), trailing=None, header=None, end_comments=(), name='done', outcome='success', items=())",
]


def test_repr_is_the_one_attrs_generated() -> None:
    module, diagnostics = parse(TEXT)
    assert module is not None and not diagnostics
    machine = module.items[0]
    assert isinstance(machine, n.Machine)
    assert [repr(item) for item in machine.items[:3]] == EXPECTED
    assert repr(n.NoneLit()) == "NoneLit()"
    assert repr(n.CallExpr("len", (n.StrLit("a\n"),))) == "CallExpr(func='len', args=(StrLit(value='a\\n'),))"


def test_no_node_class_has_a_generated_repr() -> None:
    """Every node class uses `Node.__repr__` (a class without `repr=False` would pay for generating its own)."""
    classes = [c for c in vars(n).values() if inspect.isclass(c) and issubclass(c, n.Node) and attrs.has(c)]
    assert len(classes) > 50
    assert [c.__name__ for c in classes if c.__repr__ is not n.Node.__repr__] == []
