"""Contracts for acting on a page and proving what happened: actions, expected outcomes,
verification results and page events."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engine.errors import ErrorCode

ActionName = Literal["click", "double_click", "hover", "type", "press", "select", "check", "uncheck", "scroll",
                     "navigate", "back", "wait", "finish", "fail", "switch_tab", "close_tab", "new_tab", "dialog",
                     "upload"]
ACTION_NAMES: tuple[str, ...] = ("click", "double_click", "hover", "type", "press", "select", "check", "uncheck",
                                 "scroll", "navigate", "back", "wait", "finish", "fail", "switch_tab", "close_tab",
                                 "new_tab", "dialog", "upload")
NODE_ACTIONS = frozenset({"click", "double_click", "hover", "type", "select", "check", "uncheck", "upload"})
TERMINAL_ACTIONS = frozenset({"finish", "fail"})
# actions on the browser's tabs (run by the loop on the browser, not on one page)
TAB_ACTIONS = frozenset({"switch_tab", "close_tab", "new_tab"})

ScrollDirection = Literal["up", "down", "left", "right", "top", "bottom"]
OutcomeType = Literal["navigation", "element_appears", "element_disappears", "value_changes", "state_changes",
                      "any_change", "no_change", "submitted"]
# submitted: pressing Enter in a field had an effect — the page navigated, the DOM changed, or the
# field was consumed (cleared, changed or removed). The default for type(…, submit=True).
EventCategory = Literal["error", "success", "warning", "loading", "form", "text", "element"]



class TargetQuery(BaseModel):
    """A target given by what it is rather than by ID: resolved against the current snapshot."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    role: str | None = None
    name: str | None = None
    text: str | None = None
    exact: bool = False
    nth: int = Field(default=0, ge=0, description="0-based index among the matches")

    @model_validator(mode="after")
    def _something(self) -> TargetQuery:
        if not (self.role or self.name or self.text):
            raise ValueError("a target query needs at least one of role, name or text")
        return self

    def describe(self) -> str:
        parts = []
        if self.role:
            parts.append(self.role)
        if self.name:
            parts.append(f'named "{self.name}"')
        if self.text:
            parts.append(f'with text "{self.text}"')
        if self.nth:
            parts.append(f"(match #{self.nth + 1})")
        return " ".join(parts)


class ExpectedOutcome(BaseModel):
    """What an action should do (seed 000 §2.6.3), with an optional alternative under `or`.

    `{"type": "navigation", "or": {"type": "element_appears", "text": "Thank you"}}`"""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    type: OutcomeType
    text: str | None = None          # element_appears / element_disappears: visible text or name
    role: str | None = None          # element_appears / element_disappears: role
    node_id: str | None = None       # value_changes / state_changes / element_disappears / submitted: which node
    value: str | None = None         # value_changes: the value it should now have
    state: str | None = None         # state_changes: e.g. "checked", "expanded", "selected"
    url_contains: str | None = None  # navigation: the new URL should contain this
    timeout_ms: int = Field(default=3000, ge=0, le=60000)
    or_: ExpectedOutcome | None = Field(default=None, alias="or")

    @model_validator(mode="before")
    @classmethod
    def _seed_shorthand(cls, data: Any) -> Any:
        # the seed's shorthand: {"type": "navigation", "or_element_appears": "Thank you"}
        if isinstance(data, dict) and "or_element_appears" in data:
            data = dict(data)
            data["or"] = {"type": "element_appears", "text": data.pop("or_element_appears")}
        return data

    def describe(self) -> str:
        if self.type == "submitted":
            return "the submission to have an effect" + (f" or {self.or_.describe()}" if self.or_ else "")
        t = self.type.replace("_", " ")
        bits = [t]
        if self.text:
            bits.append(f'"{self.text}"')
        if self.role:
            bits.append(f"({self.role})")
        if self.state:
            bits.append(f"[{self.state}]")
        if self.value is not None:
            bits.append(f'= "{self.value}"')
        s = " ".join(bits)
        return s + (f" or {self.or_.describe()}" if self.or_ else "")


