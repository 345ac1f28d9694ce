"""Reading an OpenAI-compatible model's reply: one tool call, or (for servers without tool calling) one
JSON object holding an action string — into a ProposedStep, or a request for more context. A reply
that cannot be used raises BadReply, whose message is written for the model (it gets one retry)."""

from __future__ import annotations

import json
import re
from typing import Any, cast

from pydantic import ValidationError

from engine.errors import ActionStringError
from engine.loop.action_string import NODE_ID, parse_action_string
from engine.loop.planner import Observation
from engine.models import Action, ExpectedOutcome, ProposedStep
from engine.planners.openai_tools import DIRECTIONS, TOOLS, signature
from engine.planners.payload import CONTEXT_KINDS, ContextKind
from engine.snapshot.serialize.tokens import cut

THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_CTX_STRING = re.compile(r"""^\s*request[_-]?context\s*\(\s*["']?(\w+)["']?\s*"""
                         r"""(?:,\s*(?:reason\s*=\s*)?["'](.*)["'])?\s*\)\s*$""", re.S | re.I)


class BadReply(Exception):
    """The reply cannot be used; the message is written for the model."""


class ContextRequest:
    """The model asks for more of the page (`request_context`) before it acts."""

    def __init__(self, kind: ContextKind, reason: str):
        self.kind, self.reason = kind, reason


def parse_reply(msg: Any, obs: Observation, mode: str) -> ProposedStep | ContextRequest:
    """The step (or context request) in the reply message `msg`, read as `mode` ("tools" or "json") asks."""
    if msg is None:
        raise BadReply("The reply was empty.")
    calls = msg.tool_calls or []
    if calls and mode == "tools":
        fn = calls[0].function
        raw = fn.arguments or "{}"
        try:
            args = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise BadReply(f"The arguments of {fn.name} are not valid JSON ({exc.msg} at position {exc.pos}): "
                           f"{cut(raw, 200)!r}.") from None
        if not isinstance(args, dict):
            raise BadReply(f"The arguments of {fn.name} must be a JSON object, not {cut(raw, 100)!r}.")
        return _from_call(fn.name.removeprefix("functions."), args, obs, msg.content)
    content = THINK.sub("", msg.content or "").strip()
    if not content:
        raise BadReply("The reply was empty: " + ("call exactly one tool." if mode == "tools"
                                                  else "reply with one JSON object."))
    if mode == "tools" and "{" not in content:
        raise BadReply(f"The reply has no tool call (it said {cut(content, 120)!r}): call exactly one tool.")
    return _from_json(content, obs)


def _from_json(content: str, obs: Observation) -> ProposedStep | ContextRequest:
    start, end = content.find("{"), content.rfind("}")
    try:
        data = json.loads(content[start:end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError as exc:
        raise BadReply(f"The reply is not valid JSON ({exc.msg}): {cut(content, 200)!r}.") from None
    if data is None:  # a bare action string such as click(12)
        data = {"action": content.strip().strip("`").strip()}
    if not isinstance(data, dict) or not data.get("action"):
        raise BadReply('The reply has no "action": reply with {"thought": …, "action": "click(12)", …}.')
    action = data["action"]
    if isinstance(action, dict):
        args = {**{k: v for k, v in data.items() if k != "action"}, **action}
        if "node_id" not in args and "target" in args:
            args["node_id"] = args.pop("target")
        return _from_call(str(args.pop("name", None) or args.pop("tool", "")), args, obs, None)
    m = _CTX_STRING.match(str(action))
    if m:
        return _from_call("request_context", {"kind": m.group(1), "reason": m.group(2) or data.get("thought")},
                          obs, None)
    try:
        act = parse_action_string(str(action))
    except ActionStringError as exc:
        raise BadReply(exc.message) from None
    if act.node_id is not None:
        _node(act.node_id, obs)
    return _build(act, data, None)


def _from_call(name: str, args: dict, obs: Observation, content: str | None) -> ProposedStep | ContextRequest:
    if name not in TOOLS:
        raise BadReply(f"Unknown tool {name!r}. Call one of: {', '.join(TOOLS)}.")
    _, props, required = TOOLS[name]
    missing = [r for r in required if args.get(r) in (None, "")]
    if missing:
        raise BadReply(f"{name} needs {', '.join(missing)}: call it as {signature(name)}.")
    if name == "request_context":
        kind = str(args["kind"]).strip().lower()
        if kind not in CONTEXT_KINDS:
            raise BadReply(f"request_context kind must be one of {', '.join(CONTEXT_KINDS)}, not {kind!r}.")
        return ContextRequest(cast(ContextKind, kind), cut(str(args["reason"]), 300))
    fields: dict[str, Any] = {"name": name}
    if args.get("node_id") not in (None, ""):
        fields["target"] = _node(args["node_id"], obs)
    for k in ("text", "key", "option", "url", "answer", "reason"):
        if k in props and args.get(k) is not None:
            fields[k] = str(args[k])
    if name == "type":
        fields["submit"] = _bool(args.get("submit"))
    if name in ("switch_tab", "close_tab") and args.get("tab") not in (None, ""):
        try:
            fields["tab"] = int(args["tab"])
        except (TypeError, ValueError):
            raise BadReply(f"{name} needs the tab's index (a number from TABS), not {args['tab']!r}.") from None
    if name == "dialog":
        fields["accept"] = _bool(args.get("accept"))
    if name == "upload":
        paths = args.get("paths")
        fields["paths"] = [str(x) for x in paths] if isinstance(paths, list) else [str(paths)]
    if name == "scroll":
        fields["direction"] = str(args["direction"]).strip().lower()
        if fields["direction"] not in DIRECTIONS:
            raise BadReply(f"scroll direction must be one of {', '.join(DIRECTIONS)}, not {args['direction']!r}.")
    try:
        action = Action(**fields)
    except ValidationError as exc:
        msgs = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise BadReply(f"{name}: {msgs}.") from None
    return _build(action, args, content)


def _node(value: Any, obs: Observation) -> str:
    nid = str(value).strip().strip("[]#").strip()
    if isinstance(value, bool) or not NODE_ID.match(nid) or nid not in obs.snapshot:
        raise BadReply(f"Element {nid!r} is not in the current element list. Use an ID (`i`) from the latest "
                       "list; IDs look like 12 or f1_12.")
    return nid


def _build(action: Action, extras: dict, content: str | None) -> ProposedStep:
    plan = extras.get("plan")
    plan = [cut(str(p), 200) for p in plan] if isinstance(plan, list) and plan else None
    idx = extras.get("plan_step")
    idx = idx if isinstance(idx, int) and not isinstance(idx, bool) and idx >= 0 else None
    thought = extras.get("thought") or THINK.sub("", content or "").strip()
    return ProposedStep(thought=cut(str(thought), 500), action=action, plan=plan, plan_index=idx,
                        expected_outcome=_outcome(extras.get("expected_outcome")))


def _bool(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1"))


def _outcome(v: Any) -> ExpectedOutcome | None:
    try:
        return ExpectedOutcome.model_validate({"type": v} if isinstance(v, str) else v) if v else None
    except ValidationError:
        return None
