"""The session store: every run kept in SQLite as it happens (see `store.py` for durability).

`location` (where it lives), `process_identity` (which process writes a running session), `columns`
(how values are written, secrets kept out), `session_data` (what reading gives), `store` (the Store)."""

from engine.store.columns import scrub
from engine.store.location import default_path, store_dir
from engine.store.schema import LATEST_VERSION, StoreError, migrate
from engine.store.session_data import SessionData, SessionInfo, SessionSummary
from engine.store.store import Store

__all__ = ["LATEST_VERSION", "SessionData", "SessionInfo", "SessionSummary", "Store", "StoreError", "default_path",
           "migrate", "scrub", "store_dir"]
