"""The HTTP app as it is served, with an API key: the one way tests build a client.

``keyed_client(memory)`` is a client whose every request carries an admin key for all users;
``key_headers`` makes a key with another role or tenant for a request of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.server.auth import KeyAuth
from memstrata.server.http import create_app


def keyed_app(memory: Memory, **options: Any) -> FastAPI:
    """The app over ``memory`` with API keys required, as ``memstrata serve`` runs it."""
    return create_app(memory, auth=KeyAuth(memory.keys), **options)


def key_headers(
    memory: Memory, role: str = "admin", users: Sequence[str] | None = None
) -> dict[str, str]:
    """The header of a new key with ``role`` for ``users`` (None: all users)."""
    secret = memory.keys.create(role, users, name="tests").secret
    return {"Authorization": f"Bearer {secret}"}


def keyed_client(
    memory: Memory,
    *,
    role: str = "admin",
    users: Sequence[str] | None = None,
    app: FastAPI | None = None,
    headers: dict[str, str] | None = None,
    **client_options: Any,
) -> TestClient:
    """A client of ``app`` (default: :func:`keyed_app`) sending ``headers`` (default: a new
    key's, with ``role`` for ``users``)."""
    return TestClient(
        app if app is not None else keyed_app(memory),
        headers=headers if headers is not None else key_headers(memory, role, users),
        **client_options,
    )
