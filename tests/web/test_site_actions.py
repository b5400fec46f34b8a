"""foldrun's own crawl, map, extract, answer and monitor against a loopback site (tests/fakes/website.py)."""

from __future__ import annotations

import gzip
import json
import os
import re
import threading
import time

import pytest

from foldrun.web import WebToolError
from foldrun.web.paths import FolderWriter
from tests.fakes.website import TestSite, docs_site, generated_site, html, page, sitemap_index, urlset, xml


@pytest.fixture
def docs():
    with docs_site() as server:
        yield server


def test_crawl_writes_one_file_per_page_with_an_index_honours_robots_and_resumes(make_tool, docs, tmp_path):
    tool = make_tool()
    first = tool.call({"action": "crawl", "url": f"{docs.url}/", "limit": 3})
    assert first.startswith(f"crawled {docs.url}/: 3 pages this call, 3 in all, in outputs/crawl/")
    assert f"- {docs.url}/private/admin: disallowed by robots.txt" in first
    assert (
        "more pages found and not yet read — the same call again carries on (cursor: outputs/crawl/.cursor.json)"
        in first
    )
    again = tool.call({"action": "crawl", "url": f"{docs.url}/", "limit": 50})
    assert again.startswith(f"resumed the crawl of {docs.url}/: 4 pages this call, 7 in all")
    assert again.endswith("nothing left to read on the site: the crawl is complete")
    assert f"- {docs.url}/elsewhere: redirects to another host (https://other.example/landing), not followed" in again
    assert (
        f"- {docs.url}/brochure.pdf: application/pdf (22 bytes), not a page; fetch it with mode=raw and save= "
        f"to keep it"
    ) in again
    assert "/private/admin" not in docs.seen and docs.seen.count("/") == 1 and docs.seen.count("/guide") == 1
    index = (tmp_path / "outputs/crawl/index.txt").read_text().splitlines()
    assert index[0] == f"{docs.url}/\tindex.md"
    assert set(index[1:3]) == {f"{docs.url}/guide\tguide.md", f"{docs.url}/products\tproducts.md"}  # read side by side
    guide = (tmp_path / "outputs/crawl/guide.md").read_text()
    assert (
        guide.startswith("# Renting guide\n\n## Bond") and "| Inspection | 7    |" in guide and "© Example" not in guide
    )


def test_crawl_tries_a_503_once_more_before_recording_it(make_tool, docs, tmp_path):
    make_tool().call({"action": "crawl", "url": f"{docs.url}/flaky"})
    assert docs.seen.count("/flaky") == 2
    assert (tmp_path / "outputs/crawl/flaky.md").read_text().endswith("Answered the second time.")


def test_crawl_tries_a_429_and_a_dropped_connection_once_more_and_records_what_failed_twice(make_tool, tmp_path):
    site = TestSite(
        {
            "/": html(
                page("Home", '<a href="/busy">busy</a> <a href="/dropped">dropped</a> <a href="/limited">limited</a>')
            ),
            "/dropped": html(page("Dropped", "<p>Answered after the connection dropped once.</p>")),
            "/limited": (429, {"content-type": "text/plain", "retry-after": "1"}, b"slow down"),
        }
    )
    tries = {"busy": 0}

    def busy(_request: dict):
        tries["busy"] += 1
        return (
            (429, {"content-type": "text/plain"}, b"slow down")
            if tries["busy"] == 1
            else html(page("Busy", "<p>Answered the second time.</p>"))
        )

    site.routes["/busy"] = busy
    site.hangup["/dropped"] = 1
    with site:
        out = make_tool().call({"action": "crawl", "url": f"{site.url}/"})
    assert out.startswith(f"crawled {site.url}/: 3 pages this call, 3 in all")
    assert (tmp_path / "outputs/crawl/busy.md").read_text().endswith("Answered the second time.")
    assert (tmp_path / "outputs/crawl/dropped.md").read_text().endswith("Answered after the connection dropped once.")
    assert f"- {site.url}/limited: HTTP 429 after a second try" in out
    assert site.seen.count("/busy") == 2 and site.seen.count("/limited") == 2 and site.seen.count("/") == 1


