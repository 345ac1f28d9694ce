"""What is known of a store file's soundness, and the lock that acts on it (a part of `Store`).

The checks themselves are in `engine.store.integrity`; this holds their verdict: the damage once found
(from a check, or from any read or write that met a bad page: the first finding is kept), the listeners
told of it once, the background check's verdict that writes wait for, and `guard` — the store's lock,
which refuses a store known to be damaged and turns SQLite's word that a page is damaged into STORE_CORRUPT.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from engine.store.integrity import BackgroundCheck, CheckMode, check_file, is_corruption, whole_check_limit
from engine.store.schema import LATEST_VERSION, StoreError, corrupt_error, schema_version

log = logging.getLogger("vigil.store")


def check_before_open(path: Path, check: CheckMode) -> bool:
    """The checks before the store's own connection opens (on a read-only one: a refused file is not
    touched); True when the whole file was checked. STORE_CORRUPT when damaged."""
    if check == "off" or not path.exists() or path.stat().st_size == 0:
        return True
    whole = check == "now" or (check == "auto" and path.stat().st_size <= whole_check_limit())
    verdict = check_file(path, whole=whole, version=schema_version)
    if verdict.problem is None and not whole and verdict.version is not None and verdict.version < LATEST_VERSION:
        verdict = check_file(path, whole=True)  # a migration writes: the whole file is checked first
    if verdict.problem is not None:
        raise corrupt_error(path, verdict.problem)
    return verdict.whole


class _Guard:
    """`with health.guard:` — the re-entrant lock every read and write of the store's connection holds."""

    def __init__(self, health: StoreHealth) -> None:
        self._health = health

    def __enter__(self) -> None:
        self._health.mutex.acquire()
        if self._health.damage_found is not None:
            self._health.mutex.release()
            raise corrupt_error(self._health.path, self._health.damage_found)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._health.mutex.release()
        if exc is not None and is_corruption(exc):
            raise self._health.found(str(exc)) from exc


class StoreHealth:
    """The soundness of the store at `path`, as far as it is known."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mutex = threading.RLock()
        self.guard = _Guard(self)
        self.damage_found: str | None = None  # what is damaged, once known: everything is refused then
        self._listeners: list[Callable[[StoreError], None]] = []
        self._checked = threading.Event()  # the verdict on the whole file is in (writes wait for it)
        self._checked.set()
        self._check: BackgroundCheck | None = None

    @property
    def damage(self) -> StoreError | None:
        """STORE_CORRUPT once the store is known to be damaged."""
        return corrupt_error(self.path, self.damage_found) if self.damage_found is not None else None

    def check_in_background(self, *, on_sound: Callable[[], None]) -> None:
        """Check the whole file on a thread; `on_sound()` (on it) when it passed — writes wait till then."""
        self._checked.clear()
        self._check = BackgroundCheck(self.path, lambda problem: self._check_done(problem, on_sound))
        self._check.start()

    def _check_done(self, problem: str | None, on_sound: Callable[[], None]) -> None:
        """The background check's verdict (on its thread): damage is kept before the writes waiting for the
        verdict go on, so they see it."""
        if problem is not None:
            self.found(problem)
        self._checked.set()
        if problem is None and self._check is not None and not self._check.cancelled:
            try:
                on_sound()
            except Exception as exc:  # noqa: BLE001 - a store error or SQLite's: said, the store stays usable
                log.warning("session store %s: sessions of ended processes not marked interrupted: %s", self.path,
                            exc)

    def found(self, detail: str) -> StoreError:
        """Damage is known (first finding kept): say so once to the listeners; the error to raise."""
        listeners: list[Callable[[StoreError], None]] = []
        with self.mutex:
            first = self.damage_found is None
            if first:
                self.damage_found = detail
                listeners, self._listeners = self._listeners, []
        err = corrupt_error(self.path, self.damage_found or detail)
        if first:
            log.info("%s", err.message)  # said by the error raised, and to the listeners
            for fn in listeners:
                try:
                    fn(err)
                except Exception:  # noqa: BLE001 — one bad listener must not hide the damage from the others
                    log.exception("store damage listener failed")
        return err

    def add_listener(self, fn: Callable[[StoreError], None]) -> None:
        """Call `fn(error)` once when damage is found (on the thread that found it: the background check's,
        or the one whose read or write met it); at once when it is already known."""
        with self.mutex:
            if self.damage_found is None:
                self._listeners.append(fn)
                return
        fn(corrupt_error(self.path, self.damage_found))

    def wait_checked(self, timeout: float | None = None) -> bool:
        """Wait for the verdict on the whole file (at once when it was checked at open); False on a timeout."""
        return self._checked.wait(timeout)

    def cancel(self) -> None:
        """The store closes: a background check still going is stopped."""
        if self._check is not None:
            self._check.cancel()
