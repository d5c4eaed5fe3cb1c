"""Fuzzing the toolchain: any input must end in diagnostics, never in an internal error.

Two sources of inputs:
- grammar-based generation with `hypothesis.extra.lark.from_lark` over
  `grammar/skm.lark` (it may fuse adjacent tokens, which only makes more
  varied input);
- byte-level mutation of the shipped examples (flips, deletions, insertions,
  duplicated and swapped chunks).

Each input goes through the whole pipeline: decode → parse → lower → check →
format (which must round-trip) → dot and Mermaid.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc import language
from skillc.diagnostics.codes import INTERNAL_ERROR
from skillc.render import to_dot, to_mermaid
from skillc.syntax.grammar import grammar_text
from skillc.syntax.parser import decode_source
from skillc.syntax.printer import print_module

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


@attrs.define
class FuzzReport:
    """Counts over a fuzzing campaign."""

    inputs: int = 0
    parsed: int = 0
    checked_clean: int = 0
    codes: Counter[str] = attrs.Factory(Counter)
    internal: list[tuple[bytes, str]] = attrs.Factory(list)


def run_pipeline(data: bytes, report: FuzzReport, path: str = "fuzz.skm") -> None:
    """Push one input through every stage; record diagnostics, and internal errors with their input."""
    report.inputs += 1
    try:
        source, diags = decode_source(path, data)
        if source is None:
            report.codes.update(d.code.code for d in diags)
            return
        result = language.check(source.text, path=path, smt_timeout_ms=500)
        report.codes.update(d.code.code for d in result.diagnostics)
        if any(d.code == INTERNAL_ERROR for d in result.diagnostics):
            report.internal.append((data, "SKM900: " + "; ".join(
                n for d in result.diagnostics if d.code == INTERNAL_ERROR for n in d.notes)))
            return
        if result.module is not None:
            report.parsed += 1
            printed = print_module(result.module)
            again = language.parse(printed, path=path).module
            if again != result.module:
                report.internal.append((data, "formatting did not round-trip"))
                return
        if result.machine is not None and result.ok:
            report.checked_clean += 1
            to_dot(result.machine)
            to_mermaid(result.machine)
    except RecursionError:
        report.internal.append((data, "RecursionError"))
    except Exception as exc:  # noqa: BLE001 - anything escaping the pipeline is the bug we look for
        report.internal.append((data, f"{type(exc).__name__}: {exc}"))


def mutate(seed_text: bytes, rng: random.Random, rounds: int = 3) -> bytes:
    """A randomly damaged copy of a file."""
    data = bytearray(seed_text)
    for _ in range(rng.randint(1, rounds)):
        if not data:
            data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
            continue
        op = rng.randrange(6)
        i = rng.randrange(len(data))
        if op == 0:
            data[i] = rng.randrange(256)
        elif op == 1:
            del data[i : i + rng.randint(1, 16)]
        elif op == 2:
            data[i:i] = bytes(rng.choice(b'{}()[]"#\n ->=+*<>!.,:?\\abcxyz0123456789')
                              for _ in range(rng.randint(1, 6)))
        elif op == 3:
            j = rng.randrange(len(data))
            chunk = data[min(i, j) : max(i, j)][:200]
            data[i:i] = chunk
        elif op == 4:
            j = rng.randrange(len(data))
            data[i], data[j] = data[j], data[i]
        else:
            data[i:i] = rng.choice([b"model ", b"judge ", b"tool ", b"when ", b"-> ", b"counter c max 2 ",
                                    b'"""', b"fragment f() {", b"use f as g() ", b"import \"x.skm\"\n", b"\xff\xfe"])
    return bytes(data)


def seeds(folders: Iterable[Path]) -> list[bytes]:
    """The `.skm` files under some folders, as mutation seeds."""
    return [p.read_bytes() for folder in folders for p in sorted(Path(folder).rglob("*.skm"))]


def grammar_strategy() -> SearchStrategy[str]:
    """Hypothesis strategy of strings generated from the grammar."""
    import lark  # here, not at the top: Lark must load through skillc.syntax (which keeps `regex` out)
    from hypothesis import strategies as st  # optional extra (skillc[test])
    from hypothesis.extra.lark import from_lark

    grammar = lark.Lark(grammar_text(), start="module", parser="lalr")
    names = st.sampled_from(["a", "b", "x", "done", "s1", "tries", "verdict", "bash", "ok", "fallback", "str", "int"])
    explicit = {
        "NAME": names.map(lambda s: f" {s} "),
        "STRING": st.sampled_from(['"x"', '""', '"a\\nb"', '"\\u{41}"', '"bad\\q"']),
        "TRIPLE_STRING": st.sampled_from(['"""\n  x\n  """', '"""y"""']),
        "INT": st.sampled_from(["0", "1", "2", "99"]),
        "FLOAT": st.sampled_from(["1.5", "2e3"]),
        "COMMENT": st.just("# c\n"),
    }
    return from_lark(grammar, start="module", explicit=explicit)
