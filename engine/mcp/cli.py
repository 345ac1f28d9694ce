"""`vigil mcp [--http PORT] [--approve ask|auto-safe|auto] [--terminal] [--url URL] [--headed]`.

Serves Vigil's browser tools over MCP: on stdio (for a client that spawns it), or with `--http`
on 127.0.0.1 behind a bearer token. Every action goes through the loop's approval policy:
`auto` never asks, `auto-safe` asks only for sensitive steps, `ask` asks for every one. A person
answers in the supervisor window (`vigil mcp` under `ask` where there is a display, or `vigil gui
--mcp [PORT]`: gui.app.launcher hosts the server in the window, since the engine never imports Qt) or,
with `--http --terminal`, at the terminal that started the server. Without a person, `ask` is
refused at start and under `auto-safe` a sensitive step is refused with a tool error that says it
needs a person.

Human output goes to stderr (stdout carries the protocol on stdio). Exit codes: 0 after a clean
shutdown, 2 for bad options or a port that cannot be used, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable

from engine.errors import VigilError
from engine.models import POLICIES
from engine.models.text import bidi_safe_streams

PROG = "vigil mcp"
_POLICY_WORDS = {"auto": "auto — steps run without asking (each is still verified and recorded)",
                 "auto-safe": "auto-safe — only sensitive steps ask a person",
                 "ask": "ask — a person approves every step"}


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the `mcp` command to a `vigil` argparse sub-parser set."""
    p = subparsers.add_parser("mcp", help="serve the browser to MCP clients, every step supervised",
                              description="Serve Vigil's browser tools over the Model Context Protocol: any MCP client "
                                          "drives one tab, each action is a supervised, verified, recorded step.")
    add_options(p)
    return p


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", nargs="?", choices=("grants",),
                   help="grants: list the person's grants in force in running servers (--revoke ID revokes one, "
                        "--session ID shows those of a recorded session) instead of serving")
    p.add_argument("--http", type=int, metavar="PORT",
                   help="serve streamable HTTP on 127.0.0.1:PORT (0: any free port) instead of stdio; requests need "
                        "the bearer token printed at start (or given in VIGIL_MCP_TOKEN)")
    p.add_argument("--approve", choices=POLICIES, default="ask",
                   help="ask: a person approves every step in the Vigil window (default; needs a display), or at "
                        "the terminal with --http --terminal; "
                        "auto-safe: only sensitive steps need a person; auto: never ask")
    p.add_argument("--terminal", action="store_true",
                   help="with --http: the person approves at this terminal (stdin)")
    p.add_argument("--url", help="open this page when the browser starts")
    p.add_argument("--headed", action="store_true", help="show the browser window (needs a display)")
    p.add_argument("--no-record", action="store_true", help="do not keep the session in the session store")
    p.add_argument("--max-clients", type=int, default=8, metavar="N",
                   help="with --http: serve at most N clients at once, each in a tab and session of its own "
                        "(default 8); the next gets BUSY until one leaves")
    p.add_argument("--idle-timeout", type=float, default=600.0, metavar="SECONDS",
                   help="with --http: a client that sends nothing for this long is let go: its run is ended and "
                        "recorded, its tab closed (default 600)")
    p.add_argument("--allow-file-urls", action="store_true",
                   help="let the client open file:// URLs (off: a page opened from disk could show it any local file)")
    p.add_argument("--upload-from", action="append", default=[], metavar="DIR",
                   help="browser_file_upload may send files from this folder (repeatable); then only from these. "
                        "Needed for uploads under --approve auto, where no person sees the files")
    g = p.add_argument_group("grants: approve ordinary steps of one kind on one site without asking, for the rest of "
                             "this session (this server run); never sensitive ones")
    g.add_argument("--grant", action="append", default=[], metavar="KIND@SITE",
                   help="grant KIND (click, type, scroll, select, check or hover) on SITE (example.com, or a URL "
                        "on it) for this server run; repeatable; recorded with the session")
    g.add_argument("--revoke", type=int, metavar="ID", help="vigil mcp grants: revoke the grant with this ID")
    g.add_argument("--session", metavar="ID", help="vigil mcp grants: the grants of this recorded session")
    g.add_argument("--all", action="store_true", help="vigil mcp grants: also list revoked and ended grants")
    g.add_argument("--json", action="store_true", help="vigil mcp grants: print the grants as JSON")
    g.add_argument("--allow", help=argparse.SUPPRESS)  # grants before a run: now --grant KIND@SITE on the run
    g.add_argument("--site", help=argparse.SUPPRESS)


