"""Arbitrary suite documents never crash the loader: a suite loads, or errors say what is wrong and where."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.bench.suite import load_suite

KEYS = ["name", "skill", "machine", "tasks", "timeout", "failed_runs_comply", "id", "inputs", "workdir", "horizon",
        "verify", "python", "shell", "file", "equals", "matches", "kind", "path", "tool", "argument", "first", "then",
        "quote", "task", "require", "x"]
STRINGS = st.sampled_from(["SKILL.md", "tasks.jsonl", "verifiers:check", "verifiers.check", "true", "answer.txt",
                           "../up", "/abs", "(", "^B$", "file", "no-file", "tool", "no-tool", "order", "bash", "q1",
                           "fixtures", ""])
SCALARS = st.one_of(STRINGS, st.integers(-2, 100), st.floats(-1, 10, allow_nan=False), st.booleans())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                      max_leaves=12)
TABLES = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6)
DOCUMENTS = st.fixed_dictionaries({}, optional={"suite": TABLES, "verify": TABLES, "task": st.lists(TABLES, max_size=3),
                                                "require": st.lists(TABLES, max_size=3), "x": VALUES})


def toml_value(value: object) -> str:
    """A value as TOML inline syntax (tables inline, so any nesting is one line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS, st.booleans())
def test_any_document_loads_or_is_reported(document: dict[str, object], as_jsonl: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "SKILL.md").write_text("", encoding="utf-8")
        (folder / "verifiers.py").write_text("", encoding="utf-8")
        (folder / "fixtures").mkdir()
        tasks = document.get("task", [])
        if as_jsonl and isinstance(tasks, list):  # the same tasks from a JSONL file instead
            (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
            document = {**document, "task": []}
        text = "".join(f"{k} = {toml_value(v)}\n" for k, v in document.items())
        (folder / "suite.toml").write_text(text, encoding="utf-8")
        result = load_suite(folder / "suite.toml")
        assert result.ok == (result.suite is not None)
        if not result.ok:
            assert any(d.is_error for d in result.diagnostics)
            assert all(d.span is not None and str(d.code).startswith("SKM7") for d in result.diagnostics), \
                [(str(d.code), d.message) for d in result.diagnostics]
        else:
            assert result.suite is not None and result.suite.tasks
