"""web action=fetch against a loopback site."""

from __future__ import annotations

import json
import os

import pytest

from foldrun.web import WebToolError
from foldrun.web.net import GuardedBackend, PrivateAddress, checked_addresses, scrub_url


def test_it_reads_a_page_as_markdown_by_default_with_navigation_and_footer_dropped(make_tool, site):
    out = make_tool().call({"action": "fetch", "url": f"{site.url}/article"})
    assert out.startswith("# Owner inspections")
    assert "**twice a year**" in out
    assert f"[rules]({site.url}/rules)" in out
    assert "- The lease" in out
    assert "About us" not in out
    assert "Copyright" not in out
    assert "analytics" not in out


def test_it_reads_text_html_links_and_raw(make_tool, site):
    tool = make_tool()
    url = f"{site.url}/article"
    text = tool.call({"action": "fetch", "url": url, "mode": "text"})
    assert text == (
        "Home About us\nOwner inspections\nAn owner may inspect a rental twice a year with notice. "
        "Read the rules.\nWhat to bring\nThe lease\nA camera\nDay Notice\nWeekday 7 days\n"
        "Copyright Example Pty Ltd"
    )
    assert tool.call({"action": "fetch", "url": url, "mode": "html"}).startswith("<!doctype html>")
    links = tool.call({"action": "fetch", "url": url, "mode": "links"})
    assert f"- [About us]({site.url}/about)" in links
    assert f"- [rules]({site.url}/rules)" in links
    assert tool.call({"action": "fetch", "url": f"{site.url}/json", "mode": "raw"}) == '{"items": [1, 2, 3]}'


def test_meta_is_the_head_as_an_seo_desk_reads_it(make_tool, site):
    meta = json.loads(make_tool().call({"action": "fetch", "url": f"{site.url}/article", "mode": "meta"}))
    assert meta["title"] == "Owner inspections"
    assert meta["description"] == "How owners inspect a rental."
    assert meta["canonical"] == f"{site.url}/articles/inspections"
    assert meta["og"] == {"og:title": "Owner inspections — a guide"}
    assert meta["hreflang"] == [{"lang": "de", "href": f"{site.url}/de/articles/inspections"}]
    assert meta["feeds"][0]["href"] == f"{site.url}/feed.xml"
    assert meta["jsonLd"] == [{"@type": "Article", "headline": "Owner inspections"}]
    assert meta["imagesWithoutAlt"] == [f"{site.url}/a.png"]
    assert meta["imagesDecorative"] == [f"{site.url}/b.png"]
    assert meta["status"] == 200


def test_a_page_that_builds_itself_with_javascript_names_browse_with_the_same_url_and_mode(make_tool, site):
    url = f"{site.url}/app"
    out = make_tool().call({"action": "fetch", "url": url, "mode": "text"})
    assert out == (
        f'{url} builds itself with JavaScript (its content mounts into an empty <div id="root"> that a '
        f"script fills in), so fetch got an empty shell, not the page. Call web with action=browse, the "
        f"same url and mode=text to read it as a browser renders it."
    )


def test_it_sends_the_language_as_accept_language(make_tool, site):
    tool = make_tool(language="en-AU")
    assert "language en-AU,en;q=0.9" in tool.call({"action": "fetch", "url": f"{site.url}/echo-language"})
    assert "language de" in tool.call({"action": "fetch", "url": f"{site.url}/echo-language", "language": "de"})


def test_up_to_twenty_urls_come_back_side_by_side_in_one_call(make_tool, site):
    tool = make_tool()
    args = {"action": "fetch", "urls": [f"{site.url}/article", f"{site.url}/json"]}
    out = tool.call(args)
    assert f"=== {site.url}/article (HTTP 200) ===\n# Owner inspections" in out
    assert f'=== {site.url}/json (HTTP 200) ===\n{{"items": [1, 2, 3]}}' in out
    assert tool.limit_keys(args) == ["web", "web.fetch"]


def test_twenty_one_urls_are_refused(make_tool, site):
    with pytest.raises(WebToolError, match="urls= takes at most 20 URLs"):
        make_tool().call({"action": "fetch", "urls": [f"{site.url}/json"] * 21})


