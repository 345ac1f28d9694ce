"""The node tree and payload inspector widgets on real snapshots of real pages (Qt offscreen),
driven through pytest-qt's qtbot. The models' structure, filters and selection are tested on stored
snapshots (tests/fixtures/snapshots/, no browser); what depends on a live page's size or contents
(deep and 25k-node pages, secrets, visibility) on snapshots taken now."""

from __future__ import annotations

import re
import time

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402

from gui.nodes.inspector import PayloadInspector  # noqa: E402
from gui.nodes.node_models import NEW_TOOLTIP, NODE_ID_ROLE, FlatModel, NodeTreeModel  # noqa: E402
from gui.nodes.node_tree import NodeTreePanel  # noqa: E402

from support.fake_page import stored

TIMINGS: dict[str, float] = {}


def snap_of(harness, url, before=None):
    async def go(tab):
        if before:
            await tab.page.evaluate(before)
            tab.invalidate()
        return await tab.snapshot()
    return harness.page(url, go)


def all_model_strings(model, parent=QModelIndex(), roles=(Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)):
    """Every string the model gives out, walked iteratively."""
    out, stack = [], [parent]
    while stack:
        p = stack.pop()
        for r in range(model.rowCount(p)):
            for c in range(model.columnCount(p)):
                idx = model.index(r, c, p)
                for role in roles:
                    v = model.data(idx, role)
                    if v is not None:
                        out.append(str(v))
            stack.append(model.index(r, 0, p))
    return out


def first_paint_ms(qapp, panel, snap, previous=None):
    t = time.perf_counter()
    panel.set_snapshot(snap, previous)
    panel.show()
    qapp.processEvents()
    panel.grab()
    return (time.perf_counter() - t) * 1000


# -- the model ----------------------------------------------------------------------------------------

def test_row_counts_match_children(qapp, qtbot, make):
    snap = stored("labels")
    m = NodeTreeModel()
    m.set_snapshot(snap)
    assert m.rowCount() == 1 and m.node(m.index(0, 0)) is snap.root
    seen = 0
    stack = [m.index(0, 0)]
    while stack:
        idx = stack.pop()
        node = m.node(idx)
        seen += 1
        assert m.rowCount(idx) == len(node.children)
        assert idx.data() == node.node_id
        assert m.index(idx.row(), 3, idx.parent()).data() == node.tier
        for r in range(m.rowCount(idx)):
            child = m.index(r, 0, idx)
            assert m.node(child) is node.children[r]
            assert m.parent(child) == idx
            stack.append(child)
    assert seen == len(snap.nodes())
    # index_of round-trips for every node
    for n in snap.nodes():
        assert m.node(m.index_of(n.node_id)) is n
    assert not m.index_of("no-such-id").isValid()


def test_deep_page_round_trip_and_fast_first_rows(qapp, qtbot, make, harness, server):
    snap = snap_of(harness, server.url("deep.html"))
    button = snap.find(role="button", name="Deep button")[0]
    m = NodeTreeModel()
    m.set_snapshot(snap)
    idx = m.index_of(button.node_id)
    assert m.node(idx) is button
    # walk parent() to the top and index() back down: no recursion, same indexes
    chain = []
    p = idx
    while p.isValid():
        chain.append(p)
        p = m.parent(p)
    assert len(chain) > 1000
    assert m.node(chain[-1]) is snap.root
    down = m.index(0, 0)
    for want in reversed(chain[:-1]):
        down = m.index(want.row(), 0, down)
        assert down == want
    panel = make(NodeTreePanel)
    panel.resize(700, 500)
    ms = first_paint_ms(qapp, panel, snap)
    TIMINGS["deep.html set_snapshot+first paint ms"] = ms
    assert ms < 2000
    t = time.perf_counter()
    assert panel.select_node(button.node_id)
    qapp.processEvents()
    panel.grab()
    TIMINGS["deep.html select_node(depth 1000)+paint ms"] = (time.perf_counter() - t) * 1000
    assert panel.selected_node_id() == button.node_id
    # a filter on the deepest node keeps its 1000 ancestors
    panel.set_filter("Deep button")
    qapp.processEvents()
    idx = panel.view_index(button.node_id)
    assert idx.isValid()
    panel.close()


def test_new_ids_marked_after_insert_on_top(qapp, qtbot, make):
    a, b = stored("rerender"), stored("rerender_inserted")   # before and after insertOnTop(2), one tab
    new = b.new_ids_since(a)
    assert new
    m = NodeTreeModel()
    m.set_snapshot(b, a)
    assert m.new_ids == new
    new_buttons = [n for n in b.find(role="button", name="Archive") if n.node_id in new]
    assert len(new_buttons) == 2
    for n in b.nodes():
        idx = m.index_of(n.node_id)
        tip = idx.data(Qt.ItemDataRole.ToolTipRole)
        bg = idx.data(Qt.ItemDataRole.BackgroundRole)
        if n.node_id in new:
            assert NEW_TOOLTIP in tip and bg is not None
        else:
            assert NEW_TOOLTIP not in tip and bg is None
    # without a previous snapshot nothing is new
    m.set_snapshot(b)
    assert not m.new_ids


