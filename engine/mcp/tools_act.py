"""The action tools: each call is one step of the supervised loop (browser_fill_form: one per field).

Arguments follow Playwright MCP's conventions (`ref`, `element`, `text`, `submit`, `values`, `key`),
with Vigil's node IDs as refs. `element` — the client's words for what it is about to touch — is
shown to the person with the step. An optional `expect` says what the step should achieve; the
loop verifies it (else each action's default check applies).
"""

from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from engine.mcp.clients import McpClients
from engine.mcp.common import guarded
from engine.mcp.results import error_result, steps_result
from engine.mcp.supervisor import McpSupervisor
from engine.mcp.urls import mcp_url
from engine.models import Action, ProposedStep


def ref_text(v: object) -> object:
    """A ref a client sent as a number (the MCP Inspector turns "316" into 316) is that ref."""
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return v


Ref = Annotated[str, BeforeValidator(ref_text),
                Field(description="The element's ref: its `i` in browser_snapshot or browser_find")]
OptionalRef = Annotated[str | None, BeforeValidator(ref_text)]
Element = Annotated[str | None, Field(description="Human-readable description of the element, shown to the person "
                                                  "approving the step")]
Expect = Annotated[str | None, Field(description="Optional: what the step should achieve, verified after it: "
                                                 "navigation, element_appears TEXT, element_disappears TEXT, "
                                                 "value_changes, state_changes, any_change, no_change, submitted")]

MAX_TYPED_CHARS = 20_000  # a step's text: its record, effect and result stay small; a longer one is refused
TypedText = Annotated[str, Field(description=f"Text to type (replaces the field's text); at most {MAX_TYPED_CHARS:,} "
                                             "characters")]


def typed_text(text: str, where: str = "text") -> str:
    """`text`, when Vigil types it in one step; ValueError (BAD_ARGUMENT) naming the limit when it is longer."""
    if len(text) > MAX_TYPED_CHARS:
        raise ValueError(f"{where} is {len(text):,} characters; one step types at most {MAX_TYPED_CHARS:,} (each step "
                         "is recorded and shown to the person). Send a shorter text, or a file with "
                         "browser_file_upload where the page takes one. Nothing ran.")
    return text

_ACT = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)


