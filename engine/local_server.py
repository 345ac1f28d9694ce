"""A small static HTTP server on loopback, for the demo site, benchmarks and tests."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextlib.contextmanager
def serve_directory(root: str | Path, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve `root` at http://host:port/ in a background thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = _Server((host, port), handler)
    thread = threading.Thread(target=server.serve_forever, name="vigil-http", daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
