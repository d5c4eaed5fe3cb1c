"""The structural compiler: classified clauses → a `.skm` module, without any model.

Phases, one module each, in order: `units` (clauses → pieces of control flow),
`graph` (units → states and edges, reading sentences through `phrases`),
`placement` (rules, constraints and knowledge), `reads` (what each state reads,
by the checker's definite-assignment analysis) and `emit` (the AST module). The
phases share the machine under construction, a `draft.DMachine`. Every state and
rule records the lines it came from.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from skillc.diagnostics import Code
from skillc.frontends.markdown.clauses import Clause
from skillc.frontends.markdown.commands import skill_files
from skillc.frontends.markdown.document import Document
from skillc.frontends.markdown.draft import DMachine, Options
from skillc.frontends.markdown.emit import module
from skillc.frontends.markdown.graph import build_graph
from skillc.frontends.markdown.phrases import inline_command, named_script, script_mention
from skillc.frontends.markdown.placement import place
from skillc.frontends.markdown.reads import infer_reads
from skillc.frontends.markdown.review import Unencoded, mark
from skillc.frontends.markdown.units import Sections, group_units
from skillc.ir.toolkit import parse_capability
from skillc.syntax import nodes as n

# Tools a front matter `allowed-tools` list can declare, by the name skill authors use.
KNOWN_TOOLS = {"bash": "bash", "shell": "bash", "terminal": "bash", "sh": "bash"}


@attrs.frozen
class Compiled:
    """The structural draft, and whether the document had a procedure at all."""

    module: n.Module
    procedure: bool
    problems: tuple[tuple[Code, str, int, int], ...] = ()  # (code, message, first line, last line)
    bash_added: bool = False  # `bash` declared for the document's commands, not by its front matter
    unencoded: tuple[Unencoded, ...] = ()  # constructs it could not encode: runs through them end `review_required`


def allowed_tool(entry: str) -> str | None:
    """The skillc tool an allowed-tools entry names (`Bash(git diff:*)` → `bash`), or None."""
    cap = parse_capability(entry)
    if isinstance(cap, str):
        return KNOWN_TOOLS.get(entry.lower())
    return cap.tool if cap.known else KNOWN_TOOLS.get(entry.lower())


def bash_declared(doc: Document, options: Options) -> bool:
    """True when steps may run shell commands through `bash`."""
    allowed = {allowed_tool(t) for t in doc.front.allowed_tools}
    return "bash" in allowed or "bash" in options.tools


def runs_command(c: Clause, scripts: frozenset[str] = frozenset()) -> bool:
    """True for a shell fence, a step that says to run an inline command, or one that runs a bundled script (by its
    path, or by its words where `scripts` are the folder's)."""
    return (c.kind == "command" or (c.kind in ("step", "knowledge") and inline_command(c.text) is not None)
            or (c.kind == "step" and script_mention(c.text) is not None)
            or (c.kind != "command" and named_script(c.text, scripts) is not None))


def has_commands(clauses: list[Clause], scripts: frozenset[str] = frozenset()) -> bool:
    """True when the document has shell fences, steps that say to run an inline command, or a bundled script."""
    return any(runs_command(c, scripts) for c in clauses)


def compile_document(doc: Document, clauses: list[Clause], options: Options | None = None) -> Compiled:
    """The structural draft of a document."""
    options = options or Options()
    declared = bash_declared(doc, options)
    # Commands to run make `bash` available even when the front matter does not declare it.
    scripts = skill_files(str(Path(doc.path).parent))
    draft = DMachine(options.source, declared, declared or has_commands(clauses, scripts))
    sections = Sections.of(doc)
    procedure = build_graph(doc, clauses, options, draft, sections, group_units(clauses))
    place(draft, clauses, sections)
    unencoded = tuple(mark(draft))  # no path to success around what could not be encoded
    flow = infer_reads(draft, sections)
    added = not declared and any(s.kind == "tool" and s.tool == "bash" for s in draft.states.values())
    problems = tuple((p.code, p.message, p.clause.start, p.clause.end) for p in draft.problems)
    return Compiled(module(draft, doc, flow), procedure, problems, added, unencoded)


__all__ = ["KNOWN_TOOLS", "Compiled", "Options", "compile_document"]
