"""What an operator needs of the HTTP app, installed by ``create_app`` in one call: Prometheus
metrics at ``/metrics`` (:mod:`memstrata.server.metrics`) and request ids on every log line
with an access line per request (:mod:`memstrata.server.requestlog`), and the API's
documentation pages with local assets (:mod:`memstrata.server.docs_assets`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.server.docs_assets import install_docs
from memstrata.server.metrics import install_metrics
from memstrata.server.requestlog import RequestContext

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memstrata.api import Memory
    from memstrata.server.limits import ASGIApp


def install_operations(app: FastAPI, memory: Memory) -> None:
    """Install the operator's parts on ``app`` (after its other middleware: the outermost
    layers see every request, a refused one too)."""
    install_metrics(app, memory)
    install_docs(app)
    build = app.build_middleware_stack

    def build_with_request_context() -> ASGIApp:
        # outside Starlette's ServerErrorMiddleware too: a 500 it answers still carries the
        # request id, and the traceback it logs is logged within the request
        return RequestContext(build())

    app.build_middleware_stack = build_with_request_context  # type: ignore[method-assign]
