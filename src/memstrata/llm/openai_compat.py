"""Any OpenAI-compatible chat endpoint: OpenAI, DeepSeek, Zhipu, Ollama, vLLM, llama.cpp server.

Speaks ``POST {base_url}/chat/completions`` with the standard library's HTTP client and asks for
a JSON object (``response_format: json_object``). The API key is sent as a bearer token and is
never logged or put in ``name``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.errors import LLMError, LLMReplyError
from memstrata.httpjson import post_json
from memstrata.model import JsonValue
from memstrata.ports import ChatMessage

if TYPE_CHECKING:
    from memstrata.settings import OpenAILLMSettings


class OpenAIChat:
    """:class:`memstrata.ports.LLM` over ``/chat/completions``."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        json_mode: bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.json_mode = json_mode

    @classmethod
    def from_settings(cls, s: OpenAILLMSettings) -> OpenAIChat:
        return cls(
            base_url=s.base_url,
            model=s.model,
            api_key=s.api_key.get_secret_value() if s.api_key else None,
            timeout_s=s.timeout_s,
            json_mode=s.json_mode,
        )

    @property
    def name(self) -> str:
        return f"openai:{self.base_url}:{self.model}"

    def complete_json(
        self, messages: Sequence[ChatMessage], *, temperature: float = 0.0
    ) -> dict[str, JsonValue]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
        }
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        payload = post_json(
            f"{self.base_url}/chat/completions",
            body,
            api_key=self._api_key,
            timeout_s=self.timeout_s,
            error=LLMError,
        )
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.base_url} answered without choices[0].message.content") from exc
        return parse_json_reply(content)


def parse_json_reply(content: object) -> dict[str, JsonValue]:
    """The JSON object in a model's reply (a ```json fence around it is tolerated)."""
    if not isinstance(content, str):
        raise LLMReplyError("the reply has no text")
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMReplyError(f"the reply is not JSON: {exc.msg} at {exc.pos}") from exc
    if not isinstance(value, dict):
        raise LLMReplyError(f"the reply is JSON {type(value).__name__}, not an object")
    return value
