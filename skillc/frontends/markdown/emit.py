"""Emit: the finished draft as a `.skm` AST module.

Declarations first (the document's title, its `source`, the tools the states
call, the task input, variables and counters), then `start`, the states in the
order they were made (each with the lines it came from), the terminals with
what they require, the fallback and the rules.
"""

from __future__ import annotations

import attrs

from skillc.frontends.markdown.clauses import strip_markup
from skillc.frontends.markdown.document import Document
from skillc.frontends.markdown.draft import TASK, DMachine, DState, DTerminal, Part
from skillc.frontends.markdown.names import slug
from skillc.frontends.markdown.reads import Assigned, evidence
from skillc.syntax import nodes as n

BASH = n.ToolDecl("bash", (n.Param("command", n.NamedType("str")),),
                  (n.Param("stdout", n.NamedType("str")), n.Param("exit_code", n.NamedType("int"))))
READ = n.ToolDecl("read", (n.Param("path", n.NamedType("str")), n.Param("offset", n.OptionalType(n.NamedType("int"))),
                            n.Param("limit", n.OptionalType(n.NamedType("int")))),
                  (n.Param("content", n.NamedType("str")), n.Param("lines", n.NamedType("int"))))
ASK_USER_MENU = n.ToolDecl("ask_user", (n.Param("question", n.NamedType("str")),
                                        n.Param("options", n.OptionalType(n.ListType(n.NamedType("str"))))),
                           (n.Param("answer", n.NamedType("str")),))
WRITE = n.ToolDecl("write", (n.Param("path", n.NamedType("str")), n.Param("content", n.NamedType("str"))),
                   (n.Param("path", n.NamedType("str")), n.Param("sha256", n.NamedType("str"))))
EDIT = n.ToolDecl("edit", (n.Param("path", n.NamedType("str")), n.Param("old", n.NamedType("str")),
                          n.Param("new", n.NamedType("str"))),
                  (n.Param("replacements", n.NamedType("int")), n.Param("sha256", n.NamedType("str"))))
ASK_USER = n.ToolDecl("ask_user", (n.Param("question", n.NamedType("str")),), (n.Param("answer", n.NamedType("str")),))


def module(d: DMachine, doc: Document, flow: Assigned) -> n.Module:
    """The machine as an AST module."""
    front = doc.front
    title = front.description or next((strip_markup(b.text) for b in doc.blocks if b.kind == "heading"), "")
    items: list[n.Stmt] = [*_declarations(d, title)]
    items.append(n.Start(d.order[0], blank_before=True))
    items += [_state_node(d, d.states[name]) for name in d.order]
    items += [_terminal_node(d, name, t, flow) for name, t in d.terminals.items()]
    items.append(n.Fallback(blank_before=True))
    items += [attrs.evolve(r, blank_before=i == 0) for i, r in enumerate(d.rules)]
    machine_name = slug(front.name or title or "skill", 4, "skill")
    return n.Module((n.Machine(machine_name, tuple(items)),))


def _declarations(d: DMachine, title: str) -> list[n.Stmt]:
    """The title, the source, the tools the states call, the task, variables and counters."""
    items: list[n.Stmt] = []
    if title:
        items.append(n.Doc(title))
    items.append(n.SourceDecl(d.source))
    if any(s.kind == "tool" and s.tool == "bash" for s in d.states.values()):
        items.append(attrs.evolve(BASH, leading=(
            "# Declared because the skill has commands to run; runs in the run's working directory.",))
            if not d.bash_declared else BASH)
    if any(s.kind == "tool" and s.tool == "read" for s in d.states.values()):
        items.append(attrs.evolve(READ, leading=(
            "# Reads files: those the skill bundles from its folder (`skill_dir`), others from the work folder.",)))
    if any(s.kind == "tool" and s.tool == "write" for s in d.states.values()):
        items.append(attrs.evolve(WRITE, leading=("# Saves the files the skill says to write, in the work folder.",)))
    if any(s.kind == "tool" and s.tool == "edit" for s in d.states.values()):
        items.append(attrs.evolve(EDIT, leading=("# Changes files of the work folder in place: `old` becomes `new`.",)))
    if any(s.kind == "tool" and s.tool == "ask_user" for s in d.states.values()):
        menus = any(s.options for s in d.states.values())
        items.append(attrs.evolve(ASK_USER_MENU if menus else ASK_USER,
                                  leading=("# The user answers these questions, not a model.",)))
    items.append(n.VarDecl("input", TASK, n.NamedType("str"), leading=("# What the user asked for.",),
                           blank_before=True))
    items += [n.VarDecl("input", v, n.NamedType("str"), leading=(f"# Given by the user: {why}",))
              for v, why in d.inputs.items()]
    items += [n.VarDecl("var", v, t, d.inits.get(v)) for v, t in d.vars.items()]
    items += [n.CounterDecl(c, limit) for c, limit in d.counters.items()]
    return items