def test_password_never_shown(qapp, qtbot, make, harness, server):
    snap = snap_of(harness, server.url("secrets.html"))
    panel = make(NodeTreePanel)
    panel.set_snapshot(snap)
    strings = all_model_strings(panel.model)
    joined = "\n".join(strings)
    for secret in ("hunter2-secret", "918273"):
        assert secret not in joined
    assert "alice" in joined  # ordinary values are shown (tooltip)
    pw = [n for n in snap.nodes() if n.redacted]
    assert pw
    for n in pw:
        assert "redacted" in panel.model.index_of(n.node_id).data(Qt.ItemDataRole.ToolTipRole)
    panel.set_flattened(True)
    flat = "\n".join(all_model_strings(panel.flat_model))
    assert "hunter2-secret" not in flat and "918273" not in flat


def test_non_rendered_nodes_greyed(qapp, qtbot, make, harness, server):
    snap = snap_of(harness, server.url("visibility.html"))
    m = NodeTreeModel()
    m.set_snapshot(snap)
    hidden = [n for n in snap.nodes() if not n.rendered]
    assert hidden
    for n in hidden:
        assert m.index_of(n.node_id).data(Qt.ItemDataRole.ForegroundRole) is not None
        assert "not rendered" in m.index_of(n.node_id).data(Qt.ItemDataRole.ToolTipRole)
    shown = [n for n in snap.nodes() if n.rendered][0]
    assert m.index_of(shown.node_id).data(Qt.ItemDataRole.ForegroundRole) is None


# -- the panel ----------------------------------------------------------------------------------------

def visible_ids(panel):
    """Every node ID the proxy lets through (walked iteratively)."""
    out, stack = [], [QModelIndex()]
    m = panel.view.model()
    while stack:
        p = stack.pop()
        for r in range(m.rowCount(p)):
            idx = m.index(r, 0, p)
            out.append(idx.data(NODE_ID_ROLE))
            stack.append(idx)
    return out


def test_filters_keep_ancestors_and_role_filter(qapp, qtbot, make):
    snap = stored("rerender")
    panel = make(NodeTreePanel)
    panel.set_snapshot(snap)
    target = snap.find(role="link", name="Open Invoice 4412")[0]
    qtbot.keyClicks(panel.filter_edit, "Invoice 4412")  # applied by a debounce timer
    qtbot.waitUntil(lambda: "match the filter" in panel.counts_label.text(), timeout=3000)
    ids = set(visible_ids(panel))
    assert target.node_id in ids
    a = target.parent
    while a is not None:
        assert a.node_id in ids, "every ancestor of a match stays visible"
        a = a.parent
    other = snap.find(role="link", name="Open Invoice 4411")[0]
    assert other.node_id not in ids
    # the match is reachable on screen: its ancestors got expanded
    pidx = panel.view_index(target.node_id).parent()
    assert panel.view.isExpanded(pidx)
    assert "match the filter" in panel.counts_label.text()

    # role filter: only buttons (plus their ancestors)
    panel.set_filter(text="", role="button")
    ids = visible_ids(panel)
    buttons = {n.node_id for n in snap.nodes() if n.role == "button"}
    assert buttons <= set(ids)
    for nid in ids:
        n = snap.get(nid)
        assert n.role == "button" or any(b.node_id in buttons for b in n.iter())
    assert panel.role_combo.findText("button") >= 0 and panel.role_combo.findText("link") >= 0
    # tier filter
    panel.set_filter(role="any", tier="semantic")
    ids = visible_ids(panel)
    assert {n.node_id for n in snap.nodes() if n.tier == "semantic"} <= set(ids)
    panel.clear_filter()
    assert len(visible_ids(panel)) == len(snap.nodes())


def test_flattened_mode_matches_semantic_items(qapp, qtbot, make):
    snap = stored("labels")
    panel = make(NodeTreePanel)
    panel.set_snapshot(snap)
    items = snap.serialize("semantic").data["interactive_tree"]
    panel.set_flattened(True)
    assert panel.flattened and panel.view.model() is panel.flat_model
    assert panel.view.model().rowCount() == len(items) == panel.flat_model.rowCount()
    assert [panel.flat_model.index(r, 0).data() for r in range(len(items))] == [str(it["i"]) for it in items]
    assert FlatModel.COLUMNS[:4] == ("i", "r", "n", "v")
    # select in flat mode, then back to the complete tree
    assert panel.select_node(str(items[-1]["i"]))
    assert panel.selected_node_id() == str(items[-1]["i"])
    panel.set_flattened(False)
    assert panel.view.model() is panel.model  # no filter: no proxy in between
    assert "sent to the model" in panel.counts_label.text()


