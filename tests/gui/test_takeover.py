"""The person's own actions are steps: while a step waits for approval the person clicks and types in
the live view, then takes over ("I'll do it in the page"); what they did is recorded as actions on
node IDs with their locators, said in the chat, stored in the session, and exported as a test.
A secret the person types is never kept."""

from __future__ import annotations

import pytest

from engine.cli import main as vigil
from engine.loop.person_steps import PersonSteps, node_at
from engine.secret_values import MASK
from engine.snapshot.locators.code import MASK as CODE_MASK
from engine.store import Store
from engine.store.replay import replay_planner

from support.gui_helpers import open_window, run, wait_fitted

SECRET = "s3cr3t-Typed"


def _click_at(qtbot, window, node) -> None:
    from PySide6.QtCore import Qt
    x, y = node.center
    qtbot.mouseClick(window.page, Qt.LeftButton, pos=window.page.to_widget(x, y).toPoint())


def test_person_steps_from_input_on_a_real_snapshot(harness, server):
    """Clicks land on the node under the pointer, typing goes to the field clicked last (Backspace
    counts), a password's text is masked, Enter is a press, the wheel one scroll, and a native select
    whose choice changed is one select step."""
    async def go(tab):
        snap = await tab.snapshot()
        latest = {"snap": snap}
        steps = PersonSteps(lambda: latest["snap"])
        name = snap.find("textbox", "Email address")[0]
        pw = next(n for n in snap.nodes() if n.attrs.get("type") == "password")
        join = snap.find("button", "Join newsletter")[0]
        assert node_at(snap, *name.center) is name
        for node, keys in ((name, "adx"), (pw, SECRET)):
            x, y = node.center
            steps.feed("mouse", ("down", x, y), {"button": "left", "click_count": 1})
            steps.feed("mouse", ("up", x, y), {"button": "left", "click_count": 1})
            for ch in keys:
                steps.feed("key", ("down", ch, "", ch, 0), {})
            if node is name:
                steps.feed("key", ("down", "Backspace", "", "", 0), {})
                steps.feed("key", ("down", "a", "", "a", 0), {})
        steps.feed("key", ("down", "Enter", "", "\r", 0), {})
        steps.feed("wheel", (10, 10, 0, 100), {})
        steps.feed("wheel", (10, 10, 0, 150), {})
        x, y = join.center
        steps.feed("mouse", ("down", x, y), {"button": "left", "click_count": 1})
        steps.feed("mouse", ("up", x, y), {"button": "left", "click_count": 1})
        return steps.finish(), name, pw, join

    done, name, pw, join = harness.page(server.url("backend_form.html"), go)
    acts = [p.action.to_string() for p in done]
    assert acts == [f"click({name.node_id})", f'type({name.node_id}, "ada", clear=false)',
                    f"click({pw.node_id})", f'type({pw.node_id}, "{MASK}", clear=false)',
                    f'press("Enter", {pw.node_id})', 'scroll("down", 250)', f"click({join.node_id})"], acts
    assert SECRET not in repr(done)
    assert done[0].target["locator"]["code"] == 'page.get_by_role("textbox", name="Email address", exact=True)'
    assert done[-1].target["query"]["name"] == "Join newsletter"
    assert CODE_MASK == MASK


def test_typing_after_tab_goes_to_the_field_the_page_focused_and_a_secret_stays_masked(harness, server):
    """After Tab the view does not know where focus went: what is typed is held, then recorded as one
    type step into the field the page reports focused — here the password, so masked — never as a
    press per character."""
    async def go(tab):
        snap = await tab.snapshot()
        latest = {"snap": snap}
        steps = PersonSteps(lambda: latest["snap"])
        email = snap.find("textbox", "Email address")[0]
        pw = next(n for n in snap.nodes() if n.attrs.get("type") == "password")
        x, y = email.center
        # the page's focus, as the person's click made it (a focus change is no change to wait 3 s for)
        assert (await tab.click(email.node_id, expect={"type": "any_change", "timeout_ms": 300})).success
        steps.feed("mouse", ("down", x, y), {"button": "left", "click_count": 1})
        steps.feed("mouse", ("up", x, y), {"button": "left", "click_count": 1})
        for ch in "ada":
            steps.feed("key", ("down", ch, "", ch, 0), {})
        steps.feed("key", ("down", "Tab", "Tab", "", 0), {})
        await tab.page.keyboard.press("Tab")                   # the page moves focus on (to the password)
        for ch in SECRET:
            steps.feed("key", ("down", ch, "", ch, 0), {})
        assert steps.typing_blind, "the typing waits to learn its field"
        latest["snap"] = await tab.snapshot()                  # as the window does before the next key
        steps.feed("key", ("down", "Enter", "Enter", "\r", 0), {})
        return steps.finish(), email, pw

    done, email, pw = harness.page(server.url("backend_form.html"), go)
    acts = [p.action.to_string() for p in done]
    assert acts == [f"click({email.node_id})", f'type({email.node_id}, "ada", clear=false)',
                    f'press("Tab", {email.node_id})', f'type({pw.node_id}, "{MASK}", clear=false)',
                    f'press("Enter", {pw.node_id})'], acts
    assert SECRET not in repr(done) and not any(p.action.name == "press" and len(p.action.key) == 1 for p in done)


