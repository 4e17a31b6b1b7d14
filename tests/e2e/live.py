"""A real HTTP server for tests: the app under uvicorn on a loopback port, in a thread, and an
HTTP client that talks to it over the socket."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import uvicorn
from fastapi import FastAPI


@contextmanager
def live_server(app: FastAPI, headers: dict[str, str] | None = None) -> Iterator[httpx2.Client]:
    """Serve ``app`` on 127.0.0.1 until the block ends; a client with the server as its base
    URL, sending ``headers`` (an API key) with every request."""
    # IPPROTO_TCP named, as `memstrata serve` binds it: asyncio sets TCP_NODELAY only then,
    # and without it every answer on a kept-alive connection waits out a delayed ACK
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30  # a bound so a broken start cannot hang the suite
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        with httpx2.Client(
            base_url=f"http://127.0.0.1:{port}", timeout=30, headers=headers
        ) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
