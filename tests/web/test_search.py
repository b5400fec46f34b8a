"""web action=search: the account's own engine (a loopback SearXNG) and search APIs (loopback Brave, Tavily)."""

from __future__ import annotations

import pytest

from foldrun.web import WebToolError
from foldrun.web.search import site_domain


def test_it_asks_searxng_over_its_json_api_and_numbers_titles_urls_and_snippets(make_tool, searxng):
    out = make_tool(searxng_url=searxng.url).call({"action": "search", "query": "owner inspections"})
    assert out == (
        "1. Inspections — Example docs\n"
        "   https://docs.example.com/inspections\n"
        "   2026-10-01\n"
        "   An owner may inspect twice a year.\n"
        "2. Renting guide\n"
        "   https://other.org/rent\n"
        "   Notice periods explained.\n"
        "3. Notice\n"
        "   https://www.example.com/blog/notice\n"
        "   Seven days."
    )
    request = searxng.seen[-1]
    assert request["path"] == "/search"
    assert request["query"] == {"q": "owner inspections", "format": "json", "language": "en"}


def test_language_region_time_range_categories_and_page_go_to_searxng(make_tool, searxng):
    tool = make_tool(searxng_url=searxng.url, language="en", region="au")
    tool.call({"action": "search", "query": "rent", "categories": ["news"], "page": 2})
    assert searxng.seen[-1]["query"] == {
        "q": "rent",
        "format": "json",
        "language": "en-AU",
        "categories": "news",
        "pageno": "2",
    }
    tool.call(
        {
            "action": "search",
            "query": "rent",
            "language": "de",
            "region": "at",
            "time_range": "week",
            "engines": "duckduckgo,brave",
        }
    )
    assert searxng.seen[-1]["query"] == {
        "q": "rent",
        "format": "json",
        "language": "de-AT",
        "engines": "duckduckgo,brave",
        "time_range": "week",
    }


def test_site_is_a_site_operator_and_a_check_on_what_comes_back(make_tool, searxng):
    out = make_tool(searxng_url=searxng.url).call(
        {"action": "search", "query": "notice", "site": "https://www.Example.com/"}
    )
    assert searxng.seen[-1]["query"]["q"] == "notice site:example.com"
    assert "other.org" not in out
    assert "1. Inspections — Example docs" in out
    assert "2. Notice\n   https://www.example.com/blog/notice" in out


def test_a_site_with_a_path_is_refused():
    with pytest.raises(WebToolError) as caught:
        site_domain("example.com/blog")
    assert str(caught.value) == (
        "site=example.com/blog has a path; site= is a domain such as example.com — its subdomains included, no path"
    )


def test_count_trims_to_at_most_that_many(make_tool, searxng):
    out = make_tool(searxng_url=searxng.url).call({"action": "search", "query": "x", "count": 1})
    assert "1. Inspections" in out
    assert "2." not in out


def test_answers_infoboxes_corrections_suggestions_and_silent_engines_are_printed(make_tool, searxng):
    searxng.extra = {
        "answers": [{"answer": "42", "url": "https://calc.example"}],
        "corrections": ["owner inspection"],
        "infoboxes": [
            {
                "infobox": "Inspection",
                "content": "A formal look.",
                "id": "https://en.wikipedia.org/wiki/Inspection",
                "urls": [],
            }
        ],
        "suggestions": ["rental inspection checklist"],
        "unresponsive_engines": [["google", "CAPTCHA"], ["startpage", "timeout"]],
    }
    out = make_tool(searxng_url=searxng.url).call({"action": "search", "query": "owner inspectoins"})
    assert out.startswith(
        "Answer: 42 (https://calc.example)\n"
        "Infobox: Inspection — A formal look. — https://en.wikipedia.org/wiki/Inspection\n"
        "Did you mean: owner inspection\n\n1. "
    )
    assert out.endswith(
        "Related searches: rental inspection checklist\n\n"
        "Engines that did not answer: google (CAPTCHA); startpage (timeout)"
    )


