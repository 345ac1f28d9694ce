"""The window and what a page does besides itself (issue [9]), in-process and offscreen with a real
Chromium: a new tab shows in the tab strip and the live view, node tree and overlay follow it; a tab
picked in the strip is shown; a page dialog is answered from the approval bar (OK / Cancel / text)."""

from __future__ import annotations

from support.gui_helpers import open_window, run


def _out(qtbot, window) -> str:
    return run(qtbot, window.sup.tab.page.text_content("#out"))


def test_the_window_follows_a_new_tab_and_shows_the_tab_picked_in_the_strip(qtbot, aio, server):  # noqa: F811
    from PySide6.QtCore import Qt

    with open_window(qtbot, server.url("tabs_home.html")) as window:
        home = window.sup.tab
        assert not window.tab_strip.isVisible()  # one tab: no strip
        qtbot.keyClicks(window.task, "open the report in a new tab and read its total")
        window.policy.setCurrentText("auto")
        qtbot.keyClick(window.task, Qt.Key_Return)
        qtbot.waitUntil(lambda: not window.sup.running() and window.chat.status == "COMPLETED", timeout=30000)
        qtbot.waitUntil(lambda: window.tab_strip.count() == 2 and window.tab_strip.isVisible()
                        and "Quarterly report" in window.tab_strip.texts()[1], timeout=10000)
        assert window.tab_strip.active() == 1 and "Accounts home" in window.tab_strip.texts()[0]
        report = window.sup.tab
        assert report is not home and report.url.endswith("tabs_report.html")
        assert window.page.tab is report                   # the live view (screencast, input) moved with it
        qtbot.waitUntil(lambda: window.sup.snapshot is not None and window.sup.snapshot.title == "Quarterly report",
                        timeout=10000)                    # the node tree and overlay show the new tab's snapshot
        assert window.url.text().endswith("tabs_report.html")
        # the person picks the first tab in the strip: the window shows it
        window.tab_strip.setCurrentIndex(0)
        qtbot.waitUntil(lambda: window.sup.tab is home and window.page.tab is home, timeout=10000)
        qtbot.waitUntil(lambda: window.sup.snapshot.title == "Accounts home", timeout=10000)
        assert window.url.text().endswith("tabs_home.html")
        # outside a run, a tab the person opens in the live view (a target=_blank link) is shown, as a browser would
        snap = run(qtbot, home.snapshot())
        run(qtbot, home.click(snap.find("link", "Open the report")[0].node_id))
        qtbot.waitUntil(lambda: window.tab_strip.count() == 3 and window.sup.tab is not home
                        and window.page.tab is window.sup.tab, timeout=10000)
        assert window.tab_strip.active() == 2 and window.tab_strip.texts()[2].startswith("↳")  # a popup of tab 0


def test_a_page_dialog_is_answered_from_the_approval_bar_in_and_outside_a_run(qtbot, aio, server):  # noqa: F811
    import asyncio

    from PySide6.QtCore import Qt

    with open_window(qtbot, server.url("dialogs_page.html")) as window:
        bar = window.approval
        for task, answer, shown in (("click Delete all", "cancel", "kept"), ("click Rename", "Bob", "name: Bob")):
            window.task.clear()
            qtbot.keyClicks(window.task, task)
            qtbot.keyClick(window.task, Qt.Key_Return)
            qtbot.waitUntil(bar.is_pending, timeout=15000)
            assert not bar.is_dialog()
            qtbot.mouseClick(bar.approve_btn, Qt.LeftButton)          # the step itself
            qtbot.waitUntil(lambda: bar.is_pending() and bar.is_dialog(), timeout=15000)
            assert bar.dialog_ok_btn.isVisible() and bar.dialog_cancel_btn.isVisible()
            assert not bar.approve_btn.isVisible() and not bar.edit_btn.isVisible()
            assert "The page asks" in bar.summary.text()
            if answer == "cancel":
                assert not bar.dialog_text.isVisible() and "Delete all records?" in bar.summary.text()
                qtbot.mouseClick(bar.dialog_cancel_btn, Qt.LeftButton)
            else:
                assert bar.dialog_text.isVisible() and bar.dialog_text.text() == "old name"
                bar.dialog_text.clear()
                qtbot.keyClicks(bar.dialog_text, answer)
                qtbot.keyClick(bar.dialog_text, Qt.Key_Return)
            qtbot.waitUntil(lambda: bar.is_pending() and not bar.is_dialog(), timeout=15000)  # finish
            assert _out(qtbot, window) == shown
            qtbot.mouseClick(bar.approve_btn, Qt.LeftButton)
            qtbot.waitUntil(lambda: not window.sup.running(), timeout=15000)
            # the step's observation in the chat says what the page asked and who answered how
            said = "Cancel (by person" if answer == "cancel" else 'OK with "Bob" (by person'
            turns = [t for t in window.chat.turns() if t.role == "assistant" and t.observation is not None]
            assert any(said in t.observation.text() for t in turns), [t.observation.text() for t in turns]
        # outside a run: a dialog the person raises in the live page is put to them in the same bar
        tab = window.sup.tab
        snap = run(qtbot, tab.snapshot())
        click = asyncio.ensure_future(tab.click(snap.find("button", "Delete all")[0].node_id))  # as in the live view
        qtbot.waitUntil(lambda: bar.is_pending() and bar.is_dialog(), timeout=15000)
        assert "Delete all records?" in bar.summary.text() and not window.sup.running()
        qtbot.mouseClick(bar.dialog_ok_btn, Qt.LeftButton)
        qtbot.waitUntil(click.done, timeout=15000)
        assert click.result().success and not bar.is_pending()
        assert _out(qtbot, window) == "deleted" and tab.dialogs.log[-1].answer.by == "person"



