"""scrape, screenshot, pdf and crawl over /mcp with the SDK's own client, on the local test site: a fresh session
each on a real worker's keeper, real Chromium behind the guard proxy — every format, the ranges, the exact texts."""

from __future__ import annotations

import base64
import json
import re

import pytest

from browsing.models import BrowserSession
from tests.conftest import start_worker, stop_worker
from tests.fakes.mcp_site import TITLE, arena

from .conftest import token_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site():
    with arena() as server:
        yield server


@pytest.fixture(scope="module")
def keeper(django_db_setup, django_db_blocker, tmp_path_factory):
    """One real worker for the module: each session's keeper runs there (a worker per test would cost seconds)."""
    with django_db_blocker.unblock():
        process = start_worker(tmp_path_factory.mktemp("keeper") / "worker.log")
    yield process
    stop_worker(process)


@pytest.fixture
def call_tool(keeper, mcp_client, alice):
    """call_tool(name, args) over /mcp with alice's token (`user=charlie` with his: his own account)."""
    tokens: dict = {}

    def run(name: str, args: dict, *, user=None):
        who = user or alice
        if who.pk not in tokens:
            tokens[who.pk] = token_for(who)
        with mcp_client(tokens[who.pk]) as client:
            return client.call_tool(name, args)

    return run


def _issue(result) -> tuple[str, str]:
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "invalid_input"
    issue = error["details"]["issues"][0]
    return issue["path"], issue["message"]


# -- scrape ----------------------------------------------------------------------------------------------


def test_scrape_returns_markdown_by_default_with_metadata_and_links(site, call_tool):
    result = call_tool("scrape", {"url": site.url})
    assert result.is_error is False
    data = result.structured_content
    assert json.loads(result.content[0].text) == data
    assert data["url"] == site.url + "/"
    assert list(data["content"]) == ["markdown"]
    assert "# A practice site for browser agents" in data["content"]["markdown"]
    assert data["metadata"] == {
        "title": TITLE,
        "description": "A practice site for browser agents.",
        "statusCode": 200,
        "language": "en",
        "wordCount": data["metadata"]["wordCount"],
    }
    assert 30 < data["metadata"]["wordCount"] < 90
    links = {link["url"]: link for link in data["links"]}
    assert links[site.url + "/pricing/"] == {"url": site.url + "/pricing/", "text": "Pricing", "internal": True}
    assert links["https://other.example.com/partners"]["internal"] is False
    assert not any(url.startswith("mailto:") for url in links)
    assert "inventory" not in data and "screenshot" not in data


def test_scrape_gives_one_key_per_format_asked(site, call_tool):
    data = call_tool(
        "scrape",
        {
            "url": site.url + "/pricing/",
            "waitUntil": "networkidle",
            "format": ["html", "cleaned_html", "markdown", "readability"],
        },
    ).structured_content
    content = data["content"]
    assert list(content) == ["html", "cleaned_html", "markdown", "readability"]
    assert content["html"].startswith("<!DOCTYPE html>") and "<nav>" in content["html"]
    assert "<nav>" not in content["cleaned_html"] and "<footer>" not in content["cleaned_html"]
    assert "<td>$12 a month</td>" in content["cleaned_html"]
    assert "| Pro  | $12 a month |" in content["markdown"]
    assert "Pro" in content["readability"] and "$12 a month" in content["readability"]
    assert "Test Arena</a>" not in content["readability"]


def test_scrape_reads_the_page_after_its_script_ran(site, call_tool):
    data = call_tool("scrape", {"url": site.url + "/later", "waitForText": "The late paragraph"}).structured_content
    assert "The late paragraph is here." in data["content"]["markdown"]


def test_text_that_never_appears_is_a_timeout_naming_the_text_and_the_wait(site, call_tool):
    result = call_tool("scrape", {"url": site.url + "/pricing/", "waitForText": "Enterprise", "timeoutMs": 1000})
    assert result.is_error is True
    assert result.content[0].text == (
        f"[timeout] The text 'Enterprise' was not on {site.url}/pricing/ within 1,000 ms (timeoutMs)."
    )


def test_a_missing_page_is_scraped_with_its_404_status(site, call_tool):
    data = call_tool("scrape", {"url": site.url + "/old-page", "waitUntil": "domcontentloaded"}).structured_content
    assert data["metadata"]["statusCode"] == 404


