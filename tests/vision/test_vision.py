"""Screenshots, perceptual hashes and Set-of-Mark overlays on real pages in real Chromium."""

from __future__ import annotations

import asyncio
import contextlib
import io
import subprocess
import sys
import urllib.parse

import pytest
from PIL import Image

from engine.errors import BrowserClosedError, ScreenshotError, TabCrashedError, VigilError
from engine.local_server import serve_directory
from engine.vision import UNCHANGED_THRESHOLD, ScreenshotTracker, capture_screenshot, draw_som, hash_distance, som_image
from engine.vision.screenshot import grab_viewport
from engine.vision.som import OCCLUDED_COLOUR, ROLE_GROUPS

from support.cli_inprocess import vigil_in_process
from support.paths import ROOT

BUTTON = ROLE_GROUPS["button"][1]

BIG_BLOCK = ("(() => { const d = document.createElement('div'); d.style.cssText = 'position:fixed;left:150px;"
             "top:120px;width:520px;height:380px;background:#d92b2b;z-index:99999'; document.body.appendChild(d); })()")
TOOLBARS = ("<!doctype html><style>body{margin:40px} .tb{display:flex;gap:2px;margin-bottom:50px} .tb button"
            "{width:18px;height:18px;padding:0;border:1px solid #888;background:#eee}</style>" +
            "".join("<div class=tb>" + "".join(f"<button aria-label='tool {r}-{i}'></button>" for i in range(30)) +
                    "</div>" for r in range(4)))


@pytest.fixture(scope="module")
def demo():
    with serve_directory(ROOT / "assets" / "demo") as base:
        yield base


def _by_attr_id(snap, html_id):
    return [n for n in snap.nodes() if n.attrs.get("id") == html_id][0]