class Action(BaseModel):
    """One step's action. `target` is a node ID or a TargetQuery; which other fields apply depends on `name`."""

    model_config = ConfigDict(extra="forbid")
    name: ActionName
    target: str | TargetQuery | None = None
    text: str | None = None        # type
    clear: bool = True             # type
    submit: bool = False           # type
    key: str | None = None         # press
    repeat: int = Field(default=1, ge=1, le=500)  # press: how many times
    option: str | None = None      # select
    direction: ScrollDirection = "down"  # scroll
    amount: int | None = None      # scroll, px
    url: str | None = None         # navigate
    ms: int | None = None          # wait
    answer: str | None = None      # finish
    reason: str | None = None      # fail
    force: bool = False            # click-like: act even when covered
    tab: int | None = Field(default=None, ge=0)  # switch_tab / close_tab: the tab's index (close_tab: the active one)
    accept: bool | None = None     # dialog: OK (true) or Cancel (false); `text` answers a prompt
    paths: list[str] | None = None  # upload: the files to set on the file input

    @field_validator("target", mode="before")
    @classmethod
    def _target(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        return v

    @model_validator(mode="after")
    def _complete(self) -> Action:
        n = self.name
        if n in NODE_ACTIONS and self.target is None:
            raise ValueError(f"{n} needs a target (a node ID or {{role, name}})")
        if n == "type" and self.text is None:
            raise ValueError("type needs text")
        if n == "press" and not self.key:
            raise ValueError("press needs a key, e.g. Enter or Control+A")
        if n == "select" and self.option is None:
            raise ValueError("select needs an option (its label or value)")
        if n == "navigate" and not self.url:
            raise ValueError("navigate needs a url")
        if n == "wait" and (self.ms is None or self.ms < 0):
            raise ValueError("wait needs ms >= 0")
        if n == "switch_tab" and self.tab is None:
            raise ValueError("switch_tab needs the tab's index, e.g. switch_tab(1)")
        if n == "dialog" and self.accept is None:
            raise ValueError("dialog needs accept: true (OK) or false (Cancel)")
        if n == "upload" and not self.paths:
            raise ValueError("upload needs at least one file path")
        return self

    @property
    def node_id(self) -> str | None:
        return self.target if isinstance(self.target, str) else None

    def to_string(self) -> str:
        """The action as a call string in the seed's style: click(12), type(13, "x"), finish()."""
        import json as _j
        t = self.target
        tgt = t if isinstance(t, str) else (_j.dumps(t.model_dump(exclude_defaults=True),
                                                     ensure_ascii=False) if t else None)
        q = lambda s: _j.dumps(s, ensure_ascii=False)  # noqa: E731
        n = self.name
        if n in ("click", "double_click", "hover", "check", "uncheck"):
            return f"{n}({tgt}{', force=true' if self.force else ''})"
        if n == "type":
            extra = (", clear=false" if not self.clear else "") + (", submit=true" if self.submit else "")
            return f"type({tgt}, {q(self.text)}{extra})"
        if n == "press":
            repeat = f", repeat={self.repeat}" if self.repeat > 1 else ""
            return f"press({q(self.key)}{', ' + tgt if tgt else ''}{repeat})"
        if n == "select":
            return f"select({tgt}, {q(self.option)})"
        if n == "scroll":
            args = [q(self.direction)] + ([tgt] if tgt else []) + ([str(self.amount)] if self.amount else [])
            return f"scroll({', '.join(args)})"
        if n == "navigate":
            return f"navigate({q(self.url)})"
        if n == "wait":
            return f"wait({self.ms})"
        if n == "finish":
            return f"finish({q(self.answer) if self.answer else ''})"
        if n == "fail":
            return f"fail({q(self.reason) if self.reason else ''})"
        if n == "switch_tab":
            return f"switch_tab({self.tab})"
        if n == "close_tab":
            return f"close_tab({'' if self.tab is None else self.tab})"
        if n == "new_tab":
            return f"new_tab({q(self.url) if self.url else ''})"
        if n == "dialog":
            return f"dialog({'true' if self.accept else 'false'}{', ' + q(self.text) if self.text is not None else ''})"
        if n == "upload":
            return f"upload({tgt}, {', '.join(q(p) for p in self.paths or [])})"
        return f"{n}()"


class PageEvent(BaseModel):
    """One meaningful change seen by the page-side mutation stream."""

    model_config = ConfigDict(frozen=True)
    category: EventCategory
    kind: str            # added, removed, shown, hidden, changed, invalid, text
    text: str
    age_ms: int          # how long ago, at the time it was read
    frame_id: str = ""
    at: float = 0.0      # page clock (ms since epoch)

    def describe(self) -> str:
        age = f"{self.age_ms / 1000:.1f}s ago"
        return f"[{age}] {self.category}: {self.kind.capitalize()} '{self.text}'"


class PageState(BaseModel):
    url: str
    url_changed: bool
    dom_changed: bool
    recent_mutations: list[str] = Field(default_factory=list)


class VerificationResult(BaseModel):
    """Did the action do what was expected? (seed 000 §2.6.3)"""

    success: bool
    verified_outcome: OutcomeType | None
    expected: ExpectedOutcome | None = None
    actual_outcome: str
    errors_detected: list[str] = Field(default_factory=list)
    success_messages: list[str] = Field(default_factory=list)
    page_state: PageState
    confidence: float = Field(ge=0.0, le=1.0)
    feedback: str
    # what the step changed on the page, in words, most relevant first ("text appeared: '…'"); page text
    page_changes: list[str] = Field(default_factory=list)


class ActionResult(BaseModel):
    """What an action did. `message` is written for a person and a model alike."""

    success: bool
    action: str                      # the action string, e.g. click(12)
    node_id: str | None = None       # the node acted on (after any recovery)
    error_code: ErrorCode | None = None
    message: str = ""
    verification: VerificationResult | None = None
    recovered_from: str | None = None  # the stale ID this action was recovered from
    point: tuple[float, float] | None = None  # where the pointer went, in top-level CSS px
    data: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.success and (self.verification is None or self.verification.success)


OutcomeLike = ExpectedOutcome | dict | None
