"""web.fetch: zyte against its loopback stand-in (tests/fakes/web_vendors.py), both of Zyte API's answer shapes:
`browserHtml` for a page read, base64 `httpResponseBody` (with `httpResponseHeaders`) for what save= keeps."""

from __future__ import annotations

import json

from foldrun.contract import web_engines as W
from tests.fakes.web_vendors import PDF, Vendor, vault_value


def _zyte_tool(make_tool, zyte: Vendor):
    return make_tool(
        {"fetch": "zyte"}, endpoints={"zyte": zyte.url}, secret={W.VAULT_KEYS["zyte"]: zyte.key}.__getitem__
    )


def _no_key_anywhere_but_zyte(zyte: Vendor, site, recorder, *texts: str) -> None:
    assert all(request["headers"]["authorization"] == f"Basic {vault_value('zyte')}" for request in zyte.seen)
    assert site.seen == []  # the page is Zyte's to read, not ours: nothing of this call reached the site
    said = json.dumps(recorder.events) + json.dumps(recorder.lines) + "".join(texts)
    assert zyte.key not in said and "zyte-key-0123456789" not in said


def test_a_page_read_through_zyte_asks_for_browser_html_and_converts_it(make_tool, site, recorder):
    with Vendor("zyte") as zyte:
        out = _zyte_tool(make_tool, zyte).call({"action": "fetch", "url": f"{site.url}/article"})
    assert json.loads(zyte.seen[-1]["body"]) == {"url": f"{site.url}/article", "browserHtml": True}
    assert zyte.seen[-1]["path"] == "/v1/extract" and zyte.seen[-1]["method"] == "POST"
    assert out == "# Rendered page\n\nBehind the wall."
    _no_key_anywhere_but_zyte(zyte, site, recorder, out)


def test_a_pdf_kept_with_save_is_asked_for_as_its_base64_body_and_saved_byte_for_byte(
    make_tool, site, recorder, tmp_path
):
    url = f"{site.url}/brochure.pdf"
    with Vendor("zyte") as zyte:
        out = _zyte_tool(make_tool, zyte).call({"action": "fetch", "url": url, "save": "outputs/brochure.pdf"})
    assert json.loads(zyte.seen[-1]["body"]) == {"url": url, "httpResponseBody": True, "httpResponseHeaders": True}
    assert (tmp_path / "outputs/brochure.pdf").read_bytes() == PDF
    assert out == (
        f"saved outputs/brochure.pdf ({len(PDF):,} bytes, application/pdf, as the site sent it) from {url} via zyte"
    )
    _no_key_anywhere_but_zyte(
        zyte, site, recorder, out, (tmp_path / "outputs/brochure.pdf").read_bytes().decode("latin-1")
    )


def test_an_html_page_kept_with_save_is_its_base64_body_decoded_and_converted_as_asked(
    make_tool, site, recorder, tmp_path
):
    url = f"{site.url}/own.html"
    with Vendor("zyte") as zyte:
        tool = _zyte_tool(make_tool, zyte)
        out = tool.call({"action": "fetch", "url": url, "save": "outputs/own.md"})
        html = tool.call({"action": "fetch", "url": url, "mode": "html", "save": "outputs/own.html"})
    assert [json.loads(r["body"]) for r in zyte.seen] == [
        {"url": url, "httpResponseBody": True, "httpResponseHeaders": True}
    ] * 2
    assert (tmp_path / "outputs/own.md").read_text() == "# The site's own HTML\n\nNot rendered."
    assert (tmp_path / "outputs/own.html").read_text().startswith("<html><head><title>Own</title>")
    assert out.startswith("saved outputs/own.md (") and out.endswith(f"from {url} via zyte")
    _no_key_anywhere_but_zyte(zyte, site, recorder, out, html)