@pytest.mark.usefixtures("aio")
def test_take_over_in_the_live_view_records_the_persons_steps(qtbot, server, tmp_path):
    from PySide6.QtCore import Qt

    with open_window(qtbot, server.url("offline_shop.html")) as window:
        wait_fitted(qtbot, window)
        qtbot.keyClicks(window.task, "click Place order")
        qtbot.keyClick(window.task, Qt.Key_Return)
        qtbot.waitUntil(window.approval.is_pending, timeout=20000)
        snap = window.sup.tab.latest_snapshot
        name = snap.find("textbox", "Full name")[0]
        gift = snap.find("checkbox", "Gift wrap")[0]
        _click_at(qtbot, window, name)
        qtbot.keyClicks(window.page, "Grace")
        _click_at(qtbot, window, gift)
        run(qtbot, window.page.drain_input())
        qtbot.waitUntil(lambda: window.sup.person is not None and len(window.sup.person.steps) >= 2, timeout=10000)
        window.approval.take_over_in_page()  # "I'll do it in the page"
        sid = window.sup.current_session()
        qtbot.waitUntil(lambda: any("I acted in the page myself:" in t.message.content
                                    for t in window.chat.turns() if t.role == "user"), timeout=20000)
        said = next(t.message.content for t in window.chat.turns()
                    if t.role == "user" and "I acted in the page myself:" in t.message.content)
        turn = window.chat.turn_for_step(0)
        qtbot.waitUntil(lambda: turn.observation is not None, timeout=5000)
        _header_consistent(turn)  # acted first, then pressed: the header agrees with the ✔
        # they filled the name and ticked Gift wrap: "Click Place order" is not ticked, in the stepper or the plan
        qtbot.waitUntil(lambda: bool(window.plan.rows()), timeout=5000)
        assert window.plan.rows()[0].property("state") != "past", window.plan.rows()[0].property("state")
        assert window.sup.loop.journal.plan.steps[0].status != "completed"
        window.sup.stop_task()
        qtbot.waitUntil(lambda: not window.sup.running(), timeout=20000)
        assert run(qtbot, window.sup.tab.page.input_value("#name")) == "Grace"
        assert run(qtbot, window.sup.tab.page.is_checked("#gift"))

    assert f"1. click({name.node_id})" in said and f'2. type({name.node_id}, "Grace", clear=false)' in said
    assert f"3. click({gift.node_id})" in said
    with Store.open() as store:
        data = store.load(sid)
        replay = replay_planner(store, sid)  # the person's steps are replayed as steps of their own
    assert [s.action.name for s in replay.steps] == ["click", "type", "click"]
    assert replay.steps[1].action.text == "Grace"
    human = [s for s in data.steps if s.actor == "human" and s.action is not None]
    assert [s.action.name for s in human] == ["click", "type", "click"]
    assert human[1].action.text == "Grace" and human[1].target["locator"]["code"].startswith("page.get_by_role(")
    out = tmp_path / "test_takeover_export.py"
    assert vigil(["export", sid, "--playwright", str(out)]) == 0
    text = out.read_text()
    assert 'page.get_by_role("textbox", name="Full name", exact=True).press_sequentially("Grace")' in text
    assert 'page.get_by_role("checkbox", name="Gift wrap", exact=True).click()' in text
    assert "(the person's step)" in text


def _said(window) -> str | None:
    return next((t.message.content for t in window.chat.turns()
                 if t.role == "user" and "I acted in the page myself" in t.message.content), None)


def _header_consistent(turn) -> None:
    """The agent's turn of a step the person took over: no failure mark beside the person's ✔."""
    head = turn.header.text()
    assert "taken over by you" in head and "✘" not in head and "❌" not in head, head
    assert turn.observation is not None and turn.observation.ok
    assert turn.observation.text().startswith(("✔", "✅")), turn.observation.text()


