"""The MCP server inside the window (`vigil gui --mcp`): a real MCP client (the SDK's, over HTTP with the
bearer token, on a thread of its own) drives the window's tab; each step waits in the window's approval
bar and runs only when the person approves there; a rejection's reason reaches the client; the run is the
window's tab session, recorded with planner `mcp`. Real window (offscreen), real Chromium."""

from __future__ import annotations

import asyncio
import threading

from PySide6.QtCore import Qt

from engine.mcp.probe import http_probe

from support.gui_helpers import open_window, run
from support.mcp_server import items_of, ref

WAIT_MS = 60_000


class ClientThread:
    """The SDK's client connected over HTTP, on its own event loop: the window's loop stays free, and the
    test waits for answers with qtbot (Qt, and so the server, keeps running)."""

    def __init__(self, qtbot, url: str, token: str):
        self.qtbot = qtbot
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.probe = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._main = asyncio.run_coroutine_threadsafe(self._serve(url, token), self.loop)
        qtbot.waitUntil(lambda: self._ready.is_set() or self._main.done(), timeout=WAIT_MS)
        if self._main.done():
            self._main.result()

    async def _serve(self, url: str, token: str) -> None:
        self._stop = asyncio.Event()
        try:
            async with http_probe(url, token, client_name="window-test-client", timeout=120) as probe:
                self.probe = probe
                self._ready.set()
                await self._stop.wait()
        finally:
            self._ready.set()

    def submit(self, name: str, arguments: dict | None = None):
        return asyncio.run_coroutine_threadsafe(self.probe.call(name, arguments), self.loop)

    def call(self, name: str, arguments: dict | None = None):
        fut = self.submit(name, arguments)
        self.qtbot.waitUntil(fut.done, timeout=WAIT_MS)
        return fut.result()

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self.qtbot.waitUntil(self._main.done, timeout=WAIT_MS)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_a_client_drives_the_window_tab_and_the_person_approves_in_the_bar(qtbot, aio, server,  # noqa: F811
                                                                            tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QLabel

    monkeypatch.setenv("VIGIL_HOME", str(tmp_path))  # a store of its own: the grant given here is recorded here

    from gui.app.mcp_host import WindowMcpHost

    layout = QSettings(str(tmp_path / "window.ini"), QSettings.IniFormat)  # not the suite's remembered layout
    with open_window(qtbot, server.url("mcp_shop.html"), settings=layout) as window:
        host = WindowMcpHost(window, grants=["scroll@127.0.0.1"])  # as `vigil mcp --grant scroll@127.0.0.1` gives
        endpoint, token, _ = run(qtbot, host.start_http(0))
        assert [g.describe() for g in host.grants()] == ["scrolling on http://127.0.0.1"]  # a grant is per origin
        assert endpoint.startswith("http://127.0.0.1:") and endpoint.endswith("/mcp")
        status = window.findChild(type(host.label), "mcpStatus")  # elided to its share of a narrow status bar
        assert endpoint in status.full_text() and endpoint in status.shown_tooltip()
        assert status.text().startswith("MCP:")
        client = ClientThread(qtbot, endpoint, token)
        try:
            snap = client.call("browser_snapshot")  # reading needs no approval
            assert not snap.is_error, snap.text
            items = items_of(snap)

            pending = client.submit("browser_click", {"ref": ref(items, "Add to cart"),
                                                      "element": "the shop's Add to cart button"})
            qtbot.waitUntil(window.approval.is_pending, timeout=WAIT_MS)
            assert 'Click button "Add to cart"' in window.approval.summary.text()
            # no plan in an MCP run: the plan panel says where the steps come from (issue 27, item 5)
            assert window.plan.placeholder.text().startswith("Steps from window-test-client (MCP)")
            assert window.plan.placeholder.isVisible() and not window.plan.is_planning()
            assert "the shop's Add to cart button" in window.approval.thought.text(), "the client's intent is shown"
            assert not pending.done(), "nothing runs before the person approves"
            assert run(qtbot, window.sup.tab.page.text_content("#cart-count")) == "0"
            qtbot.mouseClick(window.approval.approve_btn, Qt.LeftButton)
            qtbot.waitUntil(pending.done, timeout=WAIT_MS)
            done = pending.result()
            assert not done.is_error and "done, verified" in done.text, done.text
            assert run(qtbot, window.sup.tab.page.text_content("#cart-count")) == "1"

            # Edit: a click on an element of the live view makes it the step's target
            add = ref(items, "Add to cart")
            pending = client.submit("browser_click", {"ref": ref(items, "Load more")})
            qtbot.waitUntil(window.approval.is_pending, timeout=WAIT_MS)
            qtbot.mouseClick(window.approval.edit_btn, Qt.LeftButton)
            assert window.act_overlay.isChecked(), "the page's boxes take the click while editing"
            qtbot.waitUntil(lambda: any(b.node_id == add for b in window.page._boxes), timeout=WAIT_MS)
            box = next(b for b in window.page._boxes if b.node_id == add)
            qtbot.mouseClick(window.page, Qt.LeftButton,
                             pos=window.page.page_rect_to_widget(box.page_rect).center().toPoint())
            assert window.approval.edit_action.text() == f"click({add})"
            qtbot.mouseClick(window.approval.edit_apply, Qt.LeftButton)
            qtbot.waitUntil(pending.done, timeout=WAIT_MS)
            edited = pending.result()
            assert f"EDITED by the person to click({add})" in edited.text, edited.text
            assert run(qtbot, window.sup.tab.page.text_content("#cart-count")) == "2"

            # "Allow clicks on http://127.0.0.1:PORT for this session": this click runs, and the next one is not asked
            pending = client.submit("browser_click", {"ref": ref(items, "Load more")})
            qtbot.waitUntil(window.approval.is_pending, timeout=WAIT_MS)
            assert window.approval.grant_btn.isVisible()
            assert window.approval.grant_btn.text() == \
                f"Allow clicks on http://127.0.0.1:{server.port} for this session"  # the tab's origin
            qtbot.mouseClick(window.approval.grant_btn, Qt.LeftButton)
            qtbot.waitUntil(pending.done, timeout=WAIT_MS)
            assert "done" in pending.result().text
            granted = client.call("browser_click", {"ref": add})
            assert "done, verified" in granted.text and not window.approval.is_pending()
            assert run(qtbot, window.sup.tab.page.text_content("#cart-count")) == "3"
            assert f"#2 clicks on http://127.0.0.1:{server.port}" in host.label.toolTip()
            host.fill_menu()  # the status button's menu: the grant is listed there, and revocable
            revoke = next(a for a in host.menu.actions()
                          if a.text() == f"Revoke: clicks on http://127.0.0.1:{server.port} (#2)")
            assert any(a.text() == "Copy the bearer token" for a in host.menu.actions())
            revoke.trigger()
            assert [g.kind for g in host.grants()] == ["scroll"] and "#2" not in host.label.toolTip()
            pending = client.submit("browser_click", {"ref": add})
            qtbot.waitUntil(window.approval.is_pending, timeout=WAIT_MS)  # revoked: asked again
            qtbot.mouseClick(window.approval.approve_btn, Qt.LeftButton)
            qtbot.waitUntil(pending.done, timeout=WAIT_MS)

            pending = client.submit("browser_click", {"ref": ref(items, "Delete invoice 4411")})
            qtbot.waitUntil(window.approval.is_pending, timeout=WAIT_MS)
            assert not window.approval.grant_btn.isVisible(), "a sensitive step is never offered a grant"
            qtbot.mouseClick(window.approval.reject_btn, Qt.LeftButton)
            qtbot.keyClicks(window.approval.reject_reason, "keep the invoices")
            qtbot.mouseClick(window.approval.reject_apply, Qt.LeftButton)
            qtbot.waitUntil(pending.done, timeout=WAIT_MS)
            refused = pending.result()
            assert refused.is_error and "REJECTED by the person" in refused.text
            assert "Their reason: keep the invoices" in refused.text
            said = [lab.text() for lab in window.chat.findChildren(QLabel, "obsStatus")]
            assert any(t.endswith("Rejected: keep the invoices") for t in said), said
            assert not any("Rejected: Rejected" in t for t in said), said
            assert "1 match" in client.call("browser_find", {"name": "Delete invoice 4411"}).text, "still there"
            assert window.sup.running() and window.chat.message_count() >= 3, "the run shows in the window's chat"

            session = window.sup.current_session()
            assert session, "the MCP run is the window tab's recorded session"
            data = window.sup.sessions.load(session)
            assert data.session.planner == "mcp"
            assert data.session.metadata["mcp"]["client"] == "window-test-client"
            assert [s.status for s in data.steps] == ["completed"] * 5 + ["rejected"]
            assert data.steps[3].auto_approved and \
                f"clicks on http://127.0.0.1:{server.port} (#2, for this session)" in data.steps[3].decision.reason
            from engine.store import Store
            from engine.store.grants import GrantBook
            with Store.open(tmp_path / "sessions.db") as store:  # the grant is on record with the session
                [scroll, given] = GrantBook(store).of_session(session)
            assert (given.kind, given.site) == ("click", f"http://127.0.0.1:{server.port}") and given.revoked_at
            assert scroll.kind == "scroll" and not scroll.revoked_at, "given at start: recorded with the session"
            assert given.run_id == data.session.metadata["mcp"]["run"] == host.clients.run_id

            # Stop ends the client's run; while the person runs a task of their own, the client is told BUSY
            qtbot.mouseClick(window.stop_btn, Qt.LeftButton)
            qtbot.waitUntil(lambda: not window.sup.running(), timeout=WAIT_MS)
            run(qtbot, window.sup.run_task("click Add to cart", "heuristic", "ask"))
            qtbot.waitUntil(window.approval.is_pending, timeout=WAIT_MS)
            busy = client.call("browser_snapshot")
            assert busy.is_error and "BUSY" in busy.text and "task of their own" in busy.text, busy.text
            qtbot.mouseClick(window.approval.stop_btn, Qt.LeftButton)
            qtbot.waitUntil(lambda: not window.sup.running(), timeout=WAIT_MS)
            assert not client.call("browser_snapshot").is_error, "the window is free again"
            assert data.steps[1].decision.kind == "edit"
        finally:
            client.close()
            run(qtbot, host.stop(), 30)
        assert not window.sup.running(), "the client went away: its run ended"
        assert not window.plan.driver, "the client's run is over: the plan panel no longer speaks of it"
        assert host.grants() == [], "the server run is over: so are its grants"
        with Store.open(tmp_path / "sessions.db") as store:
            assert GrantBook(store).get(scroll.id).ended_at, "its end is on record"
