"""A TCP relay in front of the API server that can cut every connection at once.

The drill for a dropped watch needs the stream to break the way a network
blip breaks it: the connection reset under a reader that is blocked on it.
Killing the API server does that too, but it also sends the static pod into
its own back-off and leaves RBAC cold for the tests after it. Relaying the
client's traffic and resetting the relayed sockets breaks only the client's
side; TLS passes through untouched, so the client still talks to the real
API server with its real certificates.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

_CHUNK = 65536


class TcpRelay:
    """Relays 127.0.0.1:<port> to ``upstream``; ``reset_all`` cuts every live connection."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._live: list[socket.socket] = []
        self.accepted = 0
        self.reset_connections = 0
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name="relay-accept", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                downstream, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                downstream.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self.accepted += 1
                self._live += [downstream, upstream]
            for source, sink in ((downstream, upstream), (upstream, downstream)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(_CHUNK):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            # Either side closing ends the pair, as a real connection would.
            for end in (source, sink):
                self._forget(end)
                _close_quietly(end)

    def _forget(self, end: socket.socket) -> None:
        with self._lock:
            if end in self._live:
                self._live.remove(end)

    def reset_all(self) -> int:
        """Reset (RST, not FIN) every relayed connection; returns how many were live."""
        with self._lock:
            live, self._live = self._live, []
        for end in live:
            with contextlib.suppress(OSError):  # a pump may have closed it meanwhile
                # Linger on with a zero timeout: close() sends RST, as a dropped link does.
                end.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                # A pump blocked in recv() holds the socket open past close(); shutting
                # the read side down wakes it, so the close really resets the connection.
                end.shutdown(socket.SHUT_RD)
            _close_quietly(end)
        pairs = len(live) // 2
        self.reset_connections += pairs
        return pairs

    def close(self) -> None:
        self._closed.set()
        # close() alone does not wake a thread blocked in accept().
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        _close_quietly(self._listener)
        self.reset_all()


def _close_quietly(end: socket.socket) -> None:
    with contextlib.suppress(OSError):
        end.close()


def server_address(kubeconfig: Path) -> tuple[str, int]:
    """The API server's host and port that ``kubeconfig`` names."""
    loaded: dict[str, Any] = yaml.safe_load(kubeconfig.read_text())
    server = urlsplit(loaded["clusters"][0]["cluster"]["server"])
    if server.hostname is None or server.port is None:
        raise ValueError(f"{kubeconfig}: server {server.geturl()} names no host and port")
    return server.hostname, server.port


def through_port(kubeconfig: Path, target: Path, port: int) -> Path:
    """Write a copy of ``kubeconfig`` to ``target`` whose clusters go through 127.0.0.1:``port``."""
    loaded: dict[str, Any] = yaml.safe_load(kubeconfig.read_text())
    for entry in loaded["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{port}"
    target.write_text(yaml.safe_dump(loaded))
    return target