def test_the_tuning_block_is_sent_and_checked_against_the_instance_config(make_tool, searxng):
    config = {
        "search": {
            "categories": ["general"],
            "exclude_engines": ["yandex"],
            "safesearch": "moderate",
            "timeout": 5,
            "plugins": ["oa_doi_rewrite"],
            "doi_resolver": "doi.org",
        }
    }
    make_tool(config, searxng_url=searxng.url).call({"action": "search", "query": "x"})
    assert searxng.seen[0]["path"] == "/config"
    assert searxng.seen[-1]["query"] == {
        "q": "x",
        "format": "json",
        "language": "en",
        "engines": "duckduckgo,brave,wikipedia",
        "safesearch": "1",
        "timeout_limit": "5",
        "enabled_plugins": "oa_doi_rewrite",
        "doi_resolver": "doi.org",
    }


def test_a_misspelt_engine_is_refused_with_the_right_ones_beside_it(make_tool, searxng):
    with pytest.raises(WebToolError) as caught:
        make_tool({"search": {"engines": ["duckduckgoo"]}}, searxng_url=searxng.url).call(
            {"action": "search", "query": "x"}
        )
    assert str(caught.value) == (
        "search: duckduckgoo is not an engine on the account's engine; its engines are "
        "arxiv, brave, duckduckgo, wikipedia, yandex"
    )


def test_a_date_filter_names_the_engines_it_skips_and_refuses_when_that_is_all_of_them(make_tool, searxng):
    tool = make_tool({"search": {"engines": ["duckduckgo", "wikipedia"]}}, searxng_url=searxng.url)
    out = tool.call({"action": "search", "query": "x", "time_range": "month"})
    assert out.startswith("time_range=month skipped wikipedia, which cannot filter by date.\n\n1. ")
    assert searxng.seen[-1]["query"]["engines"] == "duckduckgo"
    with pytest.raises(WebToolError) as caught:
        make_tool({"search": {"engines": ["yandex", "wikipedia"]}}, searxng_url=searxng.url).call(
            {"action": "search", "query": "x", "time_range": "day"}
        )
    assert str(caught.value) == (
        "search: time_range=day would skip every engine asked (yandex, wikipedia cannot "
        "filter by date); search without it"
    )


def test_without_an_engine_configured_it_says_so(make_tool):
    with pytest.raises(WebToolError, match="this account has no search engine — no SearXNG URL of its own"):
        make_tool().call({"action": "search", "query": "x"})


def test_brave_gets_its_key_host_side_and_its_results_map_to_the_same_shape(make_tool, brave, recorder):
    tool = make_tool(
        {"search": "brave"},
        endpoints={"brave": brave.url},
        secret={"BRAVE_SEARCH_API_KEY": brave.KEY}.__getitem__,
        language="en-AU",
    )
    assert tool.secret_names() == ["BRAVE_SEARCH_API_KEY"]
    out = tool.call(
        {"action": "search", "query": "inspections", "site": "example.com", "time_range": "month", "count": 5}
    )
    assert out == (
        "1. Owner inspections\n   https://docs.example.com/a\n   2026-09-01\n   Twice a year. … With notice."
    )
    request = brave.seen[-1]
    assert request["headers"]["x-subscription-token"] == brave.KEY
    assert request["query"] == {
        "q": "inspections site:example.com",
        "count": "5",
        "search_lang": "en",
        "country": "AU",
        "freshness": "pm",
    }
    assert brave.KEY not in recorder.text()
    assert tool.writes({"action": "search", "query": "x"}) is True


def test_a_refused_key_is_named_by_its_vault_name_never_its_value(make_tool, brave):
    tool = make_tool({"search": "brave"}, endpoints={"brave": brave.url}, secret=lambda name: "BSA-wrong-key-999")
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "search", "query": "x"})
    assert str(caught.value).startswith("brave refused the key in BRAVE_SEARCH_API_KEY (HTTP 401)")
    assert "BSA-wrong-key-999" not in str(caught.value)


