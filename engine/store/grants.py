"""Session grants: a person's "approve steps like this on this site, for the rest of this session",
recorded in the session store.

A grant covers one kind of ordinary step (`GRANT_KINDS`: clicks, typing, scrolling, choosing an
option, ticking a box, hovering) on one origin (scheme, host and port: `https://shop.example.com` covers
neither `http://shop.example.com`, `https://shop.example.com:8443` nor `https://www.example.com`), checked
against the origin of the frame that holds the step's target — a click inside a cross-site frame is not
covered by a grant on the page around it. `KIND@SITE` without a scheme means https (http for
localhost and 127.0.0.1) on the scheme's default port unless one is given. The `site` column holds the
origin. It never covers a sensitive step: the loop consults grants only for steps with no
sensitive reason at all (typing into a password or one-time-code field, submitting, leaving the site,
files, a destructive button, instruction-like page text all still ask).

A grant lasts for the server run it was given in (`run_id`, one per `vigil mcp` / `vigil gui --mcp`
run; `new_run_id`): a book opened for a run applies only that run's grants, so a grant is never
applied in a later session. It ends when the person revokes it (`revoked_at`) or when its run ends
(`ended_at`, stamped by `end_run`); its row stays, with the recorded session it belongs to
(`session_id`), so a session's record says what was allowed, from when and until when.
"""

from __future__ import annotations

import os
import re
import urllib.parse
import uuid

from pydantic import BaseModel

from engine.errors import ErrorCode
from engine.store.columns import now
from engine.store.schema import StoreError
from engine.store.store import Store

# kind → the actions it covers
GRANT_KINDS: dict[str, tuple[str, ...]] = {
    "click": ("click", "double_click"), "type": ("type",), "scroll": ("scroll",), "select": ("select",),
    "check": ("check", "uncheck"), "hover": ("hover",)}
KIND_WORDS = {"click": "clicks", "type": "typing into fields", "scroll": "scrolling", "select": "choosing options",
              "check": "ticking boxes", "hover": "hovering"}
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")  # a host name or IPv4 address, as a URL gives it
_COLUMNS = "id, site, kind, session_id, run_id, created_at, revoked_at, ended_at"


def new_run_id() -> str:
    """The id of one server run: its grants carry it (the process id first, so a listing can tell a run
    that is gone)."""
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


def _run_alive(run_id: str | None) -> bool:
    """Whether the process of a server run still exists (a run that crashed never stamped its end)."""
    try:
        pid = int((run_id or "").split("-", 1)[0])
    except ValueError:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


class Grant(BaseModel):
    id: int
    site: str
    kind: str
    session_id: str | None = None
    run_id: str | None = None
    created_at: str
    revoked_at: str | None = None
    ended_at: str | None = None

    @property
    def active(self) -> bool:
        """Neither revoked nor ended, and its server run is still there."""
        return self.revoked_at is None and self.ended_at is None and _run_alive(self.run_id)

    def state(self) -> str:
        if self.revoked_at:
            return f"revoked {self.revoked_at}"
        if self.ended_at:
            return f"ended with its session {self.ended_at}"
        if not self.run_id:
            return "not in force (given before grants lasted one session)"
        return "in force for this session" if _run_alive(self.run_id) else "ended (its server is gone)"

    def describe(self) -> str:
        return f"{KIND_WORDS.get(self.kind, self.kind)} on {self.site}"


def kind_of(action_name: str) -> str | None:
    """The grant kind that covers this action, or None when no grant can."""
    return next((k for k, names in GRANT_KINDS.items() if action_name in names), None)


_DEFAULT_PORT = {"http": 80, "https": 443}
_LOOPBACK = re.compile(r"localhost|127(?:\.\d{1,3}){3}|::1")


