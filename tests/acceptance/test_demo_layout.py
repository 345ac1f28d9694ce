"""The demo shop fits a narrow page: at the width the page panel has in a 1024x640 window (~705 px) the
header wraps instead of running past the page's edge, and the coupon widget stays inside its card,
its field clear of its Apply button and of the account form beside it (the field sits in a closed
shadow root: measured from Vigil's snapshot, which reads through it)."""

from __future__ import annotations

import pytest

from engine.local_server import serve_directory

from support.paths import ROOT


@pytest.fixture(scope="module")
def demo():
    with serve_directory(ROOT / "assets" / "demo") as base:
        yield base + "index.html"


def inside(inner, outer) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return x >= ox - 0.5 and y >= oy - 0.5 and x + w <= ox + ow + 0.5 and y + h <= oy + oh + 0.5


def apart(a, b) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax + aw <= bx + 0.5 or bx + bw <= ax + 0.5 or ay + ah <= by + 0.5 or by + bh <= ay + 0.5


@pytest.mark.parametrize("width", [705, 1280])
def test_demo_fits_a_narrow_page(harness, demo, width):
    async def check(tab):
        await tab.page.set_viewport_size({"width": width, "height": 640})
        widths = await tab.page.evaluate("""() => {
            const h = document.querySelector('.header-inner');
            return [document.documentElement.scrollWidth, innerWidth, h.scrollWidth, h.clientWidth,
                    ...[...h.children].map(c => c.getBoundingClientRect().right)];
        }""")
        page_w, inner_w, header_scroll, header_w, *rights = widths
        assert page_w <= inner_w, f"the page is {page_w} px wide in a {inner_w} px window"
        assert header_scroll <= header_w and max(rights) <= inner_w, widths
        snap = await tab.snapshot()
        field = snap.find("textbox", "Coupon code", exact=True)[0]
        apply = snap.find("button", "Apply", exact=True)[0]
        card = next(n for n in snap.nodes() if n.attrs.get("id") == "deals")
        name = snap.find("textbox", "Full name", exact=True)[0]
        for n in (field, apply):
            assert inside(n.bounds, card.bounds), (n.name, n.bounds, card.bounds)
        assert apart(field.bounds, apply.bounds), (field.bounds, apply.bounds)
        assert apart(field.bounds, name.bounds), (field.bounds, name.bounds)

    harness.page(demo, check)
