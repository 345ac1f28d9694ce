"""Contracts of a snapshot: page context, frames, stats and serializations."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Format = Literal["tree", "semantic", "skeleton", "full"]
FORMATS: tuple[str, ...] = ("tree", "semantic", "skeleton", "full")


class Viewport(BaseModel):
    model_config = ConfigDict(frozen=True)
    width: int
    height: int


class PageContext(BaseModel):
    """What page a snapshot was taken of."""

    model_config = ConfigDict(frozen=True)
    url: str
    title: str
    domain: str
    viewport: Viewport
    scroll_x: float = 0
    scroll_y: float = 0
    page_width: float = 0
    page_height: float = 0
    device_pixel_ratio: float = 1.0
    http_status: int | None = None  # the HTTP status the main document was answered with (None: not over HTTP)

    @property
    def http_error(self) -> str:
        """A short note when the page answered an HTTP error ("HTTP 404 Not Found"), else ""."""
        code = self.http_status
        if code is None or code < 400:
            return ""
        try:
            return f"HTTP {code} {HTTPStatus(code).phrase}"
        except ValueError:  # a code without a standard phrase (599, 520 …)
            return f"HTTP {code}"

    @property
    def scroll_position(self) -> str:
        """How far down the page the viewport is, as a percentage string ("25%")."""
        room = self.page_height - self.viewport.height
        if room <= 1:
            return "0%"
        return f"{round(100 * min(1.0, max(0.0, self.scroll_y / room)))}%"


class FrameInfo(BaseModel):
    model_config = ConfigDict(frozen=True)
    frame_id: str
    ordinal: int
    url: str
    parent_frame_id: str | None = None
    owner_node_id: str | None = None
    cross_process: bool = False
    offset: tuple[float, float] = (0.0, 0.0)


class SnapshotStats(BaseModel):
    """Counts per tier, per-phase timings (ms) and token estimates per serialization."""

    nodes: int
    tiers: dict[str, int]
    interactive: int
    visible_interactive: int
    frames: int
    shadow_nodes: int
    truncated: bool = False
    timings_ms: dict[str, float] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)


class Serialization(BaseModel):
    """One rendering of a snapshot for a model or a person."""

    model_config = ConfigDict(frozen=True)
    format: Format
    text: str
    tokens: int
    node_count: int = 0
    truncated: bool = False
    legend: str | None = None
    data: Any = Field(default=None, exclude=True, repr=False)
