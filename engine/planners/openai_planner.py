"""A planner backed by any OpenAI-compatible chat model (OpenAI, Ollama, llama.cpp, vLLM, LM Studio).

Each step the model gets the system prompt (`assets/prompts/planner_system.md`: the semantic
legend, the rules, the actions) and one semantic-first observation (`payload.build_observation`),
and answers with one tool call — or, for servers without tool calling, one JSON object holding an
action string. While the page stays unchanged the conversation goes on (the tree is not re-sent,
the model is told so); when it changes, the conversation restarts from a fresh observation whose
"steps so far" summarise what came before.

`request_context(kind)` adds exactly the asked-for artifact (skeleton, screenshot + skeleton, full
DOM) to a re-ask of the same step, at most twice a step. A malformed reply (bad JSON, unknown
tool, missing argument, an ID not in the snapshot, nothing at all) gets one corrective retry with
the problem explained; a second one, or any server trouble (timeout, refused connection, HTTP
error), becomes a `fail` step saying what went wrong and where. The API key is never logged,
printed or put in a message. `last_exchange` keeps what was sent and received for the inspector.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os
import re
from pathlib import Path
from typing import Any, cast

import openai
from pydantic import BaseModel, Field, ValidationError

from engine.errors import ActionStringError, ErrorCode, VigilError
from engine.loop.action_string import NODE_ID, parse_action_string
from engine.loop.planner import Observation
from engine.loop.redact import types_secret
from engine.loop.untrusted import UNTRUSTED_RULE, fence
from engine.models import Action, ExpectedOutcome, ProposedStep
from engine.planners.payload import (
    CONTEXT_KINDS,
    IMAGE_TOKENS,
    ContextKind,
    DeltaTracker,
    build_observation,
    context_artifact,
    scrub,
)
from engine.snapshot.serialize.semantic import LEGEND
from engine.snapshot.serialize.tokens import cut, estimate_tokens
from engine.vision.screenshot import ScreenshotTracker

log = logging.getLogger("vigil.planner.openai")
PROMPT_FILE = Path(__file__).resolve().parents[2] / "assets" / "prompts" / "planner_system.md"
MAX_ESCALATIONS = 2
_DIRECTIONS = ["up", "down", "left", "right", "top", "bottom"]
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
               {"direction": {"type": "string", "enum": _DIRECTIONS}, "node_id": _ID}, ("direction",)),
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
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_CTX_STRING = re.compile(r"""^\s*request[_-]?context\s*\(\s*["']?(\w+)["']?\s*"""
                         r"""(?:,\s*(?:reason\s*=\s*)?["'](.*)["'])?\s*\)\s*$""", re.S | re.I)


def tool_specs() -> list[dict]:
    """The tools offered to the model, in the OpenAI function-calling format."""
    return [{"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {**props, **_COMMON}, "required": list(req)}}}
            for name, (desc, props, req) in TOOLS.items()]


def _signature(name: str) -> str:
    _, props, req = TOOLS[name]
    return f"{name}({', '.join(p if p in req else p + '?' for p in props)})"


@functools.lru_cache(maxsize=2)
def system_prompt(mode: str) -> str:
    """The system prompt for `mode` ("tools" or "json"), from assets/prompts/planner_system.md."""
    try:
        text = PROMPT_FILE.read_text(encoding="utf-8")
    except OSError as exc:
        raise VigilError(f"Cannot read the planner prompt {PROMPT_FILE}: {exc}. Reinstall Vigil "
                         "(the file ships in assets/prompts/).", code=ErrorCode.PLANNER_CONFIG) from None
    main, _, replies = text.partition("<!-- reply: tools -->")
    tools_reply, _, json_reply = replies.partition("<!-- reply: json -->")
    tools = "\n".join(f"- {_signature(n)} — {TOOLS[n][0]}" for n in TOOLS)
    return (main.replace("{legend}", LEGEND).replace("{untrusted}", UNTRUSTED_RULE).replace("{tools}", tools)
            .replace("{reply_format}", (tools_reply if mode == "tools" else json_reply).strip())).strip()


class Exchange(BaseModel):
    """One step's conversation with the model, for the payload inspector (images elided)."""

    mode: str
    model: str
    base_url: str
    messages: list[dict] = Field(default_factory=list)  # the last request sent
    reply: dict | None = None                             # the model's last raw reply
    tokens: int = 0                                       # estimate for the last request
    requests: int = 0
    negotiation: list[dict] = Field(default_factory=list)  # {kind, reason, tokens, note}
    corrections: list[str] = Field(default_factory=list)
    observation: dict = Field(default_factory=dict)       # unchanged, node counts, DOM RAG figures


class _BadReply(Exception):
    """The reply cannot be used; the message is written for the model."""


class _ServerProblem(Exception):
    """The server could not give a reply; the message is written for a person."""


class _ModeSwitched(Exception):
    """The server refused tools: start the step again in JSON mode."""


class _Ctx:
    def __init__(self, kind: ContextKind, reason: str):
        self.kind, self.reason = kind, reason


def _bool(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1"))


def _outcome(v: Any) -> ExpectedOutcome | None:
    try:
        return ExpectedOutcome.model_validate({"type": v} if isinstance(v, str) else v) if v else None
    except ValidationError:
        return None


def _elide(messages: list[dict]) -> tuple[list[dict], int]:
    """(messages with image bytes replaced by a note, token estimate)."""
    out, tokens = [], 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [{"type": "image_url",
                        "image_url": {"url": f"<image, {len(p['image_url']['url']) * 3 // 4096} KB "
                                                                   "elided>"}} if p.get("type") == "image_url" else p
                       for p in content]
            tokens += sum(IMAGE_TOKENS if p["type"] == "image_url" else estimate_tokens(p.get("text", ""))
                          for p in content)
        else:
            tokens += estimate_tokens((content or "") + (json.dumps(m["tool_calls"]) if m.get("tool_calls") else ""))
        out.append({**m, "content": content})
    return out, tokens


class OpenAIPlanner:
    """`OpenAIPlanner(base_url="http://127.0.0.1:11434/v1", model="qwen2.5")` — see the module docstring.

    Settings not given come from `VIGIL_BASE_URL`/`OPENAI_BASE_URL`, `VIGIL_MODEL`/`OPENAI_MODEL`,
    `VIGIL_API_KEY`/`OPENAI_API_KEY` (a local server needs no key). `tools=False` uses the JSON
    reply format from the start; `full_page=True` lists elements outside the viewport too."""

    def __init__(self, *, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 vision: bool = False, timeout: float = 60, budget_tokens: int = 6000, temperature: float | None = 0,
                 client: openai.AsyncOpenAI | None = None, tools: bool = True, full_page: bool = False):
        env = os.environ.get
        self.base_url = (base_url or (str(client.base_url) if client is not None else None) or env("VIGIL_BASE_URL")
                         or env("OPENAI_BASE_URL") or "https://api.openai.com/v1")
        self.model = model or env("VIGIL_MODEL") or env("OPENAI_MODEL") or ""
        if not self.model:
            raise VigilError("No model named: pass --model NAME (model=…) or set VIGIL_MODEL.",
                             code=ErrorCode.PLANNER_CONFIG)
        self._owns_client = client is None
        self._client = client or openai.AsyncOpenAI(
            base_url=self.base_url, api_key=api_key or env("VIGIL_API_KEY") or env("OPENAI_API_KEY") or "not-needed",
            timeout=timeout, max_retries=0)
        self.vision, self.timeout, self.budget_tokens = vision, timeout, budget_tokens
        self.temperature, self.full_page = temperature, full_page
        self.mode = "tools" if tools else "json"
        self._tool_choice = "required"
        self._delta, self._shots = DeltaTracker(), ScreenshotTracker()
        self._secrets: list[str] = []       # text typed into password fields: masked in all we send
        self._block: list[dict] = []        # the conversation since the last full tree
        self._pending_call: str | None = None  # the id of the tool call whose result is due
        self._events_seen = 0.0              # page clock of the newest page event already shown
        self._ids = itertools.count(1)       # ids for tool calls that came without one
        self.last_exchange: Exchange | None = None

    def __repr__(self) -> str:
        return (f"OpenAIPlanner(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r}, "
                f"vision={self.vision})")

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    async def propose(self, obs: Observation) -> ProposedStep:
        """One step for `obs`; server trouble and unusable replies become a `fail` step, never an exception."""
        while True:
            try:
                return await self._step(obs)
            except _ModeSwitched:
                continue  # happens once: the server refused tools, JSON mode from now on
            except _ServerProblem as exc:
                return self._fail(str(exc))

    # -- one step ------------------------------------------------------------------------------------------
    async def _step(self, obs: Observation) -> ProposedStep:
        messages, current, ex = self._messages(obs)
        while True:
            reply = await self._complete(messages, ex)
            try:
                parsed = self._parse(reply, obs)
                if isinstance(parsed, _Ctx):
                    self._check_ctx(parsed, ex)
            except _BadReply as bad:
                ex.corrections.append(str(bad))
                if len(ex.corrections) >= 2:
                    return self._fail(f"The model {self.model!r} at {self.base_url} gave no usable answer, even after "
                                      f"a corrective retry: {ex.corrections[-1]}")
                messages = messages + self._correction(reply, str(bad))
                continue
            if isinstance(parsed, _Ctx):
                art = await context_artifact(parsed.kind, obs.page, obs.snapshot, self.vision,
                                             screenshots=self._shots if self.vision else None)
                ex.negotiation.append({"kind": parsed.kind, "reason": parsed.reason, "tokens": art["tokens"],
                                       "note": art.get("note", "")})
                added = self._context_messages(reply, art)
                messages, current = messages + added, current + added  # kept: a later "unchanged" refers to it
                continue
            said, self._pending_call = self._said(reply)
            self._block = current + [said]  # this turn, kept for the next one while the page stays the same
            return parsed

    def _messages(self, obs: Observation) -> tuple[list[dict], list[dict], Exchange]:
        """(the request's messages, the part to keep as the conversation block)."""
        if obs.step_index == 0 and obs.last_outcome is None:  # a new run
            self._block, self._pending_call, self._events_seen = [], None, 0.0
        if self._block and _elide(self._block)[1] > 2 * self.budget_tokens:
            self._block = []
        if not self._block:
            self._delta.reset()
        mo = build_observation(obs, budget_tokens=self.budget_tokens, delta=self._delta, secrets=self._secrets,
                               full_page=self.full_page, events_since=self._events_seen)
        self._events_seen = max([self._events_seen] + [e.at for e in obs.recent_events])
        if not mo.unchanged:  # a new conversation: the model has no earlier tree or picture
            self._block, self._pending_call = [], None
            self._shots.last_sent = None
        prior = list(self._block)
        if self._pending_call:
            prior.append({"role": "tool", "tool_call_id": self._pending_call, "content": self._result_note(obs)})
        current = prior + [{"role": "user", "content": mo.text}]
        seen = {"dom_filtered": False, **mo.model_dump(exclude={"text", "rag"}),
                **(mo.rag.model_dump(exclude={"items", "tokens"}) if mo.rag else {})}
        ex = self.last_exchange = Exchange(mode=self.mode, model=self.model, base_url=self.base_url, observation=seen)
        return [{"role": "system", "content": system_prompt(self.mode)}] + current, current, ex

    def _result_note(self, obs: Observation) -> str:
        r = obs.last_result
        said = f"{'✓' if r.verified else '✗'} {r.message}" if r is not None else ""
        return scrub(cut(f"{obs.last_outcome or 'done'}: {said} {obs.feedback or ''}".strip(), 400), self._secrets)

    def _said(self, msg: Any) -> tuple[dict, str | None]:
        """The reply as an assistant message to keep (its first tool call only, secrets masked), and
        that call's id (None for a plain-content reply)."""
        content = scrub(getattr(msg, "content", None) or "", self._secrets)
        calls = (getattr(msg, "tool_calls", None) or []) if self.mode == "tools" else []
        if not calls:
            return {"role": "assistant", "content": content}, None
        fn, cid = calls[0].function, calls[0].id or f"call_{next(self._ids)}"
        call = {"id": cid, "type": "function",
                "function": {"name": fn.name, "arguments": scrub(fn.arguments or "{}", self._secrets)}}
        return {"role": "assistant", "content": content or None, "tool_calls": [call]}, cid

    async def _complete(self, messages: list[dict], ex: Exchange) -> Any:
        """One chat completion; returns the reply message (or None). Adapts once to servers that refuse
        tool_choice="required", tools (→ JSON mode) or a temperature."""
        while True:
            kw: dict[str, Any] = {"model": self.model, "messages": messages}
            if self.temperature is not None:
                kw["temperature"] = self.temperature
            if self.mode == "tools":
                kw["tools"], kw["tool_choice"] = tool_specs(), self._tool_choice
            ex.messages, ex.tokens = _elide(messages)
            ex.requests += 1
            try:
                resp = await self._client.chat.completions.create(**kw)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if self._adapt(exc):
                    continue
                raise _ServerProblem(self._http_problem(exc)) from None
            except openai.APITimeoutError:
                raise _ServerProblem(f"The model server at {self.base_url} timed out: no answer within "
                                     f"{self.timeout:g} s (model {self.model!r}).") from None
            except openai.APIConnectionError as exc:
                cause = self._clean(str(exc.__cause__ or exc))
                raise _ServerProblem(f"Could not reach the model server at {self.base_url} ({cause}). Is it running, "
                                     "and is the base URL right (it usually ends in /v1)?") from None
            except openai.APIStatusError as exc:
                raise _ServerProblem(self._http_problem(exc)) from None
            except openai.OpenAIError as exc:
                raise _ServerProblem(f"The model server at {self.base_url} sent an unusable response: "
                                     f"{self._clean(str(exc))}") from None
            choices = getattr(resp, "choices", None) or []
            msg = choices[0].message if choices else None
            ex.reply = msg.model_dump(exclude_none=True) if msg is not None else None
            return msg

    def _adapt(self, exc: openai.APIStatusError) -> bool:
        text = str(exc).lower()
        if self.mode == "tools" and self._tool_choice == "required" and "tool_choice" in text:
            log.info("%s refused tool_choice=required; using auto", self.base_url)
            self._tool_choice = "auto"
            return True
        if self.mode == "tools" and ("tool" in text or "function" in text):
            log.info("%s refused tool calling; switching to JSON replies", self.base_url)
            self.mode, self._block, self._pending_call = "json", [], None
            raise _ModeSwitched
        if self.temperature is not None and "temperature" in text:
            self.temperature = None
            return True
        return False

    def _clean(self, text: str) -> str:
        """`text` without the API key, shortened."""
        key = self._client.api_key
        if isinstance(key, str) and len(key) >= 4:
            text = text.replace(key, "***")
        return cut(text, 300)

    def _http_problem(self, exc: openai.APIStatusError) -> str:
        hint = {401: " Check the API key (VIGIL_API_KEY or OPENAI_API_KEY).", 403: " Check the API key and its access.",
                404: " Check the model name and the base URL (it usually ends in /v1).",
                429: " The server is rate-limiting; wait and try again."}.get(exc.status_code, "")
        return (f"The model server at {self.base_url} answered HTTP {exc.status_code}: "
                f"{self._clean(exc.message)}.{hint}")

    def _fail(self, reason: str) -> ProposedStep:
        reason = self._clean(reason)
        self._block, self._pending_call = [], None  # the next step starts a new conversation
        log.warning("planner step failed: %s", reason)
        return ProposedStep(thought=reason, action=Action(name="fail", reason=reason))

    # -- reading replies -----------------------------------------------------------------------------------
    def _parse(self, msg: Any, obs: Observation) -> ProposedStep | _Ctx:
        if msg is None:
            raise _BadReply("The reply was empty.")
        calls = msg.tool_calls or []
        if calls and self.mode == "tools":
            fn = calls[0].function
            raw = fn.arguments or "{}"
            try:
                args = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise _BadReply(f"The arguments of {fn.name} are not valid JSON ({exc.msg} at position {exc.pos}): "
                                f"{cut(raw, 200)!r}.") from None
            if not isinstance(args, dict):
                raise _BadReply(f"The arguments of {fn.name} must be a JSON object, not {cut(raw, 100)!r}.")
            return self._from_call(fn.name.removeprefix("functions."), args, obs, msg.content)
        content = _THINK.sub("", msg.content or "").strip()
        if not content:
            raise _BadReply("The reply was empty: " + ("call exactly one tool." if self.mode == "tools"
                                                       else "reply with one JSON object."))
        if self.mode == "tools" and "{" not in content:
            raise _BadReply(f"The reply has no tool call (it said {cut(content, 120)!r}): call exactly one tool.")
        return self._from_json(content, obs)

    def _from_json(self, content: str, obs: Observation) -> ProposedStep | _Ctx:
        start, end = content.find("{"), content.rfind("}")
        try:
            data = json.loads(content[start:end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError as exc:
            raise _BadReply(f"The reply is not valid JSON ({exc.msg}): {cut(content, 200)!r}.") from None
        if data is None:  # a bare action string such as click(12)
            data = {"action": content.strip().strip("`").strip()}
        if not isinstance(data, dict) or not data.get("action"):
            raise _BadReply('The reply has no "action": reply with {"thought": …, "action": "click(12)", …}.')
        action = data["action"]
        if isinstance(action, dict):
            args = {**{k: v for k, v in data.items() if k != "action"}, **action}
            if "node_id" not in args and "target" in args:
                args["node_id"] = args.pop("target")
            return self._from_call(str(args.pop("name", None) or args.pop("tool", "")), args, obs, None)
        m = _CTX_STRING.match(str(action))
        if m:
            return self._from_call("request_context", {"kind": m.group(1), "reason": m.group(2) or data.get("thought")},
                                   obs, None)
        try:
            act = parse_action_string(str(action))
        except ActionStringError as exc:
            raise _BadReply(exc.message) from None
        if act.node_id is not None:
            self._node(act.node_id, obs)
        return self._build(act, data, obs, None)

    def _from_call(self, name: str, args: dict, obs: Observation, content: str | None) -> ProposedStep | _Ctx:
        if name not in TOOLS:
            raise _BadReply(f"Unknown tool {name!r}. Call one of: {', '.join(TOOLS)}.")
        _, props, required = TOOLS[name]
        missing = [r for r in required if args.get(r) in (None, "")]
        if missing:
            raise _BadReply(f"{name} needs {', '.join(missing)}: call it as {_signature(name)}.")
        if name == "request_context":
            kind = str(args["kind"]).strip().lower()
            if kind not in CONTEXT_KINDS:
                raise _BadReply(f"request_context kind must be one of {', '.join(CONTEXT_KINDS)}, not {kind!r}.")
            return _Ctx(cast(ContextKind, kind), cut(str(args["reason"]), 300))
        fields: dict[str, Any] = {"name": name}
        if args.get("node_id") not in (None, ""):
            fields["target"] = self._node(args["node_id"], obs)
        for k in ("text", "key", "option", "url", "answer", "reason"):
            if k in props and args.get(k) is not None:
                fields[k] = str(args[k])
        if name == "type":
            fields["submit"] = _bool(args.get("submit"))
        if name in ("switch_tab", "close_tab") and args.get("tab") not in (None, ""):
            try:
                fields["tab"] = int(args["tab"])
            except (TypeError, ValueError):
                raise _BadReply(f"{name} needs the tab's index (a number from TABS), not {args['tab']!r}.") from None
        if name == "dialog":
            fields["accept"] = _bool(args.get("accept"))
        if name == "upload":
            paths = args.get("paths")
            fields["paths"] = [str(x) for x in paths] if isinstance(paths, list) else [str(paths)]
        if name == "scroll":
            fields["direction"] = str(args["direction"]).strip().lower()
            if fields["direction"] not in _DIRECTIONS:
                raise _BadReply(f"scroll direction must be one of {', '.join(_DIRECTIONS)}, not {args['direction']!r}.")
        try:
            action = Action(**fields)
        except ValidationError as exc:
            msgs = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
            raise _BadReply(f"{name}: {msgs}.") from None
        return self._build(action, args, obs, content)

    def _node(self, value: Any, obs: Observation) -> str:
        nid = str(value).strip().strip("[]#").strip()
        if isinstance(value, bool) or not NODE_ID.match(nid) or nid not in obs.snapshot:
            raise _BadReply(f"Element {nid!r} is not in the current element list. Use an ID (`i`) from the latest "
                            "list; IDs look like 12 or f1_12.")
        return nid

    def _build(self, action: Action, extras: dict, obs: Observation, content: str | None) -> ProposedStep:
        node = obs.snapshot.node_map.get(action.node_id) if action.node_id else None
        if types_secret(action, node) and action.text and action.text not in self._secrets:
            self._secrets.append(action.text)
        plan = extras.get("plan")
        plan = [cut(str(p), 200) for p in plan] if isinstance(plan, list) and plan else None
        idx = extras.get("plan_step")
        idx = idx if isinstance(idx, int) and not isinstance(idx, bool) and idx >= 0 else None
        thought = extras.get("thought") or _THINK.sub("", content or "").strip()
        return ProposedStep(thought=cut(str(thought), 500), action=action, plan=plan, plan_index=idx,
                            expected_outcome=_outcome(extras.get("expected_outcome")))

    def _check_ctx(self, ctx: _Ctx, ex: Exchange) -> None:
        if len(ex.negotiation) >= MAX_ESCALATIONS:
            raise _BadReply(f"You already got {MAX_ESCALATIONS} extra contexts for this step; choose an action now.")
        if any(n["kind"] == ctx.kind for n in ex.negotiation):
            raise _BadReply(f"The {ctx.kind} context is already in this conversation; choose an action now.")

    # -- messages we add within a step ---------------------------------------------------------------------
    def _correction(self, msg: Any, error: str) -> list[dict]:
        said = ""
        if msg is not None:
            said = msg.content or ""
            for c in msg.tool_calls or []:
                said += f"\n{c.function.name}({c.function.arguments})"
        how = "with exactly one tool call" if self.mode == "tools" else "with one JSON object as described"
        return [{"role": "assistant", "content": scrub(cut(said.strip(), 600), self._secrets) or "(empty reply)"},
                {"role": "user", "content": f"Your reply could not be used: {error} Reply again {how}."}]

    def _context_messages(self, msg: Any, art: dict) -> list[dict]:
        kind = art["kind"]
        if kind == "full":
            text = (f"Context requested (full): the annotated page HTML; id is the element ID"
                    f"{' (cut short)' if art['truncated'] else ''}.\n{fence(art['html'])}")
        else:
            text = (f"Context requested ({kind}): the interactive elements as HTML; id is the element ID.\n"
                    f"{fence(art['skeleton'])}")
        image = art.get("image") if self.vision else None
        if kind == "screenshot":
            if art.get("note"):
                lead = art["note"]
            elif not self.vision:
                lead = "This model is set up without vision: no image, only the skeleton."
            else:
                lead = "The screenshot follows" + (", each element boxed and labelled with its ID."
                                                   if art.get("image_type") == "som" else ".")
            text = lead + "\n" + text
        image_part = [{"type": "image_url", "image_url": {"url": image}}] if image else []
        said, cid = self._said(msg)
        if cid:  # the artifact answers the tool call; a picture cannot go in a tool message
            picture = [{"role": "user", "content": [{"type": "text", "text": "The screenshot:"}, *image_part]}]
            return [said, {"role": "tool", "tool_call_id": cid, "content": text}] + (picture if image_part else [])
        return [said, {"role": "user", "content": [{"type": "text",
                                                    "text": text}] + image_part if image_part else text}]
