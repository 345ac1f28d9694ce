"""The Fleet view of an MCP server's clients (`vigil gui --mcp PORT`, `vigil mcp --http PORT` under ask): each
client a run, with its own tab, state and steps; every client's questions in the one approval queue, answered
in any order with the same approval bar. The view is `engine.mcp.clients_view.McpClientsFleet`; this window is
the Fleet view with the words of a server: how to connect (the endpoint, the bearer token to copy) while no
client is connected, "Stop this client's run" (the client stays connected: its next action starts a new run in
its session), and closing the window stops the server."""

from __future__ import annotations

import functools
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QMenu, QPushButton, QToolButton, QWidget

from engine.models.text import bidi_safe
from gui.fleet.fleet_lists import RUN_COLUMNS, count_words
from gui.fleet.fleet_window import FleetWindow
from gui.kit.labels import plain_label


def connect_words(view: Any, token_from_env: bool) -> str:
    """How a client connects to this server, and what it gets."""
    from engine.mcp.clients import duration

    clients = view.clients
    where = ("the value of VIGIL_MCP_TOKEN that Vigil was started with" if token_from_env
             else "printed in the terminal that started Vigil")
    return (f"No MCP client is connected. Connect one (streamable HTTP) to\n\n    {view.endpoint}\n\n"
            "with the header \"Authorization: Bearer <token>\": the token is " + where + " — or use "
            "Copy bearer token. A client shows here at its first tool call, with a tab and a recorded session of "
            "its own; each of its steps waits in the queue on the left until you answer it. "
            f"Up to {clients.max_clients} clients at once (the next is told BUSY); a client idle for "
            f"{duration(clients.idle_s)} is let go.")


class McpClientsWindow(FleetWindow):
    """`McpClientsWindow(view, token=…)`; `await window.start()` serves; closing the window stops the server."""

    FAILED_WORDS = "The MCP server stopped with an error"

    def __init__(self, view: Any, *, token: str = "", token_from_env: bool = False, parent: QWidget | None = None):
        super().__init__(view, parent)
        self.token = token
        self.setWindowTitle(bidi_safe(f"Vigil — MCP clients at {view.endpoint}"))
        self.runs.setHorizontalHeaderLabels(["Client", *RUN_COLUMNS[1:]])
        self.stop_all_btn.setText("Stop every client's run")
        self.stop_all_btn.setToolTip("End the current run of every connected client: waiting steps are refused; "
                                     "the clients stay connected, and each one's next action starts a new run in "
                                     "its session")
        self.stop_run_btn.setText("Stop this client's run")
        self.stop_run_btn.setToolTip("End this client's current run (a waiting step is refused); it stays "
                                     "connected, and its next action starts a new run in its session")
        # the endpoint and the token, to copy into a client's configuration
        self.copy_endpoint_btn = QPushButton("Copy endpoint")
        self.copy_endpoint_btn.setToolTip(view.endpoint)
        self.copy_endpoint_btn.clicked.connect(lambda: QGuiApplication.clipboard().setText(view.endpoint))
        self.copy_token_btn = QPushButton("Copy bearer token")
        self.copy_token_btn.setToolTip("The token every request needs: Authorization: Bearer <token>")
        self.copy_token_btn.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.token))
        self.copy_token_btn.setEnabled(bool(token))
        # the person's grants of this server run (given from the bar, or --grant), each revocable
        self.grants_btn = QToolButton()
        self.grants_btn.setObjectName("mcpGrants")
        self.grants_btn.setText("Grants")
        self.grants_btn.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.grants_menu = QMenu(self.grants_btn)
        self.grants_btn.setMenu(self.grants_menu)
        self.grants_menu.aboutToShow.connect(self.fill_grants)
        copy_row = QWidget()
        row = QHBoxLayout(copy_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.copy_endpoint_btn)
        row.addWidget(self.copy_token_btn)
        row.addWidget(self.grants_btn)
        row.addStretch(1)
        self.left_layout.insertWidget(self.left_layout.indexOf(self.header) + 1, copy_row)
        # what to do while no client is connected, where a client's page shows once one is
        self.connect_help = plain_label(connect_words(view, token_from_env), name="mcpConnect")
        self.connect_help.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.right_layout.insertWidget(self.right_layout.indexOf(self.page_panel), self.connect_help, 1)
        self._say_counts()

    # -- grants --------------------------------------------------------------------------------
    def fill_grants(self) -> None:
        """The Grants menu, built as it opens: every grant in force, each revocable (they hold for every client
        of this server run)."""
        self.grants_menu.clear()
        grants = self.fleet.clients.grants.active()
        if not grants:
            self.grants_menu.addAction("No grants: every step the policy asks about is asked").setEnabled(False)
        for g in grants:
            self.grants_menu.addAction(bidi_safe(f"Revoke: {g.describe()} (#{g.id}), for every client"),
                                       functools.partial(self.revoke, g.id))

    def grant_book(self) -> Any:
        return self.fleet.clients.grants  # the server run's: they hold for every client

    def revoke(self, grant_id: int) -> None:
        from engine.errors import VigilError

        try:
            g = self.fleet.clients.grants.revoke(grant_id)
        except VigilError as exc:
            self._say(f"The grant was not revoked: {exc.message}")
            return
        self._say(f"Revoked #{g.id}: {g.describe()}; such steps are asked again.")

    # -- words ---------------------------------------------------------------------------------
    def _say_counts(self) -> None:
        runs = self.fleet.runs
        counts: dict[str, int] = {}
        for r in runs:
            counts[r.state] = counts.get(r.state, 0) + 1
        n = len(runs)
        said = "no client yet" if not n else f"{n} client{'s' if n != 1 else ''} — {count_words(counts)}"
        self.header.setText(f"MCP server at {self.fleet.endpoint}: {said}")
        self.queue_label.setText(f"Waiting for you (oldest first): {len(self.fleet.queue.waiting)}")
        help_label = getattr(self, "connect_help", None)  # (the Fleet view says its counts while it is built)
        if help_label is not None:
            connected = any(not r.finished for r in runs)
            help_label.setVisible(not connected)
            self.page_panel.setVisible(connected)
            if not connected and self._run is None:
                self.run_label.setText("Waiting for MCP clients.")

    def _say_run(self, run: Any) -> None:
        super()._say_run(run)
        if not run.finished and run.reason:  # its last run was stopped or failed; it is still connected
            self.run_label.setText(f"{self.run_label.text()} — {run.reason}")

    def _on_change(self, change: Any) -> None:
        super()._on_change(change)
        # the first client to connect is shown at once (its page), before it asks anything
        run = change.run if change.kind == "run" else None
        if run is not None and self._run is None and not run.finished:
            self.runs.select_run(run.name)

    # -- control -------------------------------------------------------------------------------
    def stop_run(self) -> None:
        if self._run is not None:
            self.fleet.stop(self._run, "the person stopped this client's run in the Vigil window")

    def stop_all(self) -> None:
        self.fleet.stop_all("the person stopped every client's run in the Vigil window")

    def _stop_for_close(self) -> None:
        self.fleet.close("the Vigil window was closed")
