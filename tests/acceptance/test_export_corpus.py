"""Exported tests on real libraries: a run recorded on a custom select (Tom Select) and on a dialog in
shadow DOM (Shoelace) is exported with `vigil export --playwright` and passes with pytest against the
same local site."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine.bench.real import open_page
from engine.browser.discovery import find_chromium
from engine.cli import main as vigil
from engine.loop import AgentLoop, AutoApprove, ScriptedPlanner
from engine.store import Store
from engine.store.recorder import SessionRecorder

from support.real_corpus import CORPUS, WIDGETS, corpus_installed  # noqa: F401

pytestmark = pytest.mark.usefixtures("corpus_installed")


def _script(widget: dict) -> list[dict]:
    out = []
    for s in widget["steps"]:
        step = {"action": s["do"], "target": {"role": s["role"], "name": s["name"]}}
        for k in ("text", "option"):
            if k in s:
                step[k] = s[k]
        out.append(step)
    return [*out, {"action": "finish", "answer": "done"}]


@pytest.mark.parametrize("wid, lines", [
    ("tom-select-single", ['page.get_by_role("combobox", name="Country", exact=True).click()',
                           'page.get_by_role("option", name="Germany", exact=True).filter(visible=True)'
                           '.first.click()']),
    ("shoelace-dialog", ['page.get_by_role("button", name="Edit profile", exact=True).click()',
                         '.fill("Ada Lovelace")',
                         '.to_have_text("Saved Ada Lovelace")']),
])
def test_a_run_on_a_real_library_exports_a_passing_test(harness, server, tmp_path, monkeypatch, wid, lines):
    w = WIDGETS[wid]
    monkeypatch.setenv("VIGIL_HOME", str(tmp_path / "home"))
    store = Store.open()

    async def go():
        tab = await open_page(harness.browser, server.url("real/"), w, CORPUS.get("ready"))
        try:
            loop = AgentLoop(tab, ScriptedPlanner(_script(w)), gate=AutoApprove(), policy="auto")
            rec = SessionRecorder(store)
            rec.start(loop, w["task"], tab.page.url, planner="scripted", policy="auto")
            result = await loop.run(w["task"])
            rec.finish(result)
            assert rec.error is None and result.status == "success", (rec.error, result.reason)
            return rec.session_id
        finally:
            await tab.close()

    sid = harness.run(go(), 120)
    store.close()
    out = tmp_path / f"test_{wid.replace('-', '_')}.py"
    assert vigil(["export", sid, "--playwright", str(out)]) == 0
    text = out.read_text()
    for line in lines:
        assert line in text, f"{line!r} not in:\n{text}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(VIGIL_BASE_URL=server.url("").rstrip("/"), VIGIL_TIMEOUT_MS="8000",
               VIGIL_CHROMIUM=find_chromium(headless=True))  # the exported test runs headless
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", out.name], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr + "\n" + text
