"""`anthropic:MODEL` — Claude through the `anthropic` SDK (extra `skillc[anthropic]`).

Structured output uses a forced tool call whose input schema is the output
contract, so the answer arrives as JSON matching the schema.
"""

from __future__ import annotations

import json
import os
from typing import Any, cast

from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.prompts import Request


class AnthropicExecutor(BaseExecutor):
    """Messages API with a forced `answer` tool."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 120.0, max_tokens: int = 1024) -> None:
        try:
            import anthropic  # optional extra (skillc[anthropic])
        except ImportError:
            raise ExecutorError("the anthropic executor needs the anthropic package "
                                "(pip install 'skillc[anthropic]')") from None
        self.anthropic = anthropic
        self.client = anthropic.Anthropic(base_url=base_url, api_key=api_key or os.environ.get("ANTHROPIC_API_KEY")
                                          or "unused", timeout=timeout_s, max_retries=0)
        self.model = model
        self.max_tokens = max_tokens
        self.name = f"anthropic:{model}"

    def complete(self, request: Request) -> Response:
        system = "\n".join(m["content"] for m in request.messages if m["role"] == "system")
        messages = [m for m in request.messages if m["role"] != "system"]
        try:
            reply = self.client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=system, messages=cast(Any, messages),
                tools=cast(Any, [{"name": "answer", "description": "Give the step's output.",
                                  "input_schema": request.schema}]),
                tool_choice={"type": "tool", "name": "answer"})
        except self.anthropic.APIStatusError as exc:
            raise ExecutorError(f"HTTP {exc.status_code} from the Anthropic API") from None
        except self.anthropic.APIError as exc:
            raise ExecutorError(f"the Anthropic API failed: {type(exc).__name__}") from None
        for block in reply.content:
            if getattr(block, "type", None) == "tool_use":
                text = json.dumps(getattr(block, "input", None))
                break
        else:
            text = "".join(getattr(b, "text", "") for b in reply.content)
        usage = getattr(reply, "usage", None)
        return Response(text, model=reply.model, input_tokens=getattr(usage, "input_tokens", None),
                        output_tokens=getattr(usage, "output_tokens", None),
                        cut=getattr(reply, "stop_reason", None) == "max_tokens")
