"""`python -m engine.mcp.bench` (later `vigil bench mcp`): the same short flow through Vigil's MCP
server and through Playwright MCP, measured in the same run.

The flow, on the bundled demo shop served locally: navigate, snapshot, then three actions — click
the cookie banner's Accept, type a name into Full name, select a country. Both servers are spawned
over stdio by the MCP SDK's client, cold (each repetition starts a fresh server and browser, so the
first navigate includes the browser's start), reps interleaved. Per step: the tokens the tool
returned (text only, 4 ASCII characters a token — the estimate every Vigil payload uses) and the
wall time of the call as the client saw it; medians over the repetitions.

Playwright MCP comes from npm (`@playwright/mcp`), installed on demand into a cache folder outside
the repository and launched with Debian's Chromium: `--executable-path … --headless --no-sandbox
--isolated --viewport-size 1280x800`, everything else default (snapshot mode full). When npm or the
registry cannot be reached, the report says so and measures Vigil alone.
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
from pathlib import Path

from engine.mcp.probe import Reply, stdio_probe, vigil_command

PLAYWRIGHT_MCP = "@playwright/mcp@0.0.83"
DEMO = Path(__file__).resolve().parent.parent.parent / "assets" / "demo"
STEPS = ("navigate", "snapshot", "click Accept", "type Full name", "select Country")
CHROMIUM = "/usr/bin/chromium"


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
        last = (res.stderr or res.stdout).strip().splitlines()
        return None, f"npm install {spec} failed (registry unreachable?): {last[-1] if last else res.returncode}"
    return exe, ""


# -- the flow -------------------------------------------------------------------------------------------
def _vigil_refs(snapshot: Reply) -> dict[str, str]:
    page = snapshot.page()
    items = json.loads(page[page.find('{"mode"'):].splitlines()[0])["interactive_tree"]
    by_name = {i.get("n"): i["i"] for i in items}
    return {"accept": by_name["Accept"], "name": by_name["Full name"], "country": by_name["Country"]}


_ARIA = re.compile(r'- (\w+) "([^"]*)"[^\n]*?\[ref=(\w+)\]')


def _playwright_refs(snapshot: Reply) -> dict[str, str]:
    found = {(role, name): r for role, name, r in _ARIA.findall(snapshot.text)}
    return {"accept": found[("button", "Accept")], "name": found[("textbox", "Full name")],
            "country": found[("combobox", "Country")]}


_LINK = re.compile(r"\[Snapshot\]\(([^)\s]+)\)")


def linked_tokens(reply: Reply, folder: str) -> int:
    """Tokens of the snapshot files a reply links to instead of inlining them (Playwright MCP writes
    an action's page snapshot to a file): what a client reads to see the page after that step."""
    from engine.snapshot.serialize.tokens import estimate_tokens

    total = 0
    for link in _LINK.findall(reply.text):
        path = Path(folder) / link
        if path.is_file():
            total += estimate_tokens(path.read_text(encoding="utf-8", errors="replace"))
    return total


async def tool_list_tokens(probe) -> int:
    """Tokens of the tool definitions a client loads once per session (names, descriptions, schemas)."""
    from engine.snapshot.serialize.tokens import estimate_tokens

    tools = (await probe.client.list_tools()).tools
    return estimate_tokens(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools],
                                      separators=(",", ":")))


async def _flow(probe, url: str, refs_of, key: str) -> list[Reply]:
    """The flow's replies, then a last pseudo-reply whose `tokens` are the tool list's."""
    listed = Reply("tools/list", False, "")
    listed.fixed_tokens = await tool_list_tokens(probe)
    replies = [await probe.call("browser_navigate", {"url": url})]
    snap = await probe.call("browser_snapshot")
    replies.append(snap)
    refs = refs_of(snap)
    replies.append(await probe.call("browser_click", {key: refs["accept"], "element": "Accept"}))
    replies.append(await probe.call("browser_type", {key: refs["name"], "text": "Ada Lovelace",
                                                      "element": "Full name"}))
    replies.append(await probe.call("browser_select_option", {key: refs["country"], "values": ["France"],
                                                              "element": "Country"}))
    for r in replies:
        if r.is_error:
            raise RuntimeError(f"{r.name} failed: {r.text[:300]}")
    return replies + [listed]


