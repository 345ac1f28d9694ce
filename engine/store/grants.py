"""Standing grants: a person's "approve steps like this on this site", kept in the session store.

A grant covers one kind of ordinary step (`GRANT_KINDS`: clicks, typing, scrolling, choosing an
option, ticking a box, hovering) on one site (the registrable domain, as `engine.loop.policy.site_of`
reads it). It never covers a sensitive step: the loop consults grants only for steps with no
sensitive reason at all (typing into a secret field, submitting, leaving the site, files, a
destructive button, instruction-like page text all still ask). Grants stay until revoked; a revoked
grant keeps its row (with `revoked_at`), so the record says what was allowed when.
"""

from __future__ import annotations

import urllib.parse

from pydantic import BaseModel

from engine.errors import ErrorCode
from engine.loop.policy import site_of
from engine.store.schema import StoreError
from engine.store.store import Store, _now

# kind → the actions it covers
GRANT_KINDS: dict[str, tuple[str, ...]] = {
    "click": ("click", "double_click"), "type": ("type",), "scroll": ("scroll",), "select": ("select",),
    "check": ("check", "uncheck"), "hover": ("hover",)}
KIND_WORDS = {"click": "clicks", "type": "typing into fields", "scroll": "scrolling", "select": "choosing options",
              "check": "ticking boxes", "hover": "hovering"}


class Grant(BaseModel):
    id: int
    site: str
    kind: str
    session_id: str | None = None
    created_at: str
    revoked_at: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def describe(self) -> str:
        return f"{KIND_WORDS.get(self.kind, self.kind)} on {self.site}"


def kind_of(action_name: str) -> str | None:
    """The grant kind that covers this action, or None when no grant can."""
    return next((k for k, names in GRANT_KINDS.items() if action_name in names), None)


def site_of_url(url: str) -> str:
    return site_of(urllib.parse.urlsplit(url or "").hostname or "")


class GrantBook:
    """The grants of one store: `add`, `revoke`, `active`, `covering`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, kind: str, site: str, session_id: str | None = None) -> Grant:
        """Grant `kind` on `site` (an active grant already there is returned as it is)."""
        if kind not in GRANT_KINDS:
            raise StoreError(f"{kind!r} is not a kind of step a grant can cover; use one of "
                             f"{', '.join(GRANT_KINDS)}.", code=ErrorCode.BAD_ARGUMENT)
        site = site_of(site.strip()) if "://" not in site else site_of_url(site)
        if not site:
            raise StoreError("A grant needs a site, such as example.com.", code=ErrorCode.BAD_ARGUMENT)
        have = next((g for g in self.active() if g.site == site and g.kind == kind), None)
        if have is not None:
            return have
        with self.store._tx() as c:
            cur = c.execute("INSERT INTO grants(site, kind, session_id, created_at) VALUES (?, ?, ?, ?)",
                            (site, kind, session_id, _now()))
            new_id = cur.lastrowid
        return self.get(int(new_id or 0))

    def get(self, grant_id: int) -> Grant:
        row = self.store._conn.execute("SELECT id, site, kind, session_id, created_at, revoked_at FROM grants "
                                       "WHERE id=?", (grant_id,)).fetchone()
        if row is None:
            raise StoreError(f"No grant {grant_id} in {self.store.path}; `vigil mcp grants` lists them.",
                             code=ErrorCode.BAD_ARGUMENT)
        return _grant(row)

    def revoke(self, grant_id: int) -> Grant:
        """Revoke a grant (its row stays, stamped); revoking a revoked one changes nothing."""
        g = self.get(grant_id)
        if g.active:
            with self.store._tx() as c:
                c.execute("UPDATE grants SET revoked_at=? WHERE id=? AND revoked_at IS NULL", (_now(), grant_id))
        return self.get(grant_id)

    def all(self) -> list[Grant]:
        rows = self.store._conn.execute("SELECT id, site, kind, session_id, created_at, revoked_at FROM grants "
                                        "ORDER BY id").fetchall()
        return [_grant(r) for r in rows]

    def active(self) -> list[Grant]:
        return [g for g in self.all() if g.active]

    def covering(self, action_name: str, url: str) -> Grant | None:
        """The active grant that covers this action on the page at `url`, or None. The caller makes sure
        the step is not sensitive: a grant never covers one."""
        kind, site = kind_of(action_name), site_of_url(url)
        if kind is None or not site:
            return None
        return next((g for g in self.active() if g.kind == kind and g.site == site), None)


def _grant(row: tuple) -> Grant:
    return Grant(id=row[0], site=row[1], kind=row[2], session_id=row[3], created_at=row[4], revoked_at=row[5])
