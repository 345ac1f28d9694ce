"""`vigil mcp` over stdio: a real server subprocess (`python -m engine.mcp --approve auto`), a real
Chromium, fixture pages from the suite's HTTP server, and the MCP SDK's own client.

One server serves the whole module (each test opens its own page first); the client runs on a
background event loop and every call has a hard timeout, so a hang fails instead of stalling.
"""

from __future__ import annotations

import io
import re

import pytest

from support.mcp_server import SECRET, McpServerProcess, items_of, ref

TOOLS = {"browser_navigate", "browser_navigate_back", "browser_snapshot", "browser_click", "browser_type",
         "browser_select_option", "browser_check", "browser_press_key", "browser_hover", "browser_scroll",
         "browser_wait_for", "browser_take_screenshot", "browser_find", "browser_fill_form",
         "browser_console_messages", "browser_close", "browser_tabs", "browser_handle_dialog", "browser_file_upload"}


@pytest.fixture(scope="module")
def mcp(tmp_path_factory):
    s = McpServerProcess("--approve", "auto", home=tmp_path_factory.mktemp("vigil-home"))
    yield s
    s.close()


def open_shop(mcp: McpServerProcess, server) -> list[dict]:
    r = mcp.call("browser_navigate", {"url": server.url("mcp_shop.html")})
    assert not r.is_error, r.text
    return items_of(r)


def test_lists_every_tool_with_playwright_style_arguments(mcp):
    names = set(mcp.tools())
    assert TOOLS <= names, f"missing: {TOOLS - names}"


def test_navigate_then_snapshot_give_the_semantic_payload_fenced_as_page_content(mcp, server):
    r = mcp.call("browser_navigate", {"url": server.url("mcp_shop.html")})
    assert not r.is_error, r.text
    assert "navigated: yes" in r.text and "done, verified" in r.text
    assert "<page_content>" in r.text and r.text.rstrip().endswith("</page_content>")
    names = {i.get("n") for i in items_of(r)}
    assert {"Add to cart", "Delete invoice 4411", "Password", "Sign in"} <= names

    snap = mcp.call("browser_snapshot")
    assert not snap.is_error and snap.text.startswith("The viewport as a person reads it")
    assert {i.get("n") for i in items_of(snap)} == names
    tree = mcp.call("browser_snapshot", {"format": "tree"})
    assert "Invoice 4411" in tree.page() and '"role":"heading"' in tree.page()
    small = mcp.call("browser_snapshot", {"max_tokens": 100, "focus": "invoice"})
    kept = {i.get("n") for i in items_of(small)}
    assert "Delete invoice 4411" in kept and len(kept) < len(names), small.text


def test_click_by_ref_returns_what_ran_and_only_what_changed(mcp, server):
    items = open_shop(mcp, server)
    mcp.call("browser_snapshot")
    add = ref(items, "Add to cart")
    r = mcp.call("browser_click", {"ref": add, "element": "Add to cart button"})
    assert not r.is_error, r.text
    assert r.text.startswith(f"click({add}) — done, verified; navigated: no")
    assert "success 'Added to cart'" in r.page()
    # the step as Playwright code, as Playwright MCP gives it (inside the fence: it quotes the page)
    assert 'playwright: page.get_by_role("button", name="Add to cart", exact=True).click()' in r.page().splitlines()
    assert '"interactive_tree"' not in r.text, "an action's result carries the change, not the whole page"
    assert "Cart: 1 items" in mcp.call("browser_find", {"text": "Cart:"}).page()

    delete = ref(items, "Delete invoice 4411")
    r = mcp.call("browser_click", {"ref": delete})
    assert not r.is_error, r.text
    assert f"-{delete}" in r.page().splitlines(), r.text  # gone from the payload
    assert "1 gone" in r.text


