"""A TCP forwarder a test can stop, pause and start again: the database server as a client
sees it when the server goes down, the network stops answering, or the server comes back."""

from __future__ import annotations

import socket
import threading
from contextlib import suppress
from urllib.parse import urlsplit, urlunsplit

#: SO_LINGER on, 0 s: closing sends a reset, as a server that went down
_RESET = b"\x01\x00\x00\x00" + b"\x00\x00\x00\x00"


class TcpProxy:
    """Forwards connections from ``127.0.0.1:<port>`` to ``target``.

    * :meth:`stop` closes the listener and every forwarded connection (a server that went
      down: new connections are refused, open ones are reset);
    * :meth:`pause` keeps every connection open and accepts new ones but forwards nothing (a
      network that stopped answering);
    * :meth:`start` listens again on the same port and forwards.
    """

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._flowing = threading.Event()
        self.start()

    def url(self, url: str) -> str:
        """``url`` pointed at this proxy instead of its server."""
        parts = urlsplit(url)
        user = parts.netloc.rpartition("@")[0]
        netloc = f"{user}@127.0.0.1:{self.port}" if user else f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._flowing.set()
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def pause(self) -> None:
        self._flowing.clear()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
            with suppress(OSError):
                sock.close()
        self._flowing.set()  # paused pumps wake up and find their sockets closed

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                self._flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with suppress(OSError):
                sink.shutdown(socket.SHUT_WR)
