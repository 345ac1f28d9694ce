"""`vigil mcp --http PORT`: streamable HTTP on 127.0.0.1 only, behind a bearer token.

The token is random per start (printed once on stderr) unless `VIGIL_MCP_TOKEN` gives one; every
HTTP request without `Authorization: Bearer <token>` gets 401 before it reaches the MCP layer.
Before the token is even looked at, `Host` must be exactly `127.0.0.1:PORT` or `localhost:PORT` (this
server's own port) and an `Origin`, when sent, exactly `http://127.0.0.1:PORT` or `http://localhost:PORT`
(a DNS-rebinding page or a page on another local port is refused: 421 and 403). The SDK's own
DNS-rebinding protection stays on behind it.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from engine.errors import ErrorCode, VigilError

TOKEN_ENV = "VIGIL_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
HOST = "127.0.0.1"
PATH = "/mcp"

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]


def choose_token() -> tuple[str, bool]:
    """(the bearer token, whether it came from VIGIL_MCP_TOKEN)."""
    given = os.environ.get(TOKEN_ENV, "").strip()
    if given:
        if len(given) < MIN_TOKEN_CHARS:
            raise VigilError(f"{TOKEN_ENV} is too short ({len(given)} characters): use at least {MIN_TOKEN_CHARS}, "
                             "e.g. the output of `python -c \"import secrets; print(secrets.token_urlsafe(32))\"`, or "
                             "unset it to get a random token.", code=ErrorCode.BAD_ARGUMENT)
        return given, True
    return secrets.token_urlsafe(32), False


class BearerAuth:
    """ASGI middleware: HTTP requests must carry the bearer token; lifespan events pass through."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._token = token.encode("utf-8")

    def _allowed(self, scope: Scope) -> bool:
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                if scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token):
                    return True
        return False

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope.get("type") != "http" or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized", "error_description":
                           "Send 'Authorization: Bearer <token>': the token vigil mcp printed at start, or the "
                           f"value of {TOKEN_ENV} it was started with."}).encode("utf-8")
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"www-authenticate", b'Bearer realm="vigil-mcp"')]})
        await send({"type": "http.response.body", "body": body})


class LoopbackOnly:
    """ASGI middleware: HTTP requests must name this very server in `Host` (and `Origin`, when sent), as
    exact values — no prefix match, so `127.0.0.1:PORT.evil.example` or another local port's page fail."""

    def __init__(self, app: ASGIApp, port: int):
        self.app = app
        self.hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self.origins = {b"http://" + h for h in self.hosts}

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        headers = [(n.lower(), v) for n, v in scope.get("headers") or ()]
        hosts = [v.strip().lower() for n, v in headers if n == b"host"]
        origins = [v.strip().lower() for n, v in headers if n == b"origin"]
        if len(hosts) != 1 or hosts[0] not in self.hosts:
            shown = hosts[0].decode("latin-1")[:80] if hosts else "none"
            return 421, (f"Host {shown!r} is not this server: send Host {sorted(h.decode() for h in self.hosts)[0]} "
                         "(requests for any other name are refused, against DNS rebinding).")
        if len(origins) > 1 or origins and origins[0] not in self.origins:
            shown = origins[0].decode("latin-1")[:80] if origins else "several"
            return 403, (f"Origin {shown!r} may not use this server: only pages of this server's own address may "
                         "(a browser page elsewhere is refused). Clients that are not browsers send no Origin.")
        return None

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        problem = self._problem(scope) if scope.get("type") == "http" else None
        if problem is None:
            await self.app(scope, receive, send)
            return
        status, text = problem
        body = json.dumps({"error": "forbidden", "error_description": text}).encode("utf-8")
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: any free port); a clear error when it is taken."""
    if not 0 <= port <= 65535:
        raise VigilError(f"--http {port} is not a port: use 1-65535, or 0 for any free port.",
                         code=ErrorCode.BAD_ARGUMENT)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise VigilError(f"Cannot listen on {HOST}:{port} ({exc.strerror or exc}): pick another port, or 0 for any "
                         "free one.", code=ErrorCode.PORT_UNAVAILABLE) from None
    sock.setblocking(False)
    return sock


class _Uvicorn:
    """uvicorn's server without its own signal handling (the command shuts down in its own order)."""

    def __init__(self, app: ASGIApp):
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self):  # noqa: D401 - uvicorn's hook
                yield

        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=3, ws="none")
        self.server = Server(config)

    async def serve(self, sock: socket.socket) -> None:
        await self.server.serve(sockets=[sock])

    def stop(self) -> None:
        self.server.should_exit = True


class HandshakeOnly:
    """ASGI middleware: this server keeps a tab per client session, so it speaks the protocol revisions that
    have sessions (the `initialize` handshake and `Mcp-Session-Id`). A request of a sessionless revision
    (2026-07-28's `server/discover` and self-contained calls) is answered -32022 naming the revisions it
    supports; the SDK clients then fall back to the handshake (as they do with other stateful servers)."""

    def __init__(self, app: ASGIApp):
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        self.app = app
        self.supported = list(HANDSHAKE_PROTOCOL_VERSIONS)

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        version = next((v.decode("latin-1") for n, v in scope.get("headers") or ()
                        if n.lower() == b"mcp-protocol-version"), None) if scope.get("type") == "http" else None
        if version is None or version in self.supported:
            await self.app(scope, receive, send)
            return
        body = b""
        while True:  # the request's id, to answer it (the body is a small JSON-RPC request)
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body") or len(body) > 65536:
                break
        try:
            request_id = json.loads(body).get("id")
        except (ValueError, AttributeError):
            request_id = None
        from mcp_types import UNSUPPORTED_PROTOCOL_VERSION

        reply = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
            "code": UNSUPPORTED_PROTOCOL_VERSION, "message": "This server keeps a browser tab per client session: "
            f"connect with the initialize handshake (protocol {self.supported[-1]} or earlier).",
            "data": {"supported": self.supported, "requested": version[:40]}}}).encode("utf-8")
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(reply)).encode())]})
        await send({"type": "http.response.body", "body": reply})


class SessionEnds:
    """ASGI middleware: a client's `DELETE` of its MCP session (the SDK's client sends it when it closes)
    ends that client's run and closes its tab (`McpClients.session_ended`)."""

    def __init__(self, app: ASGIApp, clients: Any):
        self.app, self.clients = app, clients

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        await self.app(scope, receive, send)
        if scope.get("type") == "http" and scope.get("method") == "DELETE":
            sid = next((v for n, v in scope.get("headers") or () if n.lower() == b"mcp-session-id"), None)
            if sid:
                self.clients.session_ended(sid.decode("latin-1"))


def http_app(mcp_server: Any, token: str, port: int, clients: Any) -> ASGIApp:
    """The MCP app behind the exact Host/Origin check and the bearer token, for a server on `port`; its
    sessions live as long as `clients` keeps a client (idle time, how many at once)."""
    from engine.mcp.clients import MAX_SESSIONS

    app = mcp_server.streamable_http_app(streamable_http_path=PATH, host=HOST, session_idle_timeout=clients.idle_s,
                                         max_sessions=MAX_SESSIONS)
    return LoopbackOnly(BearerAuth(HandshakeOnly(SessionEnds(app, clients)), token), port)


def make_http_server(mcp_server: Any, token: str, port: int, clients: Any) -> _Uvicorn:
    return _Uvicorn(http_app(mcp_server, token, port, clients))
