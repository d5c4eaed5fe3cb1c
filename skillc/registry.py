"""Every diagnostic code, from the stages' tables: the one list that explain, the docs, SARIF and the config read.

Each stage declares its codes once, as constants in a leaf module (`skillc/<stage>/codes.py`,
``NAME: Final = Code("SKMnnn", "slug", …)`` and ``ALL``); this module imports those tables and
nothing else, so loading it loads no checker, solver, parser or front end. Nothing registers
itself: a code that is not in one of `TABLES` is not a code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType, ModuleType
from typing import Final

from skillc.bench import codes as bench_codes
from skillc.check import codes as check_codes
from skillc.conform import codes as conform_codes
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.code import Code
from skillc.export import codes as export_codes
from skillc.frontends.distill import codes as distill_codes
from skillc.frontends.importers import codes as importers_codes
from skillc.frontends.markdown import codes as markdown_codes
from skillc.improve import codes as refine_codes
from skillc.improve.evolve import codes as evolve_codes
from skillc.otel import codes as otel_codes
from skillc.render import codes as render_codes
from skillc.runtime import codes as runtime_codes
from skillc.sandbox import codes as sandbox_codes
from skillc.serve import codes as serve_codes

# One module per stage; a new stage's table is added here (and nowhere else).
TABLES: Final[tuple[ModuleType, ...]] = (
    diagnostics_codes,  # SKM0xx syntax, SKM1xx names and types, SKM5xx runtime (run, journal), SKM9xx tool
    check_codes,  # SKM2xx
    markdown_codes,  # SKM3xx
    distill_codes,  # SKM4xx
    runtime_codes,  # SKM520–539 (traces)
    render_codes,  # SKM525 (a trace drawn over another machine)
    importers_codes,  # SKM6xx
    bench_codes,  # SKM700–759
    refine_codes,  # SKM800–839 (trace import and archive, then alignment and acceptance)
    evolve_codes,  # SKM840–859 (evolve: options, scripted roles, hypotheses, test cases)
    conform_codes,  # SKM860–869 (conform: the rules transcripts broke)
    export_codes,  # SKM870–879 (export: LangGraph modules, and reading them back)
    otel_codes,  # SKM880–889 (OpenTelemetry spans of runs)
    serve_codes,  # SKM890–899 (MCP: `skillc serve --mcp`, MCP tools inside machines)
    sandbox_codes,  # SKM940–949 (the box untrusted code runs in: timeouts, limits, a tampered verifier)
)


def collect(tables: Iterable[Iterable[Code]]) -> tuple[Code, ...]:
    """The codes of `tables` in code order; a number or slug declared twice is a bug, raised here."""
    by_code: dict[str, Code] = {}
    by_slug: dict[str, Code] = {}
    for table in tables:
        for entry in table:
            for key, seen in ((entry.code, by_code), (entry.slug, by_slug)):
                if key in seen:
                    raise ValueError(f"diagnostic {key!r} declared twice ({seen[key].code} and {entry.code})")
                seen[key] = entry
    return tuple(sorted(by_code.values(), key=lambda c: c.code))


ALL: Final[tuple[Code, ...]] = collect(t.ALL for t in TABLES)
BY_CODE: Final[Mapping[str, Code]] = MappingProxyType({c.code: c for c in ALL})
BY_SLUG: Final[Mapping[str, Code]] = MappingProxyType({c.slug: c for c in ALL})


def find(code_or_slug: str) -> Code | None:
    """The entry for a code (`SKM103`) or a slug (`undefined-variable`), spelled exactly; None when there is none."""
    return BY_CODE.get(code_or_slug) or BY_SLUG.get(code_or_slug)


def lookup(code_or_slug: str) -> Code:
    """The entry for a code or slug that must exist; an unknown one is an internal bug (KeyError)."""
    entry = find(code_or_slug)
    if entry is None:
        raise KeyError(f"unknown diagnostic code {code_or_slug!r}")
    return entry


def resolve(name: str) -> Code | None:
    """A code or slug as a user writes it (`skm104`, `SKM104`, `undefined-tool`); None when there is none."""
    return find(name.upper() if name.lower().startswith("skm") else name)
