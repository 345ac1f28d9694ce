"""The clients of an MCP server over HTTP in the Fleet view (`vigil gui --mcp PORT`): two real SDK clients connect
under `ask`, each appears as a run with a tab of its own, and each one's step waits in the one approval queue
naming its client. One Enter answers one question (the other client's stays untouched), a rejection's typed reason
reaches its client; "Stop this client's run" ends a run and the client's next action starts a new one. Real server
in-process on the window's loop, real Chromium, the SDK's clients on threads of their own.

And the command: `vigil mcp --http 0` under ask with a display opens this view, serves a client, and stops cleanly
on SIGTERM."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from support.gui_helpers import run
from support.mcp_client import ThreadedProbe
from support.mcp_server import items_of, ref
from support.paths import ROOT

WAIT_MS = 30_000


def _in_thread(qtbot, fn, *args) -> None:
    """Run a blocking client call on a thread while Qt (and so the server) keeps running."""
    failed: list[BaseException] = []

    def go() -> None:
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            failed.append(exc)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    qtbot.waitUntil(lambda: not t.is_alive(), timeout=WAIT_MS)
    if failed:
        raise failed[0]


def _connect(qtbot, url: str, token: str, name: str) -> ThreadedProbe:
    p = ThreadedProbe()
    _in_thread(qtbot, p.connect, url, token, name)
    return p


def _done(qtbot, fut):
    qtbot.waitUntil(fut.done, timeout=WAIT_MS)
    return fut.result()


@contextlib.contextmanager
def clients_window(qtbot, start_url: str):
    """The view of a server under ask in its window, serving; shut down (the server stopped) on leaving — inside
    the test: pytest-qt closes the test's widgets before fixtures end."""
    from engine.mcp.clients import McpClients
    from engine.mcp.clients_view import McpClientsFleet
    from engine.mcp.planner import NoPersonGate
    from gui.fleet.mcp_clients_window import McpClientsWindow

    clients = McpClients(policy="ask", gate=NoPersonGate(), url=start_url, transport="http")
    view, token, _ = McpClientsFleet.over_http(clients, 0)
    window = McpClientsWindow(view, token=token)
    qtbot.addWidget(window)
    window.place_on()
    window.show()
    run(qtbot, window.start())
    try:
        yield window, view, token
    finally:
        run(qtbot, window.shutdown(), 60)
    assert window.result is not None and {r.state for r in window.result.runs} <= {"done", "stopped", "failed"}


def test_two_clients_are_two_runs_and_their_questions_one_queue(qtbot, aio, server, tmp_path,  # noqa: F811
                                                                 monkeypatch):
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path))
    monkeypatch.delenv("VIGIL_MCP_TOKEN", raising=False)
    with clients_window(qtbot, server.url("mcp_shop.html")) as (window, view, token):
        _two_clients(qtbot, window, view, token)