def test_crawl_reads_fifty_pages_by_default_a_few_at_a_time_and_never_more_than_four(make_tool, tmp_path):
    site = generated_site(60)
    lock, now, most = threading.Lock(), [0], [0]
    for path, answer in list(site.routes.items()):
        if path.startswith("/p/"):

            def slow(_request: dict, answer=answer):
                with lock:
                    now[0] += 1
                    most[0] = max(most[0], now[0])
                time.sleep(0.05)
                with lock:
                    now[0] -= 1
                return answer

            site.routes[path] = slow
    with site:
        out = make_tool().call({"action": "crawl", "url": f"{site.url}/p/0"})
    assert out.startswith(f"crawled {site.url}/p/0: 50 pages this call, 50 in all")
    assert len(list((tmp_path / "outputs/crawl").glob("*.md"))) == 50
    assert 2 <= most[0] <= 4


def test_crawl_keeps_its_cursor_in_state_when_asked(make_tool, docs, tmp_path):
    out = make_tool().call({"action": "crawl", "url": f"{docs.url}/", "limit": 1, "state": "true"})
    assert "(cursor: state/crawl/" in out
    assert not (tmp_path / "outputs/crawl/.cursor.json").exists()
    assert len(list((tmp_path / "state/crawl").glob("*.json"))) == 1


def test_a_robots_txt_that_disallows_everything_crawls_and_maps_nothing_and_says_so(make_tool):
    with TestSite(
        {
            "/robots.txt": (200, {"content-type": "text/plain"}, b"User-agent: *\nDisallow: /\n"),
            "/": html(page("Home", "<h1>Home</h1>")),
        }
    ) as closed:
        tool = make_tool()
        with pytest.raises(WebToolError) as crawl:
            tool.call({"action": "crawl", "url": f"{closed.url}/"})
        with pytest.raises(WebToolError) as mapped:
            tool.call({"action": "map", "url": f"{closed.url}/"})
        assert closed.seen == ["/robots.txt", "/robots.txt"]
    assert str(crawl.value) == f"{closed.url}/robots.txt disallows {closed.url}/ for crawlers, so no pages were crawled"
    assert str(mapped.value) == f"{closed.url}/robots.txt disallows {closed.url}/ for crawlers, so no URLs were listed"


def test_crawl_limit_is_checked_before_any_request(make_tool, docs):
    with pytest.raises(WebToolError, match=r"^crawl limit=5001 must be 1 to 5,000$"):
        make_tool().call({"action": "crawl", "url": docs.url, "limit": 5001})
    assert docs.seen == []


def test_map_reads_the_sitemap_index_and_its_gzip_sitemap_from_robots_txt(make_tool, docs, tmp_path):
    out = make_tool().call({"action": "map", "url": f"{docs.url}/guide"})
    urls = [f"{docs.url}{p}" for p in ("/guide", "/products", "/app", "/", "/blog/inspections")]
    assert out == "\n".join([f"5 URLs on {docs.url}, from its sitemaps (4 read) (outputs/map.txt)", *urls])
    assert (tmp_path / "outputs/map.txt").read_text() == "\n".join(urls) + "\n"


def test_a_looping_or_broken_sitemap_falls_back_to_the_links_of_the_pages(make_tool, tmp_path):
    site = TestSite()
    site.routes.update(
        {
            "/robots.txt": lambda r: (
                200,
                {},
                f"Sitemap: {site.url}/a.xml\nSitemap: {site.url}/broken.xml.gz\n".encode(),
            ),
            "/a.xml": lambda r: xml(sitemap_index([f"{site.url}/b.xml"])),
            "/b.xml": lambda r: xml(sitemap_index([f"{site.url}/a.xml"])),
            "/broken.xml.gz": (200, {"content-type": "application/gzip"}, gzip.compress(b"<urlset><url><loc>")[:-4]),
            "/": html(page("Home", '<a href="/one">one</a> <a href="https://elsewhere.example/">out</a>')),
            "/one": html(page("One", '<a href="/two">two</a>')),
            "/two": html(page("Two", "")),
        }
    )
    with site:
        out = make_tool().call({"action": "map", "url": site.url, "limit": 500})
    assert out.startswith(
        f"3 URLs on {site.url}, from the links on its pages (no sitemap listed any) (outputs/map.txt)"
    )
    assert "listed no pages that could be read — broken, empty or only pointing at each other" in out
    assert out.endswith(f"{site.url}/\n{site.url}/one\n{site.url}/two")
    assert site.seen.count("/a.xml") == 1


