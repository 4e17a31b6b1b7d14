"""The HTTP server (FastAPI app over the facade) and its entry point."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.settings import Settings

log = logging.getLogger(__name__)


def serve(settings: Settings) -> None:
    """Open the memory, load the sample into an empty store, and serve until stopped."""
    import uvicorn

    from memstrata.api import Memory
    from memstrata.server.http import create_app

    memory = Memory.open(settings=settings)
    if settings.load_sample and memory.is_empty():
        report = memory.load_sample(settings.sample_user)
        log.warning(
            "loaded the sample memory: %d turns for user %r", report.turns, settings.sample_user
        )
    if settings.auto_curate:
        memory.start_auto_curation(settings.curate_after_s)
    app = create_app(memory)
    try:
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    finally:
        memory.close()
