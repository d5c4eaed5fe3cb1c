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

from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.prompts import Request

STRATEGIES = ("auto", "json_schema", "json_object", "vllm", "prompt")


class OpenAIExecutor(BaseExecutor):
    """Chat completions with a structured-output strategy."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 strategy: str = "auto", timeout_s: float = 120.0, max_tokens: int | None = 1024,
                 temperature: float = 0.0) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a core dependency
            raise ExecutorError("the openai package is not installed") from exc
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
        self.name = f"openai:{model}"

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
                model=self.model, messages=list(request.messages), temperature=self.temperature,
                max_tokens=self.max_tokens, **self._format(request))
        except self.openai.APIStatusError as exc:
            raise ExecutorError(f"HTTP {exc.status_code} from the model server") from None
        except self.openai.APITimeoutError:
            raise ExecutorError("the model server timed out") from None
        except self.openai.APIError as exc:
            raise ExecutorError(f"the model server failed: {type(exc).__name__}") from None
        except (ValueError, TypeError, KeyError) as exc:  # a reply body the SDK cannot decode
            raise ExecutorError(f"the model server sent an unreadable reply ({type(exc).__name__})") from None
        try:
            text = reply.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            raise ExecutorError("the model server sent a reply without a message") from None
        usage = getattr(reply, "usage", None)
        return Response(text, model=getattr(reply, "model", None) or self.model,
                        input_tokens=getattr(usage, "prompt_tokens", None),
                        output_tokens=getattr(usage, "completion_tokens", None))

    def close(self) -> None:
        self.client.close()
