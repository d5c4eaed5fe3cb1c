"""Capabilities: every tool state stays inside the machine's `allow` list (its skill's `allowed-tools`).

Checked only when the machine has an `allow` list. Rejected:

* SKM280: a tool state calls a tool no entry names (kit tools by their harness
  spelling, `Read` for `read`; a tool the machine declares itself by its own name);
* SKM281: a `bash` call whose `command` may, on some path, start with no allowed
  `Bash(prefix:*)` prefix as a whole word (`git diff` allows `git diff --stat`, not
  `git difftool`) and equal no allowed `Bash(cmd)`; proved with Z3's string theory,
  the command's variables free strings except those that every definition reaching
  the call sets to a constant (an edge `{ cmd = "rm -rf /" }` on one branch is found).
  An `argv` call must start with the prefix's words. The witness is a command that
  falls outside;
* SKM282: a constant path outside every `Read(glob)`-style entry of its tool, or a
  constant URL whose host no `WebFetch(domain:…)` entry allows;
* SKM283 (a warning): a path or URL that is not a constant, or a question the solver
  could not decide in time: not proved inside, and left to the runtime, which refuses
  any call outside the list.

* SKM284: a bash command whose constant text adds shell control (`&&`, `;`, `|`,
  `>`, `$(…)`, …) after what its allowing `Bash(prefix:*)` entry allows, or anywhere
  under a wildcard entry: the runtime refuses it (`refused_control`, the one decision
  both use). Values the checker cannot pin stand in as one plain word, so an operator
  a value might carry is the runtime's to refuse; only the written text is judged here.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillc.check import codes
from skillc.check.context import UNDECIDED, CheckContext, timeout_ms
from skillc.check.provenance import skill_document
from skillc.diagnostics import Diagnostic, Label, Span, make
from skillc.ir import expr as ir
from skillc.ir.machine import Machine, State
from skillc.ir.toolkit import PATH_ARGUMENTS, Capability, path_allowed, refused_control, tool_entries, url_allowed
from skillc.syntax.strings import encode_plain

if TYPE_CHECKING:
    from skillc.check.smt import Known, Scalar


def check_capabilities(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Every reachable tool state calls an allowed tool, with allowed commands, paths and URLs."""
    if not m.allowed:
        return
    known_at = reaching_constants(m)
    for name, st in m.states.items():
        if st.call is None or name not in known_at:
            continue
        tool = st.call.tool
        entries = tool_entries(m.allowed, tool)
        if not entries:
            yield make(codes.TOOL_NOT_ALLOWED, f"tool state `{name}` calls `{tool}`, which the machine's `allow` list "
                       "does not name", st.span_of("call"), label="not allowed",
                       secondary=[Label(s, "the capability set") for s in m.allow_spans[:1]],
                       notes=[f"allowed: {_listing(m.allowed)}"],
                       hint=f"add `allow \"{_spelling(tool)}\"` if the skill may use it, or do this step another way")
            continue
        if any(c.unrestricted for c in entries):
            continue
        args = dict(st.call.args)
        if tool == "bash":
            yield from _bash(m, st, entries, args, known_at[name], context)
        elif tool == "fetch":
            yield from _url(st, entries, args.get("url"))
        elif tool in PATH_ARGUMENTS:
            yield from _path(st, tool, entries, args.get(PATH_ARGUMENTS[tool]))


def _listing(caps: Sequence[Capability]) -> str:
    return ", ".join(c.spelling for c in caps)


_SPELLINGS = {"read": "Read", "write": "Write", "edit": "Edit", "glob": "Glob", "grep": "Grep", "bash": "Bash",
              "fetch": "WebFetch", "ask_user": "AskUserQuestion"}


def _spelling(tool: str) -> str:
    """How an `allow` entry names a tool."""
    return _SPELLINGS.get(tool, tool)


# ---------------------------------------------------------------- bash


def _command_hint(prefixes: list[str], exact: list[str], patterns: list[str]) -> str:
    """How to make a refuted bash command provable against these entries."""
    if patterns and not prefixes and not exact:
        return ("pass the words as an `argv` list: the runtime joins them by spaces and matches the wildcard entries, "
                "which a quoted value in a command string can break; or widen `allow`")
    return ("start the command with an allowed prefix written as a constant (quote the values after it), or widen "
            "`allow`")


