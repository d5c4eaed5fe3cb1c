"""The sandbox's codes are in the registry, and each is produced from real input by a test of this folder or the
callers' (`test_*confined*.py`): SKM940 (an import past its limit), SKM941 (a box killed by a limit), SKM942
(a box that cannot start), SKM943 (a rewritten verifier), SKM944 (a missing layer)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillc import registry
from skillc.sandbox import codes


def test_the_codes_are_registered() -> None:
    assert [c.code for c in codes.ALL] == ["SKM940", "SKM941", "SKM942", "SKM943", "SKM944"]
    assert all(registry.find(c.code) is c for c in codes.ALL)


def test_an_import_killed_by_a_signal_is_skm941(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langgraph")
    from skillc.frontends.importers import langgraph

    # without the PID namespace, where the module is not its PID 1 (which the kernel shields from its own kill)
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "namespaces")
    (tmp_path / "greedy.py").write_text("import os\nos.kill(os.getpid(), 9)\n", encoding="utf-8")
    text, found = langgraph.to_skm_confined("greedy:graph", folder=str(tmp_path), timeout_s=60)
    assert text is None and [str(d.code) for d in found] == ["SKM941"]


def test_a_box_that_cannot_start_is_skm942(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langgraph")
    from skillc.frontends.importers import langgraph

    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    text, found = langgraph.to_skm_confined("agent:graph", folder=str(tmp_path), timeout_s=30)
    assert text is None and [str(d.code) for d in found] == ["SKM942"]
