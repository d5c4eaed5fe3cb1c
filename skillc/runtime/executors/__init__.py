"""Executors answer model and judge requests: `scripted:`, `replay:`, `openai:`, `anthropic:`, `local`."""

from __future__ import annotations

from skillc.runtime.executors.base import BaseExecutor, Executor, ExecutorError, Response

SPECS = "scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL, local[:PATH.gguf]"


def make_executor(spec: str, *, base_url: str | None = None, strategy: str = "auto",
                  timeout_s: float = 120.0) -> Executor:
    """An executor from a `--executor` spec; ExecutorError (or ScriptError/TraceError) explains a bad one."""
    kind, _, arg = spec.partition(":")
    if kind == "scripted" and arg:
        from skillc.runtime.executors.scripted import ScriptedExecutor

        return ScriptedExecutor.from_file(arg)
    if kind == "replay" and arg:
        from skillc.runtime.executors.replay import ReplayExecutor

        return ReplayExecutor(arg)
    if kind == "openai" and arg:
        from skillc.runtime.executors.openai_exec import OpenAIExecutor

        return OpenAIExecutor(arg, base_url=base_url, strategy=strategy, timeout_s=timeout_s)
    if kind == "anthropic" and arg:
        from skillc.runtime.executors.anthropic_exec import AnthropicExecutor

        return AnthropicExecutor(arg, base_url=base_url, timeout_s=timeout_s)
    if kind == "local":
        from skillc.runtime.executors.local import LocalExecutor

        return LocalExecutor(arg or None)
    raise ExecutorError(f"unknown executor {spec!r}; expected one of {SPECS}")


__all__ = ["BaseExecutor", "Executor", "ExecutorError", "Response", "SPECS", "make_executor"]
