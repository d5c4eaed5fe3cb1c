"""A real OTLP/HTTP receiver on 127.0.0.1 (a thread of `http.server`), and a finished run's trace."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest

from skillc import api
from tests.conftest import ROOT

LIVEMATH = ROOT / "examples" / "livemath" / "livemath.skm"
FITS = {f"fit_{x}": "fits" if x == "B" else "contradicts" for x in "ABCDE"}
SCRIPT: dict[str, Any] = {
    "outputs": {"analyze": [{"restatement": "6 * 7", "work": "6 * 7 = 42", "result": "42"}],
                "review_options": [FITS], "pick": [{"choice": "B", "doubt": "", "sanity_check": "ok"}],
                "judge_complete": ["not json", {"completeness": "complete"}]},
    "tools": {"write": [{"stdout": "", "exit_code": 0}], "read_back": [{"stdout": "B", "exit_code": 0}]}}


@attrs.define
class Receiver:
    """What the receiver got: the decoded requests' spans, and the status it answers with."""

    url: str
    status: int = 200
    requests: list[Any] = attrs.Factory(list)

    @property
    def spans(self) -> list[Any]:
        return [s for req in self.requests for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """An OTLP/HTTP collector on a free port of 127.0.0.1 decoding each protobuf request."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    state = Receiver("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path == "/v1/traces" and state.status == 200:
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                state.requests.append(request)
            self.send_response(state.status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return str(path)


@pytest.fixture
def finished_trace(tmp_path: Path, script: str) -> Path:
    """A machine-mode trace of livemath: six steps, one retried judge answer, success."""
    trace = tmp_path / "run.jsonl"
    report = api.run(api.RunConfig(machine=str(LIVEMATH), executor=f"scripted:{script}", trace=str(trace),
                                   workdir=str(tmp_path), journal=str(tmp_path / "runs.sqlite"),
                                   inputs=("question=What is 6 times 7?", 'options=["40","42","44","48","49"]')))
    assert report.result is not None and report.result.outcome == "success", report
    return trace
