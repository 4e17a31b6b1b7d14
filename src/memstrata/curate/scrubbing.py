"""Scrubbing at the points where text is persisted, with the audit line DESIGN.md 7 asks for:
the kinds removed, the time (the log record's) and the scope, never the text itself."""

from __future__ import annotations

import logging

from memstrata.curate.privacy import scrub, scrub_secrets
from memstrata.model import Scope

log = logging.getLogger("memstrata.privacy")


def scrub_for_storage(text: str, scope: Scope, *, secrets_only: bool) -> str:
    """``text`` with private data replaced by ``[REDACTED:<kind>]``.

    ``secrets_only`` (for verbatim capture) removes passwords, API keys and tokens; otherwise
    (for curated memory) every kind the scrubber knows."""
    result = scrub_secrets(text) if secrets_only else scrub(text)
    if result.findings:
        kinds = ",".join(sorted({f.kind.value for f in result.findings}))
        log.info(
            "scrubbed %s from %s text in scope %s",
            kinds,
            "captured" if secrets_only else "curated",
            scope,
        )
    return result.text
