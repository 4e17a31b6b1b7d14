"""Any OpenAI-compatible chat endpoint: OpenAI, DeepSeek, Zhipu, Ollama, vLLM, llama.cpp server.

Speaks ``POST {base_url}/chat/completions`` with the standard library's HTTP client and asks for
a JSON object (``response_format: json_object``). The API key is sent as a bearer token and is
never logged or put in ``name``. A 429 or 5xx answer is retried with backoff (the server's
``Retry-After`` honoured, :func:`memstrata.retry.retry_remote`), then raised as
:class:`LLMUnavailableError`; a request that outlives ``timeout_s`` raises
:class:`LLMTimeoutError`. :meth:`OpenAIChat.chat` also returns the reply's ``usage``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memstrata import retry
from memstrata.errors import LLMError, LLMReplyError, LLMTimeoutError, LLMUnavailableError
from memstrata.httpjson import post_json
from memstrata.model import JsonValue
from memstrata.ports import ChatMessage

if TYPE_CHECKING:
    from memstrata.settings import OpenAILLMSettings


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a call took: its prompt (``tokens_in``) and its reply (``tokens_out``)."""

    tokens_in: int
    tokens_out: int


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A reply's text as the provider sent it (not yet parsed) and its ``usage`` (None when
    the provider did not say)."""

    text: object
    usage: Usage | None


def _unavailable(message: str, status: int, retry_after_s: float | None) -> LLMUnavailableError:
    return LLMUnavailableError(message, status=status, retry_after_s=retry_after_s)


def _usage(payload: Any) -> Usage | None:
    usage = payload.get("usage") if isinstance(payload, dict) else None
    if not isinstance(usage, dict):
        return None
    tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not (isinstance(tokens_in, int) and isinstance(tokens_out, int)):
        return None
    if isinstance(tokens_in, bool) or isinstance(tokens_out, bool):
        return None
    return Usage(tokens_in, tokens_out) if min(tokens_in, tokens_out) >= 0 else None


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
        max_retries: int = retry.TRANSIENT_RETRIES,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.json_mode = json_mode
        self.max_retries = max_retries
        self._sleep = sleep

    @classmethod
    def from_settings(cls, s: OpenAILLMSettings) -> OpenAIChat:
        return cls(
            base_url=s.base_url,
            model=s.model,
            api_key=s.api_key.get_secret_value() if s.api_key else None,
            timeout_s=s.timeout_s,
            json_mode=s.json_mode,
            max_retries=s.max_retries,
        )

    @property
    def name(self) -> str:
        return f"openai:{self.base_url}:{self.model}"

    def complete_json(
        self, messages: Sequence[ChatMessage], *, temperature: float = 0.0
    ) -> dict[str, JsonValue]:
        return parse_json_reply(self.chat(messages, temperature=temperature).text)

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0) -> ChatReply:
        """One completion: the reply's text (unparsed) and its usage. 429 and 5xx answers
        are retried (``max_retries`` times) before :class:`LLMUnavailableError` is raised."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
        }
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}

        def post() -> Any:
            return post_json(
                f"{self.base_url}/chat/completions",
                body,
                api_key=self._api_key,
                timeout_s=self.timeout_s,
                error=LLMError,
                transient=_unavailable,
                timeout=LLMTimeoutError,
            )

        payload = retry.retry_remote(
            post,
            transient=LLMUnavailableError,
            hint=lambda exc: exc.retry_after_s,
            retries=self.max_retries,
            sleep=self._sleep,
        )
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.base_url} answered without choices[0].message.content") from exc
        return ChatReply(content, _usage(payload))


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
