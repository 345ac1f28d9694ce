"""`vigil mcp` as the tests drive it: a real server subprocess with the SDK's client connected over stdio, and
how a test finds controls in a reply."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from engine.mcp.probe import Reply, stdio_probe, vigil_command

from support.paths import ROOT

SECRET = "hunter2-Secret!"


class McpServerProcess:
    """`python -m engine.mcp OPTIONS` with an SDK client connected over stdio, on a background loop."""

    def __init__(self, *options: str, home: Path, client_name: str = "vigil-tests"):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.errlog = tempfile.TemporaryFile("w+", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "VIGIL_MCP_TOKEN"}
        env["VIGIL_HOME"] = str(home)
        self.command, self.args = vigil_command(*options)
        self.env, self.client_name = env, client_name
        self.probe = None
        self._stop: asyncio.Event | None = None
        ready = threading.Event()
        self._main = asyncio.run_coroutine_threadsafe(self._serve(ready), self.loop)
        if not ready.wait(60):
            raise AssertionError(f"the MCP server did not answer within 60 s: {self.stderr()}")
        if self._main.done():
            self._main.result()

    async def _serve(self, ready: threading.Event) -> None:
        self._stop = asyncio.Event()
        try:
            async with stdio_probe(self.command, self.args, env=self.env, cwd=str(ROOT), errlog=self.errlog,
                                   client_name=self.client_name, timeout=120) as probe:
                self.probe = probe
                ready.set()
                await self._stop.wait()
        finally:
            ready.set()

    def call(self, name: str, arguments: dict | None = None, timeout: float = 90) -> Reply:
        fut = asyncio.run_coroutine_threadsafe(self.probe.call(name, arguments), self.loop)
        try:
            return fut.result(timeout)
        except TimeoutError:
            fut.cancel()
            raise AssertionError(f"{name} did not answer within {timeout} s (hang); "
                                 f"server said: {self.stderr()}") from None

    def tools(self) -> list[str]:
        return asyncio.run_coroutine_threadsafe(self.probe.tools(), self.loop).result(60)

    def stderr(self) -> str:
        self.errlog.flush()
        self.errlog.seek(0)
        return self.errlog.read()

    def close(self) -> None:
        """Disconnect (the server sees its input end and shuts down cleanly) and stop the loop."""
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        try:
            self._main.result(60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


_CONTROL = re.compile(r'^\[([^\]]+)\] (\S+)(?: "(.*?)")?(?: = "(.*?)")?(?: \((.*)\))?$')


def items_of(reply: Reply) -> list[dict]:
    """The controls in a reply that carries the whole page: the semantic payload's items, or the
    reading's control lines (`[ref] role "name" = "value" (states)`) in the same shape."""
    page = reply.page()
    start = page.find('{"mode":"semantic"')
    if start >= 0:
        return json.loads(page[start:].splitlines()[0])["interactive_tree"]
    items = []
    for line in page.splitlines():
        m = _CONTROL.match(line)
        if m:
            item = {"i": m[1], "r": m[2]}
            item.update({k: v for k, v in (("n", m[3]), ("v", m[4]), ("s", m[5])) if v})
            items.append(item)
    assert items, f"no controls in: {reply.text}"
    return items


def ref(items: list[dict], name: str) -> str:
    found = [i["i"] for i in items if i.get("n") == name]
    assert found, f"no element named {name!r} in {items}"
    return found[0]


def vigil_script() -> list[str]:
    """The installed `vigil` script next to this interpreter (the one a client's config names)."""
    exe = Path(sys.executable).parent / "vigil"
    found = str(exe) if exe.exists() else shutil.which("vigil")
    assert found, "the vigil command is not installed (pip install -e .)"
    return [found]
