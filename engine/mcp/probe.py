"""A small MCP client for the benchmark and the tests: start a server (Vigil's, or any other) as a
subprocess over stdio, or reach one over streamable HTTP, with the SDK's own client, and time and
measure each tool call (tokens returned, by the same estimate the snapshot payloads use).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from engine.snapshot.serialize.tokens import estimate_tokens

CLIENT_NAME = "vigil-probe"


@dataclass
class Reply:
    """One tool call's answer."""

    name: str
    is_error: bool
    text: str
    images: list[bytes] = field(default_factory=list)
    seconds: float = 0.0
    linked: int = 0  # tokens of files the reply links to instead of inlining (the benchmark fills it in)

    @property
    def tokens(self) -> int:
        """Tokens of the text returned (images are not counted)."""
        return estimate_tokens(self.text)

    def page(self) -> str:
        """The text inside the first <page_content> fence ('' when there is none)."""
        start = self.text.find("<page_content>\n")
        end = self.text.find("\n</page_content>", start)
        return self.text[start + 15:end] if start >= 0 and end > start else ""


def reply_of(name: str, result: Any, seconds: float) -> Reply:
    import base64

    texts, images = [], []
    for c in result.content:
        if getattr(c, "type", "") == "text":
            texts.append(c.text)
        elif getattr(c, "type", "") == "image":
            images.append(base64.b64decode(c.data))
    return Reply(name, bool(result.is_error), "\n".join(texts), images, seconds)


class Probe:
    """A connected client: `await probe.call("browser_click", {"ref": "12"})` → Reply."""

    def __init__(self, client: Any):
        self.client = client

    async def call(self, name: str, arguments: dict | None = None) -> Reply:
        t = time.perf_counter()
        result = await self.client.call_tool(name, arguments or {})
        return reply_of(name, result, time.perf_counter() - t)

    async def tools(self) -> list[str]:
        return [t.name for t in (await self.client.list_tools()).tools]


@contextlib.asynccontextmanager
async def stdio_probe(command: str, args: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                      errlog: TextIO | None = None, client_name: str = CLIENT_NAME,
                      timeout: float | None = None) -> AsyncIterator[Probe]:
    """Spawn `command args…` and talk MCP to it over its stdin/stdout."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    transport = stdio_client(params, errlog=errlog or sys.stderr)
    async with Client(transport, client_info=Implementation(name=client_name, version="1"),
                      read_timeout_seconds=timeout) as client:
        yield Probe(client)


@contextlib.asynccontextmanager
async def http_probe(url: str, token: str | None, *, client_name: str = CLIENT_NAME,
                     timeout: float | None = None) -> AsyncIterator[Probe]:
    """Connect to a streamable-HTTP MCP server, with `Authorization: Bearer <token>` when given."""
    import httpx2  # the HTTP client the SDK's transport is built on; it takes one with our headers
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import Implementation

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
        async with Client(streamable_http_client(url, http_client=http),
                          client_info=Implementation(name=client_name, version="1"),
                          read_timeout_seconds=timeout) as client:
            yield Probe(client)


def vigil_command(*options: str) -> tuple[str, list[str]]:
    """The command line of `python -m engine.mcp OPTIONS` with this interpreter."""
    return sys.executable, ["-m", "engine.mcp", *options]
