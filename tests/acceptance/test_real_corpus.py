"""The real-app corpus, widget by widget from corpus.json: the control a person would use is in the
semantic payload with its role and name, the user task passes through the public API and leaves
the page in the expected state, and nothing is marked covered by its own host or container."""

from __future__ import annotations

import pytest

from engine.bench.real import payload_entries, unread_words

from support.paths import FIXTURES
from support.real_corpus import (  # noqa: F401
    CORPUS,
    WIDGETS,
    corpus_installed,
    one,
    open_widget,
    page_params,
    run_steps,
    steps_report,
    sweep_check,
    swept,
    widget_params,
)

pytestmark = pytest.mark.usefixtures("corpus_installed")


@sweep_check("payload")
async def _payload_and_boxes(tab, page, snap):
    """The payload at load, and the box of every widget's control on this page."""
    boxes = {}
    for wid, w in WIDGETS.items():
        if w["page"] == page:
            boxes[wid] = await tab.page.locator(w["control"]["selector"]).first.bounding_box()
    return payload_entries(snap), boxes


@pytest.mark.parametrize("wid", widget_params())
def test_control_in_payload_with_role_and_name(harness, server, wid):
    w = WIDGETS[wid]
    c = w["control"]
    entries, boxes = swept(harness, server, w["page"], "payload")
    e = one(entries, c["role"], c["name"])
    assert not e.get("occ"), f"{wid}: the control is marked occluded at load, nothing covers it: {e}"
    # The entry is the control itself: its centre lies inside the control's box on the page.
    box = boxes[wid]
    assert box, f"{wid}: selector {c['selector']!r} found no laid-out element"
    x, y = e["xy"]
    assert box["x"] - 2 <= x <= box["x"] + box["width"] + 2 and box["y"] - 2 <= y <= box["y"] + box["height"] + 2, (
        f"{wid}: payload entry {e} is not at the control ({c['selector']} box {box})")


@pytest.mark.parametrize("wid", list(WIDGETS))
def test_task_through_public_api(harness, server, wid):
    w = WIDGETS[wid]

    async def body(tab):
        if w.get("reading"):  # what a person reads on it (a chart's labels and values) is in the reading format
            unread = unread_words(await tab.snapshot(), w)
            assert not unread, f"{wid}: not in the reading format: {unread}"
        outcomes = await run_steps(tab, w["steps"])
        ok = len(outcomes) == len(w["steps"]) and all(o.ok for o in outcomes)
        assert ok, f"{wid} — {w['task']}:\n{steps_report(outcomes)}"

    open_widget(harness, server, w, body, timeout=150)


def _ancestors(n):
    p = n.parent
    while p is not None:
        yield p
        p = p.parent


@sweep_check("covered")
async def _covered_at_load(tab, page, snap):
    """Controls marked covered by an ancestor of theirs, and payload entries marked covered at all."""
    own = []
    for n in snap.interactive():
        if n.occluded and n.occluded_by and n.occluded_by in {a.node_id for a in _ancestors(n)}:
            own.append(f"[{n.node_id}] {n.label()} covered by its ancestor [{n.occluded_by}] "
                       f"{n.occluded_by_desc or ''}")
    covered = [e for e in payload_entries(snap) if e.get("occ")]
    detail = [f"[{e['i']}] {snap.get(e['i']).label()} — by "
              f"{snap.get(e['i']).occluded_by_desc or snap.get(e['i']).occluded_by}"
              for e in covered[:20]]
    return own, len(covered), detail


@pytest.mark.parametrize("page", page_params())
def test_no_control_covered_by_its_own_host_or_container(harness, server, page):
    """No control is marked covered by its own host or container (an ancestor, shadow hosts
    included). And at load no corpus page has anything over its controls (no popup, banner or
    overlay is open), so any `occ: true` sent to the model is a false alarm that makes it avoid a
    control it should use."""
    own, covered, detail = swept(harness, server, page, "covered")
    assert not own, f"{page}: controls marked covered by their own host/container:\n  " + "\n  ".join(own)
    assert not covered, f"{page}: {covered} payload entries marked occluded at load:\n  " + "\n  ".join(detail)


def test_manifest_is_well_formed():
    """Every widget names a page of this folder, a control and a task whose steps the runner knows."""

    known = {"click", "hover", "check", "uncheck", "type", "select", "press", "see"}
    here = FIXTURES / "real"
    for w in CORPUS["widgets"]:
        if not w["page"].startswith("pydoc/"):
            assert (here / w["page"]).is_file(), w
        assert {"selector", "role", "name"} <= set(w["control"]), w
        assert w["steps"] and all(s["do"] in known for s in w["steps"]), w
        assert any("check" in s for s in w["steps"]), f"{w['id']}: a task must check the page's real state"
