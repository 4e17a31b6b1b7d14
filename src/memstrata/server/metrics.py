"""Prometheus metrics of the server, in the text format at ``GET /metrics``.

What is counted (prometheus-client; counters end in ``_total``):

- ``memstrata_http_requests_total{method,route,status}``: requests by route template
  (``/v1/items/{item_id}``, never the raw path; ``unmatched`` for a path no route takes);
- ``memstrata_http_request_duration_seconds{method,route}``: latency histogram of every route,
  search, context and remember included;
- ``memstrata_served_tokens{call}``: histogram of the tokens each ``wake_up``, ``recall`` and
  ``context`` put in a ``<memory>`` block (its ``_sum`` is the total injected);
- ``memstrata_conflicts_total``: compare-and-swap writes refused because the version moved;
  ``memstrata_conflict_retries_total{outcome}``: such a write re-read and tried again
  (``retried``) or given up at the retry deadline (``gave_up``);
- ``memstrata_curation_runs_total{layer,status}``: curation runs ``started`` and finished
  (``done``, ``failed``, ``cancelled``);
- ``memstrata_records{kind}`` and ``memstrata_store_up``: the store's records of every user by
  kind, counted when scraped (a count over each table: about 2 ms at 12,000 turns);
- ``memstrata_index_pending``: records waiting for their dense vectors in the search indexes
  of the process that answers (the background indexer's backlog), read when scraped.

Lower layers report through the leaf :mod:`memstrata.telemetry`, never importing
prometheus-client; runs through their registry's listeners. Counts belong to the process.
With several workers (``memstrata serve --workers N``) each worker writes its counts to files
in a directory the supervisor made (prometheus-client's multiprocess mode, set up by
:func:`use_multiprocess` before anything is counted), and ``/metrics``, whichever worker
answers it, sums every worker's.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from starlette.routing import Mount, Route

from memstrata import telemetry
from memstrata.errors import MemstrataError

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Histogram
    from prometheus_client.registry import Collector

    from memstrata.api import Memory
    from memstrata.curate.runs import Event, RunRegistry
    from memstrata.server.limits import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

#: request latency buckets, in seconds
LATENCY_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
#: buckets of the tokens one call serves
TOKEN_BUCKETS: Final = (50, 100, 200, 400, 800, 1200, 2000, 4000, 8000, 16000, 32000)
#: methods counted by name; any other is counted as ``other``
METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: the route label of a request no route took
UNMATCHED: Final = "unmatched"
_FINISHED: Final = frozenset({"done", "failed", "cancelled"})


class ProcessMetrics:
    """The metric objects of this process (one set, however many apps it serves)."""

    def __init__(self, multiprocess_dir: str | None) -> None:
        from prometheus_client import (
            CollectorRegistry,
            Counter,
            Histogram,
            disable_created_metrics,
        )

        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series
        self.multiprocess_dir = multiprocess_dir
        # in multiprocess mode the values live in files and a scrape reads them all
        self.registry: CollectorRegistry | None = (
            None if multiprocess_dir else CollectorRegistry(auto_describe=True)
        )
        reg = self.registry
        self.requests: Counter = Counter(
            "memstrata_http_requests",
            "HTTP requests answered, by method, route template and status",
            ["method", "route", "status"],
            registry=reg,
        )
        self.latency: Histogram = Histogram(
            "memstrata_http_request_duration_seconds",
            "HTTP request latency until the response is sent, by method and route template",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=reg,
        )
        self.tokens: Histogram = Histogram(
            "memstrata_served_tokens",
            "tokens one wake_up, recall or context call served in a <memory> block",
            ["call"],
            buckets=TOKEN_BUCKETS,
            registry=reg,
        )
        self.conflicts: Counter = Counter(
            "memstrata_conflicts",
            "compare-and-swap writes refused because the version moved",
            registry=reg,
        )
        self.retries: Counter = Counter(
            "memstrata_conflict_retries",
            "writes that lost a compare-and-swap race: retried, or given up at the deadline",
            ["outcome"],
            registry=reg,
        )
        self.runs: Counter = Counter(
            "memstrata_curation_runs",
            "curation runs started and finished, by layer and status",
            ["layer", "status"],
            registry=reg,
        )
        self._run_layers: dict[str, str] = {}
        self._lock = threading.Lock()
        self._followed: weakref.WeakSet[RunRegistry] = weakref.WeakSet()  # runs followed
        telemetry.subscribe(self.on_telemetry)

    def on_telemetry(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        if name == telemetry.CONFLICT:
            self.conflicts.inc(value)
        elif name == telemetry.CONFLICT_RETRY:
            self.retries.labels(labels.get("outcome", "retried")).inc(value)
        elif name == telemetry.TOKENS_SERVED:
            self.tokens.labels(labels.get("call", "other")).observe(value)

    def on_run_event(self, event: Event) -> None:
        if event.kind == "started":
            layer = str(event.data.get("layer", "unknown"))
            with self._lock:
                self._run_layers[event.run_id] = layer
            self.runs.labels(layer, "started").inc()
        elif event.kind in _FINISHED:
            with self._lock:
                layer = self._run_layers.pop(event.run_id, "unknown")
            self.runs.labels(layer, event.kind).inc()

    def follow_runs(self, memory: Memory) -> None:
        """Count the runs of ``memory`` (once per memory)."""
        registry = memory.runs
        with self._lock:
            if registry in self._followed:
                return
            self._followed.add(registry)
        registry.subscribe(self.on_run_event)

    def collectors(self) -> list[Collector]:
        """What a scrape reads: this process's registry, or every worker's files."""
        if self.multiprocess_dir is None:
            assert self.registry is not None
            return [self.registry]
        from prometheus_client import CollectorRegistry
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]
        return [registry]


_process: ProcessMetrics | None = None
_process_lock = threading.Lock()
_multiprocess_dir: str | None = None


def use_multiprocess(directory: str) -> None:
    """Count in ``directory``, shared with the other workers (call before any request;
    ``PROMETHEUS_MULTIPROC_DIR`` must name it from the process start, which the supervisor
    in :func:`memstrata.server.run.serve` sees to)."""
    global _multiprocess_dir
    with _process_lock:
        if _process is not None and _process.multiprocess_dir != directory:
            raise RuntimeError("metrics were set up before the multiprocess directory")
        _multiprocess_dir = directory


def process_metrics() -> ProcessMetrics:
    """This process's metrics, made on first use."""
    global _process
    with _process_lock:
        if _process is None:
            _process = ProcessMetrics(_multiprocess_dir)
        return _process