def test_a_tab_closed_from_the_strip_lets_its_page_ask_and_is_refused_during_a_run(qtbot, aio, server):  # noqa: F811
    from PySide6.QtCore import Qt

    with open_window(qtbot, server.url("tabs_home.html")) as window:
        sup, strip, bar = window.sup, window.tab_strip, window.approval
        home = sup.tab
        notices: list[str] = []
        sup.notice.connect(notices.append)
        records = run(qtbot, sup.browser.new_tab(server.url("dialogs_page.html")))
        qtbot.waitUntil(lambda: strip.count() == 2 and strip.isVisible() and sup.tab is records, timeout=10000)
        assert strip.close_button(0) is not None and strip.close_button(1) is not None
        # unsaved work on the page: closing its tab lets its beforeunload ask, in the approval bar
        snap = run(qtbot, records.snapshot())
        run(qtbot, records.click(snap.find("button", "Edit")[0].node_id))
        qtbot.mouseClick(strip.close_button(1), Qt.LeftButton)
        qtbot.waitUntil(lambda: bar.is_pending() and bar.is_dialog(), timeout=15000)
        assert "beforeunload" in bar.summary.text() and not sup.running()
        qtbot.mouseClick(bar.dialog_cancel_btn, Qt.LeftButton)          # stay on the page
        qtbot.waitUntil(lambda: any("stay open" in n for n in notices), timeout=15000)
        assert strip.count() == 2 and not records.target.closed and sup.tab is records
        assert records.dialogs.log[-1].kind == "beforeunload" and records.dialogs.log[-1].answer.by == "person"
        qtbot.mouseClick(strip.close_button(1), Qt.LeftButton)          # again, and leave this time
        qtbot.waitUntil(lambda: bar.is_pending() and bar.is_dialog(), timeout=30000)  # (15 s ran out once, loaded)
        qtbot.mouseClick(bar.dialog_ok_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: strip.count() == 1 and sup.tab is home and window.page.tab is home, timeout=15000)
        assert records.target.closed and not strip.isVisible() and len(sup.browser.tabs) == 1
        # a tab without beforeunload closes at once; the view goes back to the other tab
        extra = run(qtbot, sup.browser.new_tab(server.url("tabs_report.html")))
        qtbot.waitUntil(lambda: strip.count() == 2 and sup.tab is extra, timeout=10000)
        qtbot.mouseClick(strip.close_button(0), Qt.LeftButton)          # the one not shown: home
        qtbot.waitUntil(lambda: strip.count() == 1 and len(sup.browser.tabs) == 1, timeout=15000)
        assert home.target.closed and sup.tab is extra and not bar.is_pending()
        # while a run works, its tabs are the run's: closing one is refused and said
        other = run(qtbot, sup.browser.new_tab(server.url("tabs_home.html")))
        qtbot.waitUntil(lambda: strip.count() == 2 and sup.tab is other, timeout=10000)
        window.policy.setCurrentText("ask")
        qtbot.keyClicks(window.task, "open the report in a new tab")
        qtbot.keyClick(window.task, Qt.Key_Return)
        qtbot.waitUntil(lambda: sup.running() and bar.is_pending(), timeout=30000)
        qtbot.mouseClick(strip.close_button(0), Qt.LeftButton)
        qtbot.waitUntil(lambda: any("stop it to close a tab" in n for n in notices), timeout=10000)
        assert strip.count() == 2 and len(sup.browser.tabs) == 2 and not extra.target.closed
        qtbot.mouseClick(window.stop_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: not sup.running(), timeout=15000)
