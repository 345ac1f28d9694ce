"""The tools that only read the page: snapshot, find, screenshot, console messages, wait_for.

They read the tab directly, never while a step is under way (the supervisor's lock), and are not
steps of the loop: nothing they do needs approval or is recorded as a step.
"""

import asyncio
import base64
import io
import time as _time
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from engine.mcp.clients import McpClients
from engine.mcp.common import guarded, settle
from engine.mcp.results import error_result, image_result, text_result
from engine.mcp.view import find_nodes, find_text

_READ = ToolAnnotations(read_only_hint=True, open_world_hint=True)
MAX_WAIT_S = 30.0
POLL_S = 0.25
DEFAULT_WAIT_S = 10.0

SnapshotFormat = Literal["reading", "semantic", "tree", "skeleton", "full"]
FullPage = Annotated[bool, Field(description="List elements outside the viewport too (semantic, skeleton)")]
MaxTokens = Annotated[int | None, Field(description="Bound the reply to about this many tokens", ge=100, le=200_000)]
Focus = Annotated[str | None, Field(description="With max_tokens: words of what you look for; matching parts are "
                                                "kept first (every format)")]
WithText = Annotated[bool, Field(description="semantic: add txt, the text a person reads in the viewport (reading "
                                             "always has it)")]
Role = Annotated[str | None, Field(description="ARIA role (button, link, textbox, checkbox …) or its short form from "
                                               "the payload")]
NamePart = Annotated[str | None, Field(description="Part of the accessible name")]
AnyText = Annotated[str | None, Field(description="Text anywhere in the name, value or content")]
Som = Annotated[bool, Field(description="Draw Set-of-Mark: each interactive element's box labelled with its ref")]
Level = Annotated[Literal["error", "warning", "info", "debug"], Field(description="Messages at this level and more "
                                                                                  "severe")]
AllMessages = Annotated[bool, Field(description="Since the page was opened, not only since the last navigation")]
Seconds = Annotated[float | None, Field(description=f"Seconds to wait; with text or textGone, the most to wait "
                                                    f"(default {DEFAULT_WAIT_S:g}, at most {MAX_WAIT_S:g})", ge=0)]
Appears = Annotated[str | None, Field(description="Wait for this text to appear")]
Disappears = Annotated[str | None, Field(description="Wait for this text to disappear")]

SNAPSHOT_DOC = """Capture the page to read it and act on it: use it rather than a screenshot.
reading (default): the viewport as a person reads it, text and controls in reading order, one line
each. A control: [ref] role "name" = "value" (states); act on it by its ref. Roles: btn button,
inp text input, link, chk checkbox, radio, sel select/combobox, opt option, tab, menu menu item,
num number input, clk clickable without a role. Text: "# " heading, "- " list item, " | " between the
cells of a table row, "[alert] " and "[status] " messages. Scroll, or browser_find, for the rest.
semantic: the viewport's controls as JSON (i ref, r role, n name, v value, s states, xy centre px,
occ covered, scr scroll container, f frame; text=true adds txt, the text). tree: the page's hierarchy
with text; skeleton: minimal HTML of the controls; full: annotated HTML (large). With max_tokens,
focus keeps what matches its words first, in every format. After an action, its result says in
words what changed on the page and carries only the controls changed since your last view, so
snapshot again only when you need the whole page."""


def _jpeg(img, quality: int = 75) -> bytes:
    buf = io.BytesIO()
    img.convert("RGB").save(buf, "JPEG", quality=quality, optimize=True)
    return buf.getvalue()


def _has_text(snap, want: str) -> bool:
    from engine.names import norm

    w = norm(want)
    return any(n.rendered and any(w in norm(s) for s in (n.name, n.text, n.value) if s) for n in snap.nodes())


