"""`openai:MODEL` — any OpenAI-compatible endpoint through the `openai` SDK (OpenAI, vLLM, Ollama, llama.cpp).

Backends disagree on how to ask for JSON-Schema-constrained output, so the
request shape is a *strategy*:

- `json_schema` — OpenAI: `response_format={"type": "json_schema", "json_schema": {…, "strict": true}}`;
- `json_object` — llama.cpp's server: `response_format={"type": "json_object", "schema": …}`;
- `vllm` — vLLM ≥ 0.12: `extra_body={"structured_outputs": {"json": …}}`;
- `prompt` — no constraint; the contract is in the prompt and the answer is still validated.

`auto` picks `json_schema` for api.openai.com and `json_object` for other base URLs.
"""

from __future__ import annotations

import os
from typing import Any, cast

from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response, count, retry_after
from skillc.runtime.prompts import Request

STRATEGIES = ("auto", "json_schema", "json_object", "vllm", "prompt")


class OpenAIExecutor(BaseExecutor):
    """Chat completions with a structured-output strategy."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 strategy: str = "auto", timeout_s: float = 120.0, max_tokens: int | None = 1024,
                 temperature: float = 0.0) -> None:
        try:
            import openai  # optional extra (skillc[openai])
        except ImportError:
            raise ExecutorError("the openai executor needs the openai package "
                                "(pip install 'skillc[openai]')") from None
        if strategy not in STRATEGIES:
            raise ExecutorError(f"unknown structured-output strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
        self.openai = openai
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if strategy == "auto":
            strategy = "json_schema" if not base_url or "api.openai.com" in base_url else "json_object"
        self.strategy = strategy
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused",
                                    timeout=timeout_s, max_retries=0)
        self.timeout_s = timeout_s
        self._timeout = timeout_s
        self.name = f"openai:{model}"

    def limit_time(self, seconds: float) -> None:
        """Cut the next request's timeout to what is left of the step's deadline."""
        self._timeout = max(0.05, min(self.timeout_s, seconds))

    def _format(self, request: Request) -> dict:
        if self.strategy == "json_schema":
            return {"response_format": {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "schema": request.schema, "strict": True}}}
        if self.strategy == "json_object":
            return {"response_format": {"type": "json_object", "schema": request.schema}}
        if self.strategy == "vllm":
            return {"extra_body": {"structured_outputs": {"json": request.schema}}}
        return {}

    def complete(self, request: Request) -> Response:
        try:
            reply = self.client.chat.completions.create(
                model=self.model, messages=cast(Any, list(request.messages)), temperature=self.temperature,
                max_tokens=self.max_tokens, timeout=self._timeout, **self._format(request))
        except self.openai.APIStatusError as exc:
            raise ExecutorError(f"HTTP {exc.status_code} from the model server",
                                retry_after=retry_after(exc.response.headers)) from None
        except self.openai.APITimeoutError:
            raise ExecutorError(f"the model server timed out (after {self._timeout:g} s)") from None
        except self.openai.APIError as exc:
            raise ExecutorError(f"the model server failed: {type(exc).__name__}") from None
        except (ValueError, TypeError, KeyError) as exc:  # a reply body the SDK cannot decode
            raise ExecutorError(f"the model server sent an unreadable reply ({type(exc).__name__})") from None
        try:
            text = reply.choices[0].message.content or ""
            cut = getattr(reply.choices[0], "finish_reason", None) == "length"
        except (AttributeError, IndexError, TypeError, KeyError):
            raise ExecutorError("the model server sent a reply without a message") from None
        if not isinstance(text, str):  # the SDK does not validate replies: a number or a list can arrive here
            raise ExecutorError(f"the model server sent a message whose content is {type(text).__name__}, "
                                "not text")
        usage = getattr(reply, "usage", None)
        model = getattr(reply, "model", None)
        return Response(text, model=model if isinstance(model, str) and model else self.model,
                        input_tokens=count(getattr(usage, "prompt_tokens", None)),
                        output_tokens=count(getattr(usage, "completion_tokens", None)), cut=cut)

    def close(self) -> None:
        self.client.close()
