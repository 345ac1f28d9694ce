"""Tools for what a page does besides its document (the engine's tabs, dialogs and uploads of issue [9]):
`browser_tabs`, `browser_handle_dialog`, `browser_file_upload`.

Listing tabs only reads; opening, selecting and closing a tab, answering a dialog and setting files are
steps of the supervised loop like every other action (the policy and, under `ask`, a person decide;
file inputs are always sensitive). The loop follows the tab a step opens or selects, and so do the
reading tools after it. A dialog the page raises during a step is decided by the policy or the person
(the loop's PageWatch); `browser_handle_dialog` answers one that is open, or the next one in advance.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from engine.mcp.clients import McpClients
from engine.mcp.common import guarded
from engine.mcp.results import error_result, steps_result, text_result
from engine.mcp.supervisor import McpSupervisor
from engine.mcp.tools_act import Element, Ref, _step
from engine.mcp.urls import mcp_url
from engine.models import Action

_ACT = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)
MAX_FILES = 20


def register_browsing_tools(server: MCPServer, clients: McpClients) -> None:
    @server.tool(name="browser_tabs", title="Manage tabs", annotations=_ACT)
    @guarded(clients)
    async def browser_tabs(action: Annotated[Literal["list", "new", "select", "close"], Field(
                               description="list the tabs, open a new one, select one, or close one")],
                           ctx: Context,
                           index: Annotated[int | None, Field(description="The tab's index, for select and close "
                                                                          "(close: the current tab without one)",
                                                              ge=0)] = None,
                           url: Annotated[str | None, Field(description="For new: the URL to open in it")] = None
                           ) -> CallToolResult:
        """List, open, select or close browser tabs. Opening, selecting and closing are supervised steps; the
        actions and snapshots that follow work on the tab a step opened or selected."""
        sup = clients.of(ctx)
        if action == "list":
            return await _list(sup)
        if action == "select" and index is None:
            return error_result("BAD_ARGUMENT", "select needs the tab's index (browser_tabs list shows them).", sup)
        if action == "new":
            a = Action(name="new_tab", url=mcp_url(url, allow_files=sup.allow_files) if url else None)
        else:
            a = Action(name="switch_tab" if action == "select" else "close_tab", tab=index)
        outcomes = await sup.run_steps([_step(a, None, tool="browser_tabs")])
        return steps_result(sup, outcomes, [a])

    @server.tool(name="browser_handle_dialog", title="Handle a dialog", annotations=_ACT)
    @guarded(clients)
    async def browser_handle_dialog(accept: Annotated[bool, Field(description="true: OK; false: Cancel")],
                                    ctx: Context,
                                    promptText: Annotated[str | None, Field(  # noqa: N803 - Playwright MCP's name
                                        description="The text to answer a prompt() with")] = None
                                    ) -> CallToolResult:
        """Answer the JavaScript dialog (confirm, prompt, beforeunload) open on the page — or, when none is open,
        the next one the page raises. A supervised step: the person or the policy decides first."""
        sup = clients.of(ctx)
        a = Action(name="dialog", accept=accept, text=promptText)
        outcomes = await sup.run_steps([_step(a, None, tool="browser_handle_dialog")])
        return steps_result(sup, outcomes, [a])

    @server.tool(name="browser_file_upload", title="Upload files", annotations=_ACT)
    @guarded(clients)
    async def browser_file_upload(ref: Ref, paths: Annotated[list[str], Field(
                                      description="Absolute paths of the files on this machine", min_length=1,
                                      max_length=MAX_FILES)],
                                  ctx: Context, element: Element = None) -> CallToolResult:
        """Set files on a file input, or on the button or label that stands for one. Always a sensitive step:
        a person approves which files leave this machine."""
        sup = clients.of(ctx)
        relative = [p for p in paths if not os.path.isabs(p)]
        if relative:
            return error_result("BAD_FILE", f"Give absolute paths (not {relative[0]!r}): the server does not guess "
                                            "which directory you mean. Nothing ran.", sup)
        problem = sup.upload_problem(paths)
        if problem:
            return error_result("UPLOAD_REFUSED", problem, sup)
        # the files as checked, links resolved: what the person approves and what is sent are the same files
        real = [str(Path(p).expanduser().resolve()) for p in paths]
        a = Action(name="upload", target=ref, paths=real)
        outcomes = await sup.run_steps([_step(a, element, tool="browser_file_upload")], refs=[ref])
        return steps_result(sup, outcomes, [a])


async def _list(sup: McpSupervisor) -> CallToolResult:
    async with sup.reading() as tab:
        browser = getattr(tab, "browser", None)
        if browser is None:
            return text_result(sup, "One tab: this page has no browser of tabs around it.")
        infos = await browser.refresh_titles()
        current = browser.index_of(tab)
    lines = [f"{'*' if i.index == current else ' '} [{i.index}] {i.title or '(untitled)'} — {i.url}"
             + (f" (opened by tab {i.opener})" if i.opener is not None else "") for i in infos]
    head = f"{len(infos)} tab(s); * marks the one your actions and snapshots work on:"
    return text_result(sup, head, "\n".join(lines))
