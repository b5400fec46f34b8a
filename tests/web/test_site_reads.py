"""The one GET crawl, map, extract, answer and monitor make (foldrun/web/site.py): straight onto the web role's
guarded pool (foldrun.net GuardedTransport.plain_get), and still everything the client gave it."""

from __future__ import annotations

import gzip
import zlib

from foldrun import net
from foldrun.web import site
from tests.fakes.website import TestSite, html, page

GUIDE = page("Guide", '<h1>Guide</h1><p>Bonds are lodged within ten days.</p><a href="/next">next</a>')


def test_a_crawl_of_a_private_address_is_refused_at_connect_with_the_guards_sentence(make_tool, tmp_path):
    with TestSite({"/": html(GUIDE)}) as local:
        out = make_tool(allow_private=False).call({"action": "crawl", "url": f"{local.url}/"})
        assert local.seen == []  # nothing reached the site: not robots.txt, not the page
    refusal = net.SENTENCE.format(host="127.0.0.1", address="127.0.0.1")
    assert f"- {local.url}/: {refusal}" in out
    assert out.startswith(f"crawled {local.url}/: 0 pages this call")
    assert not list((tmp_path / "outputs" / "crawl").glob("*.md"))


def test_a_gzip_and_a_deflate_page_are_read_decoded_and_their_links_followed(make_tool, tmp_path):
    squeezed = zlib.compressobj(wbits=-15)  # a raw deflate stream, as some servers send it
    raw_deflate = squeezed.compress(page("Next", "<p>Read from a raw deflate body.</p>")) + squeezed.flush()
    routes = {
        "/": (200, {"content-type": "text/html", "content-encoding": "gzip"}, gzip.compress(GUIDE)),
        "/next": (200, {"content-type": "text/html", "content-encoding": "deflate"}, raw_deflate),
    }
    with TestSite(routes) as local:
        out = make_tool().call({"action": "crawl", "url": f"{local.url}/"})
    assert "2 pages this call" in out, out
    assert (tmp_path / "outputs/crawl/index.md").read_text().startswith("# Guide\n\nBonds are lodged within ten days.")
    assert (tmp_path / "outputs/crawl/next.md").read_text().endswith("Read from a raw deflate body.")


def test_a_page_sends_what_the_client_sent_and_carries_no_cookie_a_page_set(make_tool):
    seen: list[dict] = []

    def remember(request: dict):
        seen.append({k.lower(): v for k, v in request["headers"].items()})
        return 200, {"content-type": "text/html", "set-cookie": "sid=tenant-a; Path=/"}, GUIDE

    with TestSite({"/": remember, "/next": remember}) as local:
        make_tool().call({"action": "crawl", "url": f"{local.url}/"})
    assert len(seen) == 2 and all("cookie" not in headers for headers in seen)
    first = seen[0]
    assert first["host"] == f"127.0.0.1:{local.port}"
    assert first["user-agent"].startswith("Mozilla/5.0 (compatible; foldrun-web/1.0")
    assert first["accept"].startswith("text/html") and first["accept-encoding"] == "gzip, deflate"


def test_an_encoding_it_did_not_ask_for_is_a_sentence_not_a_page_of_noise(make_tool):
    routes = {"/": (200, {"content-type": "text/html", "content-encoding": "br"}, b"\x1b\x00\x00not brotli")}
    with TestSite(routes) as local:
        got = site.get(make_tool(), f"{local.url}/", pause=0.0)
    assert got.body == b"" and got.error == (
        f"{local.url}/: the connection failed (the answer is br-encoded, which was not asked for)"
    )
