"""`skillc run --otel`: the spans reach a real OTLP/HTTP receiver; a collector that fails is a warning and the run,
its trace and its exit status stay as they were."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from skillc import api
from skillc.runtime.record import load_run
from tests.conftest import ROOT
from tests.otel.conftest import LIVEMATH, Receiver

ARGS = ("--input", "question=What is 6 times 7?", "--input", 'options=["40","42","44","48","49"]')


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}, timeout=120)


def _attribute(span, key: str):
    value = next(a.value for a in span.attributes if a.key == key)
    return getattr(value, value.WhichOneof("value"))


def test_the_spans_arrive_by_otlp_http(receiver: Receiver, tmp_path: Path, script: str) -> None:
    r = cli(tmp_path, "run", str(LIVEMATH), "--executor", f"scripted:{script}", "--workdir", str(tmp_path), *ARGS,
            "--otel", receiver.url)
    assert r.returncode == 0, r.stderr
    assert "SKM88" not in r.stderr and "trace:" not in r.stdout  # the temporary trace is not shown, nor kept
    assert len(receiver.requests) == 1
    spans = receiver.spans
    assert len(spans) == 7
    names = sorted(s.name for s in spans)
    assert names == ["chat scripted"] * 4 + ["execute_tool bash"] * 2 + ["invoke_agent livemath"]
    root = next(s for s in spans if not s.parent_span_id)
    assert all(s.parent_span_id == root.span_id for s in spans if s is not root)
    assert _attribute(root, "skillc.outcome") == "success" and _attribute(root, "gen_ai.agent.name") == "livemath"
    resource = receiver.requests[0].resource_spans[0].resource
    assert any(a.key == "service.name" and a.value.string_value == "skillc" for a in resource.attributes)


def test_a_collector_answering_500_is_a_warning(receiver: Receiver, tmp_path: Path, script: str) -> None:
    receiver.status = 500
    trace = tmp_path / "kept.jsonl"
    r = cli(tmp_path, "run", str(LIVEMATH), "--executor", f"scripted:{script}", "--workdir", str(tmp_path), *ARGS,
            "--trace", str(trace), "--otel", receiver.url)
    assert r.returncode == 0, r.stderr
    assert "warning[SKM880]" in r.stderr and "500" in r.stderr and "Traceback" not in r.stderr
    assert "outcome: success" in r.stdout and f"trace: {trace}" in r.stdout
    assert load_run(trace).footer.outcome == "success"  # the trace is whole


def test_a_refused_connection_is_a_warning_within_the_timeout(tmp_path: Path, script: str) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = cli(tmp_path, "run", str(LIVEMATH), "--executor", f"scripted:{script}", "--workdir", str(tmp_path), *ARGS,
            "--otel", f"http://127.0.0.1:{port}", "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["outcome"] == "success"
    assert "warning[SKM880]" in r.stderr and "refused" in r.stderr.lower()


def test_the_exit_status_of_a_failed_run_is_unchanged(receiver: Receiver, tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps({"outputs": {"analyze": ["not json"]}}), encoding="utf-8")
    r = cli(tmp_path, "run", str(LIVEMATH), "--executor", f"scripted:{script}", "--workdir", str(tmp_path), *ARGS,
            "--otel", receiver.url)
    assert r.returncode == 5 and "outcome: failed" in r.stdout
    root = next(s for s in receiver.spans if not s.parent_span_id)
    assert root.status.code == 2  # STATUS_CODE_ERROR


def test_a_bad_endpoint_is_a_usage_error(tmp_path: Path, script: str) -> None:
    r = cli(tmp_path, "run", str(LIVEMATH), "--executor", f"scripted:{script}", *ARGS, "--otel", "localhost:4318")
    assert r.returncode == 2 and "--otel" in r.stderr and not (tmp_path / ".skillc").exists()


def test_without_the_sdk_it_is_a_warning(finished_trace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith("opentelemetry.sdk")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    result = api.export_otel(finished_trace, "http://127.0.0.1:4318")
    assert not result.sent and [str(d.code) for d in result.diagnostics] == ["SKM881"]
