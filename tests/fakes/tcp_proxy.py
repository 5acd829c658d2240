"""A TCP proxy on loopback that a test can cut and restore: a network outage on demand.

Put between processes and a server (PostgreSQL, NATS) by giving the processes the proxy's port:
while it is up, each connection it accepts is relayed both ways to the server by two threads;
:meth:`TcpProxy.cut` closes every relayed connection at once (both ends see it dropped) and
closes each new one as soon as it is accepted, as a server that went away would;
:meth:`TcpProxy.restore` relays again. Nothing here waits on a timer.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Final

CHUNK: Final = 65536


class TcpProxy:
    """Relay 127.0.0.1:``port`` (a free port, chosen at start) to ``target`` (host, port)
    until :meth:`close`; :attr:`accepted` counts the connections relayed so far."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._up = True
        self._closed = False
        self.accepted = 0
        self.refused = 0
        """Connections closed at once because the proxy was cut."""
        self._thread = threading.Thread(target=self._accept, name="tcp proxy", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # the listener was closed
                return
            with self._lock:
                relay = self._up and not self._closed
                if not relay:
                    self.refused += 1
            if not relay:
                _drop(client)
                continue
            try:
                server = socket.create_connection(self.target)
            except OSError:
                _drop(client)
                continue
            with self._lock:
                if not self._up or self._closed:  # cut meanwhile
                    _drop(client)
                    _drop(server)
                    continue
                self._open.update((client, server))
                self.accepted += 1
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):  # either end dropped, or the proxy cut
            while data := source.recv(CHUNK):
                sink.sendall(data)
        with self._lock:
            self._open.discard(source)
            self._open.discard(sink)
        _drop(source)
        _drop(sink)

    def url(self, scheme: str) -> str:
        """The proxy's address as a URL of ``scheme`` (``nats``: what to dial instead of the
        server's)."""
        return f"{scheme}://127.0.0.1:{self.port}"

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cut(self) -> None:
        """Drop every relayed connection and refuse new ones until :meth:`restore`."""
        with self._lock:
            self._up = False
            dropped, self._open = self._open, set()
        for sock in dropped:
            _drop(sock)

    def restore(self) -> None:
        """Relay new connections again."""
        with self._lock:
            self._up = True

    def close(self) -> None:
        """Stop listening and drop every connection."""
        with self._lock:
            self._closed = True
        self.cut()
        _drop(self._listener)  # shutdown wakes the thread blocked in accept (Linux)
        self._thread.join()


def _drop(sock: socket.socket) -> None:
    """Close ``sock`` so that its peer sees the connection end, even while another thread
    is blocked reading it."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
