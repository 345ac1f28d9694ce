"""Grants for a whole fleet: "allow clicks on this site" given once, for every run of the fleet until it
ends (`engine.store.grants` keeps them: one grant run per fleet process, `run_id` = pid + fleet id)."""

from __future__ import annotations

import logging
import os
from typing import Any

from engine.errors import VigilError
from engine.models import Action

log = logging.getLogger("vigil.fleet")


class FleetGrants:
    def __init__(self, store: Any, fleet_id: str) -> None:
        from engine.store.grants import GrantBook

        self.run_id = f"{os.getpid()}-fleet-{fleet_id}"
        self.book = GrantBook(store, self.run_id)

    def add(self, kind: str, site: str) -> Any:
        """Grant `kind` steps (click, type, scroll, select, check, hover) on the origin of `site` (a URL or a
        host) to every run of the fleet; StoreError on a bad kind or site. Returns the Grant."""
        return self.book.add(kind, site)

    def revoke(self, grant_id: int) -> Any:
        return self.book.revoke(grant_id)

    def active(self) -> list[Any]:
        return self.book.active()

    def covering(self, action: Action, url: str) -> str | None:
        """The loop's `grants` hook: what grant covers this (non-sensitive) step, in words, or None."""
        try:
            g = self.book.covering(action.name, url)
        except Exception as exc:  # noqa: BLE001 - a grant that cannot be read never approves anything
            log.warning("fleet grants could not be checked: %s", exc)
            return None
        return f"{g.describe()} (#{g.id}, for the whole fleet)" if g is not None else None

    def attach_session(self, session_id: str) -> None:
        try:
            self.book.attach_session(session_id)
        except (VigilError, Exception) as exc:  # noqa: B014 - the record of a grant must not stop a run
            log.warning("fleet grants could not be recorded with session %s: %s", session_id[:8], exc)

    def end(self) -> None:
        try:
            self.book.end_run()
        except Exception as exc:  # noqa: BLE001 - best effort: a later fleet never applies them anyway
            log.warning("the end of the fleet's grants could not be recorded: %s", exc)
