"""A page made of stored snapshots, for driving the observe–act loop without a browser.

`FakePage` has the members of `engine.loop.driver.PageDriver`: it shows one stored snapshot at a
time (real `DomSnapshot`s, read from tests/fixtures/snapshots/ by `engine.snapshot.stored`), answers
each action with a result — a verified success unless the test scripted another — and moves on to
the snapshot the test said the action leads to. Tests can also change the page while the loop waits
(`show`), crash it, or make its screenshots fail; every action the loop ran is in `acted`.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable

from PIL import Image

from engine.errors import ScreenshotError, TabCrashedError
from engine.loop.redact import mask_action
from engine.models import Action, ActionResult, ExpectedOutcome, OutcomeLike, PageEvent, PageState, VerificationResult
from engine.observe.stability import StabilityConfig, StabilityResult
from engine.snapshot.dom_snapshot import DomSnapshot
from engine.snapshot.stored import load_snapshot
from engine.vision.screenshot import Screenshot, phash_of

from support.paths import FIXTURES

SNAPSHOTS = FIXTURES / "snapshots"


def stored(name: str) -> DomSnapshot:
    """A stored snapshot by name (tests/fixtures/snapshots/NAME.json; see tests/support/make_snapshots.py)."""
    return load_snapshot((SNAPSHOTS / f"{name}.json").read_bytes())


def edited(name: str, edit: Callable[[dict], None]) -> DomSnapshot:
    """A stored snapshot changed by `edit(body)` on its JSON (rows in `body["nodes"]`, see COLUMNS)."""
    body = json.loads((SNAPSHOTS / f"{name}.json").read_bytes())
    edit(body)
    return load_snapshot(json.dumps(body).encode())


def renamed(name: str, node_id: str, new_name: str) -> DomSnapshot:
    """The stored snapshot with one node's accessible name (and text) changed, as a page re-labelling it."""
    def edit(body: dict) -> None:
        cols = body["columns"]
        for row in body["nodes"]:
            if row[cols.index("node_id")] == node_id:
                row[cols.index("name")] = new_name
                row[cols.index("text")] = new_name
    return edited(name, edit)


def node_id(snap: DomSnapshot, html_id: str) -> str:
    """The node ID of the element with this HTML id attribute."""
    return next(n.node_id for n in snap.nodes() if n.attrs and n.attrs.get("id") == html_id)


def verified(action: Action, outcome: str = "any_change", snap: DomSnapshot | None = None) -> ActionResult:
    """A verified success, as a Tab reports it: text typed into a secret field shows as the mask."""
    node = snap.node_map.get(action.node_id or "") if snap is not None else None
    said = mask_action(action, node).to_string()
    v = VerificationResult(success=True, verified_outcome=outcome, actual_outcome="the page reacted",
                           page_state=PageState(url="", url_changed=False, dom_changed=True), confidence=0.9,
                           feedback="Verified: the page reacted.")
    return ActionResult(success=True, action=said, node_id=action.node_id, message=f"Did {said}. Verified: the page "
                        "reacted.", verification=v, timings_ms={"act": 1.0, "settle": 1.0, "verify": 1.0})


class FakePage:
    """A PageDriver over stored snapshots. `results` answers actions in order (an ActionResult, or a
    function of the action); when it runs out, actions succeed. `after` gives, per action name, the
    snapshot the page shows once that action ran."""

    def __init__(self, snapshot: DomSnapshot, *, results: list | None = None,
                 after: dict[str, DomSnapshot] | None = None, on_act: Callable[[Action], None] | None = None):
        self.current = snapshot
        self.results = list(results or [])
        self.after = dict(after or {})
        self.on_act = on_act
        self.acted: list[tuple[Action, OutcomeLike]] = []
        self.secrets: list[str] = []
        self.snapshots_taken = 0
        self.crashed = False
        self.screenshots_fail = False
        self.events: list[PageEvent] = []

    # -- what the test does to the page ------------------------------------------------------
    def show(self, snapshot: DomSnapshot) -> None:
        """The page changes (the person, a timer, a re-render)."""
        self.current = snapshot

    # -- PageDriver ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.current.url

    def check_alive(self) -> None:
        if self.crashed:
            raise TabCrashedError("The tab crashed (renderer process died). Open a new tab or reload the page.")

    async def wait_stable(self, config: StabilityConfig | None = None, *, since: float | None = None
                          ) -> StabilityResult:
        self.check_alive()
        return StabilityResult(stable=True, waited_ms=0.0, dom_quiet_ms=1000.0, network_quiet_ms=1000.0, inflight=0,
                               loading=False)

    async def snapshot(self, *, force: bool = False, max_nodes: int | None = None,
                       timeout: float = 30.0) -> DomSnapshot:
        self.check_alive()
        self.snapshots_taken += 1
        return self.current

    async def act(self, action: Action, expect: OutcomeLike = None) -> ActionResult:
        self.check_alive()
        self.acted.append((action, expect))
        if self.on_act is not None:
            self.on_act(action)
        if self.results:
            r = self.results.pop(0)
            result = r(action) if callable(r) else r
        else:
            want = ExpectedOutcome.model_validate(expect) if isinstance(expect, dict) else expect
            result = verified(action, want.type if want is not None else "any_change", self.current)
        if action.name in self.after:
            self.current = self.after[action.name]
        return result

    async def recent_events(self, max_age_ms: int = 10_000) -> list[PageEvent]:
        self.check_alive()
        return list(self.events)

    async def screenshot(self, *, max_width: int = 1024, quality: int = 70, full: bool = False) -> Screenshot:
        if self.screenshots_fail:
            raise ScreenshotError("The page did not paint a screenshot (fake).")
        img = Image.new("RGB", (64, 40), (250, 250, 250))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=quality)
        return Screenshot(jpeg=buf.getvalue(), width=64, height=40, css_width=1280, css_height=800, scale=0.05,
                          phash=phash_of(img), taken_at=time.time())

    async def effect(self, action, snap):
        return None  # stored snapshots have no live page to compute an effect in

    def remember_secret(self, value: str) -> None:
        self.secrets.append(value)
