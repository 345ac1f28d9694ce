"""`python -m engine.mcp.bench` (later `vigil bench mcp`): the same short flow through Vigil's MCP
server and through Playwright MCP, measured in the same run.

The flow: navigate, snapshot, then three actions by ref — on the bundled demo shop (click the cookie
banner's Accept, type a name into Full name, select a country) and on a generated page of about
5,000 elements (the snapshot benchmark's page: tick two brand filters, type into the search box).
Both servers are spawned over stdio by the MCP SDK's client, cold (each repetition starts a fresh
server and browser, so the first navigate includes the browser's start), repetitions interleaved.
Per step: the tokens the tool returned (text only, 4 ASCII characters a token — the estimate every
Vigil payload uses) and the wall time of the call as the client saw it; medians over the
repetitions. Also the tokens of the tool definitions, paid once per session.

Playwright MCP comes from npm (`@playwright/mcp`), installed on demand into a cache folder outside
the repository and launched with the Chromium Vigil runs headless on (Debian's headless shell when it is
installed, else Debian's Chromium), so both drive the same browser: `--executable-path … --headless --no-sandbox
--isolated --viewport-size 1280x800`, everything else default. Its actions write the page snapshot
to a file and return a link; the report counts that file separately ("linked"): it is what a client
reads to see the page after the step. When npm or the registry cannot be reached, the report says so
and measures Vigil alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from engine.assets import asset
from engine.browser.discovery import find_chromium
from engine.errors import BrowserNotFoundError
from engine.mcp.probe import Reply, stdio_probe, vigil_command
from engine.snapshot.serialize.tokens import estimate_tokens

PLAYWRIGHT_MCP = "@playwright/mcp@0.0.83"
ROOT = Path(__file__).resolve().parent.parent.parent
LARGE = 5000


@dataclass(frozen=True)
class Act:
    tool: str      # browser_click, browser_type, browser_select_option
    role: str      # the element's role in Playwright's aria snapshot
    name: str      # its accessible name (unique on the page)
    value: str = ""

    def label(self) -> str:
        verb = {"browser_click": "click", "browser_type": "type", "browser_select_option": "select"}[self.tool]
        return f"{verb} {self.name}"


FLOWS = {
    "demo": (Act("browser_click", "button", "Accept"), Act("browser_type", "textbox", "Full name", "Ada Lovelace"),
             Act("browser_select_option", "combobox", "Country", "France")),
    "large": (Act("browser_click", "checkbox", "Brand 3"), Act("browser_type", "searchbox", "Search products", "blue"),
              Act("browser_click", "checkbox", "Brand 5")),
}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vigil" / "playwright-mcp"


def install_playwright_mcp(spec: str = PLAYWRIGHT_MCP, out=print) -> tuple[Path | None, str]:
    """(the playwright-mcp executable, '') — installed into the cache folder when missing — or
    (None, why it could not be)."""
    folder = cache_dir()
    exe = folder / "node_modules" / ".bin" / "playwright-mcp"
    version = spec.rsplit("@", 1)[-1]
    pkg = folder / "node_modules" / "@playwright" / "mcp" / "package.json"
    if exe.exists() and pkg.exists() and json.loads(pkg.read_text()).get("version") == version:
        return exe, ""
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        return None, "npm/node not found on this machine (install Debian's nodejs and npm)"
    folder.mkdir(parents=True, exist_ok=True)
    out(f"installing {spec} into {folder} …")
    try:
        res = subprocess.run([npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--ignore-scripts",
                              "--no-save", spec], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "npm install timed out after 300 s (is the npm registry reachable?)"
    if res.returncode != 0 or not exe.exists():
        lines = (res.stderr or res.stdout).strip().splitlines()
        said = [ln for ln in lines if ln.startswith("npm error") and "complete log" not in ln] or lines
        why = " / ".join(said[:2]) if said else f"exit code {res.returncode}"
        return None, f"npm install {spec} failed (is the npm registry reachable?): {why}"
    return exe, ""


# -- refs from each server's snapshot ---------------------------------------------------------------------
_CONTROL = re.compile(r'^\[([^\]]+)\] \S+ "([^"]*)"', re.M)


def _vigil_refs(snapshot: Reply, acts: tuple[Act, ...]) -> list[str]:
    """Refs by name from the default snapshot (reading: `[ref] role "name"` lines; or a semantic payload)."""
    page = snapshot.page()
    if '{"mode"' in page:
        items = json.loads(page[page.find('{"mode"'):].splitlines()[0])["interactive_tree"]
        by_name = {i.get("n"): i["i"] for i in items}
    else:
        by_name = {name: ref for ref, name in _CONTROL.findall(page)}
    return [by_name[a.name] for a in acts]


_ARIA = re.compile(r'- (\w+) "([^"]*)"[^\n]*?\[ref=(\w+)\]')
_LINK = re.compile(r"\[Snapshot\]\(([^)\s]+)\)")


def _playwright_refs(snapshot: Reply, acts: tuple[Act, ...]) -> list[str]:
    found = {(role, name): r for role, name, r in _ARIA.findall(snapshot.text)}
    return [found[(a.role, a.name)] for a in acts]


def linked_tokens(reply: Reply, folder: str) -> int:
    """Tokens of the snapshot files a reply links to instead of inlining them (Playwright MCP writes
    an action's page snapshot to a file): what a client reads to see the page after that step."""
    total = 0
    for link in _LINK.findall(reply.text):
        path = Path(folder) / link
        if path.is_file():
            total += estimate_tokens(path.read_text(encoding="utf-8", errors="replace"))
    return total


async def tool_list_tokens(probe) -> int:
    """Tokens of the tool definitions a client loads once per session (names, descriptions, schemas)."""
    tools = (await probe.client.list_tools()).tools
    return estimate_tokens(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools],
                                      separators=(",", ":")))


