"""The suite's one local HTTP server: it answers from a set of routes (and, optionally, files from a folder)
and records every request that arrived, as ground truth of what a page or a client really sent.

Routes are keyed "METHODS PATH": one or more methods, then a path that is matched exactly or, ending in
"*", as a prefix ("GET POST /page/*", "POST /*"); the first route that matches answers. A route is a
`Reply` or a function from the `Request` to a `Reply`. Methods no route names get 501 and are not
recorded, as from the stdlib handler that has no `do_<METHOD>` for them.

The stdlib `http.server` underneath, HTTP/1.0 (one request per connection), on 127.0.0.1 with a free
port; `localhost` and `*.localhost` reach it too (another site to the browser, the same server here).
"""

from __future__ import annotations

import email.message
import http.server
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Request:
    """One request as it arrived."""

    method: str
    target: str                      # the path and query exactly as sent
    headers: email.message.Message
    body: bytes
    at: float                        # time.time() when it had been read

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def query(self) -> str:
        return self.target.partition("?")[2]

    @property
    def params(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(self.query)

    @property
    def host(self) -> str:
        """The Host header, port included ("" when none was sent)."""
        return self.headers.get("Host", "")

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name, default)

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    """What a route answers. `body` may be an iterable of chunks, each written and flushed as it comes
    (a streamed download, a page that is still arriving)."""

    body: bytes | str | Iterable[bytes] = b""
    status: int = 200
    content_type: str | None = "text/html"
    headers: Mapping[str, str] = field(default_factory=dict)
    length: bool = True     # send Content-Length (a bytes or str body); False: the end of the body is the close
    delay: float = 0.0      # seconds before answering (a slow server); cut short when the server closes
    hold: float = 0.0       # seconds to keep the connection open after the body (a page that never finishes
                            # loading); cut short when the server closes


Route = Reply | Callable[[Request], Reply]


class RequestLog:
    """Every request the servers that share this log received, in order (thread-safe)."""

    def __init__(self) -> None:
        self._requests: list[Request] = []
        self._lock = threading.Lock()

    def add(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    def all(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    def mark(self) -> int:
        with self._lock:
            return len(self._requests)

    def since(self, mark: int) -> list[Request]:
        with self._lock:
            return list(self._requests[mark:])

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()


class LiveView(Sequence[T]):
    """The recorded requests that `where` keeps, each mapped by `pick`, read afresh on every use: a test
    can hold one and watch requests arrive. Compares equal to a list with the same items."""

    def __init__(self, log: RequestLog, pick: Callable[[Request], T], where: Callable[[Request], bool]) -> None:
        self._log, self._pick, self._where = log, pick, where

    def now(self) -> list[T]:
        return [self._pick(r) for r in self._log.all() if self._where(r)]

    def __getitem__(self, index: Any) -> Any:
        return self.now()[index]

    def __len__(self) -> int:
        return len(self.now())

    def __iter__(self) -> Iterator[T]:
        return iter(self.now())

    def __eq__(self, other: object) -> bool:
        return self.now() == (other.now() if isinstance(other, LiveView) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.now())


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: RecordingServer


class _Handler(http.server.SimpleHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        owner = self.server.owner
        if self.command not in owner.methods:
            self.send_error(501, f"Unsupported method ({self.command!r})")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = Request(self.command, self.path, self.headers, body, time.time())
        owner.log.add(request)
        route = owner.route_for(request)
        if route is None:
            if owner.static is not None and self.command in ("GET", "HEAD"):
                if self.command == "GET":
                    super().do_GET()
                else:
                    super().do_HEAD()
                return
            self.send_error(404)
            return
        self._answer(route if isinstance(route, Reply) else route(request), owner.closing)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _serve

    def _answer(self, reply: Reply, closing: threading.Event) -> None:
        if reply.delay:
            closing.wait(reply.delay)
        body = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
        try:
            self.send_response(reply.status)
            if reply.content_type:
                self.send_header("Content-Type", reply.content_type)
            if isinstance(body, bytes) and reply.length:
                self.send_header("Content-Length", str(len(body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            for chunk in [body] if isinstance(body, bytes) else body:
                self.wfile.write(chunk)
                self.wfile.flush()
            if reply.hold:
                closing.wait(reply.hold)
        except OSError:
            pass  # the client went away (a timeout, a stopped download)


class RecordingServer:
    """Answers `routes` (then, for GET and HEAD, files under `static`, as the stdlib's file server does;
    else 404) and records every request in `log` (its own, or one shared with other servers)."""

    def __init__(self, routes: Mapping[str, Route] | None = None, *, static: Path | str | None = None,
                 log: RequestLog | None = None) -> None:
        self.routes: list[tuple[frozenset[str], str, Route]] = []
        for key, route in (routes or {}).items():
            *methods, pattern = key.split()
            self.routes.append((frozenset(methods), pattern, route))
        self.static = None if static is None else Path(static)
        self.methods = frozenset().union(*(m for m, _, _ in self.routes),
                                         {"GET", "HEAD"} if self.static else set())
        self.log = log or RequestLog()
        self.closing = threading.Event()  # ends every delay and hold, so a closed server leaves no waiting thread
        handler = partial(_Handler, directory=str(self.static or "."))
        self.httpd = _HTTPServer(("127.0.0.1", 0), handler)
        self.httpd.owner = self
        self.port: int = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def route_for(self, request: Request) -> Route | None:
        path = request.path
        for methods, pattern, route in self.routes:
            if request.method in methods and (
                    path.startswith(pattern[:-1]) if pattern.endswith("*") else path == pattern):
                return route
        return None

    def url(self, path: str = "", host: str = "127.0.0.1") -> str:
        return f"{self.origin(host)}/{path.removeprefix('/')}"

    def origin(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}"

    @property
    def requests(self) -> list[Request]:
        """Every request in the log so far (a copy)."""
        return self.log.all()

    def view(self, pick: Callable[[Request], T], where: Callable[[Request], bool] = lambda r: True) -> LiveView[T]:
        return LiveView(self.log, pick, where)

    def wait_until(self, done: Callable[[], bool], within: float = 10.0) -> bool:
        """Wait until `done()` holds (a request a page sends after the step ended); says whether it did."""
        deadline = time.monotonic() + within
        while not done():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def close(self) -> None:
        if self.closing.is_set():
            return
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> RecordingServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
