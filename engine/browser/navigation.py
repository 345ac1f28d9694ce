"""Addresses and navigation errors: which URLs Vigil opens (`normalize_url`), and what a failed
navigation means for a person and what to do (`navigation_error`). `engine.browser.target` re-exports
both."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from engine.errors import BrowserClosedError, ErrorCode, NavigationError, VigilError

ALLOWED_SCHEMES = ("http", "https", "file", "about", "data")


def normalize_url(url: str) -> str:
    """Accept URLs and local paths; refuse schemes a browser agent has no business opening."""
    if not url or not url.strip():
        raise NavigationError("No URL given. Pass an http(s) URL or a path to a local HTML file.",
                              code=ErrorCode.BAD_URL)
    url = url.strip()
    p = Path(url).expanduser()
    if "://" not in url and not url.startswith(("about:", "data:")):
        if p.exists():
            return p.resolve().as_uri()
        if "/" not in url.split(".")[0] and "." in url and " " not in url:
            return "http://" + url  # "example.com" → http://example.com
        raise NavigationError(f"{url!r} is neither a URL nor an existing file. Give a full URL such as "
                              "http://127.0.0.1:8000/ or a path to an HTML file.", code=ErrorCode.BAD_URL)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise NavigationError(f"Cannot open {url!r}: the {scheme!r} scheme is not supported. Vigil opens "
                              "http, https and file URLs.", code=ErrorCode.BAD_URL)
    return url


def navigation_error(url: str, exc: Exception, timeout: float) -> VigilError:
    """The error for a failed Playwright navigation to `url`, with what it means and what to do."""
    text = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    if "Timeout" in exc.__class__.__name__ or "Timeout" in text:
        return NavigationError(f"{url} did not finish loading within {timeout:.0f} s. The server may be slow or "
                               "stuck; try again, raise the timeout, or snapshot what has loaded with "
                               "wait_until='commit'.", code=ErrorCode.NAVIGATION_TIMEOUT)
    for marker, hint in (("ERR_NAME_NOT_RESOLVED", "the host name does not resolve — check the spelling"),
                         ("ERR_CONNECTION_REFUSED", "nothing is listening there — is the server running?"),
                         ("ERR_ADDRESS_UNREACHABLE", "the address is unreachable from this machine"),
                         ("ERR_INTERNET_DISCONNECTED", "this machine has no network route to it"),
                         ("ERR_CONNECTION_RESET", "the server reset the connection"),
                         ("ERR_FILE_NOT_FOUND", "the file does not exist"),
                         ("ERR_ABORTED", "the navigation was aborted (a download, or another navigation)"),
                         ("ERR_CERT", "the TLS certificate was rejected"),
                         ("ERR_TIMED_OUT", "the connection timed out")):
        if marker in text:
            return NavigationError(f"Could not open {url}: {hint} ({marker}).")
    if "closed" in text.lower():
        return BrowserClosedError(f"Could not open {url}: the tab or browser was closed.")
    return NavigationError(f"Could not open {url}: {text}")


def _history_error(what: str, exc: Exception, timeout: float) -> VigilError:
    text = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    if "Timeout" in exc.__class__.__name__ or "Timeout" in text:
        return NavigationError(f"{what} did not finish loading within {timeout:.0f} s. The server may be slow or "
                               "stuck; try again.", code=ErrorCode.NAVIGATION_TIMEOUT)
    if "closed" in text.lower():
        return BrowserClosedError(f"{what} failed: the tab or browser was closed.")
    return NavigationError(f"{what} failed: {text}")
