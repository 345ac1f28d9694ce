"""The person's grants as one MCP server run holds them: "approve steps like this on this origin" for the
rest of this session (`engine.store.grants` keeps them, tied to the run's id and to its recorded
sessions). McpSupervisor mixes this in; the window's approval bar, the terminal prompt and
`vigil mcp --grant` give them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from engine.errors import ErrorCode, VigilError
from engine.mcp.failure import ToolFailure
from engine.store.schema import StoreError

if TYPE_CHECKING:
    from engine.mcp.tabs import ClientTab
    from engine.models import Action, ApprovalRequest
    from engine.store import Store

log = logging.getLogger("vigil.mcp")


class RunGrants:
    """This run's grants; the class that mixes it in sets `run_id`, `session_ids`, `tabs` (the page a grant
    is offered for), `_store` and `_grant_store` (None until a grant is given or read)."""

    run_id: str
    session_ids: list[str]
    tabs: ClientTab
    _store: Store | None
    _grant_store: Store | None

    def grant_offer(self, request: ApprovalRequest) -> str | None:
        """What the person may grant at the terminal prompt for this request ("Allow clicks on example.com
        for this session"), or None: a page's dialog, an action no grant covers, a page without a site."""
        from engine.store.grants import KIND_WORDS, kind_of, site_of_url

        tab = self.tabs.tab
        if request.dialog is not None or tab is None:
            return None
        kind, site = kind_of(request.proposal.action.name), site_of_url(tab.url)
        return f"Allow {KIND_WORDS[kind]} on {site} for this session" if kind and site else None

    def grant_for_request(self, request: ApprovalRequest) -> str:
        """Give the grant `grant_offer` offered; what was granted, in words. VigilError when it cannot be kept."""
        from engine.store.grants import kind_of

        kind, tab = kind_of(request.proposal.action.name), self.tabs.tab
        if kind is None or tab is None:
            raise VigilError("No grant covers this step.")
        try:
            g = self.grant(kind, tab.url)
        except ToolFailure as exc:
            raise VigilError(exc.message) from None
        return f"#{g.id} {g.describe()}, until this session ends"

    def _grants(self):
        """This run's grants (a GrantBook on the session store), or None without a store."""
        from engine.store.grants import GrantBook

        if self._grant_store is None:
            store = self._store  # (a host's store is the host's to close: the grants get a connection of their own)
            if store is None:
                from engine.store import Store
                try:
                    store = Store.open()
                except VigilError as exc:
                    log.warning("grants cannot be kept: %s", exc.message)
                    return None
            self._grant_store = store
        return GrantBook(self._grant_store, self.run_id)

    def start_grants(self, specs: list[str]) -> list:
        """`vigil mcp --grant KIND@SITE …`: the grants the person gives at start, for this run only.
        StoreError (bad input, or no store to record them in) before anything is served."""
        from engine.store.grants import parse_grant

        parsed = [parse_grant(spec) for spec in specs]
        if not parsed:
            return []
        book = self._grants()
        if book is None:
            raise StoreError("--grant needs the session store (grants are recorded with the session), and it "
                             "cannot be opened; see the warning above.", code=ErrorCode.STORE_UNAVAILABLE)
        return [book.add(kind, site) for kind, site in parsed]

    def _attach_grants(self, session_id: str) -> None:
        if self._grant_store is None:
            return
        try:
            self._grants().attach_session(session_id)
        except Exception as exc:  # noqa: BLE001 - the record of a grant must not stop the run
            log.warning("grants could not be recorded with session %s: %s", session_id[:8], exc)

    def granted(self, action: Action, url: str) -> str | None:
        """What grant of the person (given in this run) covers this non-sensitive step in the document at
        `url` (the frame that holds its target: the grant's origin must be that frame's), or None (the loop
        asks then, as without grants)."""
        if self._grant_store is None:  # nothing was granted in this run
            return None
        try:
            book = self._grants()
            g = book.covering(action.name, url) if book is not None else None
        except Exception as exc:  # noqa: BLE001 - a grant that cannot be read never approves anything
            log.warning("grants could not be checked: %s", exc)
            return None
        return f"{g.describe()} (#{g.id}, for this session)" if g is not None else None

    def grant(self, kind: str, url: str):
        """The person grants `kind` steps on the origin of `url` (scheme, host, port) for the rest of this run
        (the window's bar)."""
        book = self._grants()
        if book is None:
            raise StoreError("Grants need the session store, which cannot be opened.", code=ErrorCode.STORE_UNAVAILABLE)
        sid = self.session_ids[-1] if self.session_ids else None
        return book.add(kind, url, session_id=sid)

    def active_grants(self) -> list:
        """This run's grants now in force ([] when none was given)."""
        if self._grant_store is None:
            return []
        book = self._grants()
        return book.active() if book is not None else []

    def revoke_grant(self, grant_id: int):
        book = self._grants()
        if book is None:
            raise StoreError("Grants need the session store, which cannot be opened.", code=ErrorCode.STORE_UNAVAILABLE)
        return book.revoke(grant_id)

    def _end_grants(self) -> None:
        """The server run is over: its grants in force end with it (stamped in the store)."""
        if self._grant_store is None:
            return
        try:
            self._grants().end_run()
        except Exception as exc:  # noqa: BLE001 - ending is best effort: a later run never applies them anyway
            log.warning("the end of this session's grants could not be recorded: %s", exc)

