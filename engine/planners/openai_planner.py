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

This module holds the conversation; `openai_tools` the tools and the system prompt, `openai_transport`
the calls to the server, `openai_replies` the reading of a reply.
"""

from __future__ import annotations

import itertools
import logging
import os
from typing import Any

import openai

from engine.errors import ErrorCode, VigilError
from engine.loop.planner import Observation
from engine.loop.redact import types_secret
from engine.loop.untrusted import fence
from engine.models import Action, ProposedStep
from engine.planners.openai_replies import BadReply, ContextRequest, parse_reply
from engine.planners.openai_tools import system_prompt
from engine.planners.openai_transport import ChatTransport, Exchange, ModeSwitched, ServerProblem, elide
from engine.planners.payload import DeltaTracker, build_observation, context_artifact
from engine.secret_values import scrub
from engine.snapshot.serialize.tokens import cut
from engine.vision.screenshot import ScreenshotTracker

log = logging.getLogger("vigil.planner.openai")
MAX_ESCALATIONS = 2


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
        self._server = ChatTransport(self._client, base_url=self.base_url, model=self.model, timeout=timeout,
                                     temperature=temperature, tools=tools)
        self.vision, self.timeout, self.budget_tokens = vision, timeout, budget_tokens
        self.full_page = full_page
        self._delta, self._shots = DeltaTracker(), ScreenshotTracker()
        self._secrets: list[str] = []       # text typed into password fields: masked in all we send
        self._block: list[dict] = []        # the conversation since the last full tree
        self._pending_call: str | None = None  # the id of the tool call whose result is due
        self._events_seen = 0.0              # page clock of the newest page event already shown
        self._ids = itertools.count(1)       # ids for tool calls that came without one
        self.last_exchange: Exchange | None = None

    @property
    def mode(self) -> str:
        """"tools", or "json" for a server without tool calling (switched to when the server refuses tools)."""
        return self._server.mode

    @property
    def temperature(self) -> float | None:
        """The temperature asked for (None once the server refused one)."""
        return self._server.temperature

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
            except ModeSwitched:  # happens once: the server refused tools, JSON mode from now on
                self._block, self._pending_call = [], None
                continue
            except ServerProblem as exc:
                return self._fail(str(exc))

    # -- one step ------------------------------------------------------------------------------------------
    async def _step(self, obs: Observation) -> ProposedStep:
        messages, current, ex = self._messages(obs)
        while True:
            reply = await self._server.complete(messages, ex)
            try:
                parsed = parse_reply(reply, obs, self.mode)
                if isinstance(parsed, ContextRequest):
                    self._check_ctx(parsed, ex)
                else:
                    self._remember_secret(parsed.action, obs)
            except BadReply as bad:
                ex.corrections.append(str(bad))
                if len(ex.corrections) >= 2:
                    return self._fail(f"The model {self.model!r} at {self.base_url} gave no usable answer, even after "
                                      f"a corrective retry: {ex.corrections[-1]}")
                messages = messages + self._correction(reply, str(bad))
                continue
            if isinstance(parsed, ContextRequest):
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
        if self._block and elide(self._block)[1] > 2 * self.budget_tokens:
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
        return self._masked(cut(f"{obs.last_outcome or 'done'}: {said} {obs.feedback or ''}".strip(), 400))

    def _said(self, msg: Any) -> tuple[dict, str | None]:
        """The reply as an assistant message to keep (its first tool call only, secrets masked), and
        that call's id (None for a plain-content reply)."""
        content = self._masked(getattr(msg, "content", None) or "")
        calls = (getattr(msg, "tool_calls", None) or []) if self.mode == "tools" else []
        if not calls:
            return {"role": "assistant", "content": content}, None
        fn, cid = calls[0].function, calls[0].id or f"call_{next(self._ids)}"
        call = {"id": cid, "type": "function",
                "function": {"name": fn.name, "arguments": self._masked(fn.arguments or "{}")}}
        return {"role": "assistant", "content": content or None, "tool_calls": [call]}, cid

    def _masked(self, text: str) -> str:
        """`text` with the texts this planner typed into secret fields masked (as given: it sends only
        what it wrote or was told, no page)."""
        return scrub(text, self._secrets, exact=True)

    def _remember_secret(self, action: Action, obs: Observation) -> None:
        node = obs.snapshot.node_map.get(action.node_id) if action.node_id else None
        if types_secret(action, node) and action.text and action.text not in self._secrets:
            self._secrets.append(action.text)

    def _fail(self, reason: str) -> ProposedStep:
        reason = self._server.clean(reason)
        self._block, self._pending_call = [], None  # the next step starts a new conversation
        log.warning("planner step failed: %s", reason)
        return ProposedStep(thought=reason, action=Action(name="fail", reason=reason))

    def _check_ctx(self, ctx: ContextRequest, ex: Exchange) -> None:
        if len(ex.negotiation) >= MAX_ESCALATIONS:
            raise BadReply(f"You already got {MAX_ESCALATIONS} extra contexts for this step; choose an action now.")
        if any(n["kind"] == ctx.kind for n in ex.negotiation):
            raise BadReply(f"The {ctx.kind} context is already in this conversation; choose an action now.")

    # -- messages we add within a step ---------------------------------------------------------------------
    def _correction(self, msg: Any, error: str) -> list[dict]:
        said = ""
        if msg is not None:
            said = msg.content or ""
            for c in msg.tool_calls or []:
                said += f"\n{c.function.name}({c.function.arguments})"
        how = "with exactly one tool call" if self.mode == "tools" else "with one JSON object as described"
        return [{"role": "assistant", "content": self._masked(cut(said.strip(), 600)) or "(empty reply)"},
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
