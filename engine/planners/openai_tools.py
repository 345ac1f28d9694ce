"""What the OpenAI-compatible planner offers a model: its tools (the OpenAI function-calling schemas)
and the system prompt that lists them (`assets/prompts/planner_system.md`)."""

from __future__ import annotations

import functools

from engine.assets import asset
from engine.errors import ErrorCode, VigilError
from engine.loop.untrusted import UNTRUSTED_RULE
from engine.planners.payload import CONTEXT_KINDS
from engine.snapshot.serialize.semantic import LEGEND

DIRECTIONS = ["up", "down", "left", "right", "top", "bottom"]
_STR = {"type": "string"}
_ID = _STR  # an element ID, `i` in the element list (the prompt says so once)
_OUTCOME = {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": [
    "navigation", "element_appears", "element_disappears", "value_changes", "state_changes", "any_change", "no_change",
    "submitted"]}}}
# described once in the system prompt, not in every tool
_COMMON = {"thought": _STR, "expected_outcome": _OUTCOME, "plan": {"type": "array", "items": _STR},
           "plan_step": {"type": "integer"}}
# tool → (description, its own parameters, required ones)
TOOLS: dict[str, tuple[str, dict, tuple[str, ...]]] = {
    "click": ("Click an element.", {"node_id": _ID}, ("node_id",)),
    "type": ("Type text into a field, replacing its content; submit=true presses Enter afterwards.",
             {"node_id": _ID, "text": _STR, "submit": {"type": "boolean"}}, ("node_id", "text")),
    "press": ("Press a key or chord (Enter, Escape, Tab, Control+A), in an element when node_id is given.",
              {"key": _STR, "node_id": _ID}, ("key",)),
    "select": ("Choose an option, by its label or value, in a select, combobox or listbox.",
               {"node_id": _ID, "option": _STR}, ("node_id", "option")),
    "scroll": ("Scroll the page, or the scroll container node_id (an element that is not one is scrolled into view).",
               {"direction": {"type": "string", "enum": DIRECTIONS}, "node_id": _ID}, ("direction",)),
    "navigate": ("Open a URL in this tab.", {"url": _STR}, ("url",)),
    "switch_tab": ("Work in another open tab (its index from TABS).", {"tab": {"type": "integer"}}, ("tab",)),
    "close_tab": ("Close a tab (its index from TABS; the active one when left out).", {"tab": {"type": "integer"}},
                  ()),
    "new_tab": ("Open a URL in a new tab and work there.", {"url": _STR}, ("url",)),
    "dialog": ("Answer the page's open dialog (confirm/prompt/leave page): accept=true is OK, false is Cancel; "
               "text answers a prompt. With no dialog open, answers the next one.",
               {"accept": {"type": "boolean"}, "text": _STR}, ("accept",)),
    "upload": ("Put files from this machine into a file input (or the button that opens it); paths the task "
               "names only.", {"node_id": _ID, "paths": {"type": "array", "items": _STR}}, ("node_id", "paths")),
    "finish": ("The task is done; give the answer when the task asks for one.", {"answer": _STR}, ()),
    "fail": ("The task cannot be done; say why.", {"reason": _STR}, ("reason",)),
    "request_context": ("Ask for more context about this page before acting (at most two per step).",
                        {"kind": {"type": "string", "enum": list(CONTEXT_KINDS)}, "reason": _STR}, ("kind", "reason")),
}


def tool_specs() -> list[dict]:
    """The tools offered to the model, in the OpenAI function-calling format."""
    return [{"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {**props, **_COMMON}, "required": list(req)}}}
            for name, (desc, props, req) in TOOLS.items()]


def signature(name: str) -> str:
    """How a tool is called, optional parameters marked: `type(node_id, text, submit?)`."""
    _, props, req = TOOLS[name]
    return f"{name}({', '.join(p if p in req else p + '?' for p in props)})"


@functools.lru_cache(maxsize=2)
def system_prompt(mode: str) -> str:
    """The system prompt for `mode` ("tools" or "json"), from assets/prompts/planner_system.md."""
    prompt_file = asset("prompts", "planner_system.md")
    try:
        text = prompt_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise VigilError(f"Cannot read the planner prompt {prompt_file}: {exc}. Reinstall Vigil "
                         "(the file ships in assets/prompts/).", code=ErrorCode.PLANNER_CONFIG) from None
    main, _, replies = text.partition("<!-- reply: tools -->")
    tools_reply, _, json_reply = replies.partition("<!-- reply: json -->")
    tools = "\n".join(f"- {signature(n)} — {TOOLS[n][0]}" for n in TOOLS)
    return (main.replace("{legend}", LEGEND).replace("{untrusted}", UNTRUSTED_RULE).replace("{tools}", tools)
            .replace("{reply_format}", (tools_reply if mode == "tools" else json_reply).strip())).strip()
