"""The checks share only immutable analyses: any order of `CHECKS` reports exactly the same diagnostics.

Run on the whole corpus (the checker's cases and their twins, the examples, the
stdlib), in the order of `CHECKS`, reversed, and in a few seeded shuffles.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from skillc.api import load
from skillc.check import CHECKS, CheckContext, fragment_machine
from skillc.diagnostics import Diagnostic
from skillc.diagnostics.source import Span
from skillc.ir.machine import Machine
from tests.check.test_corpus import CASES, _header
from tests.conftest import EXAMPLES, ROOT, STDLIB

CORPUS = sorted(CASES.rglob("*.skm")) + sorted(EXAMPLES.rglob("*.skm")) + sorted(STDLIB.glob("*.skm"))

# Once order-dependent: with one encoder shared by the checks, the judge-coverage check encoded the opaque
# guard after the default edge, and the guard check, run after it, reported that place (SKM242) too.
AFTER_THE_DEFAULT = """machine m {
  var verdict: enum { good, bad, unsure }
  var n: int
  var items: list[str]
  start think

  judge think {
    writes verdict
    prompt "p"
    when verdict == good and n > 0 -> done
    -> again
    when "x" in items -> done
  }

  model again {
    writes n
    prompt "p"
    -> done
  }

  terminal done: success
  fallback
}
"""


def _orders() -> list[tuple[Any, ...]]:
    shuffles = []
    for seed in (1, 2, 3):
        order = list(CHECKS)
        random.Random(seed).shuffle(order)
        shuffles.append(tuple(order))
    return [tuple(reversed(CHECKS)), *shuffles]


def _where(span: Span | None) -> tuple[str | None, int, int] | None:
    return None if span is None else (span.source.path, span.start, span.end)


def _key(d: Diagnostic) -> tuple[Any, ...]:
    return (str(d.code), d.severity.name, d.message, _where(d.span), d.label,
            tuple((_where(s.span), s.message) for s in d.secondary), d.notes, d.hint, d.witness)


def _findings(machines: list[tuple[Machine, Path | None]], order: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Every check, in `order`, on each machine with one shared context per machine (as `check_machine` does)."""
    found: list[tuple[Any, ...]] = []
    for m, skill in machines:
        context = CheckContext(skill=skill)
        for check in order:
            found += [_key(d) for d in check(m, context)]
    return sorted(found, key=repr)


def test_the_corpus_is_the_whole_corpus() -> None:
    assert len(CORPUS) >= 100 and any(p.is_relative_to(EXAMPLES) for p in CORPUS)
    assert any(p.is_relative_to(STDLIB) for p in CORPUS)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_order_of_checks_does_not_change_the_findings(path: Path) -> None:
    loaded = load(path)
    assert loaded.ok, path
    header = _header(path.with_name(path.name.replace(".ok.skm", ".skm"))) if path.is_relative_to(CASES) else {}
    skill = path.parent / header["skill"][0] if header.get("skill") else None
    machines = [(loaded.machine, skill)] if loaded.machine is not None else []
    machines += [(fragment_machine(f, str(path)), None) for f in loaded.fragments.values()]
    _assert_order_independent(machines)


def test_an_opaque_guard_after_the_default_is_noted_in_no_order() -> None:
    loaded = load(AFTER_THE_DEFAULT, path="case.skm")
    assert loaded.machine is not None
    _assert_order_independent([(loaded.machine, None)])
    assert "SKM242" not in {k[0] for k in _findings([(loaded.machine, None)], CHECKS)}


def _assert_order_independent(machines: list[tuple[Machine, Path | None]]) -> None:
    assert machines
    expected = _findings(machines, CHECKS)
    for order in _orders():
        assert _findings(machines, order) == expected, [c.__name__ for c in order]
