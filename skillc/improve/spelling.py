"""Spellings: a transcript's tool calls read in the machine's own tool names and argument names.

Harnesses spell the same operation differently: Claude Code calls `Bash`, `Read` and `Write` where a machine
declares `bash` (or the kit's `read` and `write`), chat agents call `shell` or `run_command`, and arguments come
as `cmd` or `file_path`. Before alignment (`skillc.improve.refine.align`, which compares tool names without
case but otherwise exactly) each tool event is rewritten to the machine's spelling when the rewrite is
unambiguous:

1. a tool the machine declares, in any case, is that tool;
2. otherwise a shell alias (`shell`, `sh`, `terminal`, `run_command`, `execute_bash`, …) is the machine's `bash`;
3. otherwise a file tool of an agent harness is the machine's tool of the same job when it has one (`Read` →
   `read`), else, when the machine runs everything through `bash`, the command that does the job: `Read` →
   `cat PATH`, `Write` → `printf %s CONTENT > PATH`, `LS` → `ls PATH`;
4. arguments are renamed to the tool's parameters: the same name in another case, a known alias (`cmd` →
   `command`, `file_path` → `path`), or — for a tool with one parameter called with one argument — that
   parameter; arguments the tool does not have, beside some it has, are the harness's options (Claude Code's
   `description` and `timeout` of `Bash`) and are left out.

`skillc refine` reads the traces it imports this way (against the machine it starts from), and `skillc conform`
the transcripts it judges. Each rewrite is recorded (`Spelling`) so that the report can say how an event was
read. Events of other tools are left as they are; nothing here drops or reorders events.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Final

import attrs

from skillc.improve.events import DevTrace, Event
from skillc.ir.machine import Machine, Tool

#: Tool names that mean "run a shell command" (lowercase).
SHELL_ALIASES: Final = frozenset({"bash", "shell", "sh", "terminal", "run_shell", "run_shell_command", "execute_bash",
                                  "execute_command", "run_command", "run_terminal_cmd", "bash_tool", "local_shell",
                                  "exec", "command", "exec_command", "shell_command"})
#: Agent-harness file tools (lowercase) and the kit tool that does the same job.
HARNESS_TOOLS: Final[Mapping[str, str]] = {"read": "read", "view": "read", "read_file": "read", "write": "write",
                                           "write_file": "write", "create_file": "write", "edit": "edit",
                                           "multiedit": "edit", "str_replace": "edit", "ls": "ls",
                                           "list_dir": "ls", "glob": "glob", "grep": "grep", "webfetch": "fetch"}
#: Argument names (lowercase) and the parameter name they usually mean.
ARGUMENT_ALIASES: Final[Mapping[str, str]] = {"cmd": "command", "script": "command", "shell_command": "command",
                                              "file_path": "path", "filepath": "path", "file": "path",
                                              "filename": "path", "old_string": "old", "new_string": "new",
                                              "text": "content", "contents": "content", "data": "content"}


@attrs.frozen
class Spelling:
    """How one event was read: its index, the call as written and as the machine spells it."""

    index: int
    written: str  # e.g. `Read(file_path)`
    read_as: str  # e.g. `bash(command: cat answer.txt)`

    def __str__(self) -> str:
        return f"event {self.index}: {self.written} read as {self.read_as}"


def _signature(event: Event) -> str:
    return f"{event.tool}({', '.join(event.args)})"


def normalize(machine: Machine, trace: DevTrace) -> tuple[DevTrace, tuple[Spelling, ...]]:
    """The trace with every tool event in the machine's spelling, and the rewrites made."""
    tools = {name.casefold(): tool for name, tool in machine.tools.items()}
    events: list[Event] = []
    spellings: list[Spelling] = []
    for i, event in enumerate(trace.events):
        new = _event(event, tools) if event.kind == "tool" and event.tool else event
        if new != event:
            spellings.append(Spelling(i, _signature(event), _shown(new)))
        events.append(new)
    if not spellings:
        return trace, ()
    return attrs.evolve(trace, events=tuple(events)), tuple(spellings)


def _shown(event: Event) -> str:
    args = ", ".join(f"{k}: {v}" if isinstance(v, str) and len(v) <= 40 else k for k, v in event.args.items())
    return f"{event.tool}({args})"


def _event(event: Event, tools: Mapping[str, Tool]) -> Event:
    """One tool event in the machine's spelling (unchanged when no rule applies)."""
    name = (event.tool or "").casefold()
    if name in tools:
        return _arguments(event, tools[name])
    if name in SHELL_ALIASES and "bash" in tools:
        return _arguments(attrs.evolve(event, tool=tools["bash"].name), tools["bash"])
    job = HARNESS_TOOLS.get(name)
    if job is None:
        return event
    if job in tools:
        return _arguments(attrs.evolve(event, tool=tools[job].name), tools[job])
    if "bash" in tools:
        command = _as_command(job, _plain_args(event.args))
        if command is not None:
            bash = tools["bash"]
            param = ("command" if bash.param("command") is not None
                     else (bash.params[0][0] if bash.params else "command"))
            return attrs.evolve(event, tool=bash.name, args={param: command})
    return event


def _plain_args(args: Mapping[str, object]) -> dict[str, object]:
    """Arguments under their usual names (`file_path` → `path`)."""
    return {ARGUMENT_ALIASES.get(k.casefold(), k.casefold()): v for k, v in args.items()}


def _as_command(job: str, args: Mapping[str, object]) -> str | None:
    """The shell command that does a file tool's job, or None when the arguments do not say enough."""
    path = args.get("path")
    if not isinstance(path, str):
        return None
    if job == "read":
        return f"cat {shlex.quote(path)}"
    if job == "write" and isinstance(args.get("content"), str):
        return f"printf %s {shlex.quote(str(args['content']))} > {shlex.quote(path)}"
    if job == "ls":
        return f"ls {shlex.quote(path)}"
    return None


def _arguments(event: Event, tool: Tool) -> Event:
    """The event's arguments renamed to the tool's parameters where the rename is unambiguous."""
    params = [p for p, _ in tool.params]
    if not params or set(event.args) <= set(params):
        return attrs.evolve(event, tool=tool.name) if event.tool != tool.name else event
    by_fold = {p.casefold(): p for p in params}
    renamed: dict[str, object] = {}
    for key, value in event.args.items():
        fold = key.casefold()
        target = by_fold.get(fold) or by_fold.get(ARGUMENT_ALIASES.get(fold, ""))
        renamed[target or key] = value
    unknown = [k for k in renamed if k not in params]
    if unknown and len(params) == 1 and len(renamed) == 1:
        renamed = {params[0]: next(iter(renamed.values()))}
    elif unknown and len(unknown) < len(renamed):  # harness options beside the call (`description`, `timeout`)
        renamed = {k: v for k, v in renamed.items() if k in params}
    return attrs.evolve(event, tool=tool.name, args=renamed)