# -- one run ----------------------------------------------------------------------------------------------
@dataclass
class Run:
    replies: list[Reply]
    tool_tokens: int
    start_s: float = 0.0  # from spawning the server to the client's session being ready (initialize answered)


async def _flow(probe, url: str, acts: tuple[Act, ...], refs_of, key: str, spawned: float) -> Run:
    start_s = time.perf_counter() - spawned
    tool_tokens = await tool_list_tokens(probe)
    replies = [await probe.call("browser_navigate", {"url": url})]
    snap = await probe.call("browser_snapshot")
    replies.append(snap)
    for act, ref in zip(acts, refs_of(snap, acts), strict=True):
        args = {key: ref, "element": act.name}
        if act.tool == "browser_type":
            args["text"] = act.value
        elif act.tool == "browser_select_option":
            args["values"] = [act.value]
        replies.append(await probe.call(act.tool, args))
    for r in replies:
        if r.is_error:
            raise RuntimeError(f"{r.name} failed: {r.text[:300]}")
    return Run(replies, tool_tokens, start_s)


async def run_vigil(url: str, acts: tuple[Act, ...], home: str) -> Run:
    """Vigil as a user runs it: `--approve auto`, the session recorded (into `home`)."""
    cmd, args = vigil_command("--approve", "auto")
    with tempfile.TemporaryFile("w+") as err:
        spawned = time.perf_counter()
        async with stdio_probe(cmd, args, env={"VIGIL_HOME": home}, errlog=err, cwd=str(ROOT), timeout=120) as probe:
            return await _flow(probe, url, acts, _vigil_refs, "ref", spawned)


async def run_playwright(exe: Path, url: str, acts: tuple[Act, ...], workdir: str) -> Run:
    args = ["--executable-path", find_chromium(headless=True), "--headless", "--no-sandbox", "--isolated",
            "--viewport-size", "1280x800",
            "--output-dir", workdir]
    with tempfile.TemporaryFile("w+") as err:
        spawned = time.perf_counter()
        async with stdio_probe(str(exe), args, errlog=err, cwd=workdir, timeout=120) as probe:
            ready = time.perf_counter()
            tools = (await probe.client.list_tools()).tools
            click = next(t for t in tools if t.name == "browser_click")
            key = "target" if "target" in (click.input_schema.get("properties") or {}) else "ref"
            run = await _flow(probe, url, acts, _playwright_refs, key, spawned)
            run.start_s = ready - spawned
    for r in run.replies:
        r.linked = linked_tokens(r, workdir)
    return run