def _overlaps(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _gap(a, b) -> int:
    """Pixels between two rects (0 when they touch or overlap)."""
    dx = max(b[0] - a[2], a[0] - b[2], 0)
    dy = max(b[1] - a[3], a[1] - b[3], 0)
    return max(dx, dy)


def test_hash_distance_counts_differing_bits():
    assert hash_distance("ff00", "ff00") == 0
    assert hash_distance("ff00", "0f01") == 5
    with pytest.raises(ValueError):
        hash_distance("ff", "ff00")


def test_jpeg_payload_phash_and_tracker(harness, demo):
    async def check(tab):
        a = await capture_screenshot(tab)
        img = a.image()
        assert img.format == "JPEG" and a.jpeg[:2] == b"\xff\xd8"
        assert (a.css_width, a.css_height) == (1280, 800)
        assert img.size == (a.width, a.height) == (1024, 640)  # ≤ 1024 wide, aspect kept
        assert a.scale == pytest.approx(0.8)
        assert img.quantization[0][0] == 10  # the standard luminance table at quality 70 (16 × 0.6)
        assert len(a.phash) == 64 and a.data_url().startswith("data:image/jpeg;base64,/9j/")
        low = await capture_screenshot(tab, quality=30)
        assert len(low.jpeg) < len(a.jpeg) and low.image().quantization[0][0] > 10

        b = await capture_screenshot(tab)  # nothing changed on the page
        assert hash_distance(a.phash, b.phash) <= UNCHANGED_THRESHOLD
        tracker = ScreenshotTracker()
        assert tracker.should_send(a)
        tracker.mark_sent(a)
        assert not tracker.should_send(b), "an unchanged screenshot must not be resent"

        await tab.page.evaluate(BIG_BLOCK)
        c = await capture_screenshot(tab)
        assert tracker.distance(a, c) > UNCHANGED_THRESHOLD
        assert tracker.should_send(c)
        tracker.mark_sent(c)
        assert not tracker.should_send(await capture_screenshot(tab))

        full = await capture_screenshot(tab, full=True)
        png = Image.open(io.BytesIO(full.png))
        assert png.format == "PNG" and png.size == (1280, 800)
        assert full.width == 1024 and hash_distance(full.phash, c.phash) <= UNCHANGED_THRESHOLD

    harness.page(demo + "index.html", check)


def test_capture_errors_are_typed(harness, server):
    async def check(tab):
        with pytest.raises(ScreenshotError) as err:  # a CDP failure: Chromium refuses the format
            await grab_viewport(tab, fmt="bmp")
        assert err.value.code == "SCREENSHOT_FAILED" and "Invalid image format" in str(err.value)
        with contextlib.suppress(VigilError):
            await tab.cdp.send("Page.crash", session_id=tab.session_id, timeout=2)
        for _ in range(100):
            if tab.crashed:
                break
            await asyncio.sleep(0.05)
        with pytest.raises(TabCrashedError):
            await capture_screenshot(tab)

    harness.page(server.url("overlay.html"), check)

    async def closed(tab):
        await tab.close()
        with pytest.raises(BrowserClosedError):
            await capture_screenshot(tab)

    harness.page(server.url("overlay.html"), closed)


def test_som_one_mark_per_interactive_node_and_no_label_piles(harness, demo):
    async def check(tab):
        snap = await tab.snapshot()
        res = await som_image(tab, snap)
        ids = [m.node_id for m in res.marks]
        assert len(ids) == len(set(ids)), "one mark per node"
        visible = {n.node_id for n in snap.interactive(visible_only=True)}
        assert len(visible) > 30 and visible <= set(ids)
        page_w, page_h = 1280, 800
        assert res.image.width == page_w and res.legend is not None and res.legend[1] == page_h
        for m in res.marks:
            lab = m.label
            if lab is None:  # a covered element whose badge would land on another element
                assert m.occluded, f"{m.node_id} has no badge"
                continue
            assert 0 <= lab[0] < lab[2] <= page_w and 0 <= lab[1] < lab[3] <= page_h
            assert _gap(lab, m.box) <= lab[3] - lab[1], f"label of {m.node_id} is far from its box"
        labelled = [m for m in res.marks if m.label is not None]
        for i, a in enumerate(labelled):
            for b in labelled[i + 1:]:
                assert not _overlaps(a.label, b.label), f"labels of {a.node_id} and {b.node_id} overlap"
        return len(res.marks)

    assert harness.page(demo + "index.html", check) > 30

    async def busy(tab):  # four toolbars of 18 px icon buttons: labels wider than the buttons
        await tab.goto("data:text/html," + urllib.parse.quote(TOOLBARS))
        for full_res in (True, False):  # on a CSS-px PNG and on the 1024 px payload
            res = await som_image(tab, await tab.snapshot(), full_res=full_res)
            assert len(res.marks) == 120 and res.scale == pytest.approx(1.0 if full_res else 0.8)
            for i, a in enumerate(res.marks):
                assert _gap(a.label, a.box) <= a.label[3] - a.label[1]
                for b in res.marks[i + 1:]:
                    assert not _overlaps(a.label, b.label), f"labels of {a.node_id} and {b.node_id} overlap"

    harness.page("about:blank", busy)


def test_som_iframe_marks_sit_on_the_framed_elements(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        inner = snap.find(role="button", name="Inner button")
        assert len(inner) == 2 and all(n.frame_id != tab.main_frame_id for n in inner)
        res = await som_image(tab, snap)
        shot = await capture_screenshot(tab, full=True)
        raw = Image.open(io.BytesIO(shot.png)).convert("RGB")
        small = draw_som(shot.image(), snap, scale=shot.scale)
        for n in inner:
            x, y, w, h = n.bounds
            assert y > 50, "the framed button sits below the top-level content"
            for r in (res, small):
                box = r.mark(n.node_id).box
                want = (x * r.scale, y * r.scale, (x + w) * r.scale, (y + h) * r.scale)
                assert all(abs(got - exp) <= 1 for got, exp in zip(box, want, strict=True)), (box, want)
            m = res.mark(n.node_id)
            # on the page itself the box holds the grey button face, the frame's spacer above is white
            assert raw.getpixel((m.box[0] + 4, (m.box[1] + m.box[3]) // 2)) != (255, 255, 255)
            assert raw.getpixel((m.box[0] + 4, m.box[1] - 6)) == (255, 255, 255)
            # the outline is drawn in the button colour along the box edge, away from the label
            mid_y = (m.box[1] + m.box[3]) // 2
            for px in ((m.box[0], mid_y), (m.box[2] - 1, mid_y)):
                assert not (m.label[0] <= px[0] < m.label[2] and m.label[1] <= px[1] < m.label[3])
                assert res.image.getpixel(px) == BUTTON
            # and not a pixel further out: the page there is not button-coloured
            assert res.image.getpixel((m.box[2] + 3, mid_y)) != BUTTON

    harness.page(server.url("frames.html"), check)


def test_som_occluded_node_drawn_distinctly(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        covered, free = _by_attr_id(snap, "under"), _by_attr_id(snap, "free")
        assert covered.occluded and not free.occluded
        res = await som_image(tab, snap)
        mc, mf = res.mark(covered.node_id), res.mark(free.node_id)
        assert mc.occluded and mc.colour == OCCLUDED_COLOUR != BUTTON
        assert not mf.occluded and mf.colour == BUTTON
        img = res.image

        def top_edge(m):
            """Colours along the top edge, except where another mark or a label is drawn over it."""
            y = m.box[1]
            others = [(o.box[0] - 1, o.box[1] - 1, o.box[2] + 1, o.box[3] + 1) for o in res.marks if o is not m]
            return {img.getpixel((x, y)) for x in range(m.box[0], m.box[2])
                    if not any(r[0] <= x < r[2] and r[1] <= y < r[3]
                               for r in [o.label for o in res.marks if o.label] + others)}

        assert top_edge(mf) == {BUTTON}, "a free element has a solid outline in its role colour"
        dashes = top_edge(mc)
        assert OCCLUDED_COLOUR in dashes and (255, 255, 255) in dashes and BUTTON not in dashes
        assert img.getpixel((mc.label[0] + 1, mc.label[1] + 1)) == OCCLUDED_COLOUR  # grey label
        assert img.height > 800, "a legend strip below the page explains the dashed grey"

    harness.page(server.url("overlay.html"), check)


def test_cli_snapshot_writes_set_of_mark_png(server, tmp_path):
    out = tmp_path / "som.png"
    # in this process (engine.cli.main): what the command writes, without a Python start-up
    proc = vigil_in_process("snapshot", server.url("overlay.html"), "--som", str(out), "--format", "skeleton")
    assert proc.returncode == 0, proc.stderr
    assert "Covered button" in proc.stdout
    assert "3 marks (1 covered)" in proc.stderr and str(out) in proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(out) as img:
        assert img.width == 1280 and img.height > 800


def test_som_badges_leave_the_form_labels_readable(harness, demo):
    """On the demo's sign-up form no field's badge covers its label's text (label boxes from the
    snapshot, the text inside them as the page draws it), badges sit outside their boxes where
    there is room, and no badge covers another."""
    from support.gui_helpers import FORM_TEXT_JS, label_texts, overlaps

    async def check(tab):
        await tab.page.evaluate("document.getElementById('signup').scrollIntoView({block: 'start'})")
        snap = await tab.snapshot()
        res = await som_image(tab, snap)
        form = _by_attr_id(snap, "signup-form")
        fields = [n for n in form.iter() if n.interactive and n.role in ("textbox", "combobox", "checkbox")]
        assert len(fields) == 5
        measured = await tab.page.evaluate(f"({FORM_TEXT_JS})('#signup-form')")
        for field, texts in label_texts(snap, measured, fields):
            m = res.mark(field.node_id)
            for t in texts:
                assert not overlaps(m.label, t), f"badge {m.node_id} {m.label} covers {field.name!r} at {t}"
            if field.role != "checkbox":  # a field with room around it: the badge is outside the box
                assert not overlaps(m.label, m.box), f"badge {m.node_id} sits inside its field"
        labelled = [m for m in res.marks if m.label is not None]
        for i, a in enumerate(labelled):
            for b in labelled[i + 1:]:
                assert not _overlaps(a.label, b.label)
        return res

    res = harness.page(demo + "index.html", check)
    assert res.image.width == 1280


def test_cli_snapshot_json_line_comes_before_the_stderr_note(server, tmp_path):
    """`--json` with `--som`: read as one stream, the JSON line is whole and ends before the note."""
    cmd = [sys.executable, "-m", "engine.cli", "snapshot", server.url("overlay.html"), "--json",
           "--som", str(tmp_path / "som.png")]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:]
    first, _, rest = proc.stdout.partition("\n")
    import json
    assert json.loads(first)["stats"]["nodes"] > 0
    assert rest.startswith("-- set-of-mark:") and rest.endswith("\n")


def test_fast_phash_agrees_with_hashing_the_whole_picture():
    """The hash of a screenshot is taken from a quarter-size grey decode of its JPEG (fast); on real
    window pictures it stays within 2 bits of hashing the full-size picture directly, and a visible
    change still moves it far past the threshold."""
    import imagehash

    from engine.vision.screenshot import HASH_SIZE, phash_of, phash_of_jpeg

    for name in ("window-1024x640.png", "window-1366x768.png"):
        img = Image.open(ROOT / "docs" / name).convert("RGB").resize((1024, 640))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=70)
        direct = str(imagehash.phash(Image.open(io.BytesIO(buf.getvalue())), hash_size=HASH_SIZE))
        assert hash_distance(phash_of_jpeg(buf.getvalue()), direct) <= 2, name
        assert hash_distance(phash_of_jpeg(buf.getvalue()), phash_of(Image.open(io.BytesIO(buf.getvalue())))) <= 2
        img.paste((217, 43, 43), (150, 120, 670, 500))  # the big red block of the test above
        buf2 = io.BytesIO()
        img.save(buf2, "JPEG", quality=70)
        assert hash_distance(phash_of_jpeg(buf2.getvalue()), direct) > UNCHANGED_THRESHOLD * 4, name
