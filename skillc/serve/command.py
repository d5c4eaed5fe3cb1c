"""`skillc serve --mcp`: check the machines, make the executor and the root folder, then serve until the client
leaves (stdio) or the server is stopped (HTTP). `skillc.api.serve` is `serve` here; the command line renders its
`ServeResult`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, make
from skillc.ir.machine import Machine
from skillc.language import load_checked
from skillc.runtime import ExecutorError, make_executor
from skillc.runtime.executors.scripted import ScriptError
from skillc.runtime.trace import TraceError
from skillc.serve import codes
from skillc.serve.catalog import entries


@attrs.define
class ServeConfig:
    """Everything `skillc serve --mcp` takes (the flags, by name)."""

    machines: tuple[str, ...] = ()
    executor: str | None = None  # scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL, local[…], sampling
    http: bool = False
    port: int = 8000  # with http; 0: any free port (the URL is announced on stderr)
    workdir: str | None = None  # the root of the calls' folders and the journal (default: a new temporary folder)
    base_url: str | None = None
    strategy: str = "auto"
    tools: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    retries: int = 2
    max_steps: int = 1000
    tool_timeout_s: float = 60.0
    model_timeout_s: float = 120.0
    step_deadline_s: float = 600.0
    max_tokens: int = 2048  # a sampled reply's budget (--executor sampling)
    input_timeout_s: float = 600.0  # a parked call's wait for the client's retry (protocol 2026-07-28)


@attrs.define
class ServeResult(HasDiagnostics):
    """How serving ended: the machines' diagnostics (nothing served), a usage problem, an error, or a stop."""

    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    usage: str | None = None
    usage_param: str | None = None
    error: str | None = None
    unchecked: bool = False
    interrupted: bool = False
    served: int = 0  # machines served
    root: str | None = None


def _usage(message: str, param: str | None = None) -> ServeResult:
    return ServeResult(usage=message, usage_param=param)


def serve(config: ServeConfig, *, announce: Callable[[str], None] | None = None) -> ServeResult:
    """Serve checked machines as MCP tools until the client leaves (stdio) or a signal stops the server (HTTP).

    `announce` gets one line when serving starts (the transport, the root folder, the HTTP URL); default: stderr.
    """
    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        import anyio  # the MCP extra (anyio comes with it): imported only when serving
        import mcp  # noqa: F401 - the SDK is the extra this command needs
    except ImportError as exc:
        return ServeResult([make(codes.MCP_UNAVAILABLE, f"skillc serve --mcp needs the MCP SDK ({exc}); "
                                 "pip install 'skillc[mcp]'")])
    c = config
    if not c.machines:
        return _usage("give the machines to serve: skillc serve --mcp MACHINE.skm …", "MACHINES")
    if not c.executor:
        return _usage("give the executor that answers model and judge states: --executor SPEC (or sampling: the "
                      "client's own model)", "--executor")
    # anyio, which serve.calls imports, is of the MCP extra: imported once the SDK is known to be there
    from skillc.serve.calls import PER_CALL_KINDS, Runner, Settings, make_root

    loaded: list[tuple[str, Machine, str]] = []
    problems: list[Diagnostic] = []
    unchecked = False
    for path in c.machines:
        checked = load_checked(path)
        if checked.machine is None:
            problems += checked.diagnostics
            unchecked = unchecked or checked.unchecked
            continue
        loaded.append((str(Path(path).resolve()), checked.machine, checked.text))
    if problems:
        return ServeResult(problems, unchecked=unchecked)
    served, clashes = entries(loaded)
    if clashes:
        return ServeResult(clashes)
    shared = None
    if c.executor != "sampling":
        try:
            executor = make_executor(c.executor, base_url=c.base_url, strategy=c.strategy,
                                     timeout_s=c.model_timeout_s)
        except (ExecutorError, ScriptError, TraceError, ValueError) as exc:
            return _usage(str(exc), "--executor")
        if c.executor.partition(":")[0].partition("?")[0] in PER_CALL_KINDS:
            executor.close()  # checked here, made afresh for every call (a script's position is the run's)
        else:
            shared = executor
    try:
        root = make_root(c.workdir)
    except OSError as exc:
        return _usage(f"cannot use {c.workdir} as the root folder: {exc.strerror or exc}", "--workdir")
    settings = Settings(executor=c.executor, root=root, tools=c.tools, base_url=c.base_url, strategy=c.strategy,
                        retries=c.retries, max_steps=c.max_steps, tool_timeout_s=c.tool_timeout_s,
                        model_timeout_s=c.model_timeout_s, step_deadline_s=c.step_deadline_s,
                        allow_hosts=c.allow_hosts, max_tokens=c.max_tokens)
    from skillc.serve.server import Service, bind, serve_http, serve_stdio  # the MCP SDK (the extra)

    service = Service(served, settings, Runner(settings, shared), input_timeout_s=c.input_timeout_s)
    names = ", ".join(e.name for e in served)
    try:
        if c.http:
            try:
                sock = bind(c.port)
            except OSError as exc:
                return ServeResult([make(diagnostics_codes.IO_ERROR, f"cannot listen on 127.0.0.1:{c.port}: "
                                         f"{exc.strerror or exc}")])

            def on_start(url: str) -> None:
                say(f"skillc serve: {names} over MCP at {url} (calls' folders and journal in {root})")

            anyio.run(lambda: serve_http(service, sock, announce=on_start))
        else:
            say(f"skillc serve: {names} over MCP on stdio (calls' folders and journal in {root})")
            anyio.run(serve_stdio, service)
    except BaseException as exc:
        if not _stopped(exc):
            raise
        return ServeResult(interrupted=True, served=len(served), root=str(root))
    finally:
        if shared is not None:
            shared.close()
    return ServeResult(served=len(served), root=str(root))


def _stopped(exc: BaseException) -> bool:
    """Whether `exc` is Ctrl-C or SIGTERM (`KeyboardInterrupt`), alone or inside the exception group of a task group
    it interrupted."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(lambda e: isinstance(e, KeyboardInterrupt)) is not None
    return False
