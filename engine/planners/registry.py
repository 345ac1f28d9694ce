"""Build a planner by name — the one place the CLI, the benchmark and the GUI construct them."""

from __future__ import annotations

from typing import Any

from engine.errors import ErrorCode, VigilError

PLANNERS = ("heuristic", "openai", "backend", "script")


def make_planner(name: str, *, script: str | None = None, base_url: str | None = None, model: str | None = None,
                 api_key: str | None = None, backend_url: str | None = None, vision: bool = False,
                 tools: bool = True, full_page: bool = False, timeout: float = 60.0) -> Any:
    """A planner ready to `propose`; a VigilError (code BAD_ARGUMENT / PLANNER_CONFIG) naming what
    is missing otherwise. Model settings fall back to VIGIL_* / OPENAI_* environment variables."""
    if name == "heuristic":
        from engine.planners.heuristic import HeuristicPlanner
        return HeuristicPlanner()
    if name == "script":
        if not script:
            raise VigilError("--planner script needs --script FILE (a JSON or YAML list of steps).",
                             code=ErrorCode.BAD_ARGUMENT)
        from engine.loop.scripted import ScriptedPlanner, load_script
        return ScriptedPlanner(load_script(script))
    if name == "openai":
        from engine.planners.openai_planner import OpenAIPlanner
        return OpenAIPlanner(base_url=base_url, model=model, api_key=api_key, vision=vision, tools=tools,
                             full_page=full_page, timeout=timeout)
    if name == "backend":
        import os
        url = backend_url or os.environ.get("VIGIL_BACKEND_URL")
        if not url:
            raise VigilError("--planner backend needs --backend-url URL (or VIGIL_BACKEND_URL).",
                             code=ErrorCode.BAD_ARGUMENT)
        from engine.planners.backend import BackendPlanner
        try:
            return BackendPlanner(url, timeout=timeout)
        except ValueError as exc:
            raise VigilError(str(exc), code=ErrorCode.BAD_ARGUMENT) from None
    raise VigilError(f"Unknown planner {name!r}; choose one of {', '.join(PLANNERS)}.", code=ErrorCode.BAD_ARGUMENT)