def origin_of(url: str) -> str:
    """The origin of an http(s) URL, `scheme://host[:port]` (the scheme's default port left out), or ""
    for a URL without one (about:, data:, file:, a frame's srcdoc) or that cannot be read."""
    try:
        parts = urllib.parse.urlsplit((url or "").strip())
        port = parts.port
    except ValueError:
        return ""
    scheme, host = parts.scheme.lower(), (parts.hostname or "").rstrip(".")
    if scheme not in _DEFAULT_PORT or not host:
        return ""
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != _DEFAULT_PORT[scheme] else "")


def site_of_url(url: str) -> str:
    """What a grant given on the page at `url` covers: its origin (the name is kept for its callers; a
    grant's `site` is an origin)."""
    return origin_of(url)


def origin_of_spec(site: str) -> str:
    """The origin a person names: a URL, or a host with an optional port (https is meant, http for
    localhost and 127.0.0.1); "" when it names none."""
    site = (site or "").strip()
    if "://" in site:
        return origin_of(site)
    try:
        host = urllib.parse.urlsplit("//" + site).hostname or ""
    except ValueError:
        return ""
    if not (_HOST.fullmatch(host) or _LOOPBACK.fullmatch(host)):
        return ""
    return origin_of(("http://" if _LOOPBACK.fullmatch(host) else "https://") + site)


def parse_grant(spec: str) -> tuple[str, str]:
    """`KIND@SITE` (the `--grant` option of `vigil mcp`) → (kind, origin); StoreError naming the problem."""
    kind, at, site = (spec or "").strip().partition("@")
    kind = kind.strip().lower()
    if not at or not kind or not site.strip():
        raise StoreError(f"--grant {spec!r} is not KIND@SITE; e.g. --grant click@example.com "
                         f"(KIND is one of {', '.join(GRANT_KINDS)}).", code=ErrorCode.BAD_ARGUMENT)
    if kind not in GRANT_KINDS:
        raise StoreError(f"{kind!r} is not a kind of step a grant can cover; use one of "
                         f"{', '.join(GRANT_KINDS)}.", code=ErrorCode.BAD_ARGUMENT)
    origin = origin_of_spec(site)
    if not origin:
        raise StoreError(f"--grant {spec!r} names no site; e.g. --grant {kind}@example.com (https, port 443) or "
                         f"--grant {kind}@http://127.0.0.1:8080 (a grant covers one scheme, host and port).",
                         code=ErrorCode.BAD_ARGUMENT)
    return kind, origin


