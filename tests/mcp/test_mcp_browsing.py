"""`vigil mcp` on the engine's tabs, dialogs and uploads (issue [9]): browser_tabs (list/new/select/close),
browser_handle_dialog (an open dialog, or the next one in advance) and browser_file_upload, each a step of
the supervised loop. A real server (`--approve auto`), real Chromium, the SDK's client."""

from __future__ import annotations

import pytest

from support.mcp_server import McpServerProcess, items_of, ref


@pytest.fixture(scope="module")
def uploads(tmp_path_factory):
    """The one folder the server may send files from (--upload-from)."""
    return tmp_path_factory.mktemp("uploads")


@pytest.fixture(scope="module")
def mcp(tmp_path_factory, uploads):
    s = McpServerProcess("--approve", "auto", "--upload-from", str(uploads), home=tmp_path_factory.mktemp("vigil-home"))
    yield s
    s.close()


def test_tabs_list_new_select_close_and_the_tools_follow_the_tab(mcp, server):
    r = mcp.call("browser_navigate", {"url": server.url("mcp_shop.html")})
    assert not r.is_error, r.text
    listed = mcp.call("browser_tabs", {"action": "list"})
    assert listed.text.startswith("1 tab(s)") and "* [0] MCP test shop" in listed.page(), listed.text

    opened = mcp.call("browser_tabs", {"action": "new", "url": server.url("mcp_next.html")})
    assert not opened.is_error and "done" in opened.text, opened.text
    assert "a new page: its whole" in opened.text, "another tab: the whole page, not a diff"
    listed = mcp.call("browser_tabs", {"action": "list"})
    assert listed.text.startswith("2 tab(s)") and "* [1]" in listed.page() and "  [0] MCP test shop" in listed.page()
    assert "mcp_next.html" in mcp.call("browser_snapshot").text, "reading follows the tab the step opened"

    back = mcp.call("browser_tabs", {"action": "select", "index": 0})
    assert not back.is_error, back.text
    assert "Add to cart" in mcp.call("browser_snapshot").page()
    assert mcp.call("browser_tabs", {"action": "select"}).is_error, "select needs an index"
    missing = mcp.call("browser_tabs", {"action": "select", "index": 7})
    assert missing.is_error and "NO_TAB" in missing.text and "There is no tab 7" in missing.text, missing.text

    closed = mcp.call("browser_tabs", {"action": "close", "index": 1})
    assert not closed.is_error, closed.text
    assert mcp.call("browser_tabs", {"action": "list"}).text.startswith("1 tab(s)")


def test_a_dialog_answered_in_advance_and_a_prompt_with_text(mcp, server):
    items = items_of(mcp.call("browser_navigate", {"url": server.url("dialogs_page.html")}))
    armed = mcp.call("browser_handle_dialog", {"accept": False})
    assert not armed.is_error and "the next confirm, prompt or beforeunload will be answered Cancel" in armed.page()
    mcp.call("browser_click", {"ref": ref(items, "Mark all read")})
    assert "unmarked" in mcp.call("browser_find", {"text": "unmarked"}).page(), "the page was answered Cancel"

    mcp.call("browser_handle_dialog", {"accept": True, "promptText": "Ada"})
    mcp.call("browser_click", {"ref": ref(items, "Rename")})
    assert "name: Ada" in mcp.call("browser_find", {"text": "name:"}).page()


def test_file_upload_sets_the_files_and_relative_paths_are_refused(mcp, server, uploads, tmp_path):
    items = items_of(mcp.call("browser_navigate", {"url": server.url("uploads_page.html")}))
    f = uploads / "receipt.txt"
    f.write_text("total 42\n", encoding="utf-8")
    r = mcp.call("browser_file_upload", {"ref": ref(items, "Add a receipt"), "paths": [str(f)]})
    assert not r.is_error and "done" in r.text, r.text
    assert "Receipt: receipt.txt" in mcp.call("browser_find", {"text": "Receipt:"}).page()
    rel = mcp.call("browser_file_upload", {"ref": ref(items, "Add a receipt"), "paths": ["receipt.txt"]})
    assert rel.is_error and "BAD_FILE" in rel.text and "absolute paths" in rel.text
    gone = mcp.call("browser_file_upload", {"ref": ref(items, "Add a receipt"), "paths": [str(uploads / "no.txt")]})
    assert gone.is_error and "FAILED" in gone.text, gone.text


def test_under_auto_files_leave_only_from_the_named_folders(mcp, server, uploads, tmp_path):
    """No person sees the files under --approve auto: a file outside --upload-from, or a link inside it that
    points outside, is refused before the page is touched."""
    items = items_of(mcp.call("browser_navigate", {"url": server.url("uploads_page.html")}))
    outside = tmp_path / "id_rsa"
    outside.write_text("secret key", encoding="utf-8")
    link = uploads / "innocent.txt"
    link.symlink_to(outside)
    for path in (outside, link):
        r = mcp.call("browser_file_upload", {"ref": ref(items, "Add a receipt"), "paths": [str(path)]})
        assert r.is_error and "UPLOAD_REFUSED" in r.text and "--upload-from" in r.text, r.text
        assert "Nothing ran" in r.text
    assert "Receipt: id_rsa" not in mcp.call("browser_find", {"text": "Receipt"}).page()
    assert "Receipt: innocent" not in mcp.call("browser_find", {"text": "Receipt"}).page()


def test_an_upload_sends_and_records_the_file_that_was_checked(mcp, server, uploads):
    """A link inside --upload-from is checked by the file it points to; that file — not the link's name — is
    what the step carries, what the person or the record sees, and what the page receives."""
    items = items_of(mcp.call("browser_navigate", {"url": server.url("uploads_page.html")}))
    real = uploads / "march-invoice.txt"
    real.write_text("total 7\n", encoding="utf-8")
    alias = uploads / "alias.txt"
    alias.symlink_to(real)
    r = mcp.call("browser_file_upload", {"ref": ref(items, "Add a receipt"), "paths": [str(alias)]})
    assert not r.is_error, r.text
    assert "march-invoice.txt" in r.text and "alias.txt" not in r.text, r.text
    assert "Receipt: march-invoice.txt" in mcp.call("browser_find", {"text": "Receipt:"}).page()


@pytest.mark.parametrize("policy,roots,refused", [("auto", [], True), ("ask", [], False), ("auto-safe", [], False)])
def test_which_policies_need_upload_folders(policy, roots, refused, tmp_path):
    from engine.loop import AutoApprove
    from engine.mcp.supervisor import McpSupervisor

    f = tmp_path / "a.txt"
    f.write_text("x", encoding="utf-8")
    sup = McpSupervisor(policy=policy, gate=AutoApprove(), upload_roots=roots)
    problem = sup.upload_problem([str(f)])
    assert (problem is not None) is refused
    if refused:
        assert "--upload-from" in problem and "--approve ask" in problem
    sup = McpSupervisor(policy=policy, gate=AutoApprove(), upload_roots=[tmp_path])
    assert sup.upload_problem([str(f)]) is None
    assert "outside the folders" in sup.upload_problem(["/etc/passwd"])
