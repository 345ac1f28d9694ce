"""An action's result says in words what changed on the page (engine/observe/changes.py): the text
that appeared, went or changed in the viewport, most relevant first, bounded, secrets masked — and an
error message that appears after the step fails it. Real Chromium, local pages written to slip past."""

from __future__ import annotations

from engine.observe.changes import MAX_WORDS


def _click(tab, snap, name):
    return tab.click(snap.find("button", name)[0].node_id)


def test_signup_taken_name_fails_the_step_with_its_words(harness, server):
    async def go(tab):
        snap = await tab.snapshot()
        r = await _click(tab, snap, "Create workspace")
        v = r.verification
        assert r.success and not v.success, r.message  # the click ran; the step did not do what was meant
        assert "That workspace name is taken. Try acme-team-2." in v.feedback
        assert v.errors_detected == ["That workspace name is taken. Try acme-team-2."]
        assert "DOM changed" not in r.message
        # the error stays in what every later look reads: the failure is final once seen, its 3 s window not waited
        assert r.timings_ms["verify"] < 1500, r.timings_ms
        # hidden (display:none) and off-screen text changed too: no person sees it, so it is not told
        for hidden in ("Ignore previous", "Offscreen words", "Hidden hint"):
            assert hidden not in r.message and not any(hidden in c for c in v.page_changes), r.message
        await tab.type(snap.find("textbox", "Workspace name")[0].node_id, "acme-team-2")
        r = await _click(tab, await tab.snapshot(), "Create workspace")
        v = r.verification
        assert v.success and not v.errors_detected, r.message
        assert "'Create your workspace' → 'Welcome to acme-team-2'" in v.feedback
        assert "'Workspaces left on your plan: 3' → 'Workspaces left on your plan: 2'" in v.feedback
        assert "text gone: 'That workspace name is taken" in v.feedback
    harness.page(server.url("read_signup.html"), go)


def test_order_status_and_alert_and_invoice_mark_as_paid(harness, server):
    async def order(tab):
        snap = await tab.snapshot()
        r = await _click(tab, snap, "Buy again")
        assert r.verification.success, r.message
        assert ("text changed: 'Status: Shipped' → 'Status: Added to your cart again (2 items)'"
                in r.verification.feedback)
        r = await _click(tab, await tab.snapshot(), "Cancel order")
        assert not r.verification.success, r.message
        assert r.verification.feedback.startswith(
            "An error showed after the step: 'This order has shipped and can no longer be cancelled.'")
    harness.page(server.url("read_order.html"), order)

    async def invoice(tab):
        r = await _click(tab, await tab.snapshot(), "Mark as paid")  # the page answers 150 ms later
        v = r.verification
        assert v.success, r.message
        # the live region's message first (status), then what changed next to the button
        assert v.feedback.startswith("Verified: text appeared: 'Marked as paid'; text changed: "), v.feedback
        assert "'Status: Unpaid' → 'Status: Paid'" in v.feedback and "'Amount due: $1,250.00' → 'Amount due: $0.00'" \
            in v.feedback
        assert v.page_changes[0] == "text appeared: 'Marked as paid'"
    harness.page(server.url("read_invoice.html"), invoice)


def test_words_are_bounded_ranked_brief_and_never_carry_a_typed_secret(harness, server):
    async def go(tab):
        snap = await tab.snapshot()
        pw = snap.find("textbox", "Password")[0].node_id
        tab.remember_secret("tulip-Sky-42")   # what the loop does for text typed into a secret field
        await tab.type(pw, "tulip-Sky-42")
        r = await _click(tab, await tab.snapshot(), "Check password")
        v = r.verification
        assert "tulip-Sky-42" not in r.message and "tulip-Sky-42" not in str(v.model_dump()), r.message
        assert "'Your password •••• is weak'" in v.feedback, v.feedback

        r = await _click(tab, await tab.snapshot(), "Save quietly")  # a toast gone after 40 ms
        # said even when it is gone by the time the page is read (on a loaded machine the read may still see it)
        fb = r.verification.feedback
        assert "appeared briefly: 'Settings saved'" in fb or "text appeared: 'Settings saved'" in fb, r.message

        # the toast pushed the next button down while it showed: look for the button once it is gone
        await tab.page.wait_for_function("() => !document.querySelector('#toasts p')")
        r = await _click(tab, await tab.snapshot(), "Add to cart")  # red, but a badge and a price: no error
        assert r.verification.success and not r.verification.errors_detected, r.message
        assert "text appeared: '1 Sale -20%'" in r.verification.feedback, r.message

        r = await _click(tab, await tab.snapshot(), "Load everything")
        v = r.verification
        words = v.feedback.split("Page: ", 1)[-1] if "Page: " in v.feedback else v.feedback
        assert len(v.feedback) <= MAX_WORDS + 200, v.feedback
        assert "more changes" in v.feedback, v.feedback
        # the alert comes first although it is the last of 61 new paragraphs
        assert "'Part of the archive could not be loaded'" in v.feedback.split(";")[0], words
        assert not v.success  # an alert appeared: the step did not simply work
    harness.page(server.url("read_changes.html"), go)
