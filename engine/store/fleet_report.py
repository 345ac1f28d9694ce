"""`vigil export --fleet ID --html fleet.html`: one summary page for a fleet — every run, its outcome, steps,
time and browser, each linking to its own report (written beside the page, in `fleet_runs/`).

The same safety rules as a session's report (engine.store.report): every stored value goes through `_t`
(escaped text, never markup), no script, no external reference, the same Content-Security-Policy; the only
links are the relative file names of the run reports, which this module makes itself (never from a name
in the store)."""

from __future__ import annotations

import urllib.parse
from datetime import UTC, datetime
from pathlib import Path

from engine.store.fleets import FleetBook, FleetRecord
from engine.store.report import CSP, CSS, _badge, _check, _clean, _kv, _t, _when, _write_atomic, write_export
from engine.store.schema import StoreError
from engine.store.store import Store

_RUN_TONE = {"done": "ok", "failed": "bad", "stopped": "warn", "running": "info", "waiting": "info", "queued": ""}
FLEET_CSS = """table.runs{width:100%;border-collapse:collapse;background:#fff}table.runs th,table.runs td{
text-align:left;padding:6px 10px;border-bottom:1px solid #e2e8f0;vertical-align:top;overflow-wrap:anywhere}
table.runs th{font-size:12px;color:#64748b;text-transform:uppercase;letter-spacing:.05em}
td.num{text-align:right;white-space:nowrap}a.report{color:#4f46e5}"""


def _run_badge(status: str) -> str:
    return f'<span class="badge {_RUN_TONE.get(status, "")}">{_t(status)}</span>'


def fleet_summary_html(rec: FleetRecord, links: dict[int, str]) -> str:
    """The page for a recorded fleet; `links` maps a run's index to its report's relative file name."""
    done = sum(r.status == "done" for r in rec.runs)
    steps = sum(r.steps for r in rec.runs)
    times = [r.seconds for r in rec.runs if r.seconds is not None]
    facts = _kv([("Fleet", f'<span class="mono">{_t(rec.id)}</span>'), ("Status", _badge(rec.status)),
                 ("Runs", _t(f"{len(rec.runs)} ({done} done)")), ("Steps", _t(steps)),
                 ("Started", _t(_when(rec.created))), ("Updated", _t(_when(rec.updated))),
                 ("Options", _t(", ".join(f"{k} {v}" for k, v in sorted(rec.options.items()) if v not in (None, []))))])
    rows = []
    for r in rec.runs:
        outcome = (r.answer if r.status == "done" else r.reason) or ""
        link = links.get(r.index)
        report = f'<a class="report" href="{_t(link)}">report</a>' if link else '<span class="muted">—</span>'
        rows.append(f'<tr><td class="num">{r.index + 1}</td><td>{_t(r.name)}</td><td>{_t(r.task)}</td>'
                    f'<td>{_run_badge(r.status)}</td><td class="num">{_t(r.steps)}</td>'
                    f'<td class="num">{_t(f"{r.seconds:.1f} s" if r.seconds is not None else "")}</td>'
                    f'<td>{_t(r.browser or "")}</td><td>{_t(outcome)}</td><td>{report}</td></tr>')
    table = ('<table class="runs"><thead><tr><th>#</th><th>Run</th><th>Task</th><th>Status</th><th>Steps</th>'
             '<th>Time</th><th>Browser</th><th>Answer / reason</th><th></th></tr></thead><tbody>'
             + "".join(rows) + "</tbody></table>")
    total = f" Runs took {sum(times):.1f} s in all." if times else ""
    body = (f'<header class="card"><div class="brand">Vigil fleet report</div><h1>{_t(rec.name)}</h1>{facts}'
            f'</header><section class="card">{table}</section>'
            f'<footer>Exported {_t(_when(datetime.now(UTC).isoformat()))} by Vigil.{_t(total)} Each run\'s report '
            'is a file beside this one; no scripts, no network; page and model text is shown as text.</footer>')
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="referrer" content="no-referrer">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>Vigil fleet — {_t(rec.name)}</title><style>{CSS}{FLEET_CSS}</style></head>'
            f'<body><main>{body}</main></body></html>\n')


def write_fleet_summary(store: Store, fleet_id: str, html_path: str | Path) -> list[Path]:
    """Write the fleet's summary page and, in `<page name>_runs/` beside it, one report per run that has a
    session; returns the paths written (the page first). VigilError naming a path that cannot be written."""
    path = Path(html_path).expanduser()
    _check(path, "HTML report")
    rec = FleetBook(store).load(fleet_id)
    folder = path.with_name(path.stem + "_runs")
    links: dict[int, str] = {}
    written: list[Path] = []
    for r in rec.runs:
        if not r.session_id:
            continue
        if not folder.exists():
            folder.mkdir(parents=True, exist_ok=True)
        name = f"{r.index + 1:04d}.html"  # our own name: never a name from the store in a path or a link
        try:
            written += write_export(store, r.session_id, html_path=folder / name)
        except StoreError:  # its session was deleted since: the run stays in the table, without a link
            continue
        links[r.index] = f"{urllib.parse.quote(folder.name)}/{name}"
    _write_atomic(path, _clean(fleet_summary_html(rec, links)).encode("utf-8"), "HTML report")
    return [path, *written]