def _has_display() -> bool:
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def approval_problem(args: argparse.Namespace) -> str | None:
    """Why these options leave no way to approve a step that needs a person, or None."""
    if args.terminal and args.http is None:
        return ("--terminal needs --http: over stdio, this process's input carries the MCP protocol itself, so it "
                "cannot also read a person's answers.")
    if args.approve == "ask" and not args.terminal:
        if not _has_display():
            return ("--approve ask needs a person to approve every step, and there is no display to show them the "
                    "supervisor window. Use a display, --approve auto-safe (sensitive steps are then refused: they "
                    "need a person), or --approve auto.")
        return ("--approve ask needs the supervisor window, and this entry point (python -m engine.mcp) cannot open "
                "it: run `vigil mcp` (the vigil command opens the window, bound to the client's tab), or use --http "
                "PORT --terminal (approve at this terminal), --approve auto-safe, or --approve auto.")
    return None


def _fail(code: str, message: str) -> int:
    print(f"{PROG}: {code}: {message}", file=sys.stderr, flush=True)
    return 2


def _say(text: str) -> None:
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)


def _gate(args: argparse.Namespace):
    from engine.loop.gates import AutoApprove, TerminalGate
    from engine.mcp.planner import NoPersonGate

    if args.approve == "auto":
        return AutoApprove()
    if args.terminal:
        return TerminalGate(stdin=sys.stdin, out=sys.stderr)
    return NoPersonGate()


def run(args: argparse.Namespace) -> int:
    """Run `vigil mcp` with parsed arguments; returns the exit code (bad input never raises)."""
    if getattr(args, "what", None) == "grants":
        return grants_command(args)
    if getattr(args, "allow", None) or getattr(args, "site", None):
        return _fail("BAD_ARGUMENT", _ALLOW_MOVED)
    if getattr(args, "revoke", None) is not None or getattr(args, "session", None):
        return _fail("BAD_ARGUMENT", "--revoke and --session belong to `vigil mcp grants`.")
    if args.grant and args.no_record:
        return _fail("BAD_ARGUMENT", "--grant needs the session store (a grant is recorded with its session); "
                                     "drop --no-record, or approve the steps as they come.")
    if args.grant:
        from engine.store.grants import parse_grant
        from engine.store.schema import StoreError
        try:
            for spec in args.grant:
                parse_grant(spec)
        except StoreError as exc:
            return _fail(exc.code, exc.message)
    if not 1 <= getattr(args, "max_clients", 8) <= 64:
        return _fail("BAD_ARGUMENT", f"--max-clients {args.max_clients}: use 1 to 64 (each client holds a browser "
                                     "context and a tab).")
    if not 1 <= getattr(args, "idle_timeout", 600.0) <= 86_400:
        return _fail("BAD_ARGUMENT", f"--idle-timeout {args.idle_timeout:g}: use 1 to 86400 seconds.")
    for d in getattr(args, "upload_from", []):
        if not os.path.isdir(os.path.expanduser(d)):
            return _fail("BAD_ARGUMENT", f"--upload-from {d}: no such folder.")
    problem = approval_problem(args)
    if problem:
        return _fail("NEEDS_PERSON" if "person" in problem else "BAD_ARGUMENT", problem)
    if args.url:
        from engine.mcp.failure import ToolFailure
        from engine.mcp.urls import mcp_url
        try:
            args.url = mcp_url(args.url, allow_files=args.allow_file_urls)
        except ToolFailure as exc:
            return _fail(exc.code, exc.message)
    if not args.no_record:  # a damaged or unusable store is refused before anything is served
        from engine.store import Store
        try:
            Store.open().close()
        except VigilError as exc:
            return _fail(exc.code, f"{exc.message} To serve without keeping sessions, add --no-record.")
    # said at once: loading the server's libraries takes seconds on a busy machine, and silence reads as a hang
    _say("starting… (Chromium starts at once, in the background)")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=f"{PROG}: %(levelname)s: %(message)s")
    for noisy in ("mcp", "uvicorn", "httpx", "httpx2", "sse_starlette"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return asyncio.run(_serve(args))
    except VigilError as exc:
        return _fail(exc.code, exc.message)
    except KeyboardInterrupt:
        _say("interrupted")
        return 130


def _load_libraries() -> None:
    """What serving and a client's first call import (the MCP SDK most of all: ~0.5 s), loaded on a thread so
    the event loop stays free to drive the browser's start meanwhile."""
    import mcp.server.mcpserver  # noqa: F401 - (build_server imports it when called)
    import websockets.asyncio.client  # noqa: F401 - the CDP socket of the first tab

    import engine.mcp.server  # noqa: F401
    import engine.mcp.tools_act  # noqa: F401
    import engine.mcp.tools_browsing  # noqa: F401
    import engine.mcp.tools_read  # noqa: F401
    import engine.snapshot.locators.code  # noqa: F401
    import engine.snapshot.serialize.reading  # noqa: F401
    import engine.store.recorder  # noqa: F401
    import engine.vision.mask  # noqa: F401


async def _serve(args: argparse.Namespace) -> int:
    from engine.mcp.clients import McpClients, duration

    transport = "http" if args.http is not None else "stdio"
    clients = McpClients(policy=args.approve, gate=_gate(args), url=args.url, headless=not args.headed,
                         record=not args.no_record, allow_files=args.allow_file_urls,
                         upload_roots=args.upload_from, transport=transport, max_clients=args.max_clients,
                         idle_s=args.idle_timeout)
    # the browser starts while the client does (a cold first navigate paid for it: 1.2 s against Playwright MCP's
    # 0.4 s); a browser that cannot start is said by the first call that needs it, as before
    clients.chromium.warm(lambda: _say("browser ready"))
    await asyncio.to_thread(_load_libraries)
    from engine.mcp.server import build_server

    for g in clients.grants.start(args.grant):  # bad input was refused before; a store that fails raises VigilError
        _say(f"granted #{g.id} for this session: {g.describe()} (never sensitive steps)")
    server = build_server(clients)
    loop = asyncio.get_running_loop()
    if transport == "http":
        from engine.mcp.http import HOST, PATH, bind, choose_token, make_http_server
        token, from_env = choose_token()
        sock = bind(args.http)
        port = sock.getsockname()[1]
        http = make_http_server(server, token, port, clients)
        stop: Callable[[], object] = http.stop
        _say(f"serving MCP (streamable HTTP) at http://{HOST}:{port}{PATH}")
        _say("bearer token from VIGIL_MCP_TOKEN" if from_env else f"bearer token: {token}")
        _say(f"each client gets a tab and a recorded session of its own; {clients.max_clients} at once "
             f"(--max-clients), idle ones let go after {duration(clients.idle_s)} (--idle-timeout)")
        serving = asyncio.ensure_future(http.serve(sock))
    else:
        serving = asyncio.ensure_future(server.run_stdio_async())
        stop = serving.cancel
        _say("serving MCP over stdio")
    _say(f"approval: {_POLICY_WORDS[args.approve]}" + (" at this terminal" if args.terminal else ""))
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop)
        except (NotImplementedError, RuntimeError):  # not on this platform / not the main thread
            pass
    try:
        await serving
    except asyncio.CancelledError:
        if not serving.cancelled():
            raise
    finally:
        await clients.aclose()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass
    for sid in clients.session_ids:
        _say(f"kept as session {sid[:8]} (vigil export {sid[:8]} --html report.html)")
    if clients.store_error:
        _say(clients.store_error)
    return 0