async def run_vigil(url: str, home: str) -> list[Reply]:
    """Vigil as a user runs it: `--approve auto`, the session recorded (into `home`)."""
    cmd, args = vigil_command("--approve", "auto")
    env = {"VIGIL_HOME": home}
    with tempfile.TemporaryFile("w+") as err:
        async with stdio_probe(cmd, args, env=env, errlog=err, cwd=str(DEMO.parent.parent), timeout=120) as probe:
            return await _flow(probe, url, _vigil_refs, "ref")


async def run_playwright(exe: Path, url: str, workdir: str) -> list[Reply]:
    args = ["--executable-path", CHROMIUM, "--headless", "--no-sandbox", "--isolated", "--viewport-size", "1280x800",
            "--output-dir", workdir]
    with tempfile.TemporaryFile("w+") as err:
        async with stdio_probe(str(exe), args, errlog=err, cwd=workdir, timeout=120) as probe:
            tools = (await probe.client.list_tools()).tools
            click = next(t for t in tools if t.name == "browser_click")
            key = "target" if "target" in (click.input_schema.get("properties") or {}) else "ref"
            replies = await _flow(probe, url, _playwright_refs, key)
    for r in replies:
        r.linked = linked_tokens(r, workdir)
    return replies


# -- the report -------------------------------------------------------------------------------------------
def _medians(runs: list[list[Reply]]) -> dict:
    steps = []
    for i, name in enumerate(STEPS):
        steps.append({"step": name, "tokens": statistics.median(r[i].tokens for r in runs),
                      "linked_tokens": statistics.median(r[i].linked for r in runs),
                      "ms": round(statistics.median(r[i].seconds for r in runs) * 1000, 1)})
    per_step_tokens = [r[i].tokens for r in runs for i in range(len(STEPS))]
    per_step_ms = [r[i].seconds * 1000 for r in runs for i in range(len(STEPS))]
    actions_ms = [r[i].seconds * 1000 for r in runs for i in range(2, len(STEPS))]
    return {"steps": steps, "median_tokens_per_step": statistics.median(per_step_tokens),
            "median_ms_per_step": round(statistics.median(per_step_ms), 1),
            "median_ms_per_action": round(statistics.median(actions_ms), 1),
            "total_tokens": statistics.median(sum(x.tokens for x in r[:len(STEPS)]) for r in runs),
            "total_linked_tokens": statistics.median(sum(x.linked for x in r[:len(STEPS)]) for r in runs),
            "tool_list_tokens": runs[0][len(STEPS)].fixed_tokens, "reps": len(runs)}


async def bench_mcp(reps: int = 3, playwright: bool = True, out=print) -> dict:
    from engine.local_server import serve_directory

    report: dict = {"flow": list(STEPS), "page": "assets/demo (the bundled demo shop)", "servers": {}}
    exe, why = (None, "not asked for (--no-playwright)")
    if playwright:
        exe, why = install_playwright_mcp(out=out)
        if exe is not None and not Path(CHROMIUM).exists():
            exe, why = None, f"{CHROMIUM} not found"
    report["playwright_mcp"] = PLAYWRIGHT_MCP if exe is not None else f"not measured: {why}"
    vigil_runs, pw_runs = [], []
    with serve_directory(DEMO) as base, tempfile.TemporaryDirectory() as work, \
            tempfile.TemporaryDirectory() as home:
        url = base + "index.html"
        for rep in range(reps):
            vigil_runs.append(await run_vigil(url, home))
            out(f"rep {rep + 1}/{reps}: vigil mcp {sum(r.seconds for r in vigil_runs[-1]):.1f} s")
            if exe is not None:
                pw_runs.append(await run_playwright(exe, url, work))
                out(f"rep {rep + 1}/{reps}: playwright mcp {sum(r.seconds for r in pw_runs[-1]):.1f} s")
    report["servers"]["vigil"] = _medians(vigil_runs)
    if pw_runs:
        report["servers"]["playwright"] = _medians(pw_runs)
    return report


