"""Talking to an OpenAI-compatible chat server: one completion per call, adapting once to a server that
refuses tool_choice="required", tools (JSON replies from then on) or a temperature; server trouble
(timeout, refused connection, HTTP error) worded for a person, the API key never in it. `Exchange`
keeps what was sent and received, for the payload inspector."""

from __future__ import annotations

import json
import logging
from typing import Any

import openai
from pydantic import BaseModel, Field

from engine.planners.openai_tools import tool_specs
from engine.planners.payload import IMAGE_TOKENS
from engine.snapshot.serialize.tokens import cut, estimate_tokens

log = logging.getLogger("vigil.planner.openai")


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


class ServerProblem(Exception):
    """The server could not give a reply; the message is written for a person."""


class ModeSwitched(Exception):
    """The server refused tools: start the step again in JSON mode."""


def elide(messages: list[dict]) -> tuple[list[dict], int]:
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


class ChatTransport:
    """One chat server and what it was found to accept: the reply `mode` ("tools" or "json"), the tool
    choice, the temperature."""

    def __init__(self, client: openai.AsyncOpenAI, *, base_url: str, model: str, timeout: float,
                 temperature: float | None, tools: bool):
        self.client, self.base_url, self.model, self.timeout = client, base_url, model, timeout
        self.temperature = temperature
        self.mode = "tools" if tools else "json"
        self.tool_choice = "required"

    async def complete(self, messages: list[dict], ex: Exchange) -> Any:
        """One chat completion; returns the reply message (or None). Adapts once to servers that refuse
        tool_choice="required", tools (→ JSON mode: ModeSwitched) or a temperature; ServerProblem when
        there is no reply."""
        while True:
            kw: dict[str, Any] = {"model": self.model, "messages": messages}
            if self.temperature is not None:
                kw["temperature"] = self.temperature
            if self.mode == "tools":
                kw["tools"], kw["tool_choice"] = tool_specs(), self.tool_choice
            ex.messages, ex.tokens = elide(messages)
            ex.requests += 1
            try:
                resp = await self.client.chat.completions.create(**kw)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if self._adapt(exc):
                    continue
                raise ServerProblem(self._http_problem(exc)) from None
            except openai.APITimeoutError:
                raise ServerProblem(f"The model server at {self.base_url} timed out: no answer within "
                                    f"{self.timeout:g} s (model {self.model!r}).") from None
            except openai.APIConnectionError as exc:
                cause = self.clean(str(exc.__cause__ or exc))
                raise ServerProblem(f"Could not reach the model server at {self.base_url} ({cause}). Is it running, "
                                    "and is the base URL right (it usually ends in /v1)?") from None
            except openai.APIStatusError as exc:
                raise ServerProblem(self._http_problem(exc)) from None
            except openai.OpenAIError as exc:
                raise ServerProblem(f"The model server at {self.base_url} sent an unusable response: "
                                    f"{self.clean(str(exc))}") from None
            choices = getattr(resp, "choices", None) or []
            msg = choices[0].message if choices else None
            ex.reply = msg.model_dump(exclude_none=True) if msg is not None else None
            return msg

    def _adapt(self, exc: openai.APIStatusError) -> bool:
        text = str(exc).lower()
        if self.mode == "tools" and self.tool_choice == "required" and "tool_choice" in text:
            log.info("%s refused tool_choice=required; using auto", self.base_url)
            self.tool_choice = "auto"
            return True
        if self.mode == "tools" and ("tool" in text or "function" in text):
            log.info("%s refused tool calling; switching to JSON replies", self.base_url)
            self.mode = "json"
            raise ModeSwitched
        if self.temperature is not None and "temperature" in text:
            self.temperature = None
            return True
        return False

    def clean(self, text: str) -> str:
        """`text` without the API key, shortened."""
        key = self.client.api_key
        if isinstance(key, str) and len(key) >= 4:
            text = text.replace(key, "***")
        return cut(text, 300)

    def _http_problem(self, exc: openai.APIStatusError) -> str:
        hint = {401: " Check the API key (VIGIL_API_KEY or OPENAI_API_KEY).", 403: " Check the API key and its access.",
                404: " Check the model name and the base URL (it usually ends in /v1).",
                429: " The server is rate-limiting; wait and try again."}.get(exc.status_code, "")
        return (f"The model server at {self.base_url} answered HTTP {exc.status_code}: "
                f"{self.clean(exc.message)}.{hint}")
