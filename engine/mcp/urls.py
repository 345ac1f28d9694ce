"""Which URLs an MCP client may open."""

from __future__ import annotations

import urllib.parse

from engine.mcp.failure import ToolFailure


def mcp_url(url: str, *, allow_files: bool = False) -> str:
    """A URL a client may open: http(s) (a bare host gets http://), about:blank, and file URLs only
    when the server allows them. Local paths are never looked up (the client is not on this machine's
    file system, and checking would tell it which files exist)."""
    u = (url or "").strip()
    if not u:
        raise ToolFailure("BAD_URL", "No URL given: pass an http(s) URL such as https://example.com/.")
    if u == "about:blank":
        return u
    scheme = urllib.parse.urlsplit(u).scheme.lower() if "://" in u else ""
    if not scheme:
        host = u.split("/")[0]
        if host and " " not in u and ("." in host or host.startswith("localhost")):
            return "http://" + u
        raise ToolFailure("BAD_URL", f"{u!r} is not a URL: give a full one such as https://example.com/.")
    if scheme in ("http", "https"):
        return u
    if scheme == "file":
        if allow_files:
            return u
        raise ToolFailure("BAD_URL", "file:// URLs are blocked: this server was started without --allow-file-urls "
                                     "(a page opened from disk could show the agent any local file).")
    raise ToolFailure("BAD_URL", f"Cannot open {u!r}: only http, https and about:blank URLs are allowed.")
