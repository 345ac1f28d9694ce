"""The demo site `vigil bench fleet` (and the fleet tests) run fleets against: a form per run, served by a
local HTTP server that records the Cookie header of every request (so a test can see that each run's
browser context keeps its cookies apart).

`/form?run=NAME` — a form (name, city, plan, agreement, Save, Continue); Save sets the cookie
`saved=NAME` and says "Saved NAME"; Continue goes to `/done?run=NAME`. `FORM_SCRIPT` fills it in eight
steps ({run} is filled per run)."""

from __future__ import annotations

import html
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FORM = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>Entry {run}</title>
<style>body{{font:16px sans-serif;margin:24px}} label{{display:block;margin:8px 0}}</style></head><body>
<h1>Entry for {run}</h1>
<form id="f" onsubmit="return false">
<label>Full name <input id="name" name="name"></label>
<label>City <input id="city" name="city"></label>
<label>Plan <select id="plan" name="plan"><option>Basic</option><option>Pro</option><option>Team</option></select>
</label>
<label><input type="checkbox" id="agree" name="agree"> I agree to the terms</label>
<button type="button" id="save">Save entry</button>
</form>
<p id="status" aria-live="polite"></p>
<p><a id="next" href="/done?run={q}">Continue</a></p>
<script>
document.getElementById("save").addEventListener("click", () => {{
  document.cookie = "saved=" + encodeURIComponent({js}) + "; path=/";
  setTimeout(() => {{ document.getElementById("status").textContent = "Saved " + {js}; }}, 30);
}});
</script></body></html>"""

DONE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>Done {run}</title></head><body><h1>Thank you, {run}</h1><p>Your entry is kept.</p></body></html>"""

# eight steps on /form?run={run}: the fleet fills {run} from its rows (or a test writes it per run)
FORM_SCRIPT: list[dict[str, Any]] = [
    {"action": "type", "target": {"role": "textbox", "name": "Full name"}, "text": "Ada {run}"},
    {"action": "type", "target": {"role": "textbox", "name": "City"}, "text": "Lyon"},
    {"action": "select", "target": {"role": "combobox", "name": "Plan"}, "option": "Pro"},
    {"action": "check", "target": {"role": "checkbox", "name": "I agree to the terms"}},
    {"action": "click", "target": {"role": "button", "name": "Save entry"},
     "expect": {"type": "element_appears", "text": "Saved {run}"}},
    {"action": "wait", "ms": 20},
    {"action": "click", "target": {"role": "link", "name": "Continue"}, "expect": "navigation"},
    {"action": "finish", "answer": "entered {run}"},
]


class DemoSite:
    """`with DemoSite() as site:` — `site.url(run)` is the run's form; `site.requests` lists (path, run,
    Cookie header) of every page request, in order."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.requests: list[tuple[str, str, str]] = []
        self.delay = delay
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> DemoSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                parts = urllib.parse.urlsplit(self.path)
                run = urllib.parse.parse_qs(parts.query).get("run", [""])[0]
                with site._lock:
                    site.requests.append((parts.path, run, self.headers.get("Cookie") or ""))
                if site.delay:
                    import time
                    time.sleep(site.delay)
                esc = html.escape(run)
                if parts.path == "/form":
                    body = FORM.format(run=esc, q=urllib.parse.quote(run),
                                       js=json.dumps(run).replace("</", "<\\/"))
                elif parts.path == "/done":
                    body = DONE.format(run=esc)
                else:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="vigil-fleet-site", daemon=True)
        self._thread.start()
        return self

    @property
    def base(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, run: str) -> str:
        return f"{self.base}/form?run={urllib.parse.quote(run)}"

    def cookies_at(self, path: str, run: str) -> list[str]:
        with self._lock:
            return [c for p, r, c in self.requests if p == path and r == run]

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def fleet_file_data(site: DemoSite, n: int, *, approve: str | None = None, prefix: str = "r") -> dict[str, Any]:
    """A fleet of `n` runs of FORM_SCRIPT on `site` (inline runs, names r1 … rN)."""
    runs = []
    for i in range(1, n + 1):
        name = f"{prefix}{i}"
        script = json.loads(json.dumps(FORM_SCRIPT).replace("{run}", name))
        run: dict[str, Any] = {"name": name, "task": f"Fill in the entry of {name}", "url": site.url(name),
                               "script": script}
        if approve:
            run["approve"] = approve
        runs.append(run)
    return {"name": f"demo fleet of {n}", "runs": runs}
