"""File uploads on real Chromium: upload(id, path…) sets files through CDP on a hidden file input
(given the styled button or the label that stands for it), verifies the input holds them (and the page
saw them), checks paths before touching the page, and is always a sensitive step naming the files."""

from __future__ import annotations

import os

import pytest

from engine.errors import ErrorCode
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner

from support.page_helpers import FAST, element_text, sample_files


@pytest.fixture
def files(tmp_path):
    return sample_files(tmp_path)


def test_upload_through_a_styled_button_and_a_label_into_hidden_inputs(harness, server, files):
    a, b = files

    async def go(tab):
        tab.stability = FAST
        snap = await tab.snapshot()
        button = snap.find("button", "Attach files")[0].node_id
        r = await tab.upload(button, [str(a), str(b)])
        assert r.success and r.verification.success, r.message
        assert "invoice.pdf, photo.png" in r.verification.feedback
        snap = await tab.snapshot()
        assert element_text(snap, "names") == "Attached: invoice.pdf, photo.png"   # the page's change handler ran
        label = next(n for n in snap.nodes() if n.tag == "label" and "Choose avatar" in (n.text or n.name or ""))
        r = await tab.upload(label.node_id, [str(b)])
        assert r.success and r.verification.success and "accepts image/*" in r.message
        assert element_text(await tab.snapshot(), "avatar-name") == "Avatar: photo.png"
        # a button whose script opens a file input found nowhere near it: pressed, its chooser caught
        snap = await tab.snapshot()
        r = await tab.upload(snap.find("button", "Add a receipt")[0].node_id, [str(a)])
        assert r.success and r.verification.success, r.message
        assert element_text(await tab.snapshot(), "receipt") == "Receipt: invoice.pdf"

    harness.page(server.url("uploads_page.html"), go)


def test_bad_paths_and_elements_are_refused_before_anything_is_set(harness, server, files, tmp_path):
    a, b = files
    locked = tmp_path / "locked.txt"
    locked.write_text("x")
    locked.chmod(0)

    async def go(tab):
        snap = await tab.snapshot()
        button = snap.find("button", "Attach files")[0].node_id
        r = await tab.upload(button, [str(tmp_path / "missing.pdf")])
        assert not r.success and r.error_code == ErrorCode.BAD_FILE and "no such file" in r.message
        r = await tab.upload(button, [str(tmp_path)])
        assert r.error_code == ErrorCode.BAD_FILE and "not a file" in r.message
        if os.geteuid() != 0:  # root reads anything
            r = await tab.upload(button, [str(locked)])
            assert r.error_code == ErrorCode.BAD_FILE and "not readable" in r.message
        r = await tab.upload(snap.find("button", "Do nothing")[0].node_id, [str(a)])
        assert r.error_code == ErrorCode.NO_FILE_INPUT and "no file input belongs to it" in r.message
        label = next(n for n in snap.nodes() if n.tag == "label" and "Choose avatar" in (n.text or n.name or ""))
        r = await tab.upload(label.node_id, [str(a), str(b)])
        assert r.error_code == ErrorCode.BAD_ARGUMENT and "takes one file" in r.message
        assert element_text(await tab.snapshot(), "names") == "No files"

    harness.page(server.url("uploads_page.html"), go)


@pytest.mark.parametrize("policy", ["auto-safe", "ask"])
def test_an_upload_step_always_asks_naming_the_file(harness, server, files, policy):
    a, _ = files

    async def go(tab):
        tab.stability = FAST
        gate = AutoApprove()
        steps = [{"action": "upload", "target": {"role": "button", "name": "Attach files"}, "paths": [str(a)]},
                 {"action": "finish"}]
        res = await AgentLoop(tab, ScriptedPlanner(steps), gate=gate, policy=policy, screenshots=False).run("attach")
        assert res.status == "success" and res.steps[0].status == "completed", res.reason
        assert any("uploads invoice.pdf" in r for r in gate.requests[0].sensitive_reasons)
        assert res.steps[0].action.to_string().startswith("upload(") and res.steps[0].verification.success

    harness.page(server.url("uploads_page.html"), go)
