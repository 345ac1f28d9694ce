"""Playwright locators for snapshot nodes: chosen from the snapshot, unique in it, written as code."""

from engine.snapshot.locators.build import Locators, locator_for
from engine.snapshot.locators.match import SnapshotScopes, match_selector, resolve
from engine.snapshot.locators.model import Locator, Step

__all__ = ["Locator", "Locators", "SnapshotScopes", "Step", "locator_for", "match_selector", "resolve"]
