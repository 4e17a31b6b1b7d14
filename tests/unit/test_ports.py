"""``tests.ports.free_port``: the port it gives stays out of other processes' reach until the
test's server binds it."""

from __future__ import annotations

import socket

import pytest

from tests.ports import free_port


def test_a_free_port_is_refused_to_a_plain_bind_and_taken_by_a_server() -> None:
    port = free_port()
    # another process's socket asking for that port (as a bind to port 0 or a connection would
    # be given it) is refused it
    with socket.socket() as other, pytest.raises(OSError, match="in use"):
        other.bind(("127.0.0.1", port))
    with socket.socket() as server:  # as `memstrata serve` and uvicorn bind
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen()
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            accepted, _ = server.accept()
            accepted.close()


def test_ports_asked_for_one_after_another_differ() -> None:
    ports = [free_port() for _ in range(20)]
    assert len(set(ports)) == len(ports)
