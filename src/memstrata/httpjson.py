"""POST a JSON body and read a JSON answer, with the standard library's HTTP client.

Shared by the adapters that speak OpenAI-compatible HTTP APIs (embeddings, chat). Failures
are raised as the caller's error class, so each adapter keeps its place in the error tree. The
API key goes in the Authorization header only; it never appears in an error message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from memstrata.errors import MemstrataError


def post_json(
    url: str,
    body: dict[str, Any],
    *,
    api_key: str | None,
    timeout_s: float,
    error: type[MemstrataError],
) -> Any:
    """The decoded JSON answer of ``POST url``; any failure raises ``error``."""
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
        raise error(f"{base} answered {exc.code}: {detail}") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise error(f"cannot reach {base}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise error(f"{base} did not answer JSON") from exc
