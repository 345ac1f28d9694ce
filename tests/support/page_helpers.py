"""What the tests of dialogs, uploads, downloads and tabs share: a short stability window, reading
what a fixture page wrote into an element, sample files to upload, and a person at the approval
gate who approves steps and answers dialogs (at once or slowly)."""

from __future__ import annotations

import asyncio
import time

from engine.loop import AgentLoop, QueueGate
from engine.models import Decision
from engine.observe.stability import StabilityConfig

# short quiet windows: the fixture pages settle in milliseconds
FAST = StabilityConfig(dom_quiet_ms=100, network_quiet_ms=120, timeout_ms=1500)


def element_text(snap, element_id: str) -> str:
    """The text of the element whose HTML id is `element_id` (the fixture pages write results there)."""
    return next(n.text for n in snap.nodes() if (n.attrs or {}).get("id") == element_id)


async def out_text(tab, element_id: str = "out") -> str:
    return element_text(await tab.snapshot(), element_id)


def sample_files(tmp_path):
    """Two small files to upload: invoice.pdf and photo.png."""
    a, b = tmp_path / "invoice.pdf", tmp_path / "photo.png"
    a.write_bytes(b"%PDF-1.4 test")
    b.write_bytes(b"\x89PNG test")
    return a, b


class DialogPerson:
    """Drives a QueueGate as a person would: approves every step, answers each dialog request with
    `answer` after `delay` seconds; keeps the dialog requests and when the first was asked."""

    def __init__(self, answer: Decision, delay: float = 0.0):
        self.gate = QueueGate()
        self.answer, self.delay = answer, delay
        self.dialogs: list = []
        self.asked_at: float | None = None

    async def run(self, loop: AgentLoop, task: str):
        runner = asyncio.ensure_future(loop.run(task))
        seen = 0
        while not runner.done():
            await asyncio.sleep(0.02)
            req = self.gate.pending
            if req is None or len(self.gate.requests) == seen:
                continue
            seen = len(self.gate.requests)
            if req.dialog is not None:
                self.dialogs.append(req)
                if self.asked_at is None:
                    self.asked_at = time.monotonic()
                if self.delay:
                    await asyncio.sleep(self.delay)
                self.gate.submit(self.answer)
            else:
                self.gate.submit(Decision.approve())
        return runner.result()


async def pointer_still(tab) -> None:
    """Put the pointer in the page's top-left corner, where it stays: the page is then hovered from the start
    (html, body), and a layout change under a pointer whose place nobody set cannot make it enter or leave the
    page — which the walker rightly answers with a full walk. (A CI run once saw it enter, between two walks,
    in a tab nobody had moved the pointer in.)"""
    await tab.page.mouse.move(1, 1)
    await tab.page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