def _bash(m: Machine, st: State, entries: list[Capability], args: dict[str, ir.Expr], known: Known,
          context: CheckContext | None) -> Iterator[Diagnostic]:
    """The command (or argv) of a bash call starts with an allowed prefix on every path."""
    from skillc.check.smt import argv_allowed_proof, command_allowed_proof  # the solver loads only when needed

    prefixes = [c.prefix for c in entries if c.prefix is not None]
    exact = [c.command for c in entries if c.command is not None]
    patterns = [c.pattern for c in entries if c.pattern is not None]
    allowed = _listing(entries)
    folder = skill_folder_name(m, context)
    command = args.get("command")
    if command is not None:
        verdict, example = command_allowed_proof(m, command, _relevant(known, command), prefixes, exact,
                                                 timeout_ms(context), patterns, folder)
        if verdict == "refuted":
            yield make(codes.COMMAND_NOT_ALLOWED, f"the bash command of `{st.name}` may fall outside the allowed "
                       f"commands ({allowed})", command.span or st.span_of("call"), label="not proved allowed",
                       secondary=[Label(s, "allowed here") for s in m.allow_spans[:1]],
                       witness=[f"command = {encode_plain(example)}"] if example is not None else [],
                       hint=_command_hint(prefixes, exact, patterns))
        elif verdict == "unknown":
            yield _unproven(st, command, f"whether the bash command of `{st.name}` stays inside {allowed}",
                            "the solver could not decide in time", undecided=True)
        sample = _sample(command, known)
        refused = refused_control(entries, sample) if verdict != "refuted" else None
        if refused is not None:
            operator, entry = refused
            yield make(codes.SHELL_CONTROL_REFUSED, f"the runtime will refuse the bash command of `{st.name}`: it "
                       f"adds shell control ({operator}) after what `{entry}` allows", command.span or
                       st.span_of("call"), label=f"`{operator}` here", witness=[f"command = {encode_plain(sample)}"],
                       secondary=[Label(s, "allowed here") for s in m.allow_spans[:1]])
    argv = args.get("argv")
    if argv is None:
        return
    words = [(tuple(p.split()), False) for p in prefixes] + [(tuple(c.split()), True) for c in exact]
    if not isinstance(argv, ir.ListExpr):
        yield make(codes.COMMAND_NOT_ALLOWED, f"the argv of `{st.name}` is not a list written out, so its first words "
                   f"cannot be proved to be allowed ({allowed})", argv.span or st.span_of("call"),
                   label="not proved allowed", hint="write the argv as a list whose first words are constants")
        return
    verdict, values = argv_allowed_proof(m, argv.items, _relevant(known, argv), words, timeout_ms(context), patterns,
                                         folder)
    if verdict == "refuted":
        yield make(codes.COMMAND_NOT_ALLOWED, f"the argv of `{st.name}` may start with words no entry allows "
                   f"({allowed})", argv.span or st.span_of("call"), label="not proved allowed",
                   secondary=[Label(s, "allowed here") for s in m.allow_spans[:1]],
                   witness=["argv = [" + ", ".join(encode_plain(v) for v in values) + "]"] if values else [],
                   hint="make the first words of the argv the constant words of an allowed prefix, or widen `allow`")
    elif verdict == "unknown":
        yield _unproven(st, argv, f"whether the argv of `{st.name}` stays inside {allowed}",
                        "the solver could not decide in time", undecided=True)


def skill_folder_name(m: Machine, context: CheckContext | None) -> str | None:
    """The name of the skill's folder, which a run's default `skill_dir` is: that of the document the machine is
    checked against (`provenance.skill_document`), its path made absolute and normalised."""
    document = skill_document(m, context)
    if document is None:
        return None
    return Path(os.path.abspath(document)).parent.name or None


def _sample(e: ir.Expr, known: Known) -> str:
    """The command's text as the runtime would see it, each value the checker cannot pin to one constant standing
    in as a plain word (`x`), a `quote()`d value as one single-quoted word."""
    return "".join(_sample_part(part, known) for part in ir.concat_parts(e))


def _sample_part(e: ir.Expr, known: Known) -> str:
    """One operand of the command's `++` chain as `_sample` shows it."""
    if isinstance(e, ir.Const) and isinstance(e.value, str):
        return e.value
    if isinstance(e, ir.Label):
        return e.value
    if isinstance(e, ir.Var):
        values = known.get(e.name)
        return str(next(iter(values))) if values is not None and len(values) == 1 else "x"
    if isinstance(e, ir.Call) and e.func == "quote":
        return "'x'"
    return "x"


