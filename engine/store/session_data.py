"""What reading the store gives: a session's line in a list, its whole row, and everything kept about it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engine.models import ChatMessage, Plan, StepRecord


class SessionSummary(BaseModel):
    """One line of `vigil sessions`."""

    id: str
    title: str
    domain: str
    url: str
    status: str
    steps: int
    started: str
    unverified: int = 0  # steps that ran but were not seen to do what they should (as `vigil run` words it)
    reason: str | None = None  # why it ended, if not by its answer (tells a person's stop from a process's end)


class SessionInfo(SessionSummary):
    """The whole session row."""

    task: str
    planner: str
    policy: str
    is_renamed: bool
    metadata: dict[str, Any]
    answer: str | None
    reason: str | None
    updated: str


class SessionData(BaseModel):
    """Everything stored about one session; `blobs` maps step index → {role: sha256}."""

    session: SessionInfo
    messages: list[ChatMessage] = Field(default_factory=list)
    plan: Plan | None = None
    plans: list[Plan] = Field(default_factory=list)
    steps: list[StepRecord] = Field(default_factory=list)
    blobs: dict[int, dict[str, str]] = Field(default_factory=dict)