class GrantBook:
    """The grants of one store, seen from one server run (`run_id`): `add`, `revoke`, `active`,
    `covering`, `attach_session`, `end_run`. Without a run (the `vigil mcp grants` command) it lists and
    revokes, and grants nothing."""

    def __init__(self, store: Store, run_id: str | None = None) -> None:
        self.store = store
        self.run_id = run_id

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """A read under the store's lock (which refuses, and names, a store known to be damaged)."""
        with self.store._lock:
            return self.store._conn.execute(sql, params).fetchall()

    def add(self, kind: str, site: str, session_id: str | None = None) -> Grant:
        """Grant `kind` on the origin of `site` (a URL, or a host as `parse_grant` reads it) for the rest of
        this run (an active grant already there is returned)."""
        if self.run_id is None:
            raise StoreError("A grant lasts one session, so it is given while a server runs: in the window "
                             "(Allow … for this session) or with `vigil mcp --grant KIND@SITE`.",
                             code=ErrorCode.BAD_ARGUMENT)
        if kind not in GRANT_KINDS:
            raise StoreError(f"{kind!r} is not a kind of step a grant can cover; use one of "
                             f"{', '.join(GRANT_KINDS)}.", code=ErrorCode.BAD_ARGUMENT)
        site = origin_of_spec(site)
        if not site:
            raise StoreError("A grant needs an origin, such as https://example.com (scheme, host and port).",
                             code=ErrorCode.BAD_ARGUMENT)
        have = next((g for g in self.active() if g.site == site and g.kind == kind), None)
        if have is not None:
            return have
        with self.store._tx() as c:
            cur = c.execute("INSERT INTO grants(site, kind, session_id, run_id, created_at) VALUES (?, ?, ?, ?, ?)",
                            (site, kind, session_id, self.run_id, now()))
            new_id = cur.lastrowid
        return self.get(int(new_id or 0))

    def get(self, grant_id: int) -> Grant:
        rows = self._rows(f"SELECT {_COLUMNS} FROM grants WHERE id=?", (grant_id,))
        row = rows[0] if rows else None
        if row is None:
            raise StoreError(f"No grant {grant_id} in {self.store.path}; `vigil mcp grants` lists them.",
                             code=ErrorCode.BAD_ARGUMENT)
        return _grant(row)

    def revoke(self, grant_id: int) -> Grant:
        """Revoke a grant (its row stays, stamped); revoking a revoked or ended one changes nothing."""
        g = self.get(grant_id)
        if g.revoked_at is None and g.ended_at is None:
            with self.store._tx() as c:
                c.execute("UPDATE grants SET revoked_at=? WHERE id=? AND revoked_at IS NULL AND ended_at IS NULL",
                          (now(), grant_id))
        return self.get(grant_id)

    def attach_session(self, session_id: str) -> None:
        """Record this run's grants not yet tied to a session (given before its first step) with it."""
        if self.run_id is None or not session_id:
            return
        with self.store._tx() as c:
            c.execute("UPDATE grants SET session_id=? WHERE run_id=? AND session_id IS NULL",
                      (session_id, self.run_id))

    def end_run(self) -> list[Grant]:
        """The run is over: stamp its grants still in force as ended; returns them."""
        if self.run_id is None:
            return []
        ending = self.active()
        if ending:
            with self.store._tx() as c:
                c.execute("UPDATE grants SET ended_at=? WHERE run_id=? AND revoked_at IS NULL AND ended_at IS NULL",
                          (now(), self.run_id))
        return ending

    def all(self) -> list[Grant]:
        rows = self._rows(f"SELECT {_COLUMNS} FROM grants ORDER BY id")
        return [_grant(r) for r in rows]

    def of_session(self, session_id: str, run_id: str | None = None) -> list[Grant]:
        """The grants recorded with a session (given during it, or at the start of its server run) and, with
        `run_id` (the session's `metadata["mcp"]["run"]`), those its server run held while it was recorded."""
        rows = self._rows(f"SELECT {_COLUMNS} FROM grants WHERE session_id=? OR run_id=? ORDER BY id",
                          (session_id, run_id or ""))
        return [_grant(r) for r in rows]


    def active(self) -> list[Grant]:
        """The grants in force: this run's (a book of a run), or every running server's (a book without)."""
        if self.run_id is None:
            rows = self._rows(f"SELECT {_COLUMNS} FROM grants WHERE run_id IS NOT NULL AND revoked_at IS NULL AND "
                              "ended_at IS NULL ORDER BY id")
        else:
            rows = self._rows(f"SELECT {_COLUMNS} FROM grants WHERE run_id=? AND revoked_at IS NULL AND ended_at IS "
                              "NULL ORDER BY id", (self.run_id,))
        return [g for g in map(_grant, rows) if g.active]

    def covering(self, action_name: str, url: str) -> Grant | None:
        """This run's grant in force that covers this action in the document at `url` (the frame that holds
        the target), or None: the same kind on the same origin. The caller makes sure the step is not
        sensitive: a grant never covers one."""
        kind, site = kind_of(action_name), origin_of(url)
        if kind is None or not site or self.run_id is None:
            return None
        return next((g for g in self.active() if g.kind == kind and g.site == site), None)


def _grant(row: tuple) -> Grant:
    return Grant(id=row[0], site=row[1], kind=row[2], session_id=row[3], run_id=row[4], created_at=row[5],
                 revoked_at=row[6], ended_at=row[7])


def session_grants(store: Store, session_id: str) -> list[Grant]:
    """What the person granted in a recorded session (its report lists them: given, revoked, ended)."""
    run = ((store.load(session_id).session.metadata or {}).get("mcp") or {}).get("run")
    return GrantBook(store).of_session(session_id, run if isinstance(run, str) else None)
