"""`webgpu: true` gives the page WebGPU, on a software GPU where there is none (spec/tools.md, "The browser, in
full"). This machine has no GPU: the call's own Chromium answers `requestAdapter()` with SwiftShader, where the
pool's browser answers with no adapter at all."""

from __future__ import annotations

import json

import pytest

from foldrun.contract import Desk, check
from foldrun.web import WebToolError
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

ROUTES = {"/gpu": html(page("GPU", "<canvas id='c'></canvas>"))}
ADAPTER = [
    {
        "eval": "(async () => { if (!navigator.gpu) return 'no navigator.gpu'; const a = await "
        "navigator.gpu.requestAdapter(); if (!a) return 'no adapter'; const d = await a.requestDevice(); "
        "return 'adapter ' + a.info.vendor + ' ' + a.info.architecture + (d ? ', a device' : ''); })()"
    }
]


def _answer(out: str) -> str:
    return json.loads(out)[0]["value"]


def test_webgpu_gives_the_page_an_adapter_and_a_device(browse, pages_site):
    out = browse({"browse": {"webgpu": True}}).call(
        {"action": "browse", "url": f"{pages_site.url}/gpu", "actions": ADAPTER}
    )
    assert _answer(out) == "adapter google swiftshader, a device"


def test_without_it_the_page_has_no_adapter_and_the_call_argument_turns_it_on(browse, pages_site):
    tool = browse()
    assert _answer(tool.call({"action": "browse", "url": f"{pages_site.url}/gpu", "actions": ADAPTER})) in (
        "no navigator.gpu",
        "no adapter",
    )
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/gpu", "webgpu": True, "actions": ADAPTER})
    assert _answer(out).startswith("adapter google swiftshader")


def test_another_engine_is_refused_in_the_words_check_uses(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse({"browse": {"engine": "lightpanda", "webgpu": True}}).call(
            {"action": "browse", "url": f"{pages_site.url}/gpu"}
        )
    text = "---\nname: researcher\ntools: [web]\nweb:\n  browse:\n    engine: lightpanda\n    webgpu: true\n---\nP.\n"
    found = [
        f.message
        for f in check(Desk(files={"agents/researcher/agent.md": text}), mode="check")
        if f.code.startswith("web.")
    ]
    assert found == [str(caught.value) + "."]
    assert str(caught.value).startswith("web.browse: webgpu needs Chromium")