def test_a_redirect_is_followed_and_a_404_is_an_error_with_its_status(make_tool, site):
    tool = make_tool()
    assert tool.call({"action": "fetch", "url": f"{site.url}/hop"}).startswith("# Owner inspections")
    with pytest.raises(WebToolError, match=r"/missing: HTTP 404"):
        tool.call({"action": "fetch", "url": f"{site.url}/missing"})


def test_a_binary_body_is_not_read_as_text(make_tool, site):
    out = make_tool().call({"action": "fetch", "url": f"{site.url}/png"})
    assert out == (
        f"{site.url}/png is image/png (264 bytes), not a page to read as text; fetch it with mode=raw and "
        f"save= to keep the bytes"
    )


def test_a_slow_page_times_out(make_tool, site):
    with pytest.raises(WebToolError, match=r"/slow: timed out after 0.5s"):
        make_tool(fetch_timeout=0.5).call({"action": "fetch", "url": f"{site.url}/slow"})


def test_a_body_over_the_cap_is_cut_and_the_log_says_so(make_tool, site, recorder):
    out = make_tool().call({"action": "fetch", "url": f"{site.url}/big", "mode": "raw"})
    assert out.endswith("[cut at 100,000 of 10,485,760 characters]")
    assert f"web fetch: {site.url}/big was larger than 10 MB and was cut there" in recorder.lines


def test_credentials_in_a_url_are_sent_but_never_echoed(make_tool, site, recorder):
    url = f"http://alice:s3cret-pass@127.0.0.1:{site.port}/echo-auth"
    out = make_tool().call({"action": "fetch", "url": url})
    assert "auth Basic YWxpY2U6czNjcmV0LXBhc3M=" in out
    assert "s3cret-pass" not in recorder.text()
    assert recorder.events[-1]["url"] == f"http://127.0.0.1:{site.port}/echo-auth"
    assert scrub_url("https://u:p@example.com:8443/x?y=1") == "https://example.com:8443/x?y=1"


def test_save_writes_inside_the_agent_directory(make_tool, site, tmp_path):
    out = make_tool().call({"action": "fetch", "url": f"{site.url}/article", "save": "outputs/article.md"})
    assert (
        out
        == f"saved outputs/article.md ({len((tmp_path / 'outputs/article.md').read_bytes()):,} bytes) from {site.url}/article"
    )
    assert (tmp_path / "outputs/article.md").read_text().startswith("# Owner inspections")


def test_save_with_raw_keeps_the_bytes_untouched(make_tool, site, tmp_path):
    make_tool().call({"action": "fetch", "url": f"{site.url}/png", "mode": "raw", "save": "outputs/a.png"})
    assert (tmp_path / "outputs/a.png").read_bytes() == b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@pytest.mark.parametrize(
    "path, sentence",
    [
        ("../escape.md", "save=../escape.md: `..` is refused — the path must stay inside the agent directory"),
        (
            "/etc/passwd",
            "save=/etc/passwd: an absolute path is refused — write a path inside the agent directory, such as outputs/page.md",
        ),
        ("outputs/link/x.md", "save=outputs/link/x.md: a symlink out of the agent directory is refused"),
        ("knowledge/x.md", "save=knowledge/x.md: knowledge/ is never written by a run — use outputs/"),
        (
            "agents/a/knowledge/x.md",
            "save=agents/a/knowledge/x.md: knowledge/ is never written by a run — use outputs/",
        ),
    ],
)
def test_a_bad_save_path_is_refused_before_any_request(make_tool, site, tmp_path, path, sentence):
    (tmp_path / "outputs").mkdir()
    os.symlink("/tmp", tmp_path / "outputs" / "link")
    before = len(site.seen)
    with pytest.raises(WebToolError) as caught:
        make_tool().call({"action": "fetch", "url": f"{site.url}/article", "save": path})
    assert str(caught.value) == sentence
    assert len(site.seen) == before


def test_loopback_is_refused_at_connect_time_unless_the_install_allows_private(make_tool, site):
    tool = make_tool(allow_private=False)
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "fetch", "url": f"{site.url}/article"})
    assert str(caught.value) == (
        f"{site.url}/article: 127.0.0.1 resolves to 127.0.0.1: private, loopback, "
        f"link-local and other non-public addresses cannot be called"
    )
    with pytest.raises(WebToolError, match="localhost resolves to 127.0.0.1: private, loopback"):
        tool.call({"action": "fetch", "url": f"http://localhost:{site.port}/article"})