def _relevant(known: Known, e: ir.Expr) -> Known:
    """What is known of the variables `e` reads."""
    return {name: known.get(name) for name in ir.variables(e)}


def reaching_constants(m: Machine) -> dict[str, Known]:
    """For each state reachable from `start`, each variable's possible values on entry when every definition that
    reaches it sets a constant (an initial value, an edge `x = "…"`); None when some definition is anything else
    (an input, a place, a state's write, a computed value). A least fixed point: sets only grow, to None at most."""
    start: Known = {}
    for name, v in m.variables.items():
        init = _scalar(v.init) if v.init is not None else None
        if init is not None:
            start[name] = frozenset({init})
        elif v.defined_at_start:
            start[name] = None
        else:
            start[name] = frozenset()
    at: dict[str, Known] = {m.start: start} if m.start in m.states else {}
    queue = deque(at)
    while queue:
        q = queue.popleft()
        after = dict(at[q])
        for var in m.states[q].writes:
            after[var] = None
        for e in m.states[q].edges:
            if e.target not in m.states:
                continue
            out = dict(after)
            for a in e.assigns:
                value = _scalar(a.value) if a.op == "=" else None
                out[a.var] = frozenset({value}) if value is not None else None
            old = at.get(e.target)
            new = out if old is None else {k: _join(old.get(k), out.get(k)) for k in {*old, *out}}
            if new != old:
                at[e.target] = new
                queue.append(e.target)
    return at


def _join(a: frozenset[Scalar] | None, b: frozenset[Scalar] | None) -> frozenset[Scalar] | None:
    return None if a is None or b is None else a | b


def _scalar(e: ir.Expr) -> Scalar | None:
    """The value of a scalar constant or label (None for anything else)."""
    if isinstance(e, ir.Label):
        return e.value
    if isinstance(e, ir.Const) and isinstance(e.value, (bool, int, float, str)):
        return e.value
    return None


# ---------------------------------------------------------------- paths and URLs


def _constant_text(e: ir.Expr) -> str | None:
    return e.value if isinstance(e, ir.Const) and isinstance(e.value, str) else None


def _path(st: State, tool: str, entries: list[Capability], value: ir.Expr | None) -> Iterator[Diagnostic]:
    """A constant path is inside some entry's glob; any other path is left to the runtime (SKM283)."""
    if value is None:
        return
    globs = ", ".join(c.spelling for c in entries)
    text = _constant_text(value)
    if text is None:
        yield _unproven(st, value, f"whether the path of `{st.name}` is inside {globs}",
                        "the path is computed, so only the runtime can tell")
    elif not path_allowed(entries, tool, text):
        yield make(codes.ARGUMENT_NOT_ALLOWED, f"`{st.name}` calls `{tool}` on {encode_plain(text)}, which no entry "
                   f"allows ({globs})", value.span or st.span_of("call"), label="outside the allowed paths",
                   hint="use a path inside the allowed globs, or widen `allow`")


def _url(st: State, entries: list[Capability], value: ir.Expr | None) -> Iterator[Diagnostic]:
    """A constant URL's host is an allowed domain (or below one); any other URL is left to the runtime (SKM283)."""
    if value is None:
        return
    domains = ", ".join(c.spelling for c in entries)
    text = _constant_text(value)
    if text is None:
        yield _unproven(st, value, f"whether the URL of `{st.name}` is inside {domains}",
                        "the URL is computed, so only the runtime can tell")
    elif not url_allowed(entries, text):
        yield make(codes.ARGUMENT_NOT_ALLOWED, f"`{st.name}` fetches {encode_plain(text)}, whose host no entry allows "
                   f"({domains})", value.span or st.span_of("call"), label="outside the allowed domains",
                   hint="fetch from an allowed domain, or widen `allow` with `WebFetch(domain:HOST)`")


def _unproven(st: State, value: ir.Expr, what: str, why: str, *, undecided: bool = False) -> Diagnostic:
    span: Span | None = value.span or st.span_of("call")
    return make(codes.CAPABILITY_UNPROVEN, f"cannot prove {what}: {why}", span, label="not proved",
                notes=["the runtime refuses a call outside the `allow` list"],
                hint="use a constant, or rely on the runtime's refusal", data=UNDECIDED if undecided else None)


__all__ = ["check_capabilities", "reaching_constants"]
