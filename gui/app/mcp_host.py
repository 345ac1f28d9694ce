"""The MCP server inside the supervisor window: `vigil gui --mcp [PORT]`, and `vigil mcp` under `ask`
where there is a display.

The window hosts the engine's MCP server (`engine.mcp`) without owning it: the server's supervisor
drives the window's tab, records with the window's session recorder, and its steps wait at a
`QueueGate` the window's approval bar answers — the controller adopts each run the server starts
(`Supervisor.adopt_run`), so the chat, the plan, the target outline, Stop and the policy box serve
an MCP client's steps exactly as they serve the window's own planners. While the person runs a task
of their own in the window, tool calls that need the tab are refused with a clear error.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QToolButton

from engine.loop import QueueGate
from engine.models import POLICIES
from gui.window.status_bar import ElidedToolButton

if TYPE_CHECKING:
    from engine.loop.runner import AgentLoop
    from engine.models import RunResult
    from engine.tab import Tab
    from gui.window.main_window import MainWindow

log = logging.getLogger("vigil.gui")
START_TIMEOUT_S = 15.0


class WindowMcpHost:
    """`host = WindowMcpHost(window)`; `await host.start_http(port)` or `await host.serve_stdio()`;
    `await host.stop()` when the window has closed."""

    def __init__(self, window: MainWindow, *, url: str | None = None, allow_files: bool = False,
                 record: bool = True, grants: list[str] | None = None, upload_from: Sequence[str] = ()) -> None:
        from engine.mcp.clients import McpClients
        from engine.mcp.server import build_server

        self.window, self.ctl = window, window.sup
        self.gate = QueueGate()
        # the window hosts one tab: McpClients serves one client at a time here (the next gets BUSY)
        self.clients = McpClients(policy=window.policy.currentText(), gate=self.gate, url=url, record=record,
                                  allow_files=allow_files, host=self, upload_roots=upload_from)
        self.server = build_server(self.clients)
        self._task: asyncio.Task | None = None   # the run the server drives now
        self._http: Any = None
        self._serving: asyncio.Future | None = None
        self.endpoint = ""
        self._token = ""
        self._start_grants = list(grants or [])  # `vigil mcp --grant KIND@SITE`: given when serving starts
        # the server's place in the status bar: what it does now; its menu copies the endpoint and token and
        # lists this session's grants, each revocable
        self.label = ElidedToolButton()  # elided in the middle at a narrow window, whole in its tooltip
        self.label.setObjectName("mcpStatus")
        self.label.setText("MCP: starting…")
        self.label.setAutoRaise(True)
        self.label.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.label)
        self.menu.setObjectName("mcpMenu")
        self.label.setMenu(self.menu)
        self.menu.aboutToShow.connect(self.fill_menu)
        window.statusBar().addPermanentWidget(self.label)
        window.policy.currentTextChanged.connect(self._policy)
        window.approval.grant_offer = self._grant_offer
        window.approval.grant_requested.connect(self._grant)

    # -- what the server asks of its host (engine.mcp.tabs.TabHost) --------------------------------------
    @property
    def recorder(self) -> Any:
        return self.ctl.recorder

    async def mcp_tab(self) -> Tab:
        from engine.mcp.supervisor import ToolFailure

        if self.ctl.tab is None:
            raise ToolFailure("BROWSER_CLOSED", "The Vigil window has no page open (it is starting or closing); "
                                                "call again in a moment.")
        if self.ctl.running() and self.ctl.run_task_handle is not self._task:
            raise ToolFailure("BUSY", "The person is running a task of their own in the Vigil window; call again "
                                      "when it has ended.")
        return self.ctl.tab

    def mcp_run_started(self, loop: AgentLoop, planner: Any, task: asyncio.Task) -> None:
        self._task = task
        self.ctl.adopt_run(loop, planner, self.gate, task)
        name = self._client_name()
        self.label.setText(f"MCP: {name} drives this tab" + self._where())
        # no plan in an MCP run: the plan panel says where the steps come from, not "Planning…"
        self.window.plan.set_driver(f"Steps from {name} (MCP): each step it asks for shows in the "
                                    "chat and waits for your approval over the page.")

    def mcp_run_ended(self, result: RunResult) -> None:
        self._task = None
        self.ctl.adopted_run_ended()
        self.window.plan.set_driver(None)
        self.label.setText("MCP: waiting for the client" + self._where())

    # -- serving ----------------------------------------------------------------------------------------
    async def start_http(self, port: int) -> tuple[str, str, bool]:
        """Serve streamable HTTP on 127.0.0.1:`port` behind a bearer token: (endpoint URL, token, whether
        the token came from VIGIL_MCP_TOKEN). VigilError when the port cannot be used."""
        from engine.mcp.http import HOST, PATH, bind, choose_token, make_http_server

        token, from_env = choose_token()
        sock = bind(port)
        self._give_start_grants()
        self.clients.seen_transport("http")
        self._http = make_http_server(self.server, token, sock.getsockname()[1], self.clients)
        self._serving = asyncio.ensure_future(self._http.serve(sock))
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT_S
        while not self._http.server.started and not self._serving.done():
            if asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.02)
        if self._serving.done():
            self._serving.result()  # its error, if it failed to start
        self.endpoint, self._token = f"http://{HOST}:{sock.getsockname()[1]}{PATH}", token
        self.label.setText("MCP: waiting for a client" + self._where())
        self.label.setToolTip(f"MCP server (streamable HTTP) at {self.endpoint}; its menu copies the endpoint and "
                              "the bearer token")
        self._show_grants()
        return self.endpoint, token, from_env

    async def serve_stdio(self) -> None:
        """Serve over this process's stdin/stdout until the client disconnects."""
        self._give_start_grants()
        self.clients.seen_transport("stdio")
        self.endpoint = "stdio"
        self.label.setText("MCP: serving the client that started Vigil (stdio)")
        self._show_grants()
        self._serving = asyncio.ensure_future(self.server.run_stdio_async())
        with contextlib.suppress(asyncio.CancelledError):
            await self._serving

    async def stop(self) -> None:
        """Stop serving and end the run (the window's tab, browser and store are the window's)."""
        if self._http is not None:
            self._http.stop()
        if self._serving is not None and not self._serving.done():
            if self._http is None:
                self._serving.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError, asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._serving), 10)
        await self.clients.aclose()

    # -- grants for this session ("Allow … for this session" in the approval bar) -------------------------
    def _give_start_grants(self) -> None:
        """The grants given at the command line (`vigil mcp --grant KIND@SITE`); VigilError names a bad one."""
        for g in self.clients.grants.start(self._start_grants):
            self.window.statusBar().showMessage(f"Granted #{g.id} for this session: {g.describe()}", 10000)
        self._start_grants = []

    def _grant_offer(self, req: Any) -> str | None:
        """The grant the bar may offer for this request of the server's run (none for the window's own runs,
        for actions no grant covers, or on a page without a site)."""
        from engine.store.grants import KIND_WORDS, kind_of, site_of_url

        if self._task is None or self.ctl.run_task_handle is not self._task or self.ctl.tab is None:
            return None
        if getattr(req, "dialog", None) is not None:  # a page's dialog is answered, never granted
            return None
        kind, site = kind_of(req.proposal.action.name), site_of_url(self.ctl.tab.url)
        if kind is None or not site:
            return None
        return f"Allow {KIND_WORDS[kind]} on {site} for this session"

    def _grant(self, req: Any) -> None:
        from engine.errors import VigilError
        from engine.mcp.supervisor import ToolFailure
        from engine.store.grants import kind_of

        kind = kind_of(req.proposal.action.name)
        if kind is None or self.ctl.tab is None:
            return
        try:
            sup = next(iter(self.clients.clients), None)
            g = self.clients.grants.grant(kind, self.ctl.tab.url, sup.session_ids[-1] if sup and sup.session_ids
                                          else None)
        except (VigilError, ToolFailure) as exc:
            self.window.show_error(f"The grant was not kept: {getattr(exc, 'message', exc)}")
            return
        self.window.statusBar().showMessage(f"Granted #{g.id} until this session ends: {g.describe()} — revoke it "
                                            "from the MCP button's menu.", 10000)
        self._show_grants()

    def grants(self) -> list:
        try:
            return self.clients.grants.active()
        except Exception:  # noqa: BLE001 - the list is a courtesy; the grants themselves are in the store
            log.debug("grants could not be listed", exc_info=True)
            return []

    def fill_menu(self) -> None:
        """The status button's menu, built as it opens: copy the endpoint and token; revoke a grant."""
        self.menu.clear()
        clip = QGuiApplication.clipboard()
        if self.endpoint and self.endpoint != "stdio":
            self.menu.addAction(f"Copy the endpoint ({self.endpoint})", lambda: clip.setText(self.endpoint))
            self.menu.addAction("Copy the bearer token", lambda: clip.setText(self._token))
            self.menu.addSeparator()
        grants = self.grants()
        if not grants:
            self.menu.addAction("No grants in this session: every step the policy asks about is asked"
                                ).setEnabled(False)
        for g in grants:
            self.menu.addAction(f"Revoke: {g.describe()} (#{g.id})", functools.partial(self.revoke, g.id))

    def revoke(self, grant_id: int) -> None:
        from engine.errors import VigilError
        from engine.mcp.supervisor import ToolFailure

        try:
            g = self.clients.grants.revoke(grant_id)
        except (VigilError, ToolFailure) as exc:
            self.window.show_error(f"The grant was not revoked: {getattr(exc, 'message', exc)}")
            return
        self.window.statusBar().showMessage(f"Revoked #{g.id}: {g.describe()}; such steps are asked again.", 8000)
        self._show_grants()

    def _show_grants(self) -> None:
        grants = self.grants()
        listed = "\n".join(f"#{g.id} {g.describe()}" for g in grants) or "none"
        tip = self.label.toolTip().split("\n\nGrants for this session")[0]
        self.label.setToolTip(f"{tip}\n\nGrants for this session (revoke them from this menu):\n{listed}")

    # -- internals ----------------------------------------------------------------------------------------
    def _client_name(self) -> str:
        sup = next(iter(self.clients.clients), None)
        return sup.client.name if sup is not None else "an MCP client"

    def _where(self) -> str:
        return f" · {self.endpoint}" if self.endpoint and self.endpoint != "stdio" else ""

    def _policy(self, policy: str) -> None:
        if policy in POLICIES:
            self.clients.set_policy(policy)
