"""Executors answer model and judge requests: `scripted:`, `replay:`, `recorded:`, `openai:`, `anthropic:`, `local`."""

from __future__ import annotations

import attrs

from skillc.runtime.executors.anthropic_exec import AnthropicExecutor
from skillc.runtime.executors.base import BaseExecutor, Executor, ExecutorError, Response, spec_file
from skillc.runtime.executors.local import LocalExecutor, parse_spec
from skillc.runtime.executors.openai_exec import OpenAIExecutor
from skillc.runtime.executors.recorded import RecordedExecutor
from skillc.runtime.executors.replay import ReplayExecutor
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.jsonvalue import Object

SPECS = "scripted:FILE, replay:TRACE, recorded:DIR, openai:MODEL, anthropic:MODEL, local[:PATH.gguf][?NAME=VALUE&…]"
# the specs that name a model
MODEL_SPECS = "openai:MODEL, anthropic:MODEL, recorded:DIR or local[:PATH.gguf][?NAME=VALUE&…]"


@attrs.frozen
class Budget:
    """Token budgets of the model executors, for work larger than one state (None: the executor's default)."""

    max_tokens: int | None = None  # openai and anthropic replies
    local_max_tokens: int | None = None
    local_n_ctx: int | None = None

    def remote(self) -> Object:
        """Keyword arguments of the openai and anthropic executors."""
        return {} if self.max_tokens is None else {"max_tokens": self.max_tokens}

    def local(self) -> Object:
        """Keyword arguments of the local executor."""
        out: Object = {} if self.local_n_ctx is None else {"n_ctx": self.local_n_ctx}
        return out if self.local_max_tokens is None else {**out, "max_tokens": self.local_max_tokens}


def make_executor(spec: str, *, base_url: str | None = None, strategy: str = "auto",
                  timeout_s: float = 120.0, budget: Budget = Budget(), models_only: bool = False) -> Executor:
    """An executor from a `--executor` spec; ExecutorError (or ScriptError/TraceError) explains a bad one.

    `models_only` accepts only the specs that name a model (`skillc build --model`).
    """
    kind, _, arg = spec.partition(":")
    if kind.startswith("local?"):  # `local?n_ctx=4096`: parameters without a path
        kind = "local"
    if models_only and not ((kind in ("openai", "anthropic", "recorded") and arg) or kind == "local"):
        raise ExecutorError(f"unknown model {spec!r}; expected {MODEL_SPECS}")
    if kind == "scripted" and arg:
        return ScriptedExecutor.from_file(arg)
    if kind == "replay" and arg:
        return ReplayExecutor(arg)
    if kind == "recorded" and arg:  # model replies recorded with tools/standin.py
        return RecordedExecutor(arg)
    if kind == "openai" and arg:
        return OpenAIExecutor(arg, base_url=base_url, strategy=strategy, timeout_s=timeout_s, **budget.remote())
    if kind == "anthropic" and arg:
        return AnthropicExecutor(arg, base_url=base_url, timeout_s=timeout_s, **budget.remote())
    if kind == "local":
        path, options = parse_spec(spec)  # the spec's parameters win over the caller's budget
        return LocalExecutor(path, timeout_s=timeout_s, **{**budget.local(), **options})
    raise ExecutorError(f"unknown executor {spec!r}; expected one of {SPECS}")


__all__ = ["MODEL_SPECS", "SPECS", "BaseExecutor", "Budget", "Executor", "ExecutorError", "Response", "make_executor",
           "spec_file"]
