"""Several server processes on one listening socket (``memstrata serve --workers N``).

The supervisor (:func:`serve_workers`, in the process that bound the socket) loads the sample
memory once, makes a directory for the workers' metrics, and starts ``N`` worker processes
(uvicorn's multiprocess supervisor: spawned interpreters that restart when one dies). Each
worker builds its own app through :class:`WorkerApp`, a picklable factory that opens its own
:class:`~memstrata.api.Memory` (SQLite in WAL mode lets the processes share the store; every
search index follows the others' writes through the change feed) and closes it when the
worker stops. On SIGTERM or SIGINT the supervisor asks every worker to stop, gives requests in
flight ``shutdown_timeout_s``, and kills a worker still busy 2 s after that.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess

from memstrata.errors import ConfigError

if TYPE_CHECKING:
    import socket

    from fastapi import FastAPI

    from memstrata.settings import Settings

log = logging.getLogger(__name__)

#: the environment variable prometheus-client reads, at import, to count in shared files
MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
#: seconds past ``shutdown_timeout_s`` before a worker that has not stopped is killed
KILL_AFTER_S: Final = 2.0


class WorkerApp:
    """The app factory a worker process calls (uvicorn ``factory=True``): opens the memory,
    counts metrics in the shared directory, and closes the memory when the worker stops."""

    def __init__(self, settings: Settings, metrics_dir: str) -> None:
        self.settings = settings
        self.metrics_dir = metrics_dir
        self.supervisor_pid = os.getpid()

    def __call__(self) -> FastAPI:
        from memstrata.api import Memory
        from memstrata.server.app import served_app
        from memstrata.server.metrics import use_multiprocess
        from memstrata.server.requestlog import configure_server_logging

        configure_server_logging(self.settings.log_format)
        end_with_supervisor(self.supervisor_pid)
        try:
            use_multiprocess(self.metrics_dir)
            memory = Memory.open(settings=self.settings)
        except Exception:
            log.exception("a server worker could not open the memory")
            sys.exit(STARTUP_FAILURE)  # the supervisor stops instead of restarting it
        memory.start_indexer()
        if self.settings.erasure_sweep_s > 0:
            memory.start_erasure_sweep(self.settings.erasure_sweep_s)
        if self.settings.auto_curate:
            memory.start_auto_curation(self.settings.curate_after_s)
        app = served_app(memory, self.settings)
        serving = app.router.lifespan_context

        @asynccontextmanager
        async def close_memory_after(a: Any) -> AsyncIterator[Any]:
            try:
                async with serving(a) as state:
                    yield state
            finally:
                memory.close()

        app.router.lifespan_context = close_memory_after
        log.info("server worker %d ready", os.getpid())
        return app


def end_with_supervisor(supervisor_pid: int) -> None:
    """Have the kernel send this worker SIGTERM when its supervisor dies, however it dies
    (Linux; elsewhere the supervisor's own shutdown is all there is): a worker never keeps
    serving, or holding the port, without it."""
    if sys.platform != "linux":
        return
    import ctypes

    pr_set_pdeathsig = 1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        log.warning("cannot tie server worker %d to its supervisor", os.getpid())
        return
    if os.getppid() != supervisor_pid:  # it died before the tie was made
        os.kill(os.getpid(), signal.SIGTERM)


class Supervisor(Multiprocess):
    """uvicorn's multiprocess supervisor, with a bound on how long a worker may take to stop
    once told to: ``grace_s``, then it is killed (a request stuck in a model cannot be
    cancelled)."""

    def __init__(self, config: Any, sockets: list[socket.socket], *, grace_s: float) -> None:
        super().__init__(config, sockets)
        self.grace_s = grace_s

    def join_all(self) -> None:
        deadline = time.monotonic() + self.grace_s
        for process in self.processes:
            process.process.join(max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            if process.process.exitcode is None:
                log.error(
                    "server worker %s still busy %.0f s after the signal; killing it",
                    process.pid,
                    self.grace_s,
                )
                process.process.kill()
                process.process.join()

    def failed_to_start(self) -> bool:
        return any(p.exitcode == STARTUP_FAILURE for p in self.processes)


def serve_workers(settings: Settings, sock: socket.socket) -> None:
    """Serve on ``sock`` with ``settings.workers`` processes until signalled."""
    import uvicorn

    from memstrata.api import Memory
    from memstrata.server.app import auth_policy

    with Memory.open(settings=settings) as memory:  # the sample is loaded once, here
        auth_policy(memory, settings)  # and the first admin key made once, before the workers
        if settings.load_sample and memory.is_empty():
            report = memory.load_sample(settings.sample_user)
            log.warning(
                "loaded the sample memory: %d turns for user %r", report.turns, settings.sample_user
            )
    metrics_dir = tempfile.mkdtemp(prefix="memstrata-metrics-")
    before = os.environ.get(MULTIPROC_ENV)
    os.environ[MULTIPROC_ENV] = metrics_dir  # inherited by every worker, read at its start
    grace = settings.shutdown_timeout_s
    try:
        config = uvicorn.Config(
            WorkerApp(settings, metrics_dir),
            factory=True,
            workers=settings.workers,
            log_config=None,
            log_level="info",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=math.ceil(grace),
        )
        supervisor = Supervisor(config, [sock], grace_s=grace + KILL_AFTER_S)
        log.warning(
            "memstrata serving on http://%s:%d with %d workers",
            settings.host,
            settings.port,
            settings.workers,
        )
        supervisor.run()
        if supervisor.failed_to_start():
            raise ConfigError("a server worker could not start; its error is in the log above")
    finally:
        if before is None:
            os.environ.pop(MULTIPROC_ENV, None)
        else:
            os.environ[MULTIPROC_ENV] = before
        shutil.rmtree(metrics_dir, ignore_errors=True)
