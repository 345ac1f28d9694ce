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
           "run_steps", "describe_entry", "find_entries", "steps_report", "sweep_check", "swept", "page_params",
           "widget_params"]


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


# -- One open of each corpus page per test worker, for the checks that only read it at load ----------------------
#
# Several test files read every corpus page as it is at load (the payload, what covers what, row order, locators,
# Chromium's accessibility tree). Opening a corpus page costs a renderer, the library's start-up and a full walk;
# so a page is opened once per worker, every registered check reads it in turn, and each test asserts on its
# check's result. The tests of one page are one xdist group (`page_params`, `widget_params`), so they meet the
# same worker and its one open. A check that changes the page (`changes_page=True`) runs after the others.

_CHECKS: list[tuple[str, object, bool]] = []
_SWEPT: dict[str, dict[str, object]] = {}


def sweep_check(name: str, *, changes_page: bool = False):
    """Register `async fn(tab, page, snap) -> result` to run in the one load-time open of every corpus page;
    `snap` is the page's first snapshot (a full walk, taken at load). A test gets the result with `swept`."""
    def register(fn):
        assert all(n != name for n, _, _ in _CHECKS), f"sweep check {name!r} registered twice"
        _CHECKS.append((name, fn, changes_page))
        return fn
    return register


def swept(harness, server, page: str, name: str):
    """The result of check `name` on `page` at load (the page is opened the first time any check is asked for);
    an exception the check raised is raised here, in the test that asked."""
    got = _SWEPT.get(page)
    if got is None:
        async def run_all(tab):
            out: dict[str, object] = {}
            snap = await tab.snapshot(force=True)
            for n, fn, _ in sorted(_CHECKS, key=lambda c: c[2]):  # the checks that change the page last
                try:
                    out[n] = await fn(tab, page, snap)
                except Exception as exc:  # noqa: BLE001 - given to the test that asks for this check
                    out[n] = exc
            return out

        got = _SWEPT[page] = open_widget(harness, server, page, run_all, timeout=300)
    if name not in got:
        raise AssertionError(f"sweep check {name!r} is not registered")
    r = got[name]
    if isinstance(r, BaseException):
        raise r
    return r


def page_params(pages=None) -> list:
    """Corpus pages as parameters, each in its page's xdist group (see `swept`)."""
    return [pytest.param(p, id=p, marks=pytest.mark.xdist_group(f"corpus:{p}")) for p in (pages or PAGES)]


def widget_params() -> list:
    """Corpus widget IDs as parameters, each in its page's xdist group (see `swept`)."""
    return [pytest.param(wid, id=wid, marks=pytest.mark.xdist_group(f"corpus:{w['page']}"))
            for wid, w in WIDGETS.items()]
