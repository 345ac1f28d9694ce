"""Where things are, for tests in any folder: the checkout, the tests and their fixture pages."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
