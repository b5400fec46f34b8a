"""Search and fetch APIs other than Brave and Tavily search, each from a loopback stand-in speaking its wire."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from foldrun.web import WebToolError
from foldrun.web.providers import SOURCES
from tests.web.fakes import FakeExa, FakeFirecrawl, FakeSerper, FakeTavilyExtract


@pytest.fixture
def exa():
    with FakeExa() as server:
        yield server


@pytest.fixture
def serper():
    with FakeSerper() as server:
        yield server


@pytest.fixture
def firecrawl():
    with FakeFirecrawl() as server:
        yield server


@pytest.fixture
def tavily_extract():
    with FakeTavilyExtract() as server:
        yield server


def test_every_adapter_was_matched_to_its_vendors_page_within_90_days():
    today = dt.date.today()
    stale = {name: day for name, (_page, day) in SOURCES.items() if (today - dt.date.fromisoformat(day)).days > 90}
    assert stale == {}


def test_exa_search_maps_highlights_to_the_snippet(make_tool, exa):
    tool = make_tool({"search": "exa"}, endpoints={"exa": exa.url}, secret={"EXA_API_KEY": exa.KEY}.__getitem__)
    out = tool.call({"action": "search", "query": "papers", "site": "arxiv.org", "count": 3})
    assert out == "1. A paper\n   https://arxiv.org/abs/1\n   2026-07-01\n   the key sentence … another one"
    assert json.loads(exa.seen[-1]["body"]) == {
        "query": "papers",
        "numResults": 3,
        "contents": {"highlights": True},
        "includeDomains": ["arxiv.org"],
    }


def test_serper_reads_googles_results_page_for_you(make_tool, serper):
    tool = make_tool(
        {"search": "serper"},
        endpoints={"serper": serper.url},
        secret={"SERPER_API_KEY": serper.KEY}.__getitem__,
        language="en-AU",
    )
    out = tool.call({"action": "search", "query": "notice period", "time_range": "day"})
    assert out == (
        "Answer: Seven days\n\n1. Ranked first\n   https://first.example.com/\n   Sep 1, 2026\n   The top result."
    )
    assert json.loads(serper.seen[-1]["body"]) == {
        "q": "notice period",
        "num": 10,
        "hl": "en",
        "gl": "au",
        "tbs": "qdr:d",
    }


def test_firecrawl_fetches_markdown_and_text_from_its_html(make_tool, site, firecrawl):
    tool = make_tool(
        {"fetch": "firecrawl"},
        endpoints={"firecrawl": firecrawl.url},
        secret={"FIRECRAWL_API_KEY": firecrawl.KEY}.__getitem__,
    )
    assert tool.call({"action": "fetch", "url": "https://example.com/a"}) == "markdown of https://example.com/a"
    assert json.loads(firecrawl.seen[-1]["body"]) == {"url": "https://example.com/a", "formats": ["markdown"]}
    assert (
        tool.call({"action": "fetch", "url": "https://example.com/a", "mode": "text"})
        == "html of https://example.com/a"
    )
    with pytest.raises(WebToolError, match="firecrawl reads 1 url a call"):
        tool.call({"action": "fetch", "urls": ["https://example.com/a", "https://example.com/b"]})


def test_exa_contents_asks_for_the_page_as_it_is_now(make_tool, exa):
    tool = make_tool({"fetch": "exa"}, endpoints={"exa": exa.url}, secret={"EXA_API_KEY": exa.KEY}.__getitem__)
    out = tool.call({"action": "fetch", "urls": ["https://example.com/a", "https://example.com/b"]})
    assert out == (
        "=== https://example.com/a ===\n[exa: crawled]\ntext of https://example.com/a\n\n"
        "=== https://example.com/b ===\n[exa: crawled]\ntext of https://example.com/b"
    )
    assert json.loads(exa.seen[-1]["body"])["maxAgeHours"] == 0


def test_tavily_extract_lists_failures_beside_successes(make_tool, tavily_extract):
    tool = make_tool(
        {"fetch": "tavily"},
        endpoints={"tavily": tavily_extract.url},
        secret={"TAVILY_API_KEY": tavily_extract.KEY}.__getitem__,
    )
    out = tool.call(
        {"action": "fetch", "urls": ["https://example.com/a", "https://broken.example.com/"], "mode": "text"}
    )
    assert out == (
        "=== https://example.com/a ===\ntext of https://example.com/a\n\n"
        "=== https://broken.example.com/ ===\nhttps://broken.example.com/: Failed to fetch url (through tavily)"
    )


def test_a_page_without_a_charset_header_is_read_in_its_own_meta_charset(make_tool, site):
    assert make_tool().call({"action": "fetch", "url": f"{site.url}/latin", "mode": "text"}) == "Crème brûlée"
