"""foldrun's own crawl, map, extract, answer and monitor through the Tool Test API (the call a run makes,
no model), against the loopback site of tests/fakes/website.py."""

from __future__ import annotations

import json

import pytest

from tests.fakes.website import docs_site

TEST = "/api/workspaces/rank-desk/tools/web/test"


@pytest.fixture
def docs():
    with docs_site() as server:
        yield server


def call(api, **arguments) -> dict:
    answer = api.post(TEST, {"arguments": arguments}, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_the_tool_test_crawls_maps_extracts_answers_and_monitors_the_local_site(alice_api, workspace, docs):
    crawled = call(alice_api, action="crawl", url=f"{docs.url}/", limit=50)
    assert crawled["ok"] is True, crawled
    assert crawled["result"].startswith(f"crawled {docs.url}/: 7 pages this call, 7 in all, in outputs/crawl/")
    assert f"- {docs.url}/private/admin: disallowed by robots.txt" in crawled["result"]
    mapped = call(alice_api, action="map", url=docs.url)
    assert mapped["result"].splitlines()[0] == f"5 URLs on {docs.url}, from its sitemaps (4 read) (outputs/map.txt)"
    structured = json.loads(call(alice_api, action="extract", url=f"{docs.url}/products")["result"])
    assert structured["json-ld"][0]["name"] == "Harbour flat"
    answered = call(alice_api, action="answer", query="bond weeks of rent", urls=[f"{docs.url}/guide"])
    assert answered["result"].splitlines()[1].startswith('1. "## Bond The bond is four weeks of rent')
    first = call(alice_api, action="monitor", url=f"{docs.url}/prices")
    assert first["result"].startswith(f"first look at {docs.url}/prices: saved a baseline of 3 lines")


def test_the_tool_test_says_a_robots_refusal_as_the_run_would(alice_api, workspace):
    from tests.fakes.website import TestSite, html, page

    with TestSite(
        {
            "/robots.txt": (200, {"content-type": "text/plain"}, b"User-agent: *\nDisallow: /\n"),
            "/": html(page("Home", "<h1>Home</h1>")),
        }
    ) as closed:
        body = call(alice_api, action="crawl", url=f"{closed.url}/")
    assert body["ok"] is False
    assert body["result"] == f"{closed.url}/robots.txt disallows {closed.url}/ for crawlers, so no pages were crawled"
