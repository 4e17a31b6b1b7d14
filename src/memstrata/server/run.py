"""Running the server: the socket it listens on, one process or several workers
(:mod:`memstrata.server.workers`), and a clean stop on a signal; the app each serves is
:func:`memstrata.server.app.served_app`."""

from __future__ import annotations

import errno
import logging
import math
import os
import socket
import sys
import threading
from typing import TYPE_CHECKING

from memstrata.errors import ConfigError
from memstrata.server.app import served_app

if TYPE_CHECKING:
    from types import FrameType

    from memstrata.settings import Settings

log = logging.getLogger(__name__)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, or a :class:`ConfigError` that names them (a port in
    use, an address this machine does not have)."""
    where = f"{host}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise ConfigError(f"cannot listen on {where}: unknown host ({exc})") from exc
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"cannot listen on {where}: the port is already in use; stop the other "
                "server or choose another port with --port (or MEMSTRATA_PORT)"
            ) from exc
        raise ConfigError(
            f"cannot listen on {where}: {exc.strerror or exc}; choose another address with "
            "--host/--port (or MEMSTRATA_HOST/MEMSTRATA_PORT)"
        ) from exc
    return sock


def _force_exit_after(delay_s: float, sig: int) -> None:
    """End the process (status 128 + ``sig``) once ``delay_s`` has passed: a request stuck
    in a model (an embedding cannot be interrupted) must not keep a stopped server alive."""

    def finish() -> None:
        log.error("shutdown still waiting on a request after %.0f s; exiting now", delay_s)
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(128 + sig)  # a signal handler can only be reset from the main thread

    timer = threading.Timer(delay_s, finish)
    timer.daemon = True
    timer.start()


def serve(settings: Settings) -> None:
    """Open the memory, load the sample into an empty store, and serve until stopped.

    Log lines go to stderr in ``settings.log_format``, each with its request id. With
    ``settings.workers`` above 1, that many processes share the listening socket
    (:mod:`memstrata.server.workers`). On SIGTERM or SIGINT the server stops taking requests,
    gives those in flight ``shutdown_timeout_s`` to finish, and ends the process shortly after
    even if one is stuck (in an embedding, say): nothing acknowledged is lost, as every write
    is one committed transaction."""
    from memstrata.server.requestlog import configure_server_logging

    if settings.auth == "local":
        from memstrata.server.auth import check_local_host

        check_local_host(settings.host)  # no keys: nothing but the loopback
    sock = listen(settings.host, settings.port)  # a busy port fails before anything loads
    configure_server_logging(settings.log_format)
    try:
        if settings.workers > 1:
            from memstrata.server.workers import serve_workers

            serve_workers(settings, sock)
        else:
            _serve_one(settings, sock)
    finally:
        sock.close()


def _serve_one(settings: Settings, sock: socket.socket) -> None:
    """Serve on ``sock`` in this process."""
    import uvicorn

    from memstrata.api import Memory

    memory = Memory.open(settings=settings)
    try:
        if settings.load_sample and memory.is_empty():
            report = memory.load_sample(settings.sample_user)
            log.warning(
                "loaded the sample memory: %d turns for user %r",
                report.turns,
                settings.sample_user,
            )
        memory.start_indexer()
        if settings.erasure_sweep_s > 0:
            memory.start_erasure_sweep(settings.erasure_sweep_s)
        if settings.auto_curate:
            memory.start_auto_curation(settings.curate_after_s)
        grace = settings.shutdown_timeout_s

        class Server(uvicorn.Server):
            def handle_exit(self, sig: int, frame: FrameType | None) -> None:
                if not self.should_exit:
                    _force_exit_after(grace + 2.0, sig)
                super().handle_exit(sig, frame)

        config = uvicorn.Config(
            served_app(memory, settings),
            log_config=None,
            log_level="info",
            access_log=False,
            timeout_graceful_shutdown=math.ceil(grace),
        )
        log.warning("memstrata serving on http://%s:%d", settings.host, settings.port)
        Server(config).run(sockets=[sock])
    finally:
        memory.close()
