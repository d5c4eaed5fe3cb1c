"""The MCP server of `skillc serve --mcp`: checked machines as tools, over stdio or streamable HTTP on 127.0.0.1.

`tools/list` lists each machine (`catalog.py`) and `skillc_resume`. `tools/call` starts a run in a thread
(`calls.py`) and answers when it ends: the outcome, terminal, evidence, the files it delivered and its trace, as
structured content and a text summary. While it runs, the run may need the client:

- `ask_user` with a client that can elicit: on a handshake-era connection (protocol 2025-11-25 and before) the
  server sends `elicitation/create` mid-call and the answer goes back into the run; on a 2026-07-28 connection
  (no server-to-client requests) the run waits in its journal and the call returns `InputRequiredResult` asking
  the question, its `requestState` the resume token, so the client's retry continues the run. A client that
  cannot elicit, or a user who declines, gets status `waiting` and a resume token for `skillc_resume`.
- `--executor sampling`: each model or judge state is sent to the client's model (`sampling/createMessage` mid
  call; on 2026-07-28 an `InputRequiredResult` whose retry carries the reply, the run parked meanwhile and
  stopped when the client does not come back within `input_timeout_s`).

A cancelled call (`notifications/cancelled`, a closed HTTP stream) or a client that leaves stops its run: the
run is marked interrupted in its journal, its trace keeps every committed step, its `bash` process group is
killed, and the wait for it is bounded (`calls.STOP_GRACE_S`).
"""

from __future__ import annotations

import fcntl
import math
import os
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import attrs
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillc.runtime.executors.base import ExecutorError
from skillc.runtime.journal import Journal, JournalError
from skillc.runtime.jsonvalue import Object, Value
from skillc.serve import codes
from skillc.serve.calls import Call, Elicit, Ended, Failed, Finished, Reply, Report, Runner, Sample, Settings, Stopped
from skillc.serve.catalog import RESULT_SCHEMA, RESUME, RESUME_DESCRIPTION, RESUME_INPUT, Entry
from skillc.serve.tokens import Signer, TokenError, load_key
from skillc.version import __version__

#: The key of the question in an elicitation form and in `inputResponses`.
ANSWER = "answer"
#: The key of a sampling request in `inputRequests` / `inputResponses` (2026-07-28).
SAMPLE = "sample"
#: Seconds a parked call (2026-07-28 sampling) waits for the client's retry before its run is stopped.
INPUT_TIMEOUT_S = 600.0


@attrs.define
class Peer:
    """What the client of one request can do: elicit, sample, receive requests mid-call (handshake era)."""

    ctx: ServerRequestContext[Any, Any]

    @property
    def modern(self) -> bool:
        return self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def back_channel(self) -> bool:
        """Server-to-client requests can be sent during this call (handshake era with a live stream)."""
        return not self.modern and self.ctx.session.can_send_request

    def _capabilities(self) -> types.ClientCapabilities | None:
        return self.ctx.session.client_capabilities

    @property
    def can_elicit(self) -> bool:
        caps = self._capabilities()
        return caps is not None and caps.elicitation is not None and (self.modern or self.back_channel)

    @property
    def can_sample(self) -> bool:
        caps = self._capabilities()
        return caps is not None and caps.sampling is not None and (self.modern or self.back_channel)

    async def elicit(self, need: Elicit) -> str | None:
        """Ask the user through the client (mid-call); None when the user declines or cancels."""
        result = await self.ctx.session.send_request(
            types.ElicitRequest(params=types.ElicitRequestFormParams(message=need.question,
                                                                     requested_schema=form(need))),
            types.ElicitResult, metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id))
        return answer_of(result)

    async def sample(self, need: Sample) -> Reply:
        """The client's model's reply to a model or judge state (mid-call), within the need's timeout."""
        request = types.CreateMessageRequest(params=sampling_params(need))
        with anyio.fail_after(need.timeout_s if need.timeout_s is not None else math.inf):
            result = await self.ctx.session.send_request(
                request, types.CreateMessageResult,
                metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id))
        return reply_of(result)


def form(need: Elicit) -> Object:
    """The elicitation form of a question: one field, `answer`, a string (one of the menu when there is one)."""
    field: Object = {"type": "string", "title": "Answer", "description": need.question}
    if need.options:
        field["enum"] = list(need.options)
    return {"type": "object", "properties": {ANSWER: field}, "required": [ANSWER]}