@pytest.mark.usefixtures("aio")
def test_take_over_before_acting_waits_for_the_persons_own_input(qtbot, server):
    """"I'll do it in the page" pressed before the person acted records nothing: the bar says to act in the
    page, then press Done (off until they act), "Back to the question" returns to the step's buttons; what
    they then do — with Set-of-Mark on, their clicks reach the page — is recorded exactly, once they press
    Done, while the step's target outline follows its button as the page moves it down."""
    from PySide6.QtCore import Qt

    from gui.approval.in_page_wait import NOTHING_YET

    with open_window(qtbot, server.url("offline_shop.html")) as window:
        wait_fitted(qtbot, window)
        window.act_overlay.setChecked(True)
        qtbot.keyClicks(window.task, "click Place order")
        qtbot.keyClick(window.task, Qt.Key_Return)
        bar = window.approval
        qtbot.waitUntil(bar.is_pending, timeout=20000)
        target = bar.request.target["id"]
        y0 = window.sup.snapshot.get(target).bounds[1]
        assert window.page.highlighted("target") == target

        qtbot.mouseClick(bar.take_over_btn, Qt.LeftButton)
        qtbot.mouseClick(bar.in_page_btn, Qt.LeftButton)
        assert bar.waiting_in_page() and bar.in_page_panel.isVisible()
        assert bar.in_page_panel.title.text().startswith("Act in the page, then press Done")
        assert bar.in_page_panel.so_far.text() == NOTHING_YET and not bar.in_page_done_btn.isEnabled()
        assert not bar.approve_btn.isVisible() and "waits for you to act in the page" in bar.step_label.text()
        qtbot.wait(1200)  # nothing happens until the person acts
        journal = window.sup.loop.journal
        assert bar.is_pending() and window.sup.loop_state == "awaiting_approval"
        assert journal.records == [] and _said(window) is None
        assert not any(s.status == "completed" for s in (journal.plan.steps if journal.plan else []))

        qtbot.mouseClick(bar.in_page_back_btn, Qt.LeftButton)  # back to the question
        assert not bar.waiting_in_page() and bar.approve_btn.isVisible() and bar.is_pending()
        assert bar.step_label.text() == "Step 1 is waiting for you"
        qtbot.mouseClick(bar.take_over_btn, Qt.LeftButton)
        qtbot.mouseClick(bar.in_page_btn, Qt.LeftButton)
        assert bar.waiting_in_page() and not bar.in_page_done_btn.isEnabled()

        # the person searches: five results appear above the form, and Place order moves down
        q = window.sup.snapshot.find("searchbox", "Search products")[0]
        _click_at(qtbot, window, q)  # Set-of-Mark is on: the click reaches the page, nothing is selected
        assert window.page.highlighted("selected") is None
        qtbot.keyClicks(window.page, "lamp")
        qtbot.keyClick(window.page, Qt.Key_Return)
        run(qtbot, window.page.drain_input())
        qtbot.waitUntil(lambda: bar.in_page_done_btn.isEnabled() and "press" in bar.in_page_panel.so_far.text(),
                        timeout=10000)
        assert bar.in_page_panel.so_far.text() == (f'So far: 1. click({q.node_id}) · 2. type({q.node_id}, "lamp", '
                                                   f'clear=false) · 3. press("Enter", {q.node_id})')
        assert journal.records == [], "recorded before Done"
        # the outline follows the button: the view's newest snapshot has it lower, and it is still the target
        qtbot.waitUntil(lambda: window.page._snapshot is not None and target in window.page._snapshot
                        and window.page._snapshot.get(target).bounds[1] > y0 + 40, timeout=10000)
        assert window.page.highlighted("target") == target
        assert run(qtbot, window.sup.tab.page.evaluate("document.querySelectorAll('#results li').length")) == 5

        qtbot.mouseClick(bar.in_page_done_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: _said(window) is not None, timeout=20000)
        assert _said(window) == (f'I acted in the page myself: 1. click({q.node_id}); 2. type({q.node_id}, "lamp", '
                                 f'clear=false); 3. press("Enter", {q.node_id})')
        human = [r for r in journal.records if r.actor == "human"]
        assert [r.action.to_string() for r in human] == [f"click({q.node_id})", f'type({q.node_id}, "lamp", '
                                                         f'clear=false)', f'press("Enter", {q.node_id})']
        turn = window.chat.turn_for_step(0)
        qtbot.waitUntil(lambda: turn.observation is not None, timeout=5000)
        _header_consistent(turn)
        window.sup.stop_task()
        qtbot.waitUntil(lambda: not window.sup.running(), timeout=20000)
        assert run(qtbot, window.sup.tab.page.text_content("#status")) == "", "the agent's step never ran"
