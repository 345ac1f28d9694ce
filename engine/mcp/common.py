"""What every tool shares: turning failures into clear tool errors, and letting the page settle."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from engine.errors import VigilError
from engine.mcp.failure import ToolFailure
from engine.mcp.results import error_result

if TYPE_CHECKING:
    from engine.mcp.clients import McpClients

log = logging.getLogger("vigil.mcp")


def guarded(clients: McpClients) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
    """Wrap a tool: a refused call, bad input or a page problem becomes a tool error naming the
    problem and what to do (never a traceback), scrubbed of the calling client's secrets; an unexpected
    bug is logged without the arguments (they may hold a secret) and reported as an internal error."""

    def wrap(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(fn)
        async def tool(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except ToolFailure as exc:
                return error_result(exc.code, exc.message, clients.peek(kwargs.get("ctx")))
            except VigilError as exc:
                hint = " (Here: browser_handle_dialog with accept true or false.)" if exc.code == "DIALOG_OPEN" else ""
                return error_result(exc.code, exc.message + hint, clients.peek(kwargs.get("ctx")))
            except ValueError as exc:  # a bad argument (pydantic's ValidationError is one too)
                return error_result("BAD_ARGUMENT", _first_line(exc), clients.peek(kwargs.get("ctx")))
            except Exception as exc:  # noqa: BLE001 - a bug must not take the server down
                log.error("tool %s failed: %s", fn.__name__, type(exc).__name__,
                          exc_info=log.isEnabledFor(logging.DEBUG))
                return error_result("INTERNAL", f"{fn.__name__} failed inside Vigil ({type(exc).__name__}); take a "
                                                "new snapshot to see the page as it is now.",
                                    clients.peek(kwargs.get("ctx")))

        return tool

    return wrap


def _first_line(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            e = errors()[0]
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "__root__")
            return f"{where + ': ' if where else ''}{e.get('msg', str(exc))}".replace("Value error, ", "")
        except Exception:  # noqa: BLE001
            pass
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


async def settle(tab: Any) -> None:
    """Let the page settle before reading it (a page that never settles is read as it is)."""
    try:
        await tab.wait_stable(since=0.0)
    except VigilError as exc:
        tab.check_alive()
        log.debug("page did not settle: %s", exc.message)
