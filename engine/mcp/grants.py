"""The person's grants as one MCP server run holds them: "approve steps like this on this origin" for the
rest of this server run (`engine.store.grants` keeps them, tied to the run's id and to the recorded
sessions of its clients). One `ServerGrants` per server run, shared by every client's supervisor; the
window's approval bar, the terminal prompt and `vigil mcp --grant` give them.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from engine.errors import ErrorCode, VigilError
from engine.mcp.failure import ToolFailure
from engine.store.schema import StoreError

if TYPE_CHECKING:
    from engine.models import Action, ApprovalRequest
    from engine.store import Store
    from engine.store.grants import Grant, GrantBook

log = logging.getLogger("vigil.mcp")


class ServerGrants:
    """This server run's grants (`run_id`), in a store connection of their own opened at the first grant."""

    def __init__(self, run_id: str | None = None) -> None:
        from engine.store.grants import new_run_id

        self.run_id = run_id or new_run_id()
        self._store: Store | None = None

    def _book(self) -> GrantBook | None:
        """This run's grants (a GrantBook on the session store), or None without a store."""
        from engine.store.grants import GrantBook

        if self._store is None:
            from engine.store import Store
            try:
                self._store = Store.open()
            except VigilError as exc:
                log.warning("grants cannot be kept: %s", exc.message)
                return None
        return GrantBook(self._store, self.run_id)

    def offer(self, request: ApprovalRequest, url: str | None) -> str | None:
        """What the person may grant for this request on the page at `url` ("Allow clicks on example.com
        for this session"), or None: a page's dialog, an action no grant covers, a page without a site."""
        from engine.store.grants import KIND_WORDS, kind_of, site_of_url

        if request.dialog is not None or not url:
            return None
        kind, site = kind_of(request.proposal.action.name), site_of_url(url)
        return f"Allow {KIND_WORDS[kind]} on {site} for this session" if kind and site else None

    def give(self, request: ApprovalRequest, url: str | None, session_id: str | None) -> str:
        """Give the grant `offer` offered; what was granted, in words. VigilError when it cannot be kept."""
        from engine.store.grants import kind_of

        kind = kind_of(request.proposal.action.name)
        if kind is None or not url:
            raise VigilError("No grant covers this step.")
        try:
            g = self.grant(kind, url, session_id)
        except ToolFailure as exc:
            raise VigilError(exc.message) from None
        return f"#{g.id} {g.describe()}, until this session ends"

    def start(self, specs: list[str]) -> list[Grant]:
        """`vigil mcp --grant KIND@SITE …`: the grants the person gives at start, for this run only.
        StoreError (bad input, or no store to record them in) before anything is served."""
        from engine.store.grants import parse_grant

        parsed = [parse_grant(spec) for spec in specs]
        if not parsed:
            return []
        book = self._book()
        if book is None:
            raise StoreError("--grant needs the session store (grants are recorded with the session), and it "
                             "cannot be opened; see the warning above.", code=ErrorCode.STORE_UNAVAILABLE)
        return [book.add(kind, site) for kind, site in parsed]

    def attach_session(self, session_id: str) -> None:
        """A client's recorded session began: the grants in force are recorded with it too."""
        if self._store is None:
            return
        try:
            book = self._book()
            if book is not None:
                book.attach_session(session_id)
        except Exception as exc:  # noqa: BLE001 - the record of a grant must not stop the run
            log.warning("grants could not be recorded with session %s: %s", session_id[:8], exc)

    def granted(self, action: Action, url: str) -> str | None:
        """What grant of the person (given in this run) covers this non-sensitive step in the document at
        `url` (the frame that holds its target: the grant's origin must be that frame's), or None (the loop
        asks then, as without grants)."""
        if self._store is None:  # nothing was granted in this run
            return None
        try:
            book = self._book()
            g = book.covering(action.name, url) if book is not None else None
        except Exception as exc:  # noqa: BLE001 - a grant that cannot be read never approves anything
            log.warning("grants could not be checked: %s", exc)
            return None
        return f"{g.describe()} (#{g.id}, for this session)" if g is not None else None

    def grant(self, kind: str, url: str, session_id: str | None = None) -> Grant:
        """The person grants `kind` steps on the origin of `url` (scheme, host, port) for the rest of this run."""
        book = self._book()
        if book is None:
            raise StoreError("Grants need the session store, which cannot be opened.", code=ErrorCode.STORE_UNAVAILABLE)
        return book.add(kind, url, session_id=session_id)

    def active(self) -> list[Grant]:
        """This run's grants now in force ([] when none was given)."""
        if self._store is None:
            return []
        book = self._book()
        return book.active() if book is not None else []

    def revoke(self, grant_id: int) -> Grant:
        book = self._book()
        if book is None:
            raise StoreError("Grants need the session store, which cannot be opened.", code=ErrorCode.STORE_UNAVAILABLE)
        return book.revoke(grant_id)

    def end(self) -> None:
        """The server run is over: its grants in force end with it (stamped in the store), and the store closes."""
        if self._store is None:
            return
        try:
            book = self._book()
            if book is not None:
                book.end_run()
        except Exception as exc:  # noqa: BLE001 - ending is best effort: a later run never applies them anyway
            log.warning("the end of this session's grants could not be recorded: %s", exc)
        with contextlib.suppress(Exception):
            self._store.close()
        self._store = None
