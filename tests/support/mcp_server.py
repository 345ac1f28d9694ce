"""`vigil mcp` as the tests drive it: a real server subprocess with the SDK's client connected over stdio, or
over streamable HTTP (`HttpServer`, whose terminal the test types into), and how a test finds controls in a reply."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from engine.mcp.probe import Reply, stdio_probe, vigil_command

from support.mcp_client import ThreadedProbe
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


class HttpServer:
    """`python -m engine.mcp --http 0 OPTIONS`: its banner, its stdin (the terminal) and an SDK client."""

    def __init__(self, *options: str, home, env_update: dict | None = None):
        env = {k: v for k, v in os.environ.items() if k != "VIGIL_MCP_TOKEN"}
        env.update({"VIGIL_HOME": str(home), **(env_update or {})})
        self.proc = subprocess.Popen([sys.executable, "-m", "engine.mcp", "--http", "0", *options], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self.token = None
        self.banner = self.wait_for(r"approval: ")
        m = re.search(r"at (http://\S+)", self.banner)
        self.url = m.group(1) if m else None
        m = re.search(r"bearer token: (\S+)", self.banner)
        self.token = m.group(1) if m else None
        self.client = ThreadedProbe()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.put(line)

    def wait_for(self, pattern: str, timeout: float = 60) -> str:
        """Everything the server printed up to the first line matching `pattern`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            self.seen.append(line)
            if re.search(pattern, line):
                return "".join(self.seen)
        raise AssertionError(f"the server never printed {pattern!r}; it printed: {''.join(self.seen)}")

    def answer(self, text: str) -> None:
        """What the person types at the terminal."""
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def connect(self, token: str | None) -> None:
        self.client.connect(self.url, token, "http-test-client")

    def start_call(self, name: str, arguments: dict | None = None):
        return self.client.start_call(name, arguments)

    def call(self, name: str, arguments: dict | None = None, timeout: float = 90) -> Reply:
        return self.client.call(name, arguments, timeout)

    def close(self) -> int:
        self.client.close()
        self.proc.terminate()  # SIGTERM: the server ends the run, stores it and closes the browser
        try:
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
