"""Shared by the real-app corpus tests: the manifest, opening a widget's page, reading the payload.

Everything a test does to a page goes through the public API (snapshot → the semantic payload →
act by ID); `tab.page.evaluate` only reads the page's real state afterwards.
"""

from __future__ import annotations

import pytest

from engine.bench.real import (
    CORPUS_DIR,
    describe_entry,
    find_entries,
    load_corpus,
    missing_parts,
    open_page,
    payload_entries,
    run_steps,
)

CORPUS = load_corpus()
WIDGETS = {w["id"]: w for w in CORPUS["widgets"]}
PAGES = sorted({w["page"] for w in CORPUS["widgets"]})

__all__ = ["CORPUS", "WIDGETS", "PAGES", "corpus_installed", "open_widget", "payload", "one", "entries_text",
           "run_steps", "describe_entry", "find_entries", "steps_report"]


@pytest.fixture(scope="session")
def corpus_installed():
    """The libraries and docs come from `bash scripts/setup.sh`; without them say so (not a skip)."""
    missing = missing_parts(CORPUS_DIR)
    if missing:
        pytest.fail("The real-app corpus is not set up: missing " + "; ".join(missing)
                    + ". Run `bash scripts/setup.sh` (make test does).", pytrace=False)


def open_widget(harness, server, widget_or_page, fn, timeout: float = 120.0):
    """Open a corpus page (a widget dict or a page path) in a new tab, wait until its library is set
    up, run `await fn(tab)`; returns fn's result."""
    widget = widget_or_page if isinstance(widget_or_page, dict) else (
        next((w for w in CORPUS["widgets"] if w["page"] == widget_or_page), {"page": widget_or_page}))
    base = server.url("real/")

    async def go():
        tab = await open_page(harness.browser, base, widget, CORPUS.get("ready"))
        try:
            return await fn(tab)
        finally:
            await tab.close()

    return harness.run(go(), timeout)


async def payload(tab) -> list[dict]:
    """The entries of exactly what the model is sent for the current page."""
    return payload_entries(await tab.snapshot())


def entries_text(entries: list[dict], limit: int = 60) -> str:
    return "; ".join(f'[{e["i"]}] {describe_entry(e)}' for e in entries[:limit]) or "(empty payload)"


def one(entries: list[dict], role=None, name=None, near=None, value=None) -> dict:
    """The payload entry with this role and name; fails the test listing what the payload has."""
    hits = find_entries(entries, role, name, near, value)
    want = f"{role or 'any role'} {name!r}" + (f" on the row of {near!r}" if near else "") + (
        f" with value {value!r}" if value is not None else "")
    assert hits, f"{want} is not in the semantic payload. It has: {entries_text(entries)}"
    return hits[0]


def steps_report(outcomes) -> str:
    return "\n".join(f"  {'ok  ' if o.ok else 'FAIL'} {o.line()}" for o in outcomes)
