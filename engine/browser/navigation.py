"""Addresses and navigation errors: which URLs Vigil opens (`normalize_url`), and what a failed
navigation means for a person and what to do (`navigation_error`). `engine.browser.target` re-exports
both."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from engine.browser.net_errors import net_error_words
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
    words = net_error_words(text, url)  # net::ERR_… in words, its code kept in parentheses
    if words:
        return NavigationError(f"Could not open {url}: {words}.")
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
    words = net_error_words(text)
    return NavigationError(f"{what} failed: {words}." if words else f"{what} failed: {text}")