def test_tavily_with_the_long_form_key_reference(make_tool, tavily):
    config = {"search": {"name": "tavily", "key": "${MY_TAVILY}"}}
    tool = make_tool(config, endpoints={"tavily": tavily.url}, secret={"MY_TAVILY": tavily.KEY}.__getitem__)
    assert tool.secret_names() == ["MY_TAVILY"]
    out = tool.call({"action": "search", "query": "rules", "site": "example.gov", "time_range": "year"})
    assert out == ("1. Tenancy rules\n   https://fairtrading.example.gov/rules\n   2026-08-02\n   Inspections: twice.")
    import json

    assert json.loads(tavily.seen[-1]["body"]) == {
        "query": "rules",
        "max_results": 10,
        "search_depth": "basic",
        "include_domains": ["example.gov"],
        "time_range": "year",
    }
    assert tavily.seen[-1]["headers"]["authorization"] == f"Bearer {tavily.KEY}"


def test_the_own_engines_options_are_refused_for_a_search_api(make_tool, brave):
    tool = make_tool({"search": "brave"}, endpoints={"brave": brave.url}, secret=lambda n: brave.KEY)
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "search", "query": "x", "engines": ["duckduckgo"], "page": 2})
    assert str(caught.value) == (
        "engines=, page= are the account's own engine's; this agent searches with brave, "
        "which has no such option — drop them"
    )


def test_a_search_api_that_cannot_filter_by_date_refuses_time_range(make_tool):
    tool = make_tool({"search": "parallel"}, secret=lambda n: "k" * 10)
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "search", "query": "x", "time_range": "week"})
    assert str(caught.value) == (
        "parallel cannot filter by date, so time_range=week is refused rather than answered "
        "for every date; search without it"
    )


def test_words_that_are_not_search_are_refused_with_the_specs_reason(make_tool):
    with pytest.raises(WebToolError, match="deepseek has no search behind it"):
        make_tool({"search": "deepseek"}).call({"action": "search", "query": "x"})


def test_a_missing_key_is_named(make_tool, brave):
    def missing(name: str) -> str:
        raise KeyError(name)

    with pytest.raises(WebToolError) as caught:
        make_tool({"search": "brave"}, endpoints={"brave": brave.url}, secret=missing).call(
            {"action": "search", "query": "x"}
        )
    assert str(caught.value) == (
        "web.search: brave needs the secret BRAVE_SEARCH_API_KEY, and it is not available "
        "to this step — `foldrun secrets set BRAVE_SEARCH_API_KEY`"
    )


def test_a_plugin_or_resolver_the_instance_lacks_is_refused_with_the_right_ones_beside_it(make_tool, searxng):
    with pytest.raises(WebToolError) as caught:
        make_tool({"search": {"doi_resolver": "doi.example"}}, searxng_url=searxng.url).call(
            {"action": "search", "query": "x"}
        )
    assert str(caught.value) == (
        "search: the DOI resolver doi.example is not on the account's engine; it has oadoi.org, doi.org, sci-hub.se"
    )
    with pytest.raises(WebToolError) as caught:
        make_tool({"search": {"plugins": ["hash_plugin"]}}, searxng_url=searxng.url).call(
            {"action": "search", "query": "x"}
        )
    assert str(caught.value) == (
        "search: the plugin hash_plugin is not on the account's engine; it has oa_doi_rewrite, tracker_url_remover"
    )


def test_a_searxng_without_json_enabled_is_named(make_tool, searxng):
    searxng.respond_json = False
    with pytest.raises(WebToolError) as caught:
        make_tool(searxng_url=searxng.url).call({"action": "search", "query": "x"})
    assert str(caught.value) == (
        "search: the account's engine refused a JSON answer (HTTP 403) — its settings.yml "
        "needs `json` under search.formats"
    )
