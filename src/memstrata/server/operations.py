"""What an operator needs of the HTTP app, installed by ``create_app`` in one call: Prometheus
metrics at ``/metrics`` (:mod:`memstrata.server.metrics`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.server.metrics import install_metrics

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memstrata.api import Memory


def install_operations(app: FastAPI, memory: Memory) -> None:
    """Install the operator's parts on ``app`` (after its other middleware: the outermost
    layers see every request, a refused one too)."""
    install_metrics(app, memory)