class FormField(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ref: Annotated[str, BeforeValidator(ref_text)] = Field(description="The field's ref")
    value: str = Field(description="Text for a textbox; true/false for a checkbox or radio; the option's label "
                                   "for a combobox")
    type: Literal["textbox", "checkbox", "radio", "combobox"] = Field(default="textbox",
                                                                      description="Type of the field")
    name: str | None = Field(default=None, description="Human-readable field name")


def _expectation(text: str | None):
    if not text or not text.strip():
        return None
    from engine.loop.gates import parse_expected_outcome
    return parse_expected_outcome(text)  # ValueError with a clear message


def _step(action: Action, element: str | None, expect: str | None = None, *, tool: str) -> ProposedStep:
    return ProposedStep(thought=(element or "").strip()[:300], action=action, expected_outcome=_expectation(expect),
                        details={"mcp": {"tool": tool}})


async def _run(sup: McpSupervisor, steps: list[ProposedStep], refs: list[str]) -> CallToolResult:
    outcomes = await sup.run_steps(steps, refs=refs)
    return steps_result(sup, outcomes, [s.action for s in steps])


def register_action_tools(server: MCPServer, clients: McpClients) -> None:
    @server.tool(name="browser_navigate", title="Navigate to a URL", annotations=_ACT)
    @guarded(clients)
    async def browser_navigate(url: Annotated[str, Field(description="The URL to navigate to")],
                               ctx: Context) -> CallToolResult:
        """Navigate to a URL. Leaving the site the session started on needs a person's approval under auto-safe."""
        sup = clients.of(ctx)
        return await _run(sup, [_step(Action(name="navigate", url=mcp_url(url, allow_files=sup.allow_files)), None,
                                      tool="browser_navigate")], [])

    @server.tool(name="browser_navigate_back", title="Go back", annotations=_ACT)
    @guarded(clients)
    async def browser_navigate_back(ctx: Context) -> CallToolResult:
        """Go back to the previous page in the history."""
        sup = clients.of(ctx)
        return await _run(sup, [_step(Action(name="back"), None, tool="browser_navigate_back")], [])

    @server.tool(name="browser_click", title="Click", annotations=_ACT)
    @guarded(clients)
    async def browser_click(ref: Ref, ctx: Context, element: Element = None,
                            doubleClick: Annotated[bool, Field(description="Double click instead")] = False,  # noqa: N803
                            expect: Expect = None) -> CallToolResult:
        """Click an element. The result says whether it worked and what changed on the page."""
        sup = clients.of(ctx)
        a = Action(name="double_click" if doubleClick else "click", target=ref)
        return await _run(sup, [_step(a, element, expect, tool="browser_click")], [ref])

    @server.tool(name="browser_type", title="Type text", annotations=_ACT)
    @guarded(clients)
    async def browser_type(ref: Ref, text: TypedText, ctx: Context, element: Element = None,
                           submit: Annotated[bool, Field(description="Press Enter after typing")] = False,
                           expect: Expect = None) -> CallToolResult:
        """Type text into an editable element. Text typed into password and one-time-code fields is never echoed."""
        sup = clients.of(ctx)
        a = Action(name="type", target=ref, text=typed_text(text), submit=submit)
        return await _run(sup, [_step(a, element, expect, tool="browser_type")], [ref])

    @server.tool(name="browser_select_option", title="Select option", annotations=_ACT)
    @guarded(clients)
    async def browser_select_option(ref: Ref, values: Annotated[list[str], Field(
            description="The option to select, by label or value (one per call)")], ctx: Context,
            element: Element = None, expect: Expect = None) -> CallToolResult:
        """Select an option in a dropdown (a native select or an ARIA listbox/combobox)."""
        sup = clients.of(ctx)
        if len(values) != 1:
            return error_result("BAD_ARGUMENT", "Give exactly one value: Vigil selects one option per call (call "
                                                "again for each option of a multi-select).", sup)
        a = Action(name="select", target=ref, option=values[0])
        return await _run(sup, [_step(a, element, expect, tool="browser_select_option")], [ref])

    @server.tool(name="browser_check", title="Check or uncheck", annotations=_ACT)
    @guarded(clients)
    async def browser_check(ref: Ref, ctx: Context, element: Element = None,
                            checked: Annotated[bool, Field(description="true to check, false to uncheck")] = True,
                            expect: Expect = None) -> CallToolResult:
        """Check or uncheck a checkbox, switch or radio button (nothing changes when it already is as asked)."""
        sup = clients.of(ctx)
        a = Action(name="check" if checked else "uncheck", target=ref)
        return await _run(sup, [_step(a, element, expect, tool="browser_check")], [ref])

    @server.tool(name="browser_press_key", title="Press a key", annotations=_ACT)
    @guarded(clients)
    async def browser_press_key(key: Annotated[str, Field(description="Key or chord, such as Enter, ArrowLeft, "
                                                                       "Shift+Tab or Control+A")],
                                ctx: Context, ref: Annotated[OptionalRef, Field(
                                    description="Optional: focus this element first")] = None,
                                expect: Expect = None) -> CallToolResult:
        """Press a key on the keyboard (in the focused element, or in `ref`)."""
        sup = clients.of(ctx)
        a = Action(name="press", key=key, target=ref)
        return await _run(sup, [_step(a, None, expect, tool="browser_press_key")], [ref] if ref else [])

    @server.tool(name="browser_hover", title="Hover", annotations=_ACT)
    @guarded(clients)
    async def browser_hover(ref: Ref, ctx: Context, element: Element = None) -> CallToolResult:
        """Move the mouse over an element (menus and tooltips that open on hover)."""
        sup = clients.of(ctx)
        return await _run(sup, [_step(Action(name="hover", target=ref), element, tool="browser_hover")], [ref])

    @server.tool(name="browser_scroll", title="Scroll", annotations=_ACT)
    @guarded(clients)
    async def browser_scroll(ctx: Context,
                             direction: Literal["down", "up", "left", "right", "top", "bottom"] = "down",
                             ref: Annotated[OptionalRef, Field(description="Optional: scroll this container, or "
                                                                          "bring this element into view")] = None,
                             amount: Annotated[int | None, Field(description="Pixels (default: about a screen)",
                                                                 ge=1, le=100_000)] = None) -> CallToolResult:
        """Scroll the page or a scroll container. Elements outside the viewport are not in the semantic payload."""
        sup = clients.of(ctx)
        a = Action(name="scroll", direction=direction, target=ref, amount=amount)
        return await _run(sup, [_step(a, None, tool="browser_scroll")], [ref] if ref else [])

    @server.tool(name="browser_fill_form", title="Fill form", annotations=_ACT)
    @guarded(clients)
    async def browser_fill_form(fields: Annotated[list[FormField], Field(description="Fields to fill in, in order",
                                                                         min_length=1, max_length=50)],
                                ctx: Context) -> CallToolResult:
        """Fill several fields, one approved step each; stops at the first step that does not complete."""
        sup = clients.of(ctx)
        steps = [_step(_field_action(f), f.name, tool="browser_fill_form") for f in fields]
        return await _run(sup, steps, [f.ref for f in fields])

    @server.tool(name="browser_close", title="Close browser", annotations=_ACT)
    @guarded(clients)
    async def browser_close(ctx: Context) -> CallToolResult:
        """Close the page and end the recorded session; the next tool call opens a new one."""
        sup = clients.of(ctx)
        from engine.mcp.results import text_result
        await sup.close()
        if sup.host is not None:
            return text_result(sup, "Ended the session; it is recorded. The page stays open in the person's Vigil "
                                    "window; the next action starts a new session on it.")
        return text_result(sup, "Closed the browser; the session is recorded. The next tool call opens a new page.")


def _field_action(f: FormField) -> Action:
    if f.type == "textbox":
        return Action(name="type", target=f.ref, text=typed_text(f.value, f"The value of {f.ref}"))
    if f.type == "combobox":
        return Action(name="select", target=f.ref, option=f.value)
    want = f.value.strip().lower()
    if want not in ("true", "false"):
        raise ValueError(f"The value of {f.type} {f.ref} must be true or false, not {f.value!r}.")
    if f.type == "radio" and want == "false":
        raise ValueError(f"Radio {f.ref} cannot be unchecked: check another radio of its group instead.")
    return Action(name="check" if want == "true" else "uncheck", target=f.ref)
