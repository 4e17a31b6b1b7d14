"""Loopback ports for servers a test starts as subprocesses, safe beside parallel workers.

A server in the test's own process binds port 0 and reads its port back
(``tests/e2e/live.py``); a subprocess needs a number before it starts. Binding port 0 and
closing it, then handing the number over, leaves a window in which another process (a
parallel worker's server, any outgoing connection) may be given the same port, and the test
would then wait for, or talk to, a server that is not its own. :func:`free_port` closes that
window: the port is left in TIME_WAIT, in which the kernel gives it to no ``bind`` to port 0
and no outgoing connection, while a server that sets ``SO_REUSEADDR`` (``memstrata serve``,
``memstrata proxy``, uvicorn) binds it at once.
"""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port that stays free for the test's server to bind (for a minute)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = int(listener.getsockname()[1])
        with socket.create_connection(("127.0.0.1", port)):
            accepted, _ = listener.accept()
            # the accepted end, whose local port is ``port``, closes first: it is the one
            # left in TIME_WAIT
            accepted.close()
    return port