_ALLOW_MOVED = ("a grant lasts one session now, so it is given to the server run it is for: vigil mcp --grant "
                "KIND@SITE (e.g. --grant click@example.com), or Allow … for this session in the window.")


def grants_command(args: argparse.Namespace) -> int:
    """`vigil mcp grants [--revoke ID] [--session ID] [--all] [--json]`."""
    import json

    from engine.store import Store
    from engine.store.grants import GrantBook, session_grants

    if args.allow or args.site or args.grant:
        return _fail("BAD_ARGUMENT", _ALLOW_MOVED)
    try:
        with Store.open() as store:
            book = GrantBook(store)
            if args.revoke is not None:
                g = book.revoke(args.revoke)
                _say(f"revoked #{g.id}: {g.describe()}" if g.revoked_at
                     else f"#{g.id} is no longer in force: {g.state()}")
            if args.session:
                grants = session_grants(store, store.resolve_id(args.session))
            else:
                grants = book.all() if args.all else book.active()
    except VigilError as exc:
        return _fail(exc.code, exc.message)
    if args.json:
        print(json.dumps([{**g.model_dump(), "state": g.state()} for g in grants], indent=2))
    elif not grants:
        print("No grants in force: every step the policy asks about is asked." if not (args.all or args.session)
              else "No grants.")
    else:
        for g in grants:
            print(f"#{g.id}  {g.kind:<6} {g.site:<30} since {g.created_at}  {g.state()}"
                  + (f"  session {g.session_id[:8]}" if g.session_id else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m engine.mcp …` — the same as `vigil mcp …` (whose streams `vigil` wraps as here)."""
    p = argparse.ArgumentParser(prog=PROG, description="Serve Vigil's supervised browser over MCP.")
    add_options(p)
    # what is said on stderr quotes pages and clients: bidi controls print as markers; stdout carries the protocol
    # (or, for `grants`, a listing for a person unless --json)
    with bidi_safe_streams(stdout=False):
        args = p.parse_args(sys.argv[1:] if argv is None else argv)
        with bidi_safe_streams(stdout=args.what == "grants" and not args.json):
            return run(args)
