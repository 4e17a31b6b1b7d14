"""POST a JSON body and read a JSON answer, with the standard library's HTTP client.

Shared by the adapters that speak OpenAI-compatible HTTP APIs (embeddings, chat). Failures
are raised as the caller's error class, so each adapter keeps its place in the error tree. The
API key goes in the Authorization header only; it never appears in an error message. A caller
may name its own errors for answers worth retrying (429 and 5xx, with the ``Retry-After`` the
server asked for) and for a request that timed out.
"""

from __future__ import annotations

import email.utils
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from memstrata.errors import MemstrataError

#: builds the error for a 429 or 5xx answer: (message, status, Retry-After in seconds or None)
Transient = Callable[[str, int, float | None], MemstrataError]


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date); None if absent
    or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _timed_out(exc: BaseException) -> bool:
    reason = getattr(exc, "reason", None)
    return isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError)


def post_json(
    url: str,
    body: dict[str, Any],
    *,
    api_key: str | None,
    timeout_s: float,
    error: type[MemstrataError],
    transient: Transient | None = None,
    timeout: type[MemstrataError] | None = None,
) -> Any:
    """The decoded JSON answer of ``POST url``; any failure raises ``error`` (a 429 or 5xx
    answer ``transient(...)`` when given, a timeout ``timeout`` when given)."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(
        url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
    )
    base = url.rsplit("/", 1)[0]
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:200].decode("utf-8", "replace")
        message = f"{base} answered {exc.code}: {detail}"
        if transient is not None and (exc.code == 429 or exc.code >= 500):
            wait = retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
            raise transient(message, exc.code, wait) from exc
        raise error(message) from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        if timeout is not None and _timed_out(exc):
            raise timeout(f"{base} did not answer within {timeout_s:g} s") from exc
        raise error(f"cannot reach {base}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise error(f"{base} did not answer JSON") from exc
