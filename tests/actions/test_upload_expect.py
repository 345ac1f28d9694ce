"""upload(id, path…, expect=…) honours its expected outcome as every action does (real Chromium): the
input holding the files is always checked, and the expectation on top — text the page shows, a value —
decides whether the step is verified; a bad expectation is refused before the page is touched."""

from __future__ import annotations

import time

import pytest

from engine.errors import ErrorCode
from engine.models import Action

from support.page_helpers import FAST, element_text, sample_files


@pytest.fixture
def files(tmp_path):
    return sample_files(tmp_path)


def test_an_upload_is_verified_against_what_was_expected_of_the_page(harness, server, files):
    a, b = files

    async def go(tab):
        tab.stability = FAST
        snap = await tab.snapshot()
        button = snap.find("button", "Attach files")[0].node_id
        # the page says what it got: expected, and seen
        r = await tab.upload(button, [str(a)], expect={"type": "element_appears", "text": "Attached: invoice.pdf"})
        assert r.success and r.verification.success, r.message
        assert r.verification.verified_outcome == "element_appears"
        assert "the file input holds invoice.pdf" in r.verification.feedback
        # the files are set, but what was expected never shows: the action ran, unverified, and says why
        t0 = time.monotonic()
        r = await tab.upload(button, [str(b)], expect={"type": "element_appears", "text": "Upload complete",
                                                        "timeout_ms": 600})
        assert r.success and not r.verification.success and r.error_code is None, r.message
        assert "Upload complete" in r.verification.feedback and "photo.png" in r.message
        assert time.monotonic() - t0 < 10
        assert element_text(await tab.snapshot(), "names") == "Attached: photo.png"
        # a value names the file the input should hold
        snap = await tab.snapshot()
        label = next(n for n in snap.nodes() if n.tag == "label" and "Choose avatar" in (n.text or n.name or ""))
        r = await tab.upload(label.node_id, [str(b)], expect={"type": "value_changes", "value": "photo.png"})
        assert r.success and r.verification.success, r.message
        r = await tab.upload(label.node_id, [str(b)], expect={"type": "value_changes", "value": "avatar.jpg"})
        assert r.success and not r.verification.success and "not avatar.jpg" in r.verification.feedback
        # any change: the input now holding the file is that change
        r = await tab.upload(label.node_id, [str(a)], expect={"type": "any_change"})
        assert r.verification.success, r.message
        # through act(), as the loop runs it
        snap = await tab.snapshot()
        r = await tab.act(Action(name="upload", target=snap.find("button", "Add a receipt")[0].node_id,
                                 paths=[str(a)]), {"type": "element_appears", "text": "Receipt: invoice.pdf"})
        assert r.success and r.verification.success and r.verification.verified_outcome == "element_appears", r.message

    harness.page(server.url("uploads_page.html"), go)


def test_a_bad_expectation_is_refused_before_the_files_are_set(harness, server, files):
    a, _ = files

    async def go(tab):
        snap = await tab.snapshot()
        r = await tab.upload(snap.find("button", "Attach files")[0].node_id, [str(a)], expect={"type": "uploaded"})
        assert not r.success and r.error_code == ErrorCode.BAD_ARGUMENT and "expected outcome" in r.message
        assert element_text(await tab.snapshot(), "names") == "No files"

    harness.page(server.url("uploads_page.html"), go)