def test_map_stops_at_its_limit(make_tool):
    site = TestSite()
    site.routes["/sitemap.xml"] = lambda r: xml(urlset([f"{site.url}/p/{n}" for n in range(40)]))
    with site:
        out = make_tool().call({"action": "map", "url": site.url, "limit": 10})
    assert out.splitlines()[0].endswith("stopped at limit=10") and len(out.splitlines()) == 11


def test_map_lists_five_hundred_urls_by_default(make_tool, tmp_path):
    site = TestSite()
    site.routes["/sitemap.xml"] = lambda r: xml(urlset([f"{site.url}/p/{n}" for n in range(600)]))
    with site:
        out = make_tool().call({"action": "map", "url": site.url})
    assert out.splitlines()[0].endswith("stopped at limit=500") and len(out.splitlines()) == 501
    assert len((tmp_path / "outputs/map.txt").read_text().splitlines()) == 500


def test_extract_returns_a_row_per_match_with_attributes_made_absolute(make_tool, docs, tmp_path):
    out = make_tool().call(
        {
            "action": "extract",
            "url": f"{docs.url}/products",
            "each": ".listing",
            "fields": json.dumps({"name": "h3", "tel": ".tel", "url": "a@href"}),
        }
    )
    rows = [
        {"name": "Harbour flat", "tel": "02 9999 0000", "url": f"{docs.url}/flats/1"},
        {"name": "Garden cottage", "tel": "02 8888 0000", "url": f"{docs.url}/flats/2"},
    ]
    assert json.loads(out) == rows
    assert json.loads((tmp_path / "outputs/extracted.json").read_text()) == rows


def test_extract_with_no_selectors_returns_the_pages_json_ld_and_opengraph(make_tool, docs):
    data = json.loads(make_tool().call({"action": "extract", "url": f"{docs.url}/products"}))
    assert data["json-ld"][0]["offers"]["price"] == "450"
    assert data["opengraph"][0]["og:title"] == "Listings at Example"
    assert data["microdata"] == []


def test_extract_with_no_selectors_reads_the_pages_microdata(make_tool):
    body = (
        '<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Harbour flat</h1>'
        '<span itemprop="price">450</span></div>'
    )
    with TestSite({"/flat": html(page("Flat", body))}) as site:
        data = json.loads(make_tool().call({"action": "extract", "url": f"{site.url}/flat"}))
    assert data["microdata"] == [
        {"@context": "https://schema.org", "@type": "Product", "name": "Harbour flat", "price": "450"}
    ]


NEEDS_PROVIDER = (
    "web: extract by {arg} needs a model to read the page, and foldrun's own extract has none: name an "
    "extract provider in the agent's file (web: {{extract: firecrawl}} — or zyte or hyperbrowser), or "
    "read the page with each= and fields="
)


@pytest.mark.parametrize("arg,value", [("schema", '{"type": "object"}'), ("prompt", "the cheapest")])
def test_extract_by_schema_or_prompt_needs_a_provider_and_fetches_nothing(make_tool, docs, tmp_path, arg, value):
    with pytest.raises(WebToolError) as refused:
        make_tool().call({"action": "extract", "url": f"{docs.url}/products", arg: value})
    assert str(refused.value) == NEEDS_PROVIDER.format(arg=f"{arg}=")
    assert "/products" not in docs.seen and not (tmp_path / "outputs/extracted.json").exists()


def test_extract_refuses_a_pdf_with_a_sentence_and_writes_nothing(make_tool, docs, tmp_path):
    with pytest.raises(WebToolError) as refused:
        make_tool().call({"action": "extract", "url": f"{docs.url}/brochure.pdf", "each": "p"})
    assert str(refused.value) == (
        f"{docs.url}/brochure.pdf is application/pdf (22 bytes), not a page to extract "
        f"from; fetch it with mode=raw and save= to keep it"
    )
    assert not (tmp_path / "outputs/extracted.json").exists()


