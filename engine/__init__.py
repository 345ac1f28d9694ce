"""Vigil's engine: browser sessions, snapshots, actions and the observe–act loop (no Qt here)."""

from engine.browser.browser import Browser
from engine.errors import (
                           BrowserClosedError,
                           BrowserLaunchError,
                           BrowserNotFoundError,
                           ErrorCode,
                           NavigationError,
                           SnapshotError,
                           TabCrashedError,
                           UnknownNodeError,
                           VigilError,
)
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.vnode import VirtualNode
from engine.tab import Tab, launch

__all__ = ["launch", "Browser", "Tab", "DomSnapshot", "VirtualNode", "ErrorCode", "VigilError",
           "BrowserNotFoundError", "BrowserLaunchError", "BrowserClosedError", "TabCrashedError", "NavigationError",
           "SnapshotError", "UnknownNodeError"]
__version__ = "0.1.0"