def test_every_address_a_name_resolves_to_is_checked_and_the_socket_goes_to_the_checked_one(site):
    def two_faced(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "10.0.0.7"]  # one public, one private: refused

    with pytest.raises(PrivateAddress, match="10.0.0.7"):
        checked_addresses("shop.example", 80, two_faced)
    with pytest.raises(PrivateAddress, match="169.254.169.254"):
        checked_addresses("169.254.169.254", 80)
    with pytest.raises(PrivateAddress, match="::1"):
        checked_addresses("[::1]", 80)
    with pytest.raises(PrivateAddress, match="::ffff:127.0.0.1"):
        checked_addresses("::ffff:127.0.0.1", 80)
    backend = GuardedBackend(resolve=lambda host, port: ["127.0.0.1"])
    with pytest.raises(PrivateAddress):
        backend.connect_tcp("rebinding.example", site.port)


def test_a_redirect_to_loopback_is_refused_at_its_own_connect(site):
    """The guard is in the connection: whatever name a hop uses, its address is checked when it connects."""
    import httpx

    from foldrun.web.net import fetch_client

    client = fetch_client(allow_private=False)
    with pytest.raises(PrivateAddress):
        client.get(f"http://localhost:{site.port}/hop")
    assert isinstance(fetch_client(allow_private=False), httpx.Client)


def test_a_fetch_counts_once_toward_web_fetch_and_is_a_read(make_tool):
    tool = make_tool()
    assert tool.limit_keys({"action": "fetch", "urls": ["a", "b", "c"]}) == ["web", "web.fetch"]
    assert tool.writes({"action": "fetch", "url": "https://example.com"}) is False


def test_the_trace_has_one_event_per_page_read(make_tool, site, recorder):
    make_tool().call({"action": "fetch", "url": f"{site.url}/hop"})
    event = recorder.events[-1]
    assert event["event"] == "fetch"
    assert event["url"] == f"{site.url}/hop"
    assert event["final_url"] == f"{site.url}/article"
    assert event["status"] == 200
    assert event["content_type"] == "text/html"


def test_a_fetch_provider_answers_markdown_and_meta_is_read_directly(make_tool, site, jina, recorder):
    tool = make_tool({"fetch": "jina"}, endpoints={"jina": jina.url}, secret=lambda name: "jina_key_0123456789")
    out = tool.call({"action": "fetch", "url": f"{site.url}/article"})
    assert out == "# Read by Jina\n\nformat markdown"
    assert jina.seen[-1]["raw_path"] == f"/{site.url}/article"
    assert jina.seen[-1]["headers"]["authorization"] == "Bearer jina_key_0123456789"
    assert tool.writes({"action": "fetch", "url": "x"}) is True
    meta = json.loads(tool.call({"action": "fetch", "url": f"{site.url}/article", "mode": "meta"}))
    assert meta["title"] == "Owner inspections"
    assert (
        "web fetch: mode=meta is read directly, not through jina — a provider answers markdown, text and html"
        in recorder.lines
    )
    assert "jina_key_0123456789" not in recorder.text()


def test_an_empty_page_arrives_with_its_reason(make_tool, site):
    assert (
        make_tool().call({"action": "fetch", "url": f"{site.url}/empty"})
        == f"{site.url}/empty is empty: HTTP 200 with no body"
    )


def test_a_host_that_refuses_the_connection_is_named(make_tool, site):
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(
        WebToolError, match=rf"^http://127.0.0.1:{port}/: nothing is listening there \(connection refused\)$"
    ):
        make_tool().call({"action": "fetch", "url": f"http://127.0.0.1:{port}/"})


def test_a_url_with_credentials_is_never_handed_to_a_fetch_provider(make_tool, jina):
    tool = make_tool({"fetch": "jina"}, endpoints={"jina": jina.url}, secret=lambda name: "jina_key_0123456789")
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "fetch", "url": "https://bob:hunter2@intranet.example.com/"})
    assert str(caught.value) == (
        "a URL with a user name or password in it is not handed to jina; leave web.fetch unset to read it directly"
    )
    assert jina.seen == []
