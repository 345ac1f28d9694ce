"""A store written by an older Vigil opens with today's code: migrated to the newest schema, its session
loads, every picture and snapshot reads back, and the report, the JSON trace and the Playwright test are made
from it as before. The fixtures are never rewritten (tests/fixtures/stores/README.md)."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import sqlite3

import pytest
from PIL import Image

from engine.snapshot.stored import load_snapshot
from engine.store import LATEST_VERSION, Store
from engine.store.export_playwright import export_playwright
from engine.store.report import write_export

from support.paths import ROOT

V6 = ROOT / "tests" / "fixtures" / "stores" / "v6-demo.db"


@pytest.fixture(scope="module")
def v6(tmp_path_factory):
    """The schema-6 fixture, copied and opened (migrated) by today's Store."""
    db = tmp_path_factory.mktemp("old") / "sessions.db"
    shutil.copyfile(V6, db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("6",)
    store = Store.open(db, check="now")
    yield store, db
    store.close()


def test_a_v6_store_migrates_and_reads_whole(v6):
    store, db = v6
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == (str(LATEST_VERSION),)
        assert {r[0] for r in conn.execute("SELECT codec FROM blobs")} == {"raw", "zlib"}  # kept as written
    [summary] = store.list_sessions()
    data = store.load(summary.id)
    assert summary.status == "success" and [s.action.to_string() for s in data.steps] == \
        ['type(288, "Ada 0")', "click(304)"]
    for refs in data.blobs.values():
        for role, sha in refs.items():
            raw = store.get_blob(sha)
            assert hashlib.sha256(raw).hexdigest() == sha  # old blobs: the very bytes written
            if role.startswith("snapshot"):
                snap = load_snapshot(raw)
                assert snap.find("button", "Create account") and snap.find("textbox", "Full name")
            else:
                img = Image.open(io.BytesIO(raw))
                assert img.format == "JPEG" and img.size == (1024, 640)
    after = load_snapshot(store.get_blob(data.blobs[0]["snapshot_after"]))
    assert after.find("textbox", "Full name")[0].value == "Ada 0"  # what the first step typed


def test_a_v6_store_exports_as_before(v6, tmp_path):
    store, _ = v6
    sid = store.list_sessions()[0].id
    html_path, json_path = write_export(store, sid, html_path=tmp_path / "r.html", json_path=tmp_path / "t.json")
    doc = html_path.read_text(encoding="utf-8")
    images = re.findall(r'<img src="data:image/jpeg;base64,([A-Za-z0-9+/=]+)"', doc)
    assert len(images) == 4  # two steps, before and after each, marks drawn
    assert "Ada 0" in doc and "Gift wrap" in doc
    trace = json.loads(json_path.read_text(encoding="utf-8"))
    assert [s["action"]["name"] for s in trace["steps"]] == ["type", "click"]
    assert trace["steps"][0]["blobs"]["snapshot_after"] == trace["steps"][1]["blobs"]["snapshot_before"]
    test_py = export_playwright(store, sid, tmp_path / "test_demo.py").read_text(encoding="utf-8")
    compile(test_py, "test_demo.py", "exec")
    assert 'fill("Ada 0")' in test_py and 'get_by_role("checkbox", name="Gift wrap", exact=True).click()' in test_py


def test_a_v6_store_takes_new_steps_beside_its_old_ones(v6):
    """New runs go into the migrated store in today's codecs; its old session still reads."""
    store, db = v6
    sid = store.list_sessions()[0].id
    old = store.load(sid)
    snap = store.get_blob(old.blobs[1]["snapshot_after"])
    new = store.create_session("more", "http://127.0.0.1/", "scripted", "auto")
    store.add_step(new, old.steps[0].model_copy(update={"index": 0}),
                   files={"snapshot_after": ("snapshot", snap + b" "),
                          "screenshot_after": ("screenshot", store.get_blob(old.blobs[1]["screenshot_after"]))})
    with sqlite3.connect(db) as conn:
        codecs = dict(conn.execute("SELECT kind, codec FROM blobs WHERE created_at > (SELECT MAX(created_at) FROM "
                                   "blobs WHERE codec IN ('raw', 'zlib'))").fetchall())
    assert codecs == {"snapshot": "zstd"}  # the picture is the old one (same JPEG): stored once, as it was
    assert store.get_blob(store.load(new).blobs[0]["snapshot_after"]) == snap + b" "
    store.finish(new, "success")
    store.delete(new)
    assert store.load(sid).steps == old.steps
