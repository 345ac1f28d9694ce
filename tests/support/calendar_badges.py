"""Flatpickr's open calendar as the Set-of-Mark tests read it: each day's cell and number, and the check that every
day's badge is attached to its own cell and covers no day's number."""

from __future__ import annotations

# every day cell of the open calendar and the box of its number as the page draws it (a Range
# around the text: the font's whole line of glyphs, ascenders and descenders included)
DAYS_JS = """() => [...document.querySelectorAll('.flatpickr-calendar.open .flatpickr-day')].map(el => {
  const b = el.getBoundingClientRect(); const r = document.createRange(); r.selectNodeContents(el);
  const t = r.getBoundingClientRect();
  return {label: el.getAttribute('aria-label'), cell: [b.left, b.top, b.right, b.bottom],
          text: [t.left, t.top, t.right, t.bottom]};
})"""

# the calendar is open and its opening animation (it slides down into place) has ended
CALENDAR_STILL_JS = """() => { const c = document.querySelector('.flatpickr-calendar.open');
  return !!c && c.getAnimations({subtree: true}).length === 0; }"""


def _overlaps(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _gap(a, b) -> float:
    return max(b[0] - a[2], a[0] - b[2], b[1] - a[3], a[1] - b[3], 0)


def check_calendar_badges(badges: dict, days: list[dict], snap) -> int:
    """Each open day's badge (page CSS px rects by node ID) is inside or touching its own cell, on no
    other day's cell, and over no day number of any cell; returns how many days were checked."""
    by_label = {n.attrs.get("aria-label"): n for n in snap.nodes() if n.interactive and n.attrs.get("aria-label")}
    checked = 0
    for d in days:
        n = by_label.get(d["label"])
        if n is None:  # another month's day: not a control here, its number must stay readable all the same
            continue
        b = badges.get(n.node_id)
        assert b is not None, f"{d['label']} has no badge"
        assert _gap(b, d["cell"]) <= 1.01, f"the badge of {d['label']} {b} is not attached to its cell {d['cell']}"
        for o in days:
            t = o["text"]  # less half a pixel: the overlay draws on whole widget pixels
            assert not _overlaps(b, (t[0] + 0.5, t[1] + 0.5, t[2] - 0.5, t[3] - 0.5)), \
                f"the badge of {d['label']} {b} covers the number of {o['label']} at {t}"
            if o is not d and by_label.get(o["label"]) is not None:
                assert not _overlaps(b, [o["cell"][0] + 1, o["cell"][1] + 1, o["cell"][2] - 1, o["cell"][3] - 1]), \
                    f"the badge of {d['label']} {b} lies on the cell of {o['label']}"
        checked += 1
    return checked
