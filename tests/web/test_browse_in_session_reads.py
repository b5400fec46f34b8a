"""The in-session path (a step that browses in a browser session, `tool.browsers.cdp`) for what a mode puts in the
tab before the page opens: the vitals observer (INP after a click) and the WebMCP context the page registers
tools with. A real Chromium with its CDP endpoint on loopback, as a browser session keeps one."""

from __future__ import annotations

import json

import pytest

from foldrun.web import WebToolError
from tests.fakes.website import html
from tests.web.test_browse_in_session import session_browser  # noqa: F401 - the fixture, shared

pytestmark = pytest.mark.e2e

_SLOW = """<!doctype html><html lang="en"><head><title>Slow</title></head><body><main><h1>Slow</h1>
<button id="go">Go</button><p id="out"></p>
<script>document.getElementById('go').addEventListener('click', () => {
  const until = performance.now() + 300; while (performance.now() < until) {}
  document.getElementById('out').textContent = 'done';
});</script></main></body></html>"""
_TOOLS = """<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><p id="cart">empty</p>
<script>document.modelContext.registerTool({name: 'add_to_cart', description: 'Add a product by SKU.',
  inputSchema: {type: 'object', properties: {sku: {type: 'string'}}, required: ['sku']},
  async execute({sku}) { document.getElementById('cart').textContent = 'one ' + sku;
    return {content: [{type: 'text', text: 'added ' + sku}]}; }});
</script></main></body></html>"""
ROUTES = {"/slow": html(_SLOW.encode()), "/shop": html(_TOOLS.encode())}


def test_vitals_in_a_session_grade_inp_after_a_click(make_tool, pages_site, session_browser, tmp_path):  # noqa: F811
    tool = make_tool({}, session_cdp=session_browser)
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/slow",
            "mode": "vitals",
            "actions": [{"click": "#go"}, {"wait": "text", "text": "done"}],
        }
    )
    inp = json.loads((tmp_path / "outputs/vitals.json").read_text())["INP"]
    assert inp["value"] >= 300 and inp["interactions"] == 1
    assert f"INP: {inp['value']} ms ({inp['grade']}) over 1 interaction" in out.splitlines()
    # The session's page stays, and so does its observer: INP is the page's, over every interaction since it
    # opened (web-vitals' own definition), so a second call's click there is the second one — counted once.
    again = tool.call({"action": "browse", "mode": "vitals", "actions": [{"click": "#go"}]})
    assert json.loads((tmp_path / "outputs/vitals.json").read_text())["INP"]["interactions"] == 2, again


def test_webmcp_in_a_session_lists_the_pages_tools_and_the_step_calls_one(
    make_tool, pages_site, recorder, session_browser
):  # noqa: F811
    tool = make_tool({}, session_cdp=session_browser)
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "mode": "webmcp"})
    assert out.splitlines()[0].startswith(f"{pages_site.url}/shop offers 1 tool through WebMCP")
    assert "- add_to_cart" in out.splitlines()
    done = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/shop",
            "actions": [{"webmcp": "add_to_cart", "input": {"sku": "LAMP-3"}}, {"get": "#cart"}],
        }
    )
    assert "added LAMP-3" in done and "one LAMP-3" in done
    for key, value in (("proxy", "SHOP_PROXY"), ("webgpu", True), ("extensions", "extensions/marker")):
        with pytest.raises(WebToolError) as caught:  # the session's browser was launched without them
            tool.call({"action": "browse", "url": f"{pages_site.url}/shop", key: value})
        assert str(caught.value) == (
            f"browse: {key}= is the browser session's own setting here — this step browses in a session; drop it"
        )
    filed = make_tool({"browse": {"webgpu": True, "proxy": "SHOP_PROXY"}}, session_cdp=session_browser)
    assert "- add_to_cart" in filed.call({"action": "browse", "url": f"{pages_site.url}/shop", "mode": "webmcp"})
    assert [line for line in recorder.lines if "is not used" in line] == [
        "browse: this step browses in a browser session, so web.browse proxy is not used — the session's browser "
        "was opened without it",
        "browse: this step browses in a browser session, so web.browse webgpu is not used — the session's browser "
        "was opened without it",
    ]