def _terminal_node(d: DMachine, name: str, t: DTerminal, flow: Assigned) -> n.Terminal:
    """A terminal: the sentences describing it, their lines, and the evidence a success requires."""
    required: list[n.Expr | str] = [*evidence(d, flow, name)] if t.outcome != "failed" else []
    # A file a `write` state saved on every path in must still be there on arrival: the world says so, not a value.
    required += [n.CallExpr("exists", (concat(s.parts),)) for s in d.states.values()  # the path the write was given
                 if s.tool == "write" and s.kind == "tool" and s.parts and any(v in required for v, _ in s.writes)]
    body: list[n.Stmt] = []
    if t.docs:
        body.append(n.Doc(" ".join(t.docs)))
    if t.start is not None:
        body.append(n.From(d.where(t.start, t.end if t.end is not None else t.start)))
    if required:
        body.append(n.Requires(tuple(required)))
    return n.Terminal(name, t.outcome, tuple(body), blank_before=True)


def _state_node(d: DMachine, s: DState) -> n.State:
    """A state: its lines, reads, call, writes, prompt and edges."""
    body: list[n.StateItem] = [n.From(d.where(s.start, s.end))]
    if s.kind == "tool" and (s.text or s.notes):
        body.append(n.Doc(" ".join(s.text + s.notes)))
    if s.reads:
        body.append(n.Reads(tuple(s.reads)))
    if s.kind == "tool":
        param = {"ask_user": "question", "read": "path", "write": "path"}.get(s.tool, "command")
        args = [n.Arg(k, n.Name(v)) for k, v in s.args] if s.args else [n.Arg(param, concat(s.parts))]
        if s.content:
            args.append(n.Arg("content", n.Name(s.content)))
        if s.options:  # a menu: the answer is one of these
            args.append(n.Arg("options", n.ListLit(tuple(n.StrLit(o) for o in s.options))))
        body.append(n.Call(s.tool, tuple(args)))
    body.append(n.Writes(tuple(n.WriteItem(v, r) for v, r in s.writes)))
    if s.kind != "tool":
        body.append(n.Prompt(_prompt(s)))
    for e in s.edges:
        body.append(n.Edge(e.guard, e.target or "fallback", e.assigns))
    return n.State(s.kind, s.name, tuple(body), blank_before=True)


def _prompt(s: DState) -> str:
    """A model or judge state's prompt: its text, then its notes and constraints as lists."""
    parts = ["\n".join(s.text)]
    if s.notes:
        parts.append("Notes:\n" + "\n".join(f"- {t}" for t in s.notes))
    if s.constraints:
        parts.append("Constraints:\n" + "\n".join(f"- {t}" for t in s.constraints))
    return "\n\n".join(p for p in parts if p.strip())


def concat(parts: list[Part]) -> n.Expr:
    """Text and variables joined with `++`; `("quote", v)` quotes the value for the shell, `("path", p)` the
    path of a file of the skill's folder (`quote(skill_dir ++ "/p")`)."""
    exprs: list[n.Expr] = []
    for p in parts:
        if isinstance(p, str):
            exprs.append(n.StrLit(p))
        elif p[0] == "quote":
            exprs.append(n.CallExpr("quote", (n.Name(p[1]),)))
        elif p[0] in ("path", "file"):  # a file of the skill's folder: the place `skill_dir` (quoted for the shell)
            place: n.Expr = n.Name("skill_dir")
            if p[1]:
                place = n.BinOp("++", place, n.StrLit("/" + p[1]))
            exprs.append(n.CallExpr("quote", (place,)) if p[0] == "path" else place)
        else:
            exprs.append(n.Name(p[1]))
    out = exprs[0] if exprs else n.StrLit("")
    for e in exprs[1:]:
        out = n.BinOp("++", out, e)
    return out
