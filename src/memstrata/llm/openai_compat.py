"""Any OpenAI-compatible chat endpoint: OpenAI, DeepSeek, Zhipu, Ollama, vLLM, llama.cpp server.

Speaks ``POST {base_url}/chat/completions`` with the standard library's HTTP client and asks for
a JSON object (``response_format: json_object``). The API key is sent as a bearer token and is
never logged or put in ``name``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.errors import LLMError, LLMReplyError
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
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload: Any = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            raise LLMError(f"{self.base_url} answered {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise LLMError(f"cannot reach {self.base_url}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise LLMError(f"{self.base_url} did not answer JSON") from exc
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