# -- the report -------------------------------------------------------------------------------------------
def _summary(runs: list[Run], steps: list[str]) -> dict:
    def med(values) -> float:
        return statistics.median(values)

    out = [{"step": name, "tokens": med(r.replies[i].tokens for r in runs),
            "linked_tokens": med(r.replies[i].linked for r in runs),
            "ms": round(med(r.replies[i].seconds for r in runs) * 1000, 1)} for i, name in enumerate(steps)]
    return {"steps": out,
            "median_tokens_per_step": med(x.tokens for r in runs for x in r.replies),
            "median_ms_per_step": round(med(x.seconds for r in runs for x in r.replies) * 1000, 1),
            "median_ms_per_action": round(med(x.seconds for r in runs for x in r.replies[2:]) * 1000, 1),
            "total_tokens": med(sum(x.tokens for x in r.replies) for r in runs),
            "total_linked_tokens": med(sum(x.linked for x in r.replies) for r in runs),
            "start_ms": round(med(r.start_s for r in runs) * 1000, 1),
            "cold_ms": round(med(r.start_s + r.replies[0].seconds for r in runs) * 1000, 1),
            "tool_list_tokens": runs[0].tool_tokens, "reps": len(runs)}


async def bench_mcp(reps: int = 3, playwright: bool = True, pages: tuple[str, ...] = ("demo", "large"),
                    out=print) -> dict:
    from engine.bench import generate_page
    from engine.local_server import serve_directory

    exe, why = (None, "not asked for (--no-playwright)")
    if playwright:
        exe, why = install_playwright_mcp(out=out)
        try:
            find_chromium(headless=True)
        except BrowserNotFoundError as exc:
            if exe is not None:
                exe, why = None, exc.message
    report: dict = {"playwright_mcp": PLAYWRIGHT_MCP if exe is not None else f"not measured: {why}", "pages": {}}
    with tempfile.TemporaryDirectory() as site, tempfile.TemporaryDirectory() as work, \
            tempfile.TemporaryDirectory() as home:
        shutil.copytree(asset("demo"), Path(site) / "demo")
        (Path(site) / "large.html").write_text(generate_page(LARGE), encoding="utf-8")
        urls = {"demo": "demo/index.html", "large": "large.html"}
        with serve_directory(site) as base:
            for page in pages:
                acts = FLOWS[page]
                steps = ["navigate", "snapshot", *(a.label() for a in acts)]
                vigil: list[Run] = []
                pw: list[Run] = []
                for rep in range(reps):
                    vigil.append(await run_vigil(base + urls[page], acts, home))
                    out(f"{page} rep {rep + 1}/{reps}: vigil mcp {sum(r.seconds for r in vigil[-1].replies):.1f} s")
                    if exe is not None:
                        pw.append(await run_playwright(exe, base + urls[page], acts, work))
                        out(f"{page} rep {rep + 1}/{reps}: playwright mcp "
                            f"{sum(r.seconds for r in pw[-1].replies):.1f} s")
                entry = {"steps": steps, "vigil": _summary(vigil, steps)}
                if pw:
                    entry["playwright"] = _summary(pw, steps)
                report["pages"][page] = entry
    return report


def _table(page: str, entry: dict) -> list[str]:
    v, p = entry["vigil"], entry.get("playwright")
    title = ("the bundled demo shop" if page == "demo" else f"a generated page of ~{LARGE} elements")
    head = f"{'step':<22}{'vigil tokens':>13}{'vigil ms':>10}"
    if p:
        head += f"{'pw tokens':>11}{'pw linked':>11}{'pw ms':>8}"
    lines = [f"{page}: {title}", head, "-" * len(head)]
    for i, step in enumerate(entry["steps"]):
        a = v["steps"][i]
        row = f"{step:<22}{a['tokens']:>13g}{a['ms']:>10.0f}"
        if p:
            b = p["steps"][i]
            row += f"{b['tokens']:>11g}{b['linked_tokens']:>11g}{b['ms']:>8.0f}"
        lines.append(row)
    lines.append("-" * len(head))
    rows = [("total", "total_tokens", None, "total_linked_tokens"),
            ("median per step", "median_tokens_per_step", "median_ms_per_step", None),
            ("median per action", None, "median_ms_per_action", None),
            ("tool list (once)", "tool_list_tokens", None, None),
            ("server start", None, "start_ms", None),  # spawn → the client's session ready
            ("start + navigate", None, "cold_ms", None)]
    for label, tok, ms, linked in rows:
        row = f"{label:<22}{(f'{v[tok]:g}' if tok else ''):>13}{(f'{v[ms]:.0f}' if ms else ''):>10}"
        if p:
            row += (f"{(f'{p[tok]:g}' if tok else ''):>11}{(f'{p[linked]:g}' if linked else ''):>11}"
                    f"{(f'{p[ms]:.0f}' if ms else ''):>8}")
        lines.append(row)
    return lines