def test_typed_password_is_never_echoed_even_when_the_page_shows_it(mcp, server):
    items = open_shop(mcp, server)
    pw = ref(items, "Password")
    r = mcp.call("browser_type", {"ref": pw, "text": SECRET})
    assert not r.is_error, r.text
    assert r.text.startswith(f'type({pw}, "••••••••")')
    assert '.fill(os.environ["VIGIL_SECRET"])' in r.page(), "the code line reads the secret, never holds it"
    # the page echoes every keystroke into a status line and the console: it did get the value …
    find = mcp.call("browser_find", {"text": "You typed"})
    assert "You typed ••••••••" in find.page(), find.text
    console = mcp.call("browser_console_messages")
    assert "password is ••••••••" in console.page()
    # … and no result shows it, nor any prefix of it of four characters or more
    replies = [r, find, console, mcp.call("browser_snapshot", {"format": "tree"}),
               mcp.call("browser_snapshot", {"format": "full"}), mcp.call("browser_snapshot", {"full_page": True}),
               mcp.call("browser_wait_for", {"text": "You typed"})]
    for reply in replies:
        for k in range(4, len(SECRET) + 1):
            assert SECRET[:k] not in reply.text, (reply.name, SECRET[:k], reply.text)
    assert SECRET[:4] not in mcp.stderr(), "nor the server's log"


def test_unknown_ref_and_bad_arguments_are_clear_tool_errors(mcp, server):
    open_shop(mcp, server)
    r = mcp.call("browser_click", {"ref": "98765"})
    assert r.is_error
    assert "NOT_FOUND" in r.text and "No element with ref '98765'" in r.text and "Nothing ran" in r.text
    r = mcp.call("browser_select_option", {"ref": "1", "values": ["a", "b"]})
    assert r.is_error and "exactly one value" in r.text
    r = mcp.call("browser_navigate", {"url": "file:///etc/passwd"})
    assert r.is_error and "BAD_URL" in r.text and "file://" in r.text
    r = mcp.call("browser_click", {"ref": ref(items_of(mcp.call("browser_snapshot")), "Load more"),
                                   "expect": "explode"})
    assert r.is_error and "BAD_ARGUMENT" in r.text and "expected outcome" in r.text
    r = mcp.call("browser_find", {})
    assert r.is_error and "at least one of role, name or text" in r.text


def test_wait_for_text_and_console_levels(mcp, server):
    items = open_shop(mcp, server)
    mcp.call("browser_snapshot")
    click = mcp.call("browser_click", {"ref": ref(items, "Load more")})
    assert not click.is_error, click.text
    r = mcp.call("browser_wait_for", {"text": "More results loaded", "time": 10})
    assert not r.is_error, r.text
    assert "Done waiting for 'More results loaded' to appear" in r.text
    # the button comes 0.8 s after the click: in the click's change (its verification waits for one) or here
    assert re.search(r'^\+\[\d+\] btn "More results loaded"$', click.page() + "\n" + r.page(), re.M)
    # the toast leaves 2.5 s after it came
    assert not mcp.call("browser_click", {"ref": ref(items, "Add to cart")}).is_error
    r = mcp.call("browser_wait_for", {"textGone": "Added to cart", "time": 10})
    assert not r.is_error and "'Added to cart' to disappear" in r.text, r.text
    r = mcp.call("browser_wait_for", {"text": "Never on this page", "time": 0.5})
    assert r.is_error and "did not happen" in r.text

    info = mcp.call("browser_console_messages").page()
    assert "[info] shop ready" in info and "[warning] low stock on notebooks" in info
    warnings = mcp.call("browser_console_messages", {"level": "warning"}).page()
    assert "low stock" in warnings and "shop ready" not in warnings


def test_fill_form_runs_one_step_per_field(mcp, server):
    items = open_shop(mcp, server)
    fields = [{"ref": ref(items, "Username"), "value": "ada", "type": "textbox", "name": "Username"},
              {"ref": ref(items, "Country"), "value": "France", "type": "combobox", "name": "Country"},
              {"ref": ref(items, "Gift wrap"), "value": "true", "type": "checkbox", "name": "Gift wrap"}]
    r = mcp.call("browser_fill_form", {"fields": fields})
    assert not r.is_error, r.text
    lines = r.text.splitlines()
    assert lines[0].startswith(f'1. type({fields[0]["ref"]}, "ada") — done')
    assert lines[1].startswith(f'2. select({fields[1]["ref"]}, "France") — done')
    assert lines[2].startswith(f'3. check({fields[2]["ref"]}) — done')
    after = {i["i"]: i for i in items_of(mcp.call("browser_snapshot"))}
    assert after[fields[0]["ref"]]["v"] == "ada" and after[fields[1]["ref"]]["v"] == "France"
    assert "checked" in after[fields[2]["ref"]]["s"]


