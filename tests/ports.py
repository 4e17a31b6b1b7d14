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

from memstrata.bench.serve import free_port

__all__ = ["free_port"]
