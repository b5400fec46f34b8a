"""Every provider of the spec's tables against a loopback stand-in speaking its documented wire
(tests/fakes/web_vendors.py): what goes out, how its answer is mapped, and its key at its own host alone."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from foldrun.contract import web_engines as W
from foldrun.web import WebToolError
from foldrun.web.providers import REGISTRY, SOURCES, firecrawl as firecrawl_adapter
from tests.fakes.web_vendors import Vendor, vault_value

SEARCH_MAPPED = {
    "brave": "1. Brave hit\n   https://brave.example.com/1\n   2026-11-01\n   From Brave's own index … more",
    "exa": "1. Exa hit\n   https://exa.example.com/1\n   2026-07-01\n   by meaning",
    "tavily": "1. Tavily hit\n   https://tavily.example.com/1\n   2026-11-02\n   own crawler",
    "you": "1. You hit\n   https://you.example.com/1\n   2026-08-08\n   a snippet",
    "jina": "1. Jina hit\n   https://jina.example.com/1\n   2026-06-06\n   read already",
    "firecrawl": "1. Firecrawl hit\n   https://firecrawl.example.com/1\n   open-source core",
    "perplexity": "1. Perplexity hit\n   https://perplexity.example.com/1\n   2026-10-01\n   its own crawl",
    "linkup": "1. Linkup hit\n   https://linkup.example.com/1\n   agent-shaped",
    "serper": "1. Serper hit\n   https://serper.example.com/1\n   Sep 1, 2026\n   ranked",
    "serpapi": "1. SerpApi hit\n   https://serpapi.example.com/1\n   Aug 2, 2026\n   80+ engines",
    "dataforseo": "1. First\n   https://dfs.example.com/1\n   one\n2. Second\n   https://dfs.example.com/2\n   two",
    "parallel": "1. Parallel hit 1\n   https://www.example.com/1\n   2026-09-09\n   excerpt 1",
}


@pytest.fixture
def vendor(request):
    with Vendor(request.param) as server:
        yield server


def _tool(make_tool, block: dict, server: Vendor, **options):
    name = server.name
    return make_tool(
        block, endpoints={name: server.url}, secret={W.VAULT_KEYS[name]: server.key}.__getitem__, **options
    )


def test_every_adapter_was_matched_to_its_vendors_page_within_90_days():
    today = dt.date.today()
    stale = {name: day for name, (_page, day) in SOURCES.items() if (today - dt.date.fromisoformat(day)).days > 90}
    assert stale == {}
    assert all(page.startswith("https://") for page, _day in SOURCES.values())


@pytest.mark.parametrize("vendor", sorted(SEARCH_MAPPED), indirect=True)
def test_each_search_api_is_mapped_to_title_url_snippet_and_date(make_tool, vendor):
    tool = _tool(make_tool, {"search": vendor.name}, vendor, language="en-AU")
    out = tool.call({"action": "search", "query": "notice period", "count": 2})
    assert out.startswith(SEARCH_MAPPED[vendor.name])
    assert vendor.key not in out


def test_brave_is_asked_with_site_in_the_query_and_the_agents_language_and_country(make_tool):
    with Vendor("brave") as brave:
        _tool(make_tool, {"search": "brave"}, brave, language="en-AU").call(
            {"action": "search", "query": "leases", "site": "https://www.Example.com/", "time_range": "week"}
        )
        assert brave.seen[-1]["query"] == {
            "q": "leases site:example.com",
            "count": "10",
            "search_lang": "en",
            "country": "AU",
            "freshness": "pw",
        }


def test_you_is_asked_on_get_v1_search_with_its_key_header_and_the_agents_language_and_country(make_tool):
    with Vendor("you") as you:
        out = _tool(make_tool, {"search": "you"}, you, language="en-AU").call(
            {"action": "search", "query": "leases", "site": "https://www.Example.org/", "time_range": "week"}
        )
        asked = you.seen[-1]
    assert (asked["method"], asked["path"]) == ("GET", "/v1/search")
    assert asked["query"] == {
        "query": "leases site:example.org",
        "count": "10",
        "language": "EN",
        "country": "AU",
        "freshness": "week",
    }
    assert asked["headers"]["x-api-key"] == you.key and "authorization" not in asked["headers"]
    # site= is checked on what comes back too: the stand-in's you.example.com results are not example.org's
    assert out == "No results for 'leases' on you."


def test_a_you_result_is_its_description_else_its_snippets_and_page_age_its_date(make_tool):
    with Vendor("you") as you:
        out = _tool(make_tool, {"search": "you"}, you).call({"action": "search", "query": "notice", "count": 2})
    assert out.startswith(
        "1. You hit\n   https://you.example.com/1\n   2026-08-08\n   a snippet\n"
        "2. You second\n   https://you.example.com/2\n   2026-08-09\n   Its own description"
    )


def test_parallel_is_asked_for_twenty_when_site_is_checked_on_what_comes_back(make_tool):
    with Vendor("parallel") as parallel:
        out = _tool(make_tool, {"search": "parallel"}, parallel).call(
            {"action": "search", "query": "x", "site": "example.com", "count": 3}
        )
        assert json.loads(parallel.seen[-1]["body"])["max_results"] == 20
        assert "other.example.org" not in out
        assert out.count("https://www.example.com/") == 3


def test_serpapi_takes_its_key_in_the_query_and_google_options(make_tool):
    with Vendor("serpapi") as serpapi:
        _tool(make_tool, {"search": "serpapi"}, serpapi, language="de-AT").call(
            {"action": "search", "query": "miete", "time_range": "month", "count": 5}
        )
        seen = serpapi.seen[-1]["query"]
        assert seen == {
            "engine": "google",
            "q": "miete",
            "num": "5",
            "hl": "de",
            "gl": "at",
            "tbs": "qdr:m",
            "api_key": serpapi.key,
        }


def test_dataforseo_speaks_basic_auth_and_names_the_country_by_its_location_code(make_tool):
    with Vendor("dataforseo") as dfs:
        _tool(make_tool, {"search": "dataforseo"}, dfs, language="en-AU").call({"action": "search", "query": "rank"})
        assert dfs.seen[-1]["headers"]["authorization"] == f"Basic {vault_value('dataforseo')}"
        assert json.loads(dfs.seen[-1]["body"]) == [
            {"keyword": "rank", "language_code": "en", "depth": 10, "location_code": 2036}
        ]


@pytest.mark.parametrize(
    "name,sent",
    [
        ("tavily", ("time_range", "week")),
        ("perplexity", ("search_recency_filter", "week")),
        ("you", ("freshness", "week")),
        ("firecrawl", ("tbs", "qdr:w")),
        ("serper", ("tbs", "qdr:w")),
    ],
)
def test_a_date_filter_goes_to_every_api_that_can_filter_by_date(make_tool, name, sent):
    with Vendor(name) as server:
        _tool(make_tool, {"search": name}, server).call({"action": "search", "query": "x", "time_range": "week"})
        request = server.seen[-1]
        got = request["query"] if request["method"] == "GET" else json.loads(request["body"])
        assert got[sent[0]] == sent[1]


@pytest.mark.parametrize(
    "name,field,form", [("exa", "startPublishedDate", "%Y-%m-%dT%H:%M:%S.000Z"), ("linkup", "fromDate", "%Y-%m-%d")]
)
def test_an_api_that_filters_by_a_start_date_is_sent_the_day_the_range_began(make_tool, name, field, form):
    with Vendor(name) as server:
        before = dt.datetime.now(dt.timezone.utc)
        _tool(make_tool, {"search": name}, server).call({"action": "search", "query": "x", "time_range": "week"})
        after = dt.datetime.now(dt.timezone.utc)
    sent = dt.datetime.strptime(json.loads(server.seen[-1]["body"])[field], form).replace(tzinfo=dt.timezone.utc)
    earliest = (before - dt.timedelta(days=7)).replace(microsecond=0)
    if form == "%Y-%m-%d":
        earliest = earliest.replace(hour=0, minute=0, second=0)
    assert earliest <= sent <= after - dt.timedelta(days=7)


# ------------------------------------------------------------ fetch


@pytest.mark.parametrize(
    "vendor,expected",
    [
        ("jina", "jina read https://example.com/a"),
        ("firecrawl", "markdown of https://example.com/a"),
        ("exa", "[exa: crawled]\ntext of https://example.com/a"),
        ("tavily", "markdown of https://example.com/a"),
        ("parallel", "# full https://example.com/a"),
        ("zyte", "# Rendered page\n\nBehind the wall."),
        ("scrapingbee", "# Rendered page\n\nBehind the wall."),
    ],
    indirect=["vendor"],
)
def test_each_fetch_api_returns_the_page(make_tool, vendor, expected):
    out = _tool(make_tool, {"fetch": vendor.name}, vendor).call({"action": "fetch", "url": "https://example.com/a"})
    assert out == expected


def test_zyte_asks_for_browser_html_with_basic_auth(make_tool):
    with Vendor("zyte") as zyte:
        _tool(make_tool, {"fetch": "zyte"}, zyte).call(
            {"action": "fetch", "url": "https://example.com/a", "mode": "html"}
        )
        assert json.loads(zyte.seen[-1]["body"]) == {"url": "https://example.com/a", "browserHtml": True}
        assert zyte.seen[-1]["headers"]["authorization"] == f"Basic {vault_value('zyte')}"


def test_scrapingbee_renders_javascript_and_takes_its_key_in_the_query(make_tool):
    with Vendor("scrapingbee") as bee:
        _tool(make_tool, {"fetch": "scrapingbee"}, bee).call({"action": "fetch", "url": "https://example.com/a"})
        assert bee.seen[-1]["query"] == {"url": "https://example.com/a", "render_js": "true", "api_key": bee.key}


def test_parallel_extract_lists_failures_beside_successes(make_tool):
    with Vendor("parallel") as parallel:
        out = _tool(make_tool, {"fetch": "parallel"}, parallel).call(
            {"action": "fetch", "urls": ["https://example.com/a", "https://broken.example.com/"]}
        )
        assert out == (
            "=== https://example.com/a ===\n# full https://example.com/a\n\n"
            "=== https://broken.example.com/ ===\nhttps://broken.example.com/: fetch_failed (through parallel)"
        )


def test_a_one_url_fetch_api_is_refused_twenty_urls_with_the_tables_sentence(make_tool):
    with Vendor("zyte") as zyte:
        with pytest.raises(WebToolError) as caught:
            _tool(make_tool, {"fetch": "zyte"}, zyte).call(
                {"action": "fetch", "urls": ["https://example.com/a", "https://example.com/b"]}
            )
        assert str(caught.value) == W.batch_refusal("fetch", "zyte", 2)
        assert zyte.seen == []


# ------------------------------------------------------------ crawl, map, extract, answer, monitor


def test_firecrawl_crawls_a_site_into_outputs_crawl_following_next(make_tool, tmp_path):
    firecrawl_adapter.POLL = 0.01  # the stand-in answers "scraping" once; no need to wait a real second
    with Vendor("firecrawl") as fc:
        out = _tool(make_tool, {"crawl": "firecrawl"}, fc).call(
            {"action": "crawl", "url": "https://example.com/", "limit": 10}
        )
        assert json.loads(fc.seen[0]["body"]) == {
            "url": "https://example.com/",
            "limit": 10,
            "scrapeOptions": {"formats": ["markdown"]},
        }
    assert (
        out.splitlines()[0]
        == "crawled 3 pages of https://example.com/ through firecrawl into outputs/crawl/ (index: outputs/crawl/index.txt)"
    )
    assert (tmp_path / "outputs/crawl/index.txt").read_text().splitlines() == [
        "https://example.com/\tindex.md",
        "https://example.com/two\ttwo.md",
        "https://example.com/three\tthree.md",
    ]
    assert (tmp_path / "outputs/crawl/two.md").read_text() == "# two"


def test_tavily_maps_a_site_into_outputs_map_txt(make_tool, tmp_path):
    with Vendor("tavily") as tv:
        out = _tool(make_tool, {"map": "tavily"}, tv).call({"action": "map", "url": "https://example.com/", "limit": 4})
    assert out.splitlines()[0] == "4 URLs on https://example.com/ through tavily (outputs/map.txt)"
    assert (tmp_path / "outputs/map.txt").read_text().split() == [f"https://example.com/p{n}" for n in range(1, 5)]


def test_tavily_crawls_a_site_into_outputs_crawl_with_its_index(make_tool, tmp_path):
    with Vendor("tavily") as tv:
        out = _tool(make_tool, {"crawl": "tavily"}, tv).call(
            {"action": "crawl", "url": "https://example.com/", "limit": 5}
        )
        assert json.loads(tv.seen[-1]["body"]) == {"url": "https://example.com/", "limit": 5, "format": "markdown"}
    assert out.splitlines()[0] == (
        "crawled 3 pages of https://example.com/ through tavily into outputs/crawl/ (index: outputs/crawl/index.txt)"
    )
    assert (tmp_path / "outputs/crawl/index.txt").read_text().splitlines() == [
        f"https://example.com/p{n}\tp{n}.md" for n in range(1, 4)
    ]
    assert (tmp_path / "outputs/crawl/p2.md").read_text() == "# page 2"


def test_firecrawl_maps_a_site_into_outputs_map_txt(make_tool, tmp_path):
    with Vendor("firecrawl") as fc:
        out = _tool(make_tool, {"map": "firecrawl"}, fc).call(
            {"action": "map", "url": "https://example.com/", "limit": 2}
        )
        assert json.loads(fc.seen[-1]["body"]) == {"url": "https://example.com/", "limit": 2}
    assert out.splitlines()[0] == "2 URLs on https://example.com/ through firecrawl (outputs/map.txt)"
    assert (tmp_path / "outputs/map.txt").read_text().split() == ["https://example.com/0", "https://example.com/1"]


@pytest.mark.parametrize(
    "vendor,args,expected",
    [
        ("firecrawl", {"prompt": "the flat's name"}, {"name": "Harbour flat", "asked": "the flat's name"}),
        ("zyte", {"schema": '{"properties": {"price": {"type": "string"}}}'}, {"price": "zyte price"}),
        ("hyperbrowser", {"prompt": "the row"}, {"name": "Hyperbrowser row"}),
    ],
    indirect=["vendor"],
)
def test_each_extract_api_writes_its_json_to_outputs_extracted_json(make_tool, tmp_path, vendor, args, expected):
    out = _tool(make_tool, {"extract": vendor.name}, vendor).call(
        {"action": "extract", "url": "https://example.com/a", **args}
    )
    assert json.loads(out) == expected
    assert json.loads((tmp_path / "outputs/extracted.json").read_text()) == expected


@pytest.mark.parametrize(
    "vendor,answer,source",
    [
        ("exa", "Twice a year, with notice.", "https://exa.example.com/rules"),
        ("linkup", "Linkup's answer.", "https://linkup.example.com/src"),
        ("tavily", "Tavily says twice a year.", "https://tavily.example.com/1"),
        ("parallel", "Parallel's answer.", "https://parallel.example.com/src"),
        ("perplexity", "Sonar's answer.", "https://perplexity.example.com/src"),
        ("you", "You.com's answer.", "https://you.example.com/src"),
    ],
    indirect=["vendor"],
)
def test_each_answer_api_answers_with_its_sources(make_tool, vendor, answer, source):
    out = _tool(make_tool, {"answer": vendor.name}, vendor).call(
        {"action": "answer", "query": "how often may an owner inspect?"}
    )
    lines = out.splitlines()
    assert lines[:2] == [f"Answer from {vendor.name} (its own model wrote it, from the sources below):", answer]
    assert f"   {source}" in lines


def test_parallel_monitors_a_question_and_says_only_what_is_new(make_tool, tmp_path):
    with Vendor("parallel") as parallel:
        tool = _tool(make_tool, {"monitor": "parallel"}, parallel)
        first = tool.call({"action": "monitor", "query": "new tenancy laws in NSW"})
        assert first == (
            "parallel now watches: new tenancy laws in NSW — a first call, so nothing is new yet; "
            "the next call says what is"
        )
        parallel.monitor_events.append(
            {
                "type": "event",
                "event_group_id": "g1",
                "output": "A bill passed.",
                "source_urls": ["https://nsw.example.gov.au/bill"],
            }
        )
        second = tool.call({"action": "monitor", "query": "new tenancy laws in NSW"})
        third = tool.call({"action": "monitor", "query": "new tenancy laws in NSW"})
        made = [r for r in parallel.seen if r["method"] == "POST"]
    assert second == (
        "1 new since the last call (parallel watches: new tenancy laws in NSW):\n1. A bill passed.\n"
        "   https://nsw.example.gov.au/bill"
    )
    assert third == "nothing new since the last call (parallel watches: new tenancy laws in NSW)"
    assert len(made) == 1  # the monitor is made once and kept in state/
    assert list((tmp_path / "state/web-monitor").iterdir())


def test_firecrawl_monitors_a_page_as_lines_added_and_removed(make_tool):
    with Vendor("firecrawl") as fc:
        out = _tool(make_tool, {"monitor": "firecrawl"}, fc).call(
            {"action": "monitor", "url": "https://example.com/prices"}
        )
    assert out == "https://example.com/prices: changed since 2026-11-30T00:00:00Z (firecrawl)\n-old line\n+new line"


def test_a_question_to_a_page_monitor_is_refused_by_name(make_tool):
    with Vendor("firecrawl") as fc:
        with pytest.raises(WebToolError) as caught:
            _tool(make_tool, {"monitor": "firecrawl"}, fc).call({"action": "monitor", "query": "anything new?"})
    assert str(caught.value) == "firecrawl monitors a page (url=), not a question; parallel monitors a question"


# ------------------------------------------------------------ refusals and the key's boundary


@pytest.mark.parametrize(
    "status,sentence",
    [
        (
            401,
            "exa refused the key in EXA_API_KEY (HTTP 401) — invalid, revoked, or not for exa; store a working one with "
            "`foldrun secrets set EXA_API_KEY`",
        ),
        (
            402,
            "exa refused the key in EXA_API_KEY (HTTP 402): the account behind it is out of credit — add credit with exa, "
            "or store another key in EXA_API_KEY",
        ),
        (
            429,
            "exa is rate-limiting the key in EXA_API_KEY (HTTP 429) and asked us to wait 30s; wait, or call exa less often",
        ),
    ],
)
def test_a_refusal_names_the_provider_and_the_vault_name_never_the_key(make_tool, status, sentence):
    with Vendor("exa") as exa:
        exa.refuse = status
        with pytest.raises(WebToolError) as caught:
            _tool(make_tool, {"search": "exa"}, exa).call({"action": "search", "query": "x"})
    assert str(caught.value) == sentence


def test_a_missing_key_is_said_by_its_vault_name(make_tool):
    with Vendor("linkup") as linkup:
        tool = make_tool({"search": "linkup"}, endpoints={"linkup": linkup.url}, secret=lambda name: "")
        with pytest.raises(WebToolError) as caught:
            tool.call({"action": "search", "query": "x"})
    assert str(caught.value) == (
        "web.search: linkup needs the secret LINKUP_API_KEY, and it is not available to this "
        "step — `foldrun secrets set LINKUP_API_KEY`"
    )
    assert linkup.seen == []


def test_every_key_arrives_at_its_own_providers_host_and_no_other(make_tool, site):
    names = sorted({name for (_action, name), a in REGISTRY.items() if a.base})
    servers = {name: Vendor(name) for name in names}
    for server in servers.values():
        server.__enter__()
    try:
        secrets = {W.VAULT_KEYS[n]: s.key for n, s in servers.items()}
        endpoints = {n: s.url for n, s in servers.items()}
        firecrawl_adapter.POLL = 0.01
        for (action, name), adapter in sorted(REGISTRY.items()):
            if not adapter.base:
                continue
            tool = make_tool({action: name}, endpoints=endpoints, secret=secrets.__getitem__)
            args = {
                "search": {"query": "q"},
                "fetch": {"url": f"{site.url}/article"},
                "crawl": {"url": "https://example.com/"},
                "map": {"url": "https://example.com/"},
                "extract": {"url": "https://example.com/", "prompt": "p", "schema": '{"properties": {"a": {}}}'}
                if name == "zyte"
                else {"url": "https://example.com/", "prompt": "p"},
                "answer": {"query": "q"},
                "monitor": {"query": "q"} if name == "parallel" else {"url": "https://example.com/"},
            }[action]
            tool.call({"action": action, **args})
        for name, server in servers.items():
            assert server.seen, name
            for other, elsewhere in servers.items():
                if other == name:
                    continue
                wire = json.dumps(elsewhere.seen)
                assert server.key not in wire, f"{name}'s key reached {other}"
        assert all(s.key not in json.dumps(site.seen) for s in servers.values())
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)
