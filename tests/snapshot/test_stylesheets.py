"""Style sheets the page cannot read (another origin, file://) are read by the browser for the incremental
walker (engine/snapshot/stylesheets.py, engine/browser/stylesheets.py): the flags Python reads from a sheet's
text are the ones the walker reads from the same sheet's rules when it can; each sheet's text is read once;
a replaced document's sheets are forgotten."""

from __future__ import annotations

import json

import pytest

from engine.snapshot.stylesheets import css_flags, imports

from support.paths import FIXTURES

PYDOC_CSS = sorted((FIXTURES / "real" / "pydoc" / "_static").glob("*.css"))

# What real sheets write (Bootstrap-, Tailwind- and Sphinx-like), and what must not count.
SAMPLE = r"""
/* a comment with .a + .b and :has( inside */
.btn-check:checked + .btn, .btn-check:focus-visible + .btn { color: red }
.form-check-input:disabled ~ .form-check-label { opacity: .5 }
.peer:hover ~ .peer-hover\:block { display: block }
li:nth-child(2n+1), tr:nth-of-type( odd ) { background: #eee }
input[type~="a+b"], a[href^="http"] { color: blue }
.card:has(> img) { padding: 0 }
@media (min-width: 600px) { .nav:focus-within { outline: 1px solid } }
@container (min-width: 30em) { .tile { display: grid } }
.icon { background: url(data:image/svg+xml;charset=utf8,%3Csvg%20a+b%3E) }
.content { content: "a + b ~ c :has(" }
h2:empty + p { margin: 0 }
[aria-expanded="true"] ~ .panel { display: block }
"""


def test_css_flags_reads_selectors_not_declarations_or_comments():
    f = css_flags(SAMPLE)
    assert f.has and f.sib and f.fw and f.cq
    assert not f.any, "every left compound here is one the walker can follow"
    assert f.cls == {"btn-check", "form-check-input", "peer"}
    assert {"checked", "disabled", "aria-expanded"} <= f.att
    assert f.em, "h2:empty + p: a change of h2's children restyles its siblings"
    plain = css_flags("li:nth-child(2n+1) { x: 1 } a[title~='x+y'] { y: 2 } .c { content: '+' }")
    assert not plain.sib and not plain.has, plain
    assert css_flags(".a { & + .b { x: 1 } }").any, "a nested & left of a sibling combinator reads anything"
    assert css_flags(".x:nth-child(2 of .sel) { y: 1 }").any
    assert css_flags(":is(.a + .b) .c { y: 1 }").any
    assert imports("@import url('base.css'); @import \"theme.css\" screen; .a{}") == ["base.css", "theme.css"]


@pytest.fixture(scope="module")
def same_and_cross(tmp_path_factory):
    """The same sheet (the pydoc theme's sheets and SAMPLE, one importing another) linked from its own
    origin and from another one."""
    from engine.local_server import serve_directory

    sheets = tmp_path_factory.mktemp("css")
    for p in PYDOC_CSS:
        (sheets / p.name).write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
    (sheets / "sample.css").write_text("@import url('pydoctheme.css');\n" + SAMPLE, encoding="utf-8")
    links = "".join(f"<link rel='stylesheet' href='{{base}}{p.name}'>" for p in PYDOC_CSS if p.name != "pydoctheme.css")
    page = ("<!doctype html><html><head>" + links + "<link rel='stylesheet' href='{base}sample.css'></head><body>"
            "<p>One</p><p class='btn-check'>Two</p><ul><li>a</li><li>b</li></ul></body></html>")
    with serve_directory(str(sheets)) as here, serve_directory(str(sheets)) as other:
        (sheets / "same.html").write_text(page.format(base=here), encoding="utf-8")
        (sheets / "cross.html").write_text(page.format(base=other), encoding="utf-8")
        yield here + "same.html", here + "cross.html"


_STATE = ("() => {{ const c = window[{key}].inc.css; return {{has: c.has, sib: c.sib, fw: c.fw, cq: c.cq, em: c.em, "
          "any: c.any, unk: c.unk, cls: Array.from(c.cls).sort(), att: Array.from(c.att).sort()}}; }}")


def test_browser_read_flags_equal_the_walkers_own(harness, same_and_cross):
    """Read by the walker from the rules (same origin) or by Python from the text the browser gave (another
    origin), the flags are the same — on real sheets (Sphinx's) and on SAMPLE, through an @import."""
    same, cross = same_and_cross

    async def body(tab):
        await tab.snapshot(force=True)
        await tab.page.evaluate("() => { document.querySelector('p').textContent = 'changed'; }")
        tab.invalidate()
        walk = (await tab.snapshot()).walk
        return await tab.page.evaluate(_STATE.format(key=json.dumps(tab.target.key))), walk

    own, w1 = harness.page(same, body)
    read, w2 = harness.page(cross, body)
    assert own["unk"] == 0 and read["unk"] == 0, (own, read)
    assert own == read, f"the walker's own reading {own} ≠ the browser-read one {read}"
    assert own["has"], "SAMPLE uses :has()"
    assert w1.reason == w2.reason == "a style sheet uses :has()", (w1.describe(), w2.describe())


def test_each_sheet_is_read_once_and_forgotten_with_its_document(harness, same_and_cross):
    _, cross = same_and_cross

    async def body(tab):
        calls: list[str] = []
        target = tab.target
        send = target.cdp.send

        async def spy(method, params=None, session_id=None, timeout=30.0):
            if method == "CSS.getStyleSheetText":
                calls.append(params["styleSheetId"])
            return await send(method, params, session_id=session_id, timeout=timeout)

        target.stylesheets._send = spy
        for k in range(4):
            await tab.page.evaluate(f"() => {{ document.querySelector('li').textContent = 'item {k}'; }}")
            tab.invalidate()
            await tab.snapshot()
        held = {s.url.rsplit("/", 1)[-1] for s in target.stylesheets.sheets.values()}
        await tab.goto("about:blank")
        await tab.snapshot()
        return calls, held, dict(target.stylesheets.sheets)

    calls, held, after = harness.page(cross, body)
    assert calls and len(calls) == len(set(calls)), f"a sheet's text was read more than once: {calls}"
    assert {"sample.css", "pydoctheme.css", "basic.css"} <= held, held
    assert not after, f"the sheets of the replaced document are still held: {after}"