def _two_clients(qtbot, window, view, token) -> None:
    assert window.windowTitle() == f"Vigil — MCP clients at {view.endpoint}"
    assert window.connect_help.isVisible() and view.endpoint in window.connect_help.text()
    assert "Bearer" in window.connect_help.text() and window.header.text().endswith("no client yet")
    window.copy_token_btn.click()
    assert QApplication.clipboard().text() == token

    alpha = _connect(qtbot, view.endpoint, token, "alpha-agent")
    beta = _connect(qtbot, view.endpoint, token, "beta-agent")
    try:
        refs = {}
        for probe in (alpha, beta):  # reading needs no approval; the first call makes the client a run
            snap = _done(qtbot, probe.start_call("browser_snapshot"))
            assert not snap.is_error and "Add to cart" in snap.page(), snap.text
            refs[probe] = items_of(snap)
        assert [r.name for r in view.runs] == ["alpha-agent", "beta-agent"]
        qtbot.waitUntil(lambda: not window.connect_help.isVisible(), timeout=WAIT_MS)

        # each client's step waits in the one queue, naming its client; nothing runs before an answer
        add = alpha.start_call("browser_click", {"ref": ref(refs[alpha], "Add to cart"), "element": "Add to cart"})
        qtbot.waitUntil(lambda: len(view.queue.waiting) == 1, timeout=WAIT_MS)
        more = beta.start_call("browser_click", {"ref": ref(refs[beta], "Load more"), "element": "Load more"})
        qtbot.waitUntil(lambda: len(view.queue.waiting) == 2, timeout=WAIT_MS)
        first, second = view.queue.waiting
        assert (first.run, second.run) == ("alpha-agent", "beta-agent")
        listed = [window.queue_list.item(i).text() for i in range(window.queue_list.count())]
        assert listed[0].startswith('[alpha-agent] step 1: Click button "Add to cart"'), listed
        assert listed[1].startswith('[beta-agent] step 1: Click button "Load more"'), listed
        assert {window.runs.state_of(n) for n in ("alpha-agent", "beta-agent")} == {"waiting for you"}
        assert "2 waiting for you" in window.header.text()
        assert not add.done() and not more.done()

        # the oldest question is in the bar, on its client's own page; one Enter answers it and only it
        qtbot.waitUntil(lambda: window.approval.request is first.request, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: window.page.tab is view.run_named("alpha-agent").tab, timeout=WAIT_MS)
        assert view.run_named("alpha-agent").tab is not view.run_named("beta-agent").tab
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
        focused = QApplication.focusWidget()
        assert focused is window.approval.approve_btn, focused
        qtbot.keyClick(focused, Qt.Key_Return)
        assert [e.decision.kind for e in view.queue.history if e.decision is not None] == ["approve"]
        done = _done(qtbot, add)
        assert not done.is_error and "done, verified" in done.text, done.text
        qtbot.waitUntil(lambda: window.approval.request is second.request, timeout=WAIT_MS)  # the next one shows
        assert second.waiting and not more.done(), "the other client's question is untouched by the first answer"
        assert [e.id for e in view.queue.history if e.decision is not None] == [first.id]

        # the other client's question: rejected with a typed reason, which reaches that client only
        qtbot.mouseClick(window.approval.reject_btn, Qt.LeftButton)
        qtbot.keyClicks(window.approval.reject_reason, "not now, beta")
        qtbot.keyClick(window.approval.reject_reason, Qt.Key_Return)
        refused = _done(qtbot, more)
        assert refused.is_error and "REJECTED by the person" in refused.text, refused.text
        assert "Their reason: not now, beta" in refused.text
        assert "beta" not in done.text and "REJECTED" not in done.text
        qtbot.waitUntil(lambda: not view.queue.waiting and not window.approval.isVisible(), timeout=WAIT_MS)
        assert view.run_named("alpha-agent").steps == 1 and view.run_named("beta-agent").steps == 0
        assert {window.runs.state_of(n) for n in ("alpha-agent", "beta-agent")} == {"running"}

        # "Stop this client's run": it stays connected, and its next action starts a new run in its session
        window.runs.select_run("beta-agent")
        qtbot.waitUntil(lambda: window._run == "beta-agent", timeout=WAIT_MS)
        qtbot.mouseClick(window.stop_run_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: "its next action starts a new run" in window.run_label.text(), timeout=WAIT_MS)
        assert view.run_named("beta-agent").state == "running"
        again = beta.start_call("browser_click", {"ref": ref(refs[beta], "Load more")})
        qtbot.waitUntil(lambda: len(view.queue.waiting) == 1, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: window.approval.request is view.queue.waiting[0].request, timeout=WAIT_MS)
        box = window.grants_box  # a grant is offered apart from the bar: clicks on this site, every client
        assert box.offer_btn.isVisible() and not window.approval.grant_btn.isVisible()
        qtbot.mouseClick(box.offer_btn, Qt.LeftButton)
        assert box.asking() and not again.done()  # nothing is granted before the yes
        qtbot.mouseClick(box.yes_btn, Qt.LeftButton)
        assert not _done(qtbot, again).is_error
        assert view.run_named("beta-agent").steps == 1

        # the Grants menu lists it, and revokes it
        window.fill_grants()
        [revoke] = [a for a in window.grants_menu.actions() if a.text().startswith("Revoke: clicks on http://127")]
        revoke.trigger()
        assert view.clients.grants.active() == [] and "Revoked #" in window.banner.text()
        window.fill_grants()
        assert window.grants_menu.actions()[0].text().startswith("No grants")

        _in_thread(qtbot, alpha.close)  # a client that leaves is kept in the list, done
        qtbot.waitUntil(lambda: view.run_named("alpha-agent").state == "done", timeout=WAIT_MS)
        assert window.runs.state_of("alpha-agent") == "✔ done"
        assert re.search(r"2 clients — 1 running, 1 done", window.header.text()), window.header.text()
    finally:
        for probe in (alpha, beta):
            _in_thread(qtbot, lambda p=probe: p.close(quiet=True))


def test_vigil_mcp_http_under_ask_opens_the_clients_view_and_stops_on_sigterm(tmp_path, server):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "VIGIL_MCP_TOKEN")}
    env.update(QT_QPA_PLATFORM="offscreen", VIGIL_HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "gui.app.launcher", "mcp", "--http", "0", "--url",
                             server.url("mcp_shop.html")], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said: list[str] = []
    client = ThreadedProbe()
    try:
        deadline = time.monotonic() + 60
        while not any("bearer token:" in line for line in said) and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            said.append(line)
        text = "".join(said)
        assert "each client's steps wait in the window's queue" in text, text
        url = re.search(r"at (http://\S+/mcp)", text)[1]
        client.connect(url, re.search(r"bearer token: (\S+)", text)[1], "cli-client")
        snap = client.call("browser_snapshot", {})
        assert not snap.is_error and "Add to cart" in snap.page(), snap.text
    finally:
        client.close(quiet=True)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, "".join(said) + err
    assert out == "" and "Traceback" not in err, err