def format_report(rep: dict) -> str:
    servers = rep["servers"]
    v, p = servers["vigil"], servers.get("playwright")
    lines = [f"MCP flow on {rep['page']}: {', '.join(rep['flow'])}",
             f"medians of {v['reps']} cold runs per server, interleaved; tokens = text a call returned (4 ASCII chars "
             "a token); ms = the call's wall time at the client. vigil mcp: --approve auto, recorded.",
             f"Playwright MCP: {rep['playwright_mcp']}" + ("" if p is None else
             " — its actions write the page snapshot to a file and return a link: 'linked' is that file, what "
             "a client reads to see the page after the step"), ""]
    head = f"{'step':<16}{'vigil tokens':>13}{'vigil ms':>10}"
    if p:
        head += f"{'pw tokens':>11}{'pw linked':>11}{'pw ms':>8}"
    lines += [head, "-" * len(head)]
    for i, step in enumerate(rep["flow"]):
        a = v["steps"][i]
        row = f"{step:<16}{a['tokens']:>13g}{a['ms']:>10.0f}"
        if p:
            b = p["steps"][i]
            row += f"{b['tokens']:>11g}{b['linked_tokens']:>11g}{b['ms']:>8.0f}"
        lines.append(row)
    lines.append("-" * len(head))
    row = f"{'total':<16}{v['total_tokens']:>13g}{'':>10}"
    if p:
        row += f"{p['total_tokens']:>11g}{p['total_linked_tokens']:>11g}"
    lines.append(row)
    row = f"{'median per step':<16}{v['median_tokens_per_step']:>13g}{v['median_ms_per_step']:>10.0f}"
    if p:
        row += f"{p['median_tokens_per_step']:>11g}{'':>11}{p['median_ms_per_step']:>8.0f}"
    lines.append(row)
    row = f"{'median action':<16}{'':>13}{v['median_ms_per_action']:>10.0f}"
    if p:
        row += f"{'':>11}{'':>11}{p['median_ms_per_action']:>8.0f}"
    lines.append(row)
    row = f"{'tool list':<16}{v['tool_list_tokens']:>13g}{'':>10}"
    if p:
        row += f"{p['tool_list_tokens']:>11g}"
    lines.append(row + "   (tokens of the tool definitions, once per session)")
    return "\n".join(lines)


def add_bench_parser(bsub) -> None:
    b = bsub.add_parser("mcp", help="the same MCP flow through vigil mcp and Playwright MCP: tokens and time per step")
    add_options(b)


def add_options(b: argparse.ArgumentParser) -> None:
    b.add_argument("--reps", type=int, default=3, help="cold runs per server (default 3)")
    b.add_argument("--no-playwright", action="store_true", help="measure vigil mcp only")
    b.add_argument("--json", action="store_true")


def bench_command(args: argparse.Namespace) -> int:
    if args.reps < 1:
        print("vigil bench mcp: BAD_ARGUMENT: --reps must be at least 1.", file=sys.stderr)
        return 2
    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        rep = asyncio.run(bench_mcp(args.reps, not args.no_playwright, out=progress))
    except (RuntimeError, OSError) as exc:
        print(f"vigil bench mcp: FAILED: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(rep, indent=2) if args.json else format_report(rep))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.mcp.bench", description=__doc__.split("\n\n")[0])
    add_options(p)
    return bench_command(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
