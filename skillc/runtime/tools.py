"""Tool implementations: the built-in `bash` and Python callables registered from a module.

Only tools in the machine's interface table can be called. A tool returns a
dict of results; the runtime checks it against the declared result types. A
tool that raises, times out or returns the wrong shape is a *failed
operation*: the run goes to the fallback, it never crashes.
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from skillc.ir.machine import Machine, Tool

ToolFn = Callable[..., Any]


class ToolError(Exception):
    """The tool failed to produce results."""


@attrs.define
class BashTool:
    """Runs a shell command (`command: str`) or an argument vector (`argv: list[str]`).

    Values built into a command with `++` should be quoted with `quote(x)`; an
    argument vector needs no quoting at all. Output is capped and the process is
    killed after the timeout.
    """

    timeout_s: float = 60.0
    max_output: int = 1_000_000
    cwd: str | None = None

    def __call__(self, command: str | None = None, argv: list[str] | None = None, **_: Any) -> dict[str, Any]:
        if (command is None) == (argv is None):
            raise ToolError("bash takes exactly one of `command` or `argv`")
        args: Any = ["/bin/sh", "-c", command] if command is not None else list(argv or [])
        if not args:
            raise ToolError("`argv` is empty")
        try:
            proc = subprocess.run(args, capture_output=True, timeout=self.timeout_s, cwd=self.cwd,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ToolError(f"timed out after {self.timeout_s:g} s") from None
        except OSError as exc:
            raise ToolError(f"cannot run {args[0]!r}: {exc.strerror or exc}") from None
        return {
            "stdout": _cap(proc.stdout, self.max_output),
            "stderr": _cap(proc.stderr, self.max_output),
            "exit_code": proc.returncode,
        }


def _cap(data: bytes, limit: int) -> str:
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n[output truncated]" if len(data) > limit else "")


def load_module_tools(path: str | Path) -> dict[str, ToolFn]:
    """Public functions of a Python file, by name (`--tools mymod.py`)."""
    p = Path(path)
    spec = importlib.util.spec_from_file_location(f"skillc_tools_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise ToolError(f"cannot load tools from {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import
        raise ToolError(f"importing {path} failed: {type(exc).__name__}: {exc}") from None
    return {name: fn for name, fn in vars(module).items()
            if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == module.__name__}


def entry_point_tools() -> dict[str, ToolFn]:
    """Tools registered by installed packages under the `skillc.tools` entry-point group."""
    from importlib.metadata import entry_points

    found: dict[str, ToolFn] = {}
    for ep in entry_points(group="skillc.tools"):
        try:
            found[ep.name] = ep.load()
        except Exception:  # noqa: BLE001 - a broken plugin must not stop unrelated runs
            continue
    return found


@attrs.define
class ToolBox:
    """The implementations available to one run."""

    functions: dict[str, ToolFn] = attrs.Factory(dict)

    @classmethod
    def default(cls, modules: list[str] = (), timeout_s: float = 60.0, cwd: str | None = None) -> ToolBox:
        functions: dict[str, ToolFn] = {"bash": BashTool(timeout_s=timeout_s, cwd=cwd)}
        functions.update(entry_point_tools())
        for m in modules:
            functions.update(load_module_tools(m))
        return cls(functions)

    def missing(self, machine: Machine) -> list[str]:
        """Tools the machine's states call that have no implementation."""
        called = {s.call.tool for s in machine.states.values() if s.call is not None}
        return sorted(t for t in called if t not in self.functions)

    def call(self, tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
        """Call a tool; results are filtered to the declared ones (a missing one is a failure)."""
        fn = self.functions.get(tool.name)
        if fn is None:
            raise ToolError(f"no implementation for tool `{tool.name}`")
        try:
            raw = fn(**args)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failing tool is a failed operation, not a crash
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        names = [r for r, _ in tool.results]
        if not isinstance(raw, dict):
            if len(names) == 1:
                raw = {names[0]: raw}
            elif not names:
                raw = {}
            else:
                raise ToolError(f"tool `{tool.name}` must return an object with {', '.join(names)}")
        missing = [r for r in names if r not in raw]
        if missing:
            raise ToolError(f"tool `{tool.name}` returned no {', '.join(missing)}")
        return {r: raw[r] for r in names}


