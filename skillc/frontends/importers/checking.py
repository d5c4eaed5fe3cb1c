"""Check an imported module: lower it, run every check, and say the findings in the source's own terms.

The checker's codes keep their meaning, except where the source language
changes what a finding means: an unbounded cycle of an ASL or LangGraph graph
is a warning (SKM621/SKM654, a timeout or `recursion_limit` still ends it),
and a path or channel that may be unset is a warning (SKM622/SKM657), since
the execution's input may provide it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

import attrs

from skillc.check import CheckContext, check_machine, fragment_machine
from skillc.check import codes as check_codes
from skillc.diagnostics import Code, Diagnostic, make
from skillc.ir.lower import Scope, lower_module
from skillc.ir.machine import Machine
from skillc.syntax import nodes as n


@attrs.frozen
class Remap:
    """How a source language reads the checker's findings."""

    unbounded: Code  # replaces SKM250
    unset: Code  # replaces SKM210, SKM211 and SKM213
    names: dict[str, str] = attrs.Factory(dict)  # .skm name -> the source's name
    drop: frozenset[tuple[Code, int]] = frozenset()  # (code, span start) of findings about edges the importer added
    edges: dict[tuple[str, int], str] = attrs.Factory(dict)  # (.skm state, edge number) -> the source's term


@attrs.frozen
class Checked:
    """The lowered machine (None when lowering failed) and every finding."""

    machine: Machine | None
    diagnostics: list[Diagnostic]
    dropped: list[Diagnostic] = attrs.Factory(list)  # findings about edges the importer added


def check_module(module: n.Module, path: str, remap: Remap, *, smt_timeout_ms: int = 2000) -> Checked:
    """Lower and check a generated module (its machine and every fragment)."""
    found: list[Diagnostic] = []
    lowered = lower_module(module, Scope(), path, found.append)
    ok = not any(d.is_error for d in found)
    context = CheckContext(smt_timeout_ms=smt_timeout_ms)
    if ok and lowered.machine is not None:
        found += check_machine(lowered.machine, context)
    if ok:
        for fdef in lowered.fragments.values():
            found += check_machine(fragment_machine(fdef, path), CheckContext(smt_timeout_ms=smt_timeout_ms))
    kept = [d for d in found if d.span is None or (d.code, d.span.start) not in remap.drop]
    dropped = [d for d in found if d.span is not None and (d.code, d.span.start) in remap.drop]
    return Checked(lowered.machine if ok else None, translate(kept, remap), dropped)


def translate(found: Iterable[Diagnostic], remap: Remap) -> list[Diagnostic]:
    """Replace codes whose meaning the source changes and rename to the source's names."""
    rename = _renamer(remap.names, remap.edges)
    out = []
    for d in found:
        code = {check_codes.UNBOUNDED_LOOP: remap.unbounded, check_codes.READ_BEFORE_ASSIGNMENT: remap.unset,
                check_codes.GUARD_BEFORE_ASSIGNMENT: remap.unset, check_codes.EVIDENCE_NOT_ASSIGNED: remap.unset,
                }.get(d.code)
        if code is not None:
            d = make(code, d.message, d.span, label=d.label, secondary=d.secondary, notes=d.notes,
                     witness=d.witness, data=dict(d.data))
        out.append(attrs.evolve(d, message=rename(d.message), label=rename(d.label),
                                notes=tuple(rename(x) for x in d.notes),
                                witness=tuple(rename(x, arrows=True) for x in d.witness),
                                data=tuple((k, remap.names.get(v, v)) for k, v in d.data)))
    return out


_EDGE = re.compile(r"\bedge (\d+) of `([\w.]+)`")


class _Rename(Protocol):
    def __call__(self, text: str, arrows: bool = False) -> str: ...


def _renamer(names: dict[str, str], edges: dict[tuple[str, int], str]) -> _Rename:
    """Rewrite `edge N of `s``, `name` (in backticks) and `a -> b` chains with the source's terms."""
    changed = {k: v for k, v in names.items() if k != v}

    def edge(m: re.Match[str]) -> str:
        said = edges.get((m.group(2), int(m.group(1))))
        return f"{said} of `{m.group(2)}`" if said else m.group(0)

    if not changed:
        def edges_only(text: str, arrows: bool = False) -> str:
            return _EDGE.sub(edge, text)

        return edges_only


    words = "|".join(sorted(map(re.escape, changed), key=len, reverse=True))
    ticked = re.compile(rf"`((?:start )?)({words})`")
    chained = re.compile(rf"(?<![\w.$`])({words})(?=\s*->|\s=\s)|(?<=-> )({words})(?![\w])")

    def rename(text: str, arrows: bool = False) -> str:
        text = _EDGE.sub(edge, text)
        text = ticked.sub(lambda m: f"`{m.group(1)}{changed[m.group(2)]}`", text)
        if arrows or "->" in text:
            text = chained.sub(lambda m: changed[m.group(1) or m.group(2)], text)
        return text

    return rename


__all__ = ["Checked", "Remap", "check_module", "translate"]
