"""The session store: every run kept in SQLite as it happens (see `store.py` for durability)."""

from engine.store.schema import LATEST_VERSION, StoreError, migrate
from engine.store.store import SessionData, SessionInfo, SessionSummary, Store, default_path, scrub, store_dir

__all__ = ["LATEST_VERSION", "SessionData", "SessionInfo", "SessionSummary", "Store", "StoreError", "default_path",
           "migrate", "scrub", "store_dir"]