def test_a_page_that_never_finishes_loading_is_a_timeout_saying_how_to_wait_longer(site, call_tool):
    site.trickle.add("/never")
    result = call_tool("scrape", {"url": site.url + "/never", "timeoutMs": 1000})
    assert result.is_error is True
    assert result.content[0].text == (
        f"[timeout] {site.url}/never did not finish loading (load) within 1,000 ms; "
        f"raise timeoutMs (at most 120,000) or wait for less."
    )


def test_a_session_option_the_session_refuses_is_invalid_input_and_opens_no_session(site, call_tool, account):
    result = call_tool("scrape", {"url": site.url, "device": "Nokia 3310"})
    assert _issue(result) == (
        "device",
        'device must be desktop, mobile or a device id from the device list (such as "iPhone 15" or "Pixel 7")',
    )
    assert not BrowserSession.objects.filter(account=account).exists()


def test_scrape_inventory_lists_media_and_third_party_hosts_and_adds_the_page_as_base64(site, call_tool):
    data = call_tool(
        "scrape", {"url": site.url + "/media", "inventory": True, "screenshot": True, "pdf": True, "mhtml": True}
    ).structured_content
    media = {(m["kind"], m["url"]): m["thirdParty"] for m in data["inventory"]["media"]}
    assert media[("image", site.url + "/static/logo.png")] is False
    assert media[("image", "https://cdn.example.net/photo.jpg")] is True
    assert media[("image", f"http://localhost:{site.port}/static/badge.png")] is True
    assert media[("video", site.url + "/static/clip.mp4")] is False
    assert media[("audio", site.url + "/static/jingle.mp3")] is False
    assert media[("iframe", "https://video.example.org/embed/42")] is True
    assert media[("iframe", site.url + "/about")] is False
    hosts = {h["host"]: h for h in data["inventory"]["thirdPartyHosts"]}
    assert set(hosts) == {"cdn.example.net", "video.example.org", "analytics.example.com", "localhost"}
    assert hosts["localhost"]["requests"] >= 1 and "image" in hosts["localhost"]["kinds"]
    assert "script" in hosts["analytics.example.com"]["kinds"]
    assert base64.b64decode(data["screenshot"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert base64.b64decode(data["pdf"]).startswith(b"%PDF-")
    archive = base64.b64decode(data["mhtml"]).decode()
    assert "multipart/related" in archive and "Pictures, a clip and embeds" in archive


@pytest.mark.parametrize(
    ("args", "path", "message"),
    [
        ({"timeoutMs": 999}, "timeoutMs", "Must be at least 1000."),
        ({"timeoutMs": 120_001}, "timeoutMs", "Must be at most 120000."),
        ({"format": ["pdf"]}, "format[0]", "Must be one of: html, cleaned_html, markdown, readability."),
        ({"format": []}, "format", "Must have at least 1 entries."),
        ({"waitUntil": "idle"}, "waitUntil", "Must be one of: domcontentloaded, load, networkidle."),
        ({"waitForText": "x" * 501}, "waitForText", "Must be at most 500 characters."),
        ({"viewport": {"width": 100, "height": 600}}, "viewport.width", "Must be at least 200."),
    ],
)
def test_scrape_arguments_out_of_range_are_invalid_input_naming_the_argument(site, call_tool, args, path, message):
    assert _issue(call_tool("scrape", {"url": site.url, **args})) == (path, message)


def test_a_url_that_is_not_http_is_refused_with_a_sentence(call_tool):
    result = call_tool("scrape", {"url": "file:///etc/passwd"})
    assert _issue(result) == ("url", "Must be an http or https URL, such as https://example.com/pricing.")
    assert result.content[0].text == (
        "[invalid_input] url: Must be an http or https URL, such as https://example.com/pricing."
    )


def test_a_url_over_2048_characters_is_refused(site, call_tool):
    assert _issue(call_tool("scrape", {"url": site.url + "/?q=" + "a" * 2048})) == (
        "url",
        "Must be at most 2048 characters.",
    )


def test_a_private_address_is_navigation_blocked_when_the_install_does_not_allow_them(site, call_tool, settings):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    for name in ("scrape", "screenshot", "pdf", "crawl"):
        result = call_tool(name, {"url": site.url + "/pricing/"})
        assert result.is_error is True
        assert result.structured_content["error"]["code"] == "navigation_blocked"
        assert result.content[0].text == (
            f"[navigation_blocked] {site.url}/pricing/ was not opened: 127.0.0.1 resolves to 127.0.0.1: private, "
            f"loopback, link-local and other non-public addresses cannot be called."
        )


def test_a_read_only_member_cannot_spend_a_browser_session_on_a_quick_tool(site, call_tool, bob):
    for name in ("scrape", "screenshot", "pdf", "crawl"):
        result = call_tool(name, {"url": site.url}, user=bob)
        assert result.is_error is True and result.structured_content["error"]["code"] == "forbidden"
        assert result.content[0].text.endswith(f"and {name} changes it.")


def test_a_host_that_does_not_resolve_is_navigation_failed(call_tool):
    result = call_tool("scrape", {"url": "https://no-such-host.example.invalid/"})
    assert result.structured_content["error"]["code"] == "navigation_failed"
    assert result.content[0].text.startswith(
        "[navigation_failed] https://no-such-host.example.invalid/ could not be opened"
    )


# -- screenshot and pdf --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tall(site) -> str:
    lines = "<br>".join(f"line {n}" for n in range(200))
    site.routes["/tall"] = (200, {"content-type": "text/html"}, f"<html><body>{lines}</body></html>".encode())
    return site.url + "/tall"


def _png_height(data: bytes) -> int:
    return int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize(
    ("args", "mime", "magic", "height"),
    [
        ({}, "image/png", b"\x89PNG", "page"),
        ({"fullPage": False}, "image/png", b"\x89PNG", "window"),
        ({"format": "jpeg", "quality": 80, "fullPage": False}, "image/jpeg", b"\xff\xd8\xff", None),
        ({"format": "webp", "quality": 60}, "image/webp", b"RIFF", None),
        ({"fullPage": False, "viewport": {"width": 800, "height": 600}}, "image/png", b"\x89PNG", "800 wide"),
    ],
)
def test_screenshot_is_one_image_content_item_without_structured_content(tall, call_tool, args, mime, magic, height):
    result = call_tool("screenshot", {"url": tall, **args})
    assert result.is_error is False and result.structured_content is None
    [item] = result.content
    assert item.type == "image" and item.mime_type == mime
    data = base64.b64decode(item.data)
    assert data.startswith(magic)
    if height == "page":
        assert _png_height(data) > 2000  # the whole page (200 lines), well past the window
    elif height == "window":  # exactly the default 1280 × 720 page, not the headless window around it
        assert (int.from_bytes(data[16:20], "big"), _png_height(data)) == (1280, 720)
    elif height == "800 wide":  # the session was opened with the viewport asked for
        assert (int.from_bytes(data[16:20], "big"), _png_height(data)) == (800, 600)


@pytest.mark.parametrize(
    ("args", "path", "message"),
    [
        ({"format": "gif"}, "format", "Must be one of: png, jpeg, webp."),
        ({"quality": 101, "format": "jpeg"}, "quality", "Must be at most 100."),
        ({"quality": 80}, "quality", "Applies to jpeg and webp only; leave it out for png."),
        ({"fullPage": "yes"}, "fullPage", "Must be true or false."),
    ],
)
def test_screenshot_arguments_out_of_range_are_invalid_input(site, call_tool, args, path, message):
    assert _issue(call_tool("screenshot", {"url": site.url, **args})) == (path, message)


@pytest.mark.parametrize(
    ("args", "size"),
    [
        ({}, (595, 842)),
        ({"paper": "Letter"}, (612, 792)),
        ({"paper": "Legal", "landscape": True, "printBackground": False}, (1008, 612)),
    ],
)
def test_pdf_is_the_quick_pdf_resource_on_the_paper_asked(site, call_tool, args, size):
    result = call_tool("pdf", {"url": site.url + "/pricing/", **args})
    assert result.is_error is False and result.structured_content is None
    [item] = result.content
    assert item.type == "resource"
    assert str(item.resource.uri) == "webagent://quick/pdf" and item.resource.mime_type == "application/pdf"
    data = base64.b64decode(item.resource.blob)
    assert data.startswith(b"%PDF-")
    width, height = _media_box(data)
    assert abs(width - size[0]) <= 2 and abs(height - size[1]) <= 2  # Chromium rounds the paper up to whole pixels


def _media_box(data: bytes) -> tuple[float, float]:
    found = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    assert found, "the PDF names its page size"
    return float(found.group(1)), float(found.group(2))


def test_pdf_paper_that_is_not_offered_is_invalid_input(site, call_tool):
    assert _issue(call_tool("pdf", {"url": site.url, "paper": "A3"})) == ("paper", "Must be one of: A4, Letter, Legal.")


# -- crawl ----------------------------------------------------------------------------------------------


def _urls(data: dict) -> list[str]:
    return [page["url"] for page in data["pages"]]


def test_crawl_visits_the_site_breadth_first_within_the_depth(site, call_tool):
    data = call_tool("crawl", {"url": site.url, "delayMs": 0, "maxDepth": 2}).structured_content
    assert data["start"] == site.url + "/"
    assert data["stoppedBy"] == "complete" and data["pending"] == 0 and "cursor" not in data
    pages = {page["url"]: page for page in data["pages"]}
    assert pages[site.url + "/"]["depth"] == 0 and pages[site.url + "/"]["title"] == TITLE
    assert pages[site.url + "/pricing/"]["depth"] == 1 and pages[site.url + "/pricing/"]["status"] == 200
    assert pages[site.url + "/blog/"]["depth"] == 1 and pages[site.url + "/blog/second-post"]["depth"] == 2
    assert pages[site.url + "/old-page"]["status"] == 404
    assert site.url + "/blog/archive" not in pages and site.url + "/unlinked" not in pages
    assert site.url + "/dashboard" not in pages
    assert all(set(page) == {"url", "depth", "status", "title", "linksFound", "ms"} for page in data["pages"])
    assert pages[site.url + "/"]["linksFound"] == 9  # the header's four and the list's, each once, no mailto:
    skipped = {s["url"]: s["reason"] for s in data["skipped"]}
    assert skipped["https://other.example.com/partners"] == "outside the scope (host)"
    assert skipped[site.url + "/blog/archive"] == "deeper than maxDepth (2)"
    assert skipped[site.url + "/private/drafts"] == "disallowed by robots.txt"
    assert skipped[site.url + "/brochure.pdf"] == "application/pdf, not a page"
    assert data["skippedTotal"] == len(data["skipped"])


def test_crawl_reads_what_robots_txt_disallows_when_told_not_to_respect_it(site, call_tool):
    data = call_tool(
        "crawl", {"url": site.url + "/blog/", "delayMs": 0, "maxDepth": 1, "respectRobots": False}
    ).structured_content
    assert site.url + "/private/drafts" in _urls(data)


def test_a_site_that_disallows_everything_returns_no_pages(site, call_tool):
    site.routes["/robots.txt"], old = (
        (200, {"content-type": "text/plain"}, b"User-agent: *\nDisallow: /\n"),
        site.routes["/robots.txt"],
    )
    try:
        data = call_tool("crawl", {"url": site.url, "delayMs": 0}).structured_content
    finally:
        site.routes["/robots.txt"] = old
    assert data["pages"] == [] and data["stoppedBy"] == "complete"
    assert data["skipped"] == [{"url": site.url + "/", "reason": "disallowed by robots.txt"}]


def test_crawl_with_the_sitemap_finds_a_page_no_link_reaches(site, call_tool):
    data = call_tool("crawl", {"url": site.url, "delayMs": 0, "maxDepth": 1, "sitemap": True}).structured_content
    assert site.url + "/unlinked" in _urls(data)


def test_crawl_include_and_exclude_patterns_pick_the_pages(site, call_tool):
    data = call_tool(
        "crawl",
        {"url": site.url + "/blog/", "delayMs": 0, "maxDepth": 3, "include": ["/blog/*"], "exclude": ["*second*"]},
    ).structured_content
    assert _urls(data) == [site.url + "/blog/", site.url + "/blog/first-post"]
    skipped = {s["url"]: s["reason"] for s in data["skipped"]}
    assert skipped[site.url + "/blog/second-post"] == "matches an exclude pattern"
    assert skipped[site.url + "/pricing/"] == "matches no include pattern"


def test_a_crawl_scoped_to_a_list_of_hosts_follows_links_to_each_of_them(site, call_tool):
    other = f"http://localhost:{site.port}"
    site.routes["/hosts"] = (
        200,
        {"content-type": "text/html"},
        (
            f'<html><body><a href="{other}/about">About, on localhost</a> <a href="/pricing/">Pricing</a> '
            f'<a href="https://other.example.com/">Elsewhere</a></body></html>'
        ).encode(),
    )
    data = call_tool(
        "crawl", {"url": site.url + "/hosts", "delayMs": 0, "maxDepth": 1, "scope": ["127.0.0.1", "localhost"]}
    ).structured_content
    assert _urls(data) == [site.url + "/hosts", other + "/about", site.url + "/pricing/"]
    assert {"url": "https://other.example.com/", "reason": "outside the scope"} in data["skipped"]


def test_a_crawl_stopped_by_max_pages_carries_on_from_its_cursor_reading_nothing_twice(site, call_tool):
    args = {"url": site.url, "delayMs": 0, "maxDepth": 1, "maxPages": 3}
    first = call_tool("crawl", args).structured_content
    assert first["stoppedBy"] == "maxPages" and len(first["pages"]) == 3 and first["pending"] == 5
    second = call_tool("crawl", {**args, "maxPages": 100, "cursor": first["cursor"]}).structured_content
    assert second["stoppedBy"] == "complete" and second["pending"] == 0 and "cursor" not in second
    assert sorted(_urls(first) + _urls(second)) == sorted(
        site.url + path
        for path in ("/", "/pricing/", "/login", "/blog/", "/about", "/media", "/console-error", "/old-page")
    )


def test_a_crawl_that_runs_out_of_time_says_timeout_and_gives_a_cursor(site, call_tool):
    data = call_tool("crawl", {"url": site.url, "delayMs": 1500, "maxMs": 1000}).structured_content
    assert data["stoppedBy"] == "timeout" and data["pending"] > 0 and data["cursor"]
    assert len(data["pages"]) == 1


def test_a_cursor_changed_or_of_another_start_or_account_is_invalid_input(site, call_tool, charlie):
    cursor = call_tool("crawl", {"url": site.url, "delayMs": 0, "maxPages": 1}).structured_content["cursor"]
    refused = (
        "cursor",
        "This is not a cursor a crawl of this account returned (or it was changed); start again without cursor.",
    )
    assert _issue(call_tool("crawl", {"url": site.url, "cursor": cursor[:-2] + "xx"})) == refused
    assert _issue(call_tool("crawl", {"url": site.url, "cursor": cursor}, user=charlie)) == refused
    assert _issue(call_tool("crawl", {"url": site.url + "/blog/", "cursor": cursor})) == (
        "cursor",
        f"This cursor continues the crawl of {site.url}/; call crawl with that url, or leave cursor out.",
    )


def test_crawl_content_returns_each_page_in_the_formats_asked(site, call_tool):
    data = call_tool(
        "crawl", {"url": site.url + "/pricing/", "delayMs": 0, "maxDepth": 0, "content": ["markdown"]}
    ).structured_content
    [page] = data["pages"]
    assert "| Pro  | $12 a month |" in page["content"]["markdown"]


@pytest.mark.parametrize(
    ("args", "path", "message"),
    [
        ({"maxPages": 0}, "maxPages", "Must be at least 1."),
        ({"maxPages": 101}, "maxPages", "Must be at most 100."),
        ({"maxDepth": 6}, "maxDepth", "Must be at most 5."),
        ({"delayMs": 10_001}, "delayMs", "Must be at most 10000."),
        ({"maxMs": 999}, "maxMs", "Must be at least 1000."),
        ({"include": ["/a"] * 51}, "include", "Must have at most 50 entries."),
        (
            {"scope": ["a.example.com"] * 21},
            "scope",
            "Is not a value this argument takes; see the tool's input schema in tools/list.",
        ),
        (
            {"scope": ["https://a.example.com/"]},
            "scope[0]",
            "Must be a host name, such as docs.example.com (no scheme or path).",
        ),
    ],
)
def test_crawl_arguments_out_of_range_are_invalid_input(site, call_tool, args, path, message):
    assert _issue(call_tool("crawl", {"url": site.url, **args})) == (path, message)
