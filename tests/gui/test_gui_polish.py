"""What a screenshot review of the window at 1024x640 found, each fixed and held here: the address keeps
a readable width and the Set-of-Mark hint makes way for it in a narrow window; the approval bar's key
line is never cut, its "Why" is not a copy of the step's title and its "Expect" says what the default
check looks for; the Nodes tab's ID column shows every shown row's ID after its indentation; the status
bar says in plain words why a snapshot read the whole page. Offscreen, through pytest-qt (no browser)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtWidgets import QMainWindow, QVBoxLayout, QWidget  # noqa: E402

from engine.models.actions import Action  # noqa: E402
from engine.models.loop import ApprovalRequest, ProposedStep  # noqa: E402
from gui.approval.approval_bar import ApprovalBar  # noqa: E402
from gui.approval.approval_text import default_check_words, repeats  # noqa: E402
from gui.nodes.node_tree import NodeTreePanel  # noqa: E402
from gui.window.status_bar import StatusBar, plain_walk  # noqa: E402
from gui.window.toolbar import HINT_MIN_WINDOW, URL_MIN_WIDTH, NavigationBar  # noqa: E402

from support.fake_page import edited  # noqa: E402


def _long_words(body: dict) -> None:
    """A page's long roles and tiers (as on the demo shop: contentinfo, non-semantic), which leave the
    ID column little room in a narrow panel."""
    role, tier = body["columns"].index("role"), body["columns"].index("tier")
    body["nodes"][-1][role] = "contentinfo"
    body["nodes"][-2][tier] = "non-semantic"


def _shown(qtbot, widget, width: int, height: int) -> None:
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(20)


# -- the toolbar ----------------------------------------------------------------------------------------

def test_the_address_keeps_its_width_and_the_hint_makes_way_in_a_narrow_window(qtbot, make):
    win = make(QMainWindow)
    win.setCentralWidget(QWidget())
    bar = NavigationBar(win)
    bar.overlay_hint_fit.set_on(True)  # Set-of-Mark on
    _shown(qtbot, win, 1024, 640)
    assert bar.url.width() >= URL_MIN_WIDTH
    assert not bar.overlay_hint.isVisible(), "the hint takes the address's room in a 1024 px window"
    # every action is on the bar itself (none pushed into the overflow menu), inside the window
    for a in bar.actions():
        if a.isVisible():
            w = bar.widgetForAction(a)
            assert w is not None and w.isVisible(), a.text() or a.toolTip()
            assert w.mapTo(win, w.rect().topRight()).x() <= win.width(), a.text()
    win.resize(HINT_MIN_WINDOW + 166, 768)
    qtbot.waitUntil(bar.overlay_hint.isVisible, timeout=2000)
    bar.overlay_hint_fit.set_on(False)
    qtbot.waitUntil(lambda: not bar.overlay_hint.isVisible(), timeout=2000)
    bar.overlay_hint_fit.set_on(True)
    qtbot.waitUntil(bar.overlay_hint.isVisible, timeout=2000)
    win.resize(1024, 640)
    qtbot.waitUntil(lambda: not bar.overlay_hint.isVisible(), timeout=2000)


# -- the approval bar -----------------------------------------------------------------------------------

def _req(thought: str, summary: str, action: Action, **kw) -> ApprovalRequest:
    return ApprovalRequest(step_index=1, proposal=ProposedStep(thought=thought, action=action), summary=summary,
                           target={"id": "39", "role": "textbox", "name": "Full name"}, **kw)


TYPE = Action(name="type", target="39", text="Ada Lovelace")
TITLE = 'Type "Ada Lovelace" into textbox "Full name" [39]'


def test_why_is_hidden_when_it_repeats_the_title_and_expect_says_what_is_checked(qtbot, make):
    host = make(QWidget)
    bar = ApprovalBar(host)
    QVBoxLayout(host).addWidget(bar)
    _shown(qtbot, host, 715, 260)
    bar.show_request(_req(TITLE + ".", TITLE, TYPE))
    assert not bar.thought.isVisible()
    assert bar.expect.text() == "Expect: the field's value changes"
    bar.show_request(_req("The form needs a name first.", TITLE, TYPE))
    assert bar.thought.isVisible() and bar.thought.text() == "Why: The form needs a name first."
    click = Action(name="click", target="67")
    bar.show_request(_req('Click button "Accept" [67].', 'Click button "Accept" [67]', click))
    assert not bar.thought.isVisible() and bar.expect.text() == "Expect: the page reacts (any change)"


def test_the_key_line_is_whole_in_a_narrow_bar(qtbot, make):
    host = make(QWidget)
    bar = ApprovalBar(host)
    QVBoxLayout(host).addWidget(bar)
    _shown(qtbot, host, 715, 300)
    bar.show_request(_req("x", TITLE, TYPE, sensitive_reasons=["a password field"]))
    qtbot.wait(20)
    line = bar.keys_hint
    assert line.isVisible() and line.text() == "Enter does not approve: click Approve or press Ctrl+Enter."
    # its own line: as wide as the bar, so the sentence fits in one line, and nothing sits beside it
    assert line.fontMetrics().horizontalAdvance(line.text()) <= line.contentsRect().width()
    assert line.height() >= line.heightForWidth(line.width())
    for b in bar.buttons():
        if b.isVisible():
            assert b.geometry().top() >= line.geometry().bottom() or b.geometry().bottom() <= line.geometry().top()
    bar.show_request(_req("x", TITLE, TYPE))
    assert not bar.keys_hint.isVisible()


def test_default_checks_in_plain_words():
    assert default_check_words(Action(name="click", target="3")) == "the page reacts (any change)"
    assert default_check_words(Action(name="type", target="3", text="a")) == "the field's value changes"
    assert "submission" in default_check_words(Action(name="type", target="3", text="a", submit=True))
    assert default_check_words(Action(name="check", target="3")) == "the box's checked state changes"
    assert default_check_words(Action(name="navigate", url="http://x/")) == "the page goes to another address"
    assert default_check_words(Action(name="hover", target="3")) == "no error shows on the page"
    assert "default check" not in default_check_words(Action(name="press", key="Enter"))
    assert repeats("Click Accept.", "click  accept") and not repeats("Accept the cookies.", "Click Accept")


# -- the Nodes tab --------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [260, 300, 410])
def test_every_shown_rows_id_fits_after_its_indentation(qtbot, make, width):
    snap = edited("loop_form", _long_words)
    panel = make(NodeTreePanel)
    panel.set_snapshot(snap)
    _shown(qtbot, panel, width, 560)
    assert panel.select_node(max(snap.nodes(), key=lambda n: n.depth).node_id)  # opens the way to it
    qtbot.wait(20)
    view, fm = panel.view, panel.view.fontMetrics()
    h = view.header()
    shown = [n for n in snap.nodes() if n.parent is None or view.isExpanded(panel.view_index(n.parent.node_id))]
    assert len(shown) > 3 and max(n.depth for n in shown) >= 3
    for n in shown:
        need = view.indentation() * (n.depth + 1) + fm.horizontalAdvance(n.node_id)
        assert h.sectionSize(0) >= need + 4, (n.node_id, n.depth, need, h.sectionSize(0))
    assert h.length() <= view.viewport().width() + 2, "the tier column stays in view"


# -- the status bar -------------------------------------------------------------------------------------

def test_the_status_bar_says_why_the_whole_page_was_read(qtbot, make):
    line = "snapshot 12 ms · 326 nodes · full (the pointer entered or left the page)"
    said = "snapshot 12 ms · 326 nodes · whole page read again: the mouse moved onto or off the page"
    assert plain_walk(line) == said
    assert plain_walk("x · full (first walk of this document)") == "x · whole page read again: first look at this page"
    assert plain_walk("x · full (something new)") == "x · whole page read again: something new"
    for same in ("x · incremental (3 re-walked, 10 kept)", "the budget was full (x)); y · z (a) · full"):
        assert plain_walk(same) == same
    bar = make(StatusBar, ["idle"])
    bar.snap.set_line(line)
    assert "pointer" not in bar.snap.full_text() and "mouse moved" in bar.snap.full_text()
