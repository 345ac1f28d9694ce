"""Serializations, redaction, truncation and text validity."""

from __future__ import annotations

import json

SECRETS = ("hunter2-secret", "918273", "551177", "446688")


def test_password_and_otp_values_never_recorded(harness, server):
    async def check(tab):
        await tab.page.fill("#pw", "typed-pass-777")
        snap = await tab.snapshot()
        pw = snap.find(role="textbox", name="Password")[0]
        otp = snap.find(role="textbox", name="Code")[0]
        pin = snap.find(role="textbox", name="Verification code")[0]
        for n in (pw, otp, pin):
            assert n.value is None and n.redacted
        assert snap.find(role="textbox", name="User")[0].value == "alice"
        blobs = [snap.serialize(f).text for f in ("tree", "semantic", "skeleton", "full")]
        blobs.append(json.dumps(snap.to_json_dict("semantic")))
        blobs.append(json.dumps([n.to_dict() for n in snap.nodes()]))
        blobs.append(repr(snap.nodes()))
        for blob in blobs:
            for secret in SECRETS + ("typed-pass-777",):
                assert secret not in blob
        assert "alice" in blobs[0]

    harness.page(server.url("secrets.html"), check)


def test_semantic_payload_shape(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        s = snap.serialize("semantic")
        d = json.loads(s.text)
        assert d["mode"] == "semantic" and d["viewport"] == {"width": 1280, "height": 800}
        assert d["scroll_position"] == "0%"
        assert s.tokens > 0 and s.legend and "LEGEND" in s.legend
        by_name = {e.get("n"): e for e in d["interactive_tree"]}
        assert by_name["Country"]["r"] == "sel" and by_name["Country"]["v"] == "France"
        assert by_name["Gift wrap"]["r"] == "chk" and "checked" in by_name["Gift wrap"]["s"]
        assert by_name["Save draft"]["r"] == "btn"
        e = by_name["Label For"]
        assert set(e) <= {"i", "r", "n", "v", "s", "xy", "box", "occ", "scr", "f"}
        assert len(e["xy"]) == 2
        assert "box" in snap.serialize("semantic", boxes=True).data["interactive_tree"][0]
        # atomic leaves: the spans inside the button are not listed
        assert not any(e.get("n") in ("Save", "draft") for e in d["interactive_tree"])
        long = snap.serialize("semantic", max_name=5).data["interactive_tree"]
        assert all(len(e.get("n", "")) <= 5 for e in long)

    harness.page(server.url("labels.html"), check)


def test_tree_skeleton_full_formats(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        tree = snap.serialize("tree").data
        page = tree["page"]
        assert page["context"]["title"] == "Labels" and page["context"]["domain"] == "127.0.0.1"
        assert page["meta"]["version"] == "vigil.tree.v1" and page["meta"]["truncated"] is False
        form = page["body"]["children"][0]
        assert form["role"] == "form", "structural wrappers hoisted, the form kept"
        kids = {}
        stack = list(form["children"])
        while stack:
            c = stack.pop()
            kids.setdefault(c.get("name"), c)
            stack.extend(c.get("children", []))
        assert kids["Gift wrap"]["checked"] is True
        assert "children" not in kids["Save draft"], "atomic button does not list its spans"
        skel = snap.serialize("skeleton").text
        assert '<select id="' in skel and "<option selected>France</option>" in skel
        assert "<label" not in skel and "<form" not in skel
        full = snap.serialize("full").text
        assert 'data-interactive="true"' in full and full.startswith("<html")
        for fmt in ("tree", "semantic", "skeleton", "full"):
            assert snap.serialize(fmt).tokens > 0
            assert fmt in snap.stats.tokens

    harness.page(server.url("labels.html"), check)


def test_5k_page_tree_is_truncated_and_semantic_is_small(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        assert len(snap.nodes()) > 5000
        tree = snap.serialize("tree")
        assert tree.truncated and tree.node_count <= 1500
        marker = tree.data["page"]["body"]["children"][-1]
        assert marker["role"] == "truncated" and "1500" in marker["text"]
        assert tree.data["page"]["meta"]["truncated"] is True
        # over budget, long runs of look-alike rows are summarized first (deterministically)
        lst = tree.data["page"]["body"]["children"][0]
        summaries = [c for c in lst["children"] if c.get("role") == "summary"]
        assert summaries and "more listitem" in summaries[0]["text"]
        # with summaries disabled, the budget cuts at exactly 1500 nodes
        cut = snap.serialize("tree", run_max=10**6)
        assert cut.truncated and cut.node_count == 1500 and "cut" in cut.data["page"]["body"]["children"][-1]["text"]
        small = snap.serialize("tree", max_nodes=20)
        assert small.node_count == 20 and small.tokens < tree.tokens
        roomy = snap.serialize("tree", max_nodes=10**6)
        assert not roomy.truncated and roomy.node_count > 5000
        assert snap.serialize("tree").text == tree.text
        sem = snap.serialize("semantic")
        assert sem.tokens < 1500 and sem.node_count < 80
        assert sem.data["more_below"] is True

    harness.page(server.url("big5k.html"), check)


def test_lone_surrogates_become_valid_text(harness, server):
    async def check(tab):
        snap = await tab.snapshot()
        for fmt in ("tree", "semantic", "skeleton", "full"):
            text = snap.serialize(fmt).text
            text.encode("utf-8")  # raises on a lone surrogate
            assert "\ufffd" in text
        json.dumps(snap.to_json_dict("tree"), ensure_ascii=False).encode("utf-8")
        assert snap.title.encode("utf-8")

    harness.page(server.url("surrogates.html"), check)