def test_select_node_expands_and_selects_and_user_selection_emits(qapp, qtbot, make):
    snap = stored("rerender")
    panel = make(NodeTreePanel)
    panel.resize(800, 600)
    panel.set_snapshot(snap)
    panel.show()
    qapp.processEvents()
    got: list[str] = []
    panel.node_selected.connect(got.append)
    target = snap.find(role="button", name="Archive")[-1]
    assert panel.select_node(target.node_id)
    qapp.processEvents()
    assert got == [], "programmatic selection does not echo back"
    idx = panel.view.currentIndex()
    assert idx.data(NODE_ID_ROLE) == target.node_id
    assert panel.view.selectionModel().isSelected(idx)
    p = idx.parent()
    while p.isValid():
        assert panel.view.isExpanded(p)
        p = p.parent()
    # a user click on another visible row emits node_selected
    other = panel.view_index(target.parent.node_id)
    rect = panel.view.visualRect(other)
    assert rect.isValid()
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qapp.processEvents()
    assert got == [target.parent.node_id]
    # keyboard navigation is a user selection too
    qtbot.keyClick(panel.view, Qt.Key.Key_Down)
    qapp.processEvents()
    assert len(got) == 2 and got[-1] != target.parent.node_id
    assert not panel.select_node("no-such-id")
    panel.close()