def format_report(rep: dict) -> str:
    any_page = next(iter(rep["pages"].values()))
    lines = [f"vigil mcp vs Playwright MCP: navigate, snapshot, three actions by ref; medians of "
             f"{any_page['vigil']['reps']} cold runs per server, interleaved",
             "tokens = text a call returned (4 ASCII chars a token); ms = the call's wall time at the client; "
             "vigil mcp runs --approve auto and records the session; server start: from spawning the server to "
             "the client's session being ready; start + navigate: until the first page was opened",
             f"Playwright MCP: {rep['playwright_mcp']}"
             + (" — 'pw linked' = the snapshot file an action links to instead of returning it"
                if "playwright" in any_page else "")]
    for page, entry in rep["pages"].items():
        lines += [""] + _table(page, entry)
    return "\n".join(lines)


def add_bench_parser(bsub) -> None:
    b = bsub.add_parser("mcp", help="the same MCP flow through vigil mcp and Playwright MCP: tokens and time per step")
    add_options(b)


def add_options(b: argparse.ArgumentParser) -> None:
    b.add_argument("--reps", type=int, default=3, help="cold runs per server and page (default 3)")
    b.add_argument("--pages", default="demo,large", help="demo (the demo shop), large (~5000 elements); default both")
    b.add_argument("--no-playwright", action="store_true", help="measure vigil mcp only")
    b.add_argument("--json", action="store_true")
    b.add_argument("--clients", metavar="N,N…",
                   help="instead: N SDK clients at once over HTTP, each on a page of its own (e.g. 1,4,8): errors, "
                        "pages of another client, calls/s, p95 (engine.mcp.bench_clients)")
    b.add_argument("--actions", type=int, default=20, help="with --clients: calls per client (default 20)")
    b.add_argument("--server-root", type=Path, help="with --clients: run the server from this checkout (an A/B)")


def bench_command(args: argparse.Namespace) -> int:
    if getattr(args, "clients", None):
        return _clients_command(args)
    pages = tuple(p.strip() for p in args.pages.split(",") if p.strip())
    bad = [p for p in pages if p not in FLOWS]
    if args.reps < 1 or bad or not pages:
        why = "--reps must be at least 1" if args.reps < 1 else f"unknown page(s) {', '.join(bad) or '(none)'}"
        print(f"vigil bench mcp: BAD_ARGUMENT: {why}; pages are {', '.join(FLOWS)}.", file=sys.stderr)
        return 2

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        rep = asyncio.run(bench_mcp(args.reps, not args.no_playwright, pages, out=progress))
    except (RuntimeError, OSError) as exc:
        print(f"vigil bench mcp: FAILED: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(rep, indent=2) if args.json else format_report(rep))
    return 0


def _clients_command(args: argparse.Namespace) -> int:
    from engine.mcp.bench_clients import bench_clients, format_rows

    try:
        counts = [int(x) for x in args.clients.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1 or args.actions < 3:
        print("vigil bench mcp: BAD_ARGUMENT: --clients takes counts such as 1,4,8 and --actions at least 3.",
              file=sys.stderr)
        return 2
    try:
        rows = bench_clients(counts, args.actions, args.server_root,
                             out=lambda line: print(line, file=sys.stderr, flush=True))
    except (RuntimeError, OSError) as exc:
        print(f"vigil bench mcp: FAILED: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(rows, indent=2) if args.json else format_rows(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.mcp.bench", description=__doc__.split("\n\n")[0])
    add_options(p)
    return bench_command(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