def answer_of(result: types.ElicitResult) -> str | None:
    """The user's answer in an elicitation result; None when declined, cancelled or empty."""
    if result.action != "accept" or not result.content:
        return None
    value = result.content.get(ANSWER)
    return None if value is None else str(value)


def sampling_params(need: Sample) -> types.CreateMessageRequestParams:
    messages = [types.SamplingMessage(role="assistant" if role == "assistant" else "user",
                                      content=types.TextContent(type="text", text=text))
                for role, text in need.messages]
    return types.CreateMessageRequestParams(messages=messages, system_prompt=need.system, max_tokens=need.max_tokens,
                                            temperature=0.0, metadata={"skillc.state": need.state})


def reply_of(result: object) -> Reply:
    """The text of a sampled reply; ExecutorError for one that holds no text."""
    content = getattr(result, "content", None)
    blocks = content if isinstance(content, list) else [content]
    texts = [b.text for b in blocks if isinstance(b, types.TextContent)]
    if not texts:
        raise ExecutorError("the client's model replied without text")
    model = getattr(result, "model", None)
    return Reply("".join(texts), model if isinstance(model, str) else None)


def tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def tool_result(report: Report) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=report.summary())],
                                structured_content=report.content())


class Service:
    """The server's state: the machines, the runner, the signer, the calls in flight and those parked."""

    def __init__(self, entries: list[Entry], settings: Settings, runner: Runner, *,
                 input_timeout_s: float = INPUT_TIMEOUT_S, log: IO[str] | None = None) -> None:
        self.entries = {e.name: e for e in entries}
        self.settings = settings
        self.runner = runner
        self.signer = Signer(load_key(settings.root))
        self.input_timeout_s = input_timeout_s
        self.live: set[Call] = set()
        self.parked: dict[str, Call] = {}
        self.tasks: anyio.abc.TaskGroup | None = None
        self.log = log if log is not None else sys.stderr

    # ------------------------------------------------------------ MCP handlers

    def tools(self) -> list[types.Tool]:
        listed = [types.Tool(name=e.name, title=e.name, description=e.description, input_schema=e.input_schema,
                             output_schema=RESULT_SCHEMA) for e in self.entries.values()]
        listed.append(types.Tool(name=RESUME, title=RESUME, description=RESUME_DESCRIPTION,
                                 input_schema=RESUME_INPUT, output_schema=RESULT_SCHEMA))
        return listed

    async def on_list_tools(self, ctx: ServerRequestContext[Any, Any],
                            params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools())

    async def on_call_tool(self, ctx: ServerRequestContext[Any, Any],
                           params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        peer = Peer(ctx)
        args = dict(params.arguments or {})
        if params.request_state:
            return await self.proceed(params.request_state, params.input_responses or {}, peer)
        if params.name == RESUME:
            token, answer = args.get("token"), args.get(ANSWER)
            if not isinstance(token, str) or not isinstance(answer, str):
                return tool_error("skillc_resume takes `token` and `answer`, both strings")
            return await self.resume(token, answer, peer)
        entry = self.entries.get(params.name)
        if entry is None:
            return tool_error(f"no tool `{params.name}` here; the tools are "
                              + ", ".join(f"`{n}`" for n in [*self.entries, RESUME]))
        if refused := self.refuse_sampling(peer):
            return refused
        call = Call(entry)
        call.start(lambda c: self.runner.start(c, args, elicit=peer.back_channel and peer.can_elicit))
        return await self.drive(call, peer)

    # ------------------------------------------------------------ runs

    def refuse_sampling(self, peer: Peer) -> types.CallToolResult | None:
        if self.settings.executor == "sampling" and not peer.can_sample:
            return tool_error(f"error[{codes.SAMPLING_UNAVAILABLE.code}]: this server answers model and judge states "
                              "with the client's model (--executor sampling), and this client offers no sampling "
                              "(it did not declare the sampling capability); nothing ran")
        return None

    async def resume(self, token: str, answer: str | None,
                     peer: Peer) -> types.CallToolResult | types.InputRequiredResult:
        """Continue the waiting run a token names with the user's answer (None: no answer, it stays waiting)."""
        try:
            named = self.signer.read(token, "run")
        except TokenError as exc:
            return tool_error(f"error[{codes.BAD_RESUME_TOKEN.code}]: the resume token is refused: {exc}")
        entry = self.entries.get(named.machine)
        if entry is None:
            return tool_error(f"error[{codes.BAD_RESUME_TOKEN.code}]: the resume token names a run of "
                              f"`{named.machine}`, which this server does not serve")
        if refused := self.refuse_sampling(peer):
            return refused
        call = Call(entry)
        call.start(lambda c: self.runner.resume(c, named.ident, answer, elicit=peer.back_channel and peer.can_elicit))
        return await self.drive(call, peer)

    async def proceed(self, state: str, responses: Mapping[str, Value],
                      peer: Peer) -> types.CallToolResult | types.InputRequiredResult:
        """A 2026-07-28 retry: the answer to the question a run waits on, or the reply a parked call needs."""
        try:
            named = self.signer.read(state)
        except TokenError as exc:
            return tool_error(f"error[{codes.BAD_RESUME_TOKEN.code}]: the request state is refused: {exc}")
        if named.kind == "run":
            response = responses.get(ANSWER)
            answer = answer_of(response) if isinstance(response, types.ElicitResult) else None
            if answer is None:  # declined, cancelled or left out: the run keeps waiting, its token answers it later
                return await self.waiting(named.machine, named.ident, state)
            return await self.resume(state, answer, peer)
        call = self.parked.pop(named.ident, None)
        if call is None:
            return tool_error(f"error[{codes.BAD_RESUME_TOKEN.code}]: the call this retry continues is gone (it was "
                              "continued already, or waited longer than the input timeout and was stopped)")
        response = responses.get(SAMPLE)
        try:
            call.answer(reply_of(response) if response is not None else
                        ExecutorError("the client's retry carried no sampling reply"))
        except ExecutorError as exc:
            call.answer(exc)
        return await self.drive(call, peer)

    async def waiting(self, machine: str, run_id: str, token: str) -> types.CallToolResult:
        """The report of a run that still waits (its question read back from the journal)."""

        def read() -> Report:
            journal = Journal(self.settings.journal)
            try:
                wait = journal.waiting(run_id)
                info = journal.info(run_id)
            finally:
                journal.close()
            if wait is None:
                raise JournalError(f"run `{run_id}` is not waiting (it is {info.status})")
            return Report(machine, "waiting", "", run_id, info.trace_path, steps=wait.step, question=wait.question,
                          options=wait.options, resume_token=token)

        try:
            report = await anyio.to_thread.run_sync(read)
        except Exception as exc:  # noqa: BLE001 - a journal problem is the client's answer, not a crash
            return tool_error(f"error[{codes.BAD_RESUME_TOKEN.code}]: {exc}")
        return tool_result(report)

    async def drive(self, call: Call, peer: Peer) -> types.CallToolResult | types.InputRequiredResult:
        """Serve a call's events until its run ends (the result) or, on 2026-07-28, needs the client's retry."""
        self.live.add(call)
        parked = False
        try:
            while True:
                event = await call.next_event()
                if isinstance(event, Elicit):  # handshake era: ask mid-call
                    try:
                        call.answer(await peer.elicit(event))
                    except Exception:  # noqa: BLE001 - an elicitation that failed is an unanswered question
                        call.answer(None)
                elif isinstance(event, Sample):
                    if peer.modern:
                        parked = True
                        return self.park(call, event)
                    try:
                        call.answer(await peer.sample(event))
                    except TimeoutError:
                        call.answer(ExecutorError(f"the client's model did not answer within {event.timeout_s:g} s"))
                    except ExecutorError as exc:
                        call.answer(exc)
                    except Exception as exc:  # noqa: BLE001 - a refused or broken request: the step retries or fails
                        call.answer(ExecutorError(f"sampling failed: {exc}"))
                elif isinstance(event, Finished):
                    return self.finish(event.report, peer)
                elif isinstance(event, Failed):
                    return tool_error(event.message)
                elif isinstance(event, Ended):
                    return tool_error("the run was stopped" + (f" (run {event.run_id}, interrupted in the journal)"
                                                               if event.run_id else ""))
        except BaseException:
            await call.stop()  # cancelled (or the server is going): stop the run, bounded, then let it go on
            raise
        finally:
            if not parked:
                self.live.discard(call)

    def finish(self, report: Report, peer: Peer) -> types.CallToolResult | types.InputRequiredResult:
        if report.status != "waiting" or report.run_id is None:
            return tool_result(report)
        token = self.signer.make("run", report.machine, report.run_id)
        report = attrs.evolve(report, resume_token=token)
        if peer.modern and peer.can_elicit:
            need = Elicit(report.question or "", report.options)
            request = types.ElicitRequest(params=types.ElicitRequestFormParams(message=need.question,
                                                                               requested_schema=form(need)))
            return types.InputRequiredResult(input_requests={ANSWER: request}, request_state=token)
        return tool_result(report)

    def park(self, call: Call, need: Sample) -> types.InputRequiredResult:
        """Keep a call whose run waits for the client's model until the client retries (2026-07-28)."""
        self.parked[call.id] = call
        if self.tasks is not None:
            self.tasks.start_soon(self._expire, call)
        state = self.signer.make("live", call.entry.name, call.id)
        request = types.CreateMessageRequest(params=sampling_params(need))
        return types.InputRequiredResult(input_requests={SAMPLE: request}, request_state=state)

    async def _expire(self, call: Call) -> None:
        with anyio.move_on_after(self.input_timeout_s):
            while self.parked.get(call.id) is call:
                await anyio.sleep(0.5)
            return
        if self.parked.pop(call.id, None) is call:
            await call.stop()
            self.live.discard(call)

    async def close(self) -> None:
        """Stop every run still going (the client left, or the server is told to stop)."""
        calls = list(self.live) + list(self.parked.values())
        self.parked.clear()
        for call in calls:
            call.guard.stop()
            call.answer(Stopped())
        for call in calls:
            await call.stop()


def build(service: Service) -> Server[Any]:
    """The low-level MCP server of a service."""
    return Server("skillc", version=__version__, title="skillc",
                  description="Checked skillc machines as tools",
                  instructions="Each tool runs a checked state machine to one of its terminals. A result with status "
                               "`waiting` asks the user a question: answer it with skillc_resume(token, answer).",
                  on_list_tools=service.on_list_tools, on_call_tool=service.on_call_tool)


class _Stdin:
    """The client's lines, read by a daemon thread of our own from a private copy of fd 0 (fd 0 itself then reads
    /dev/null, so no tool reads the protocol's input).

    The SDK's own reader is a worker thread that cancellation waits for, so a server told to stop (SIGINT,
    SIGTERM) while its client keeps stdin open would never end; this one is abandoned instead.
    """

    def __init__(self) -> None:

        self._fd = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self._send, self._receive = anyio.create_memory_object_stream[str](16)
        self._token = anyio.lowlevel.current_token()
        threading.Thread(target=self._read, name="skillc-serve-stdin", daemon=True).start()

    def _read(self) -> None:

        with os.fdopen(self._fd, "rb", closefd=True) as stream:
            try:
                for line in stream:
                    anyio.from_thread.run(self._send.send, line.decode("utf-8", errors="replace"), token=self._token)
            except (RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass
            finally:
                try:
                    anyio.from_thread.run_sync(self._send.close, token=self._token)
                except RuntimeError:
                    pass

    def __aiter__(self) -> _Stdin:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


async def serve_stdio(service: Service) -> None:
    """Serve over stdin/stdout until the client closes stdin (or a signal stops the server); every run still going
    is stopped."""
    from mcp.server.stdio import stdio_server  # the SDK's stdio transport: loaded only when serving on stdio

    server = build(service)
    async with anyio.create_task_group() as tasks:
        service.tasks = tasks
        try:
            async with stdio_server(stdin=_Stdin()) as (read, write):  # type: ignore[arg-type]
                await server.run(read, write, server.create_initialization_options())
        finally:
            with anyio.CancelScope(shield=True):
                await service.close()
            tasks.cancel_scope.cancel()


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free port); OSError when the port is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock


async def serve_http(service: Service, sock: socket.socket, *, announce: Callable[[str], None] | None = None) -> None:
    """Serve streamable HTTP at `http://127.0.0.1:PORT/mcp` on `sock` until SIGINT/SIGTERM; runs still going are
    stopped. DNS-rebinding protection admits only loopback hosts and origins."""
    import uvicorn  # the HTTP server (an MCP SDK dependency): loaded only when serving over HTTP

    server = build(service)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    web = uvicorn.Server(config)
    port = sock.getsockname()[1]
    if announce is not None:
        announce(f"http://127.0.0.1:{port}/mcp")
    async with anyio.create_task_group() as tasks:
        service.tasks = tasks
        try:
            await web.serve(sockets=[sock])
        finally:
            with anyio.CancelScope(shield=True):
                await service.close()
            tasks.cancel_scope.cancel()