def test_answer_quotes_ranked_passages_with_their_sources_and_no_prose(make_tool, docs):
    out = make_tool().call(
        {
            "action": "answer",
            "query": "how much notice before an inspection",
            "urls": [f"{docs.url}/guide", f"{docs.url}/blog/inspections", f"{docs.url}/brochure.pdf"],
        }
    )
    lines = out.splitlines()
    assert lines[0].startswith("Passages that answer 'how much notice before an inspection', best first — BM25 over ")
    assert lines[0].endswith(
        "(the pages given), each with its score; a passage under a quarter of the best score "
        "is left out; quoted as the pages say it, no model wrote this:"
    )
    assert lines[1] == '1. "# Inspections Tenants must be given notice in writing before an inspection."'
    assert re.fullmatch(rf"   — {re.escape(docs.url)}/blog/inspections \(score \d+\.\d\d\)", lines[2])
    assert "seven days' notice" in lines[3] and lines[4].startswith(f"   — {docs.url}/guide (score ")
    assert _score(lines[2]) > _score(lines[4]) >= _score(lines[2]) / 4
    assert lines[-1] == f"not read: {docs.url}/brochure.pdf is application/pdf, not a page to read passages from"


def _score(line: str) -> float:
    return float(re.search(r"\(score (\d+\.\d\d)\)$", line).group(1))


def test_answer_leaves_out_a_page_that_shares_only_a_word_and_says_how_many_it_cut(make_tool, docs):
    out = make_tool().call(
        {"action": "answer", "query": "bond weeks of rent", "urls": [f"{docs.url}/guide", f"{docs.url}/"]}
    )  # the home page says "Flats to rent."
    lines = out.splitlines()
    assert lines[1].startswith('1. "## Bond The bond is four weeks of rent')
    assert lines[2].startswith(f"   — {docs.url}/guide (score ")
    best = _score(lines[2])
    assert lines[3:] == [f"left out: 1 passage scoring under {best / 4:.2f}, a quarter of the best"]
    assert f"   — {docs.url}/ (score" not in out


def test_answer_reads_the_pages_the_accounts_search_found(make_tool, docs, searxng):
    searxng.results = [{"title": "Guide", "url": f"{docs.url}/guide", "content": "renting"}]
    out = make_tool(searxng_url=searxng.url).call({"action": "answer", "query": "bond weeks of rent"})
    assert "(the search's top results)" in out.splitlines()[0]
    assert "The bond is four weeks of rent" in out.splitlines()[1]


def test_monitor_saves_a_baseline_first_then_says_the_lines_added_and_removed(make_tool, docs, tmp_path):
    tool = make_tool()
    first = tool.call({"action": "monitor", "url": f"{docs.url}/prices"})
    assert first.startswith(f"first look at {docs.url}/prices: saved a baseline of 3 lines in state/monitor/page-")
    assert first.endswith("; the next call says what changed since now")
    second = tool.call({"action": "monitor", "url": f"{docs.url}/prices"})
    lines = second.splitlines()
    assert lines[0].startswith(f"{docs.url}/prices since ") and ": 2 lines added, 1 removed" in lines[0]
    assert lines[1:] == ["+ Pro costs $12 a month.", "+ New: a yearly plan.", "- Pro costs $9 a month."]
    third = tool.call({"action": "monitor", "url": f"{docs.url}/prices"})
    assert third.startswith(f"{docs.url}/prices: nothing changed since ")


def test_monitor_a_question_lists_only_the_results_new_since_last_call(make_tool, searxng):
    tool = make_tool(searxng_url=searxng.url)
    searxng.results = [{"title": "Old", "url": "https://a.example/old", "content": "x"}]
    assert tool.call({"action": "monitor", "query": "rental law"}).startswith(
        "first look at 'rental law': saved a baseline of 1 results in state/monitor/"
    )
    searxng.results = [
        {"title": "Old", "url": "https://a.example/old", "content": "x"},
        {"title": "New ruling", "url": "https://a.example/new", "content": "fresh"},
    ]
    out = tool.call({"action": "monitor", "query": "rental law"})
    assert out.splitlines()[:3] == [
        "'rental law': 1 new result since " + out.splitlines()[0].split(" since ")[1],
        "1. New ruling",
        "   https://a.example/new",
    ]


def test_a_page_that_never_finishes_and_a_body_over_the_cap_are_each_a_sentence(make_tool, tmp_path):
    site = TestSite({"/big": html(b"<p>" + b"x" * (6 * 1024 * 1024) + b"</p>")})
    site.trickle.add("/slow")
    with site:
        tool = make_tool(fetch_timeout=1.0)
        with pytest.raises(WebToolError) as slow:
            tool.call({"action": "extract", "url": f"{site.url}/slow", "each": "p"})
        out = tool.call({"action": "crawl", "url": f"{site.url}/big"})
    assert str(slow.value) == f"{site.url}/slow: did not finish within 1s, so it was not kept"
    assert f"- {site.url}/big: larger than 5 MB, so it was not kept" in out
    assert not (tmp_path / "outputs/crawl/big.md").exists()