def register_read_tools(server: MCPServer, clients: McpClients) -> None:
    @server.tool(name="browser_snapshot", title="Page snapshot", description=SNAPSHOT_DOC, annotations=_READ)
    @guarded(clients)
    async def browser_snapshot(ctx: Context, format: SnapshotFormat = "reading", full_page: FullPage = False,  # noqa: A002
                               max_tokens: MaxTokens = None, focus: Focus = None,
                               text: WithText = False) -> CallToolResult:
        sup = clients.of(ctx)
        async with sup.reading() as tab:
            await settle(tab)
            snap = await tab.snapshot()
            r = sup.view.render(snap, format, full_page=full_page, max_tokens=max_tokens, focus=focus or "",
                                text=text)
        return text_result(sup, r.header, r.text)

    @server.tool(name="browser_find", title="Find elements", annotations=_READ)
    @guarded(clients)
    async def browser_find(ctx: Context, role: Role = None, name: NamePart = None, text: AnyText = None,
                           limit: Annotated[int, Field(ge=1, le=200)] = 20) -> CallToolResult:
        """Search the whole page (not only the viewport) by role, name or text: cheaper than a full snapshot
        on large pages. Matches come in the payload's shape; vis:false means outside the viewport or hidden
        (an action scrolls it into view), `in` the form, row or dialog it belongs to."""
        sup = clients.of(ctx)
        if not (role or name or text):
            return error_result("BAD_ARGUMENT", "Give at least one of role, name or text.", sup)
        async with sup.reading() as tab:
            await settle(tab)
            snap = await tab.snapshot()
            nodes, total = find_nodes(snap, role=role, name=name, text=text, limit=limit)
            body = find_text(snap, nodes)
        query = ", ".join(f"{k}={v!r}" for k, v in (("role", role), ("name", name), ("text", text)) if v)
        if not total:
            return text_result(sup, f"No element matches {query}. Try a shorter name, text= instead of name=, "
                                    "or no role.")
        more = f"; the first {len(nodes)} follow" if total > len(nodes) else ""
        return text_result(sup, f"{total} match(es) for {query}{more}.", body)

    @server.tool(name="browser_take_screenshot", title="Take a screenshot", annotations=_READ)
    @guarded(clients)
    async def browser_take_screenshot(ctx: Context, som: Som = False) -> CallToolResult:
        """A JPEG of the viewport (at most 1024 px wide). Password and other secret fields are painted over.
        Act by ref from browser_snapshot, not by pixels."""
        sup = clients.of(ctx)
        from engine.vision import capture_screenshot, som_image

        async with sup.reading() as tab:
            await settle(tab)
            if som:
                snap = await tab.snapshot()
                res = await som_image(tab, snap, full_res=False, legend=False)
                data, (w, h) = _jpeg(res.image), res.image.size
                header = f"Screenshot of the viewport with Set-of-Mark ({len(res.marks)} refs), {w}x{h} JPEG."
            else:
                shot = await capture_screenshot(tab)
                data, w, h = shot.jpeg, shot.width, shot.height
                header = f"Screenshot of the viewport, {w}x{h} JPEG."
        return image_result(sup, header, base64.b64encode(data).decode("ascii"), "image/jpeg")

    @server.tool(name="browser_console_messages", title="Get console messages", annotations=_READ)
    @guarded(clients)
    async def browser_console_messages(ctx: Context, level: Level = "info",
                                       all: AllMessages = False) -> CallToolResult:  # noqa: A002
        """The page's console messages and uncaught errors."""
        sup = clients.of(ctx)
        async with sup.reading():
            found = sup.console.messages(level, all)
        scope = "since the page was opened" if all else "since the last navigation"
        if not found:
            return text_result(sup, f"No console messages at level {level} or above {scope}.")
        return text_result(sup, f"{len(found)} console message(s) at level {level} or above {scope}:",
                           "\n".join(m.line() for m in found))

    @server.tool(name="browser_wait_for", title="Wait for", annotations=_READ)
    @guarded(clients)
    async def browser_wait_for(ctx: Context, time: Seconds = None, text: Appears = None,  # noqa: A002
                               textGone: Disappears = None) -> CallToolResult:  # noqa: N803
        """Wait for text to appear or disappear, or for some time to pass. The result carries what changed
        on the page since your last view."""
        sup = clients.of(ctx)
        if time is None and not text and not textGone:
            return error_result("BAD_ARGUMENT", "Give time, text or textGone.", sup)
        limit = min(MAX_WAIT_S, time if time is not None else DEFAULT_WAIT_S)
        t0 = _time.monotonic()
        async with sup.reading() as tab:
            if not text and not textGone:
                await asyncio.sleep(limit)
                what, ok = f"Waited {limit:g} s", True
            else:
                while True:
                    snap = await tab.snapshot()
                    ok = (not text or _has_text(snap, text)) and (not textGone or not _has_text(snap, textGone))
                    if ok or _time.monotonic() - t0 >= limit:
                        break
                    await asyncio.sleep(POLL_S)
                goal = " and ".join(x for x in (f"{text!r} to appear" if text else "",
                                                f"{textGone!r} to disappear" if textGone else "") if x)
                waited = _time.monotonic() - t0
                what = (f"Done waiting for {goal} ({waited:.1f} s)" if ok
                        else f"Waited {limit:g} s for {goal}: it did not happen")
            await settle(tab)
            change = sup.view.change(await tab.snapshot())
        if change.empty:
            return text_result(sup, f"{what}. Page: no change in the semantic payload since your last view.",
                               error=not ok)
        head = f"{what}. Page: {change.summary}" + ("." if change.whole else " since your last view:")
        return text_result(sup, head, change.text, error=not ok)