def test_big_pages_open_fast(qapp, qtbot, make, harness, server, tmp_path):
    from engine.bench.snapshot import generate_page

    page = tmp_path / "big25k.html"
    page.write_text(generate_page(25000), encoding="utf-8")
    results = {}
    for name, url in (("big5k.html", server.url("big5k.html")), ("25k", page.as_uri())):
        snap = snap_of(harness, url)
        panel = make(NodeTreePanel)
        panel.resize(900, 700)
        ms = first_paint_ms(qapp, panel, snap)
        TIMINGS[f"{name} ({len(snap.nodes()):,} nodes) set_snapshot+first paint ms"] = ms
        results[name] = (snap, ms)
        # a filter over the whole page stays quick
        t = time.perf_counter()
        panel.set_filter("item 1")
        qapp.processEvents()
        panel.grab()
        TIMINGS[f"{name} text filter+paint ms"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        panel.set_filter("", role="button")
        qapp.processEvents()
        panel.grab()
        TIMINGS[f"{name} role filter+paint ms"] = (time.perf_counter() - t) * 1000
        panel.clear_filter()
        last = snap.nodes()[-1]
        t = time.perf_counter()
        assert panel.select_node(last.node_id)
        qapp.processEvents()
        panel.grab()
        TIMINGS[f"{name} select last node+paint ms"] = (time.perf_counter() - t) * 1000
        panel.close()
    snap25, ms25 = results["25k"]
    assert len(snap25.nodes()) > 20000
    assert ms25 < 1500, f"25k-node page took {ms25:.0f} ms to show"
    print("\nGUI panel timings:")
    for k, v in TIMINGS.items():
        print(f"  {k}: {v:.1f}")


# -- the inspector ------------------------------------------------------------------------------------

def test_inspector_shows_semantic_json_tokens_and_markup_literally(qapp, qtbot, make, harness, server, tmp_path):
    page = tmp_path / "markup.html"
    page.write_text("<!doctype html><html><head><title>&lt;b&gt;Title&lt;/b&gt;</title></head><body>"
                    "<button>&lt;b&gt;bold&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;</button>"
                    "<p>&lt;img src=x onerror=alert(2)&gt; para</p></body></html>", encoding="utf-8")
    snap = snap_of(harness, page.as_uri())
    insp = make(PayloadInspector)
    insp.show_snapshot_payload(snap)
    sem = snap.serialize("semantic")
    text = insp.semantic_view.toPlainText()
    import json
    assert json.loads(text) == sem.data
    assert "\n  " in text, "pretty-printed"
    assert re.search(r'"xy": \[\d+(\.\d+)?, \d+(\.\d+)?\]', text), "an xy pair stays on one line"
    assert "<b>bold</b> <script>alert(1)</script>" in text
    assert f"{sem.tokens:,} tokens" in insp.header_text()
    assert f"{sem.tokens:,} tok" in insp.tabs.tabText(0)
    tree = insp.tree_view.toPlainText()
    assert json.loads(tree) == snap.serialize("tree").data
    assert tree.count("\n") > 20 and max(map(len, tree.splitlines())) < 200, "the tree is indented, not one line"
    assert "mode:" not in insp.header_text()
    assert insp.header_text().startswith("What the model is sent for this page: the page as a list of elements")
    assert insp.skeleton_view.toPlainText() == snap.serialize("skeleton").text
    assert "<b>Title</b>" in insp.header_text()
    assert insp.header.textFormat() == Qt.TextFormat.PlainText
    # the tree panel shows the markup as item text, unrendered
    panel = make(NodeTreePanel)
    panel.set_snapshot(snap)
    assert any("<b>bold</b> <script>alert(1)</script>" in s for s in all_model_strings(panel.model))


def test_inspector_shows_exchanges(qapp, qtbot, make):
    from engine.planners.openai_planner import Exchange

    insp = make(PayloadInspector)
    ex = Exchange(mode="tools", model="m1", base_url="http://127.0.0.1:1/v1", tokens=1234, requests=2,
                  messages=[{"role": "system", "content": "You are <b>an agent</b>"},
                            {"role": "user", "content": [{"type": "text", "text": "page"},
                                                         {"type": "image_url",
                                                          "image_url": {
                                                              "url": "data:image/jpeg;base64," + "A" * 9000}}]}],
                  reply={"choices": [{"message": {"content": "click(3)"}}]},
                  negotiation=[{"kind": "screenshot", "reason": "the icons have no labels", "tokens": 765}])
    insp.show_exchange(ex)
    h = insp.header_text()
    assert h.startswith("Sent to the model m1 (answers by tool calls): the page as a list of elements (semantic)")
    assert "1,234 tokens" in h and "then asked for a screenshot (why: the icons have no labels)" in h
    body = insp.exchange_view.toPlainText()
    assert "You are <b>an agent</b>" in body and "click(3)" in body
    assert "A" * 200 not in body, "image bytes elided"
    assert "screenshot" in insp.screenshot_label.text()

    backend = {"endpoint": "http://127.0.0.1:1/api/agent/interact", "rounds": 1, "requested": [["skeleton"]],
               "calls": [{"request": {"dom": "[1] button"}, "http_status": 200, "error": None,
                          "response": {"success": True, "data": {"status": "needs_context",
                                                                 "reasoning": "need the layout"}}},
                         {"request": {"dom": "[1] button", "skeletonDom": "<main>"}, "http_status": 200,
                          "error": None, "response": {"success": True, "data": {"action": "click(1)"}}}]}
    insp.show_exchange(backend)
    h = insp.header_text()
    assert h.startswith("Sent to the backend http://127.0.0.1:1/api/agent/interact: the page as a list")
    assert "the page's layout as minimal HTML (skeleton) (why: need the layout)" in h
    assert "click(1)" in insp.exchange_view.toPlainText()
    # a real screenshot shows as an image
    from PySide6.QtGui import QImage
    img = QImage(40, 30, QImage.Format.Format_RGB32)
    img.fill(0x336699)
    insp.show_screenshot(img)
    assert not insp.screenshot_label.pixmap().isNull()


def test_inspector_builds_its_payload_only_when_shown(qapp, qtbot, make, harness, server):
    """Behind another tab of a shown window the inspector builds nothing for a new snapshot (the live view
    sends one whenever the page changes); the latest is built when its tab is shown, the same text as an
    inspector that built it at once."""
    from PySide6.QtWidgets import QLabel, QTabWidget
    snap1 = snap_of(harness, server.url("secrets.html"))
    snap2 = snap_of(harness, server.url("visibility.html"))
    eager = make(PayloadInspector)
    eager.show_snapshot_payload(snap2)
    tabs = make(QTabWidget)
    tabs.addTab(QLabel("chat"), "Chat")
    insp = PayloadInspector()
    tabs.addTab(insp, "Payload")
    tabs.show()
    qtbot.waitExposed(tabs)
    insp.show_snapshot_payload(snap1)
    insp.show_snapshot_payload(snap2)
    assert insp.semantic_view.toPlainText() == "" and insp.tokens == {}, "nothing built while hidden"
    assert insp.header_text().startswith("No payload yet")
    tabs.setCurrentWidget(insp)
    assert insp.isVisible()
    for view in ("semantic_view", "tree_view", "skeleton_view"):
        assert getattr(insp, view).toPlainText() == getattr(eager, view).toPlainText() != ""
    assert insp.header_text() == eager.header_text() and insp.tokens == eager.tokens
    assert [insp.tabs.tabText(i) for i in range(5)] == [eager.tabs.tabText(i) for i in range(5)]
    # shown: built at once
    insp.show_snapshot_payload(snap1)
    assert insp.tokens["semantic"] == snap1.serialize("semantic").tokens