class StoreCollector:
    """Records by kind and whether the store could be read, counted at scrape time."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        up = GaugeMetricFamily("memstrata_store_up", "1 when the store could be counted")
        try:
            counts = self._memory.record_counts()
        except MemstrataError as exc:
            log.warning("cannot count the store's records for /metrics: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        records = GaugeMetricFamily(
            "memstrata_records", "records of every user by kind", labels=["kind"]
        )
        for kind, n in sorted(counts.items()):
            records.add_metric([kind], n)
        yield records
        pending = GaugeMetricFamily(
            "memstrata_index_pending", "records waiting for their dense vectors (this process)"
        )
        built = self._memory.indexes_built
        pending.add_metric([], sum(built.pending(u) for u in built.built()) if built else 0)
        yield pending


class _Scrape:
    """Everything one scrape reads, as one collector."""

    def __init__(self, parts: list[Any]) -> None:
        self._parts = parts

    def collect(self) -> Iterator[Any]:
        for part in self._parts:
            yield from part.collect()


def route_label(scope: Scope) -> str:
    """The template of the route that took the request (``/v1/items/{item_id}``), the path
    of the mount that did (``/docs/assets``), or :data:`UNMATCHED`: a raw path would make a
    series per id."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str) and path:
        return path
    endpoint = scope.get("endpoint")  # a plain route (/openapi.json) or a mount sets only this
    if endpoint is not None:
        for other in getattr(scope.get("app"), "routes", ()):
            if isinstance(other, Mount | Route) and endpoint in (
                getattr(other, "endpoint", None),
                other.app,
            ):
                return other.path
    return UNMATCHED


class RequestMetrics:
    """ASGI middleware: counts every HTTP request by route template and status and times it
    until its response is sent (an error the app did not answer counts as 500)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.metrics = process_metrics()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            method = str(scope.get("method", "")).upper()
            method = method if method in METHODS else "other"
            route = route_label(scope)
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.latency.labels(method, route).observe(time.perf_counter() - start)


router = APIRouter(tags=["operations"])


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}},
    summary="Prometheus metrics",
)
def metrics(request: Request) -> Response:
    """Request counts and latencies, tokens served, conflicts and retries, curation runs and
    records by kind, in the Prometheus text exposition format."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    scrape: _Scrape = request.app.state.metrics_scrape
    return Response(generate_latest(scrape), media_type=CONTENT_TYPE_LATEST)


def install_metrics(app: FastAPI, memory: Memory) -> None:
    """Count ``app``'s requests and serve ``GET /metrics`` (store counts from ``memory``)."""
    process = process_metrics()
    process.follow_runs(memory)
    app.state.metrics_scrape = _Scrape([*process.collectors(), StoreCollector(memory)])
    app.include_router(router)
    app.add_middleware(RequestMetrics)
