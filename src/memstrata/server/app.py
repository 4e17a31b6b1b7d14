"""The app ``memstrata serve`` runs over a memory, in one process or in each worker, behind
the auth policy its settings name."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memstrata.api import Memory
    from memstrata.server.auth import AuthPolicy
    from memstrata.settings import Settings

log = logging.getLogger(__name__)


def auth_policy(memory: Memory, settings: Settings) -> AuthPolicy:
    """The server's policy from the ``auth`` setting. With keys, the first start (no active
    key in the store) creates an admin key for all users and writes it to
    ``<data_dir>/admin.key`` (mode 0600); the log says where, never the key."""
    from memstrata.server.auth import KeyAuth, LocalAuth, first_admin_key

    if settings.auth == "local":
        log.warning(
            "serving without API keys (local mode): only requests for localhost, 127.0.0.1 "
            "or [::1] are answered"
        )
        return LocalAuth()
    path = settings.admin_key_path
    if first_admin_key(memory.keys, path):
        log.warning(
            "created an admin API key for all users (first start); it is in %s (mode 0600): "
            "send it as 'Authorization: Bearer <key>'",
            path,
        )
    elif path.exists():
        log.warning("API keys required; the admin key of the first start is in %s", path)
    else:
        log.warning("API keys required (memstrata keys create makes one)")
    return KeyAuth(memory.keys)


def served_app(memory: Memory, settings: Settings) -> FastAPI:
    """The app ``memstrata serve`` runs over ``memory``, in one process or in each worker."""
    from memstrata.server.http import create_app

    return create_app(memory, auth=auth_policy(memory, settings))
