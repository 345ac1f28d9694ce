"""`vigil bench mcp --clients 1,4,8`: several MCP clients at once over HTTP, each on a page of its own.

Each client (the SDK's own, over streamable HTTP, with a `clientInfo` name of its own) opens its page
(`/c/K`: a heading "Client K", a Note field and a Save button that posts the note with the page's own
client number), then repeats snapshot, type, click. Counted: tool errors, snapshots that showed another
client's page, notes a local server received from another client's page (a typed text that landed
elsewhere), calls per second over the whole run and the p95 of a call's time. `--server-root DIR` runs
the server from another checkout (the before side of an A/B).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Client {k}</title></head><body>
<h1>Client {k}</h1>
<form method="post" action="/save" onsubmit="event.preventDefault(); fetch('/save', {{method: 'POST',
  body: new URLSearchParams({{client: '{k}', note: document.getElementById('note').value}})}})
  .then(() => {{ document.getElementById('saved').textContent = 'Saved ' + (++window.saves); }});">
<label>Note <input id="note" name="note"></label>
<button type="submit">Save</button></form><p id="saved">Not saved yet</p>
<script>window.saves = 0;</script></body></html>"""


class _Site(http.server.BaseHTTPRequestHandler):
    saves: list[tuple[str, str]]  # (the client number of the page that posted, the note)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        m = re.fullmatch(r"/c/(\d+)", self.path)
        body = PAGE.format(k=m.group(1)).encode() if m else b"not found"
        self.send_response(200 if m else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        data = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
        self.saves.append(((data.get("client") or [""])[0], (data.get("note") or [""])[0]))
        self.send_response(204)
        self.end_headers()


@contextlib.contextmanager
def _site() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    saves: list[tuple[str, str]] = []
    handler = type("Site", (_Site,), {"saves": saves})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", saves
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class ClientTally:
    calls: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    foreign_pages: int = 0
    snapshots: int = 0


_REF = re.compile(r"\[(\w+)\] (inp|btn) \"(Note|Save)\"")


async def _client(url: str, token: str, site: str, k: int, actions: int) -> ClientTally:
    from engine.mcp.probe import http_probe

    tally = ClientTally()

    async def call(name: str, args: dict):
        reply = await probe.call(name, args)
        tally.calls.append(reply.seconds)
        if reply.is_error:
            tally.errors.append(f"{name}: {reply.text.splitlines()[0][:160]}")
        return reply

    async with http_probe(url, token, client_name=f"bench-client-{k}", timeout=300) as probe:
        await call("browser_navigate", {"url": f"{site}/c/{k}"})
        refs: dict[str, str] = {}
        i = 0
        while len(tally.calls) < actions:
            kind = len(tally.calls) % 3
            if kind == 1:
                snap = await call("browser_snapshot", {})
                tally.snapshots += 1
                heads = set(re.findall(r"Client (\d+)", snap.text))
                if heads != {str(k)}:
                    tally.foreign_pages += 1
                refs = {m.group(3): m.group(1) for m in _REF.finditer(snap.text)}
            elif kind == 2:
                i += 1
                await call("browser_type", {"ref": refs.get("Note", "0"), "text": f"note-{k}-{i}"})
            else:
                await call("browser_click", {"ref": refs.get("Save", "0")})
    return tally


def _start_server(root: Path, home: str) -> tuple[subprocess.Popen, str, str]:
    env = {**os.environ, "VIGIL_HOME": home, "VIGIL_MCP_TOKEN": "bench-token-" + "x" * 20}
    proc = subprocess.Popen([sys.executable, "-m", "engine.mcp", "--http", "0", "--approve", "auto"], cwd=root,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    err = proc.stderr
    assert err is not None
    deadline = time.monotonic() + 60
    for line in err:
        m = re.search(r"at (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in err], daemon=True).start()  # keep it drained
            return proc, m.group(1), env["VIGIL_MCP_TOKEN"]
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise RuntimeError("vigil mcp --http did not start")


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else (values[0] if values else 0.0)


async def run_clients(n: int, actions: int, root: Path) -> dict:
    """One server, `n` clients at once, `actions` calls each: the figures of the module docstring."""
    with tempfile.TemporaryDirectory() as home, _site() as (site, saves):
        proc, url, token = _start_server(root, home)
        try:
            t0 = time.perf_counter()
            tallies = await asyncio.gather(*(_client(url, token, site, k, actions) for k in range(1, n + 1)),
                                           return_exceptions=True)
            wall = time.perf_counter() - t0
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    crashed = [f"{type(t).__name__}: {t}" for t in tallies if isinstance(t, BaseException)]
    done = [t for t in tallies if isinstance(t, ClientTally)]
    calls = [c for t in done for c in t.calls]
    landed_elsewhere = sum(1 for page, note in saves if not note.startswith(f"note-{page}-"))
    return {"clients": n, "actions_per_client": actions, "calls": len(calls),
            "errors": sum(len(t.errors) for t in done) + len(crashed),
            "error_samples": ([e for t in done for e in t.errors] + crashed)[:3],
            "snapshots": sum(t.snapshots for t in done), "foreign_pages": sum(t.foreign_pages for t in done),
            "notes_saved": len(saves), "notes_on_another_page": landed_elsewhere,
            "calls_per_s": round(len(calls) / wall, 2) if wall else 0.0,
            "p95_ms": round(_p95(calls) * 1000), "median_ms": round(statistics.median(calls) * 1000) if calls else 0}


def format_rows(rows: list[dict]) -> str:
    head = (f"{'clients':>7}{'calls':>7}{'errors':>8}{'foreign snaps':>15}{'notes elsewhere':>17}"
            f"{'calls/s':>9}{'median ms':>11}{'p95 ms':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['clients']:>7}{r['calls']:>7}{r['errors']:>8}{r['foreign_pages']:>9}/{r['snapshots']:<5}"
                     f"{r['notes_on_another_page']:>11}/{r['notes_saved']:<5}{r['calls_per_s']:>9}"
                     f"{r['median_ms']:>11}{r['p95_ms']:>8}")
        lines += [f"        e.g. {e}" for e in r["error_samples"]]
    return "\n".join(lines)


def bench_clients(counts: list[int], actions: int, root: Path | None = None, out=print) -> list[dict]:
    root = root or Path(__file__).resolve().parents[2]
    rows = []
    for n in counts:
        rows.append(asyncio.run(run_clients(n, actions, root)))
        out(f"{n} client(s): {rows[-1]['calls']} calls, {rows[-1]['errors']} errors")
    return rows


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m engine.mcp.bench_clients")
    p.add_argument("--clients", default="1,4,8")
    p.add_argument("--actions", type=int, default=20)
    p.add_argument("--server-root", type=Path)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    rows = bench_clients([int(x) for x in a.clients.split(",")], a.actions, a.server_root,
                         out=lambda s: print(s, file=sys.stderr, flush=True))
    print(json.dumps(rows, indent=2) if a.json else format_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