def test_fetch_of_a_page_that_never_finishes_is_a_sentence_not_a_hang(make_tool):
    site = TestSite()
    site.trickle.add("/slow")
    with site:
        with pytest.raises(WebToolError) as slow:
            make_tool(fetch_timeout=1.0).call({"action": "fetch", "url": f"{site.url}/slow"})
    assert str(slow.value) == f"{site.url}/slow: did not finish within 1s, so it was not read"


def test_a_pdf_is_said_by_fetch_and_its_bytes_saved_raw_when_asked(make_tool, docs, tmp_path):
    tool = make_tool()
    said = tool.call({"action": "fetch", "url": f"{docs.url}/brochure.pdf"})
    assert said == (
        f"{docs.url}/brochure.pdf is application/pdf (22 bytes), not a page to read as text; fetch it "
        f"with mode=raw and save= to keep the bytes"
    )
    saved = tool.call({"action": "fetch", "url": f"{docs.url}/brochure.pdf", "mode": "raw", "save": "outputs/b.pdf"})
    assert saved == f"saved outputs/b.pdf (22 bytes) from {docs.url}/brochure.pdf"
    assert (tmp_path / "outputs/b.pdf").read_bytes() == b"%PDF-1.4 fake brochure"


def test_answer_refuses_a_site_with_a_path_and_a_time_range_it_does_not_know_before_searching(make_tool, searxng):
    tool = make_tool(searxng_url=searxng.url)
    with pytest.raises(WebToolError) as path:
        tool.call({"action": "answer", "query": "bond", "site": "example.com/blog"})
    with pytest.raises(WebToolError) as when:
        tool.call({"action": "answer", "query": "bond", "time_range": "fortnight"})
    assert str(path.value) == (
        "site=example.com/blog has a path; site= is a domain such as example.com — its subdomains included, no path"
    )
    assert str(when.value).startswith("time_range=fortnight is not one of day, week, month")
    assert [r for r in searxng.seen if r["path"] == "/search"] == []


def test_crawl_refuses_a_crawl_folder_that_is_a_symlink_out_and_writes_nothing_there(make_tool, docs, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "outputs").mkdir()
    os.symlink(outside, tmp_path / "outputs" / "crawl")
    with pytest.raises(WebToolError, match=r"^crawl: a symlink out of the agent directory is refused$"):
        make_tool().call({"action": "crawl", "url": f"{docs.url}/", "limit": 2})
    assert list(outside.iterdir()) == []


def test_crawl_refuses_a_page_file_planted_as_a_symlink_and_leaves_its_target_alone(make_tool, docs, tmp_path):
    target = tmp_path.parent / f"{tmp_path.name}-target.txt"
    target.write_text("untouched")
    (tmp_path / "outputs" / "crawl").mkdir(parents=True)
    os.symlink(target, tmp_path / "outputs" / "crawl" / "index.md")
    with pytest.raises(WebToolError, match=r"^index.md: a symlink out of the agent directory is refused$"):
        make_tool().call({"action": "crawl", "url": f"{docs.url}/", "limit": 2})
    assert target.read_text() == "untouched"
    # the pages are written off the readers' thread: the refusal still stops the call before its index and cursor
    assert not (tmp_path / "outputs/crawl/index.txt").exists()
    assert not (tmp_path / "outputs/crawl/.cursor.json").exists()


def test_a_page_file_the_disk_refuses_is_a_sentence_naming_it_and_the_files_after_it_are_not_written(tmp_path):
    with pytest.raises(WebToolError) as refused:
        with FolderWriter(tmp_path, tmp_path / "outputs" / "crawl") as writer:
            writer.write("x" * 300 + ".md", b"too long a name for the file system")
            writer.write("after.md", b"never written")
    assert str(refused.value) == (
        f"outputs/crawl/{'x' * 300}.md could not be written (File name too long), so the call stopped there"
    )
    assert not (tmp_path / "outputs/crawl/after.md").exists()
