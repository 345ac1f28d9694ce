"""A bad address typed in the window's URL bar (issue 40, item 13): the field keeps what was typed — never
Chromium's chrome-error://… page — and the banner says in words what is wrong (an unsafe port, nothing
listening), the browser's code only in parentheses. A real window on a real Chromium, keys typed into the field."""

from __future__ import annotations

import os
import socket

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import Qt  # noqa: E402

from engine.browser.net_errors import net_error_words  # noqa: E402

from support.gui_helpers import open_window  # noqa: E402


def _closed_port() -> int:
    """A local port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _go(qtbot, w, address: str) -> None:
    """Type `address` into the focused URL bar over what is there, and press Enter."""
    w.banner.hide()
    w.url.setFocus()
    qtbot.keyClick(w.url, Qt.Key_A, Qt.ControlModifier)
    qtbot.keyClicks(w.url, address)
    qtbot.keyClick(w.url, Qt.Key_Return)
    qtbot.waitUntil(w.banner.isVisible, timeout=15000)


def test_a_bad_address_stays_in_the_field_and_is_said_in_words(qtbot, aio, server):
    refused = f"http://127.0.0.1:{_closed_port()}/shop"
    with open_window(qtbot, server.url("offline_shop.html")) as w:
        for address, words in (("http://127.0.0.1:6000/", "Chromium refuses port 6000: it is reserved for other "
                                                          "protocols (unsafe port)"),
                               (refused, "nothing is listening there")):
            _go(qtbot, w, address)
            qtbot.wait(300)  # Chromium's error page arrives after the failure is said
            assert w.url.text() == address, f"the field shows {w.url.text()!r}, not the address typed"
            said = w.banner.text()
            assert words in said and "net::" not in said and "Page.goto" not in said, said
        # reloading the page that failed: the field still holds the address
        w.banner.hide()
        qtbot.mouseClick(w.toolbar.widgetForAction(w.act_reload), Qt.LeftButton)
        qtbot.waitUntil(lambda: w.status_bar.currentMessage() == "", timeout=15000)
        qtbot.wait(300)
        assert w.url.text() == refused


def test_net_errors_in_words():
    assert net_error_words("Page.goto: net::ERR_UNSAFE_PORT at http://a.test:6000/x") == (
        "Chromium refuses port 6000: it is reserved for other protocols (unsafe port) — serve the page on another "
        "port, such as 8000 (ERR_UNSAFE_PORT)")
    assert net_error_words("net::ERR_CERT_DATE_INVALID") == "the TLS certificate was rejected (ERR_CERT_DATE_INVALID)"
    assert net_error_words("net::ERR_SOMETHING_NEW at http://a.test/") == "Chromium could not load it " \
                                                                           "(ERR_SOMETHING_NEW)"
    assert net_error_words("Timeout 30000ms exceeded") is None
