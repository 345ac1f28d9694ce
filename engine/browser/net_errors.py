"""Chromium's network errors (`net::ERR_…`, as Playwright quotes them) in words for a person: what went
wrong and, where there is one, what to do. `net_error_words(text, url)` finds the code in an error's text;
the code itself stays at the end, in parentheses, for searching."""

from __future__ import annotations

import re
import urllib.parse

# code (without net::) → what it means; "{port}" and "{host}" are filled from the URL
NET_ERROR_WORDS: dict[str, str] = {
    "ERR_UNSAFE_PORT": "Chromium refuses port {port}: it is reserved for other protocols (unsafe port) — "
                       "serve the page on another port, such as 8000",
    "ERR_NAME_NOT_RESOLVED": "the host name does not resolve — check the spelling",
    "ERR_CONNECTION_REFUSED": "nothing is listening there — is the server running?",
    "ERR_CONNECTION_RESET": "the server reset the connection",
    "ERR_CONNECTION_CLOSED": "the server closed the connection without an answer",
    "ERR_EMPTY_RESPONSE": "the server closed the connection without an answer",
    "ERR_CONNECTION_TIMED_OUT": "the server did not answer the connection in time",
    "ERR_TIMED_OUT": "the connection timed out",
    "ERR_ADDRESS_UNREACHABLE": "the address is unreachable from this machine",
    "ERR_ADDRESS_INVALID": "that is not a valid network address",
    "ERR_INTERNET_DISCONNECTED": "this machine has no network route to it",
    "ERR_NETWORK_CHANGED": "the network changed during the load — try again",
    "ERR_PROXY_CONNECTION_FAILED": "the proxy could not be reached",
    "ERR_FILE_NOT_FOUND": "the file does not exist",
    "ERR_ACCESS_DENIED": "the file cannot be read (access denied)",
    "ERR_ABORTED": "the navigation was aborted (a download, or another navigation)",
    "ERR_BLOCKED_BY_CLIENT": "the browser blocked the request",
    "ERR_BLOCKED_BY_RESPONSE": "the server's answer forbids showing it here",
    "ERR_INVALID_URL": "that is not a valid address",
    "ERR_DISALLOWED_URL_SCHEME": "the browser does not open addresses of that kind",
    "ERR_UNKNOWN_URL_SCHEME": "the browser does not open addresses of that kind",
    "ERR_TOO_MANY_REDIRECTS": "the server redirects in a loop",
    "ERR_INVALID_RESPONSE": "the server's answer is not valid HTTP",
    "ERR_INVALID_HTTP_RESPONSE": "the server's answer is not valid HTTP",
    "ERR_SSL_PROTOCOL_ERROR": "the TLS connection failed (is it an http server on an https address?)",
    "ERR_SSL_VERSION_OR_CIPHER_MISMATCH": "the server's TLS version or ciphers are not supported",
    "ERR_CERT": "the TLS certificate was rejected",  # every ERR_CERT_… code
}
_CODE = re.compile(r"\b(?:net::)?(ERR_[A-Z0-9_]+)")


def net_error_code(text: str) -> str | None:
    """The first `ERR_…` code in an error's text (None when there is none)."""
    m = _CODE.search(text)
    return m.group(1) if m else None


def net_error_words(text: str, url: str = "") -> str | None:
    """The network error quoted in `text`, in words, with its code in parentheses
    ("Chromium refuses port 6000: … (ERR_UNSAFE_PORT)"); None when it quotes none."""
    code = net_error_code(text)
    if code is None:
        return None
    words = NET_ERROR_WORDS.get(code) or (NET_ERROR_WORDS["ERR_CERT"] if code.startswith("ERR_CERT_") else
                                          "Chromium could not load it")
    url = url or _quoted_url(text)
    return words.format(port=_port(url) or "of this address", host=urllib.parse.urlsplit(url).hostname or url) \
        + f" ({code})"


def _quoted_url(text: str) -> str:
    """The address Playwright names in its error ("net::ERR_… at http://…")."""
    m = re.search(r" at (\S+://\S+)", text)
    return m.group(1) if m else ""


def _port(url: str) -> str:
    try:
        port = urllib.parse.urlsplit(url).port
    except ValueError:
        return ""
    return str(port) if port is not None else ""