def test_link_navigation_and_back(mcp, server):
    items = open_shop(mcp, server)
    r = mcp.call("browser_click", {"ref": ref(items, "Next page")})
    assert not r.is_error and "navigated: yes" in r.text, r.text
    assert {i.get("n") for i in items_of(r)} >= {"Back to the shop", "Press me"}, "a new page is sent whole"
    r = mcp.call("browser_navigate_back")
    assert not r.is_error and "navigated: yes" in r.text, r.text
    assert "Add to cart" in {i.get("n") for i in items_of(r)}


def test_screenshot_plain_and_with_set_of_mark(mcp, server):
    from PIL import Image

    open_shop(mcp, server)
    for som in (False, True):
        r = mcp.call("browser_take_screenshot", {"som": som})
        assert not r.is_error and len(r.images) == 1, r.text
        img = Image.open(io.BytesIO(r.images[0]))
        assert img.format == "JPEG" and img.width <= 1024
        assert ("Set-of-Mark" in r.text) == som


def test_close_ends_the_session_and_the_next_call_opens_a_new_page(mcp, server):
    open_shop(mcp, server)
    r = mcp.call("browser_close")
    assert not r.is_error and "Closed the browser" in r.text
    r = mcp.call("browser_snapshot")
    assert not r.is_error and "| about:blank |" in r.page()


def test_check_hover_scroll_and_keys(mcp, server):
    items = open_shop(mcp, server)
    gift = ref(items, "Gift wrap")
    r = mcp.call("browser_check", {"ref": gift})
    assert not r.is_error and f"check({gift}) — done, verified" in r.text, r.text
    assert re.search(r'^~\[\d+\] chk "Gift wrap" \(checked', r.page(), re.M), r.page()
    r = mcp.call("browser_check", {"ref": gift, "checked": False})
    assert not r.is_error and f"uncheck({gift}) — done" in r.text, r.text
    assert not mcp.call("browser_hover", {"ref": ref(items, "Add to cart")}).is_error
    user = ref(items, "Username")
    assert not mcp.call("browser_type", {"ref": user, "text": "ada"}).is_error
    r = mcp.call("browser_press_key", {"key": "Control+A", "ref": user})
    assert not r.is_error, r.text
    r = mcp.call("browser_press_key", {"key": "Backspace"})
    assert not r.is_error, r.text
    assert "v" not in {i["i"]: i for i in items_of(mcp.call("browser_snapshot"))}[user], "the field was emptied"
    assert "Accept terms" not in {i.get("n") for i in items}, "below the viewport: not in the payload"
    r = mcp.call("browser_scroll", {"direction": "bottom"})
    assert not r.is_error and r.text.startswith('scroll("bottom") — done'), r.text
    assert ' "Accept terms"' in r.page() and "scrolled to 100%" in r.page()
    r = mcp.call("browser_scroll", {"direction": "down", "amount": 200})
    assert r.is_error and "NO_EFFECT" in r.text and "already at the bottom" in r.text, r.text


def test_a_secret_typed_before_a_close_stays_masked_after_it(mcp, server):
    items = open_shop(mcp, server)
    secret = "Tr0ub4dor&3-later"
    assert not mcp.call("browser_type", {"ref": ref(items, "Password"), "text": secret}).is_error
    assert not mcp.call("browser_close").is_error
    # a new browser, a new session: a page (here its address) that shows the secret is still masked
    r = mcp.call("browser_navigate", {"url": server.url("mcp_shop.html") + "?q=" + secret})
    assert not r.is_error, r.text
    assert secret[:4] not in r.text and "?q=••••••••" in r.text
