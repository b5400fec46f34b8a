"""foldrun's own crawl, map, extract, answer and monitor through real runs on a real Celery worker,
against the loopback site of tests/fakes/website.py (robots rules, a sitemap index with a gzip sitemap,
JSON-LD, a table, a JS-only shell, a page that changes between calls)."""

from __future__ import annotations

import json

import pytest

from runs.actions import check_start_run
from runs.models import Artifact, Run, TraceEvent
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.website import docs_site
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e


def finished(run) -> Run:
    return wait_for(
        lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed", "cancelled"]).first(), timeout=120
    )


def tool_results(run) -> list[str]:
    return [e.data["content"] for e in TraceEvent.objects.filter(run=run, kind="tool_result").order_by("pk")]


def test_a_run_crawls_maps_extracts_answers_and_monitors_and_the_next_run_sees_what_changed(
    celery_worker_process, workspace, alice, fake_provider
):
    with docs_site() as site:
        push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
        fake_provider.reply_tool_use("web", {"action": "crawl", "url": f"{site.url}/", "limit": 3})
        fake_provider.reply_tool_use("web", {"action": "crawl", "url": f"{site.url}/"})
        fake_provider.reply_tool_use("web", {"action": "map", "url": site.url})
        fake_provider.reply_tool_use(
            "web",
            {
                "action": "extract",
                "url": f"{site.url}/products",
                "each": ".listing",
                "fields": {"name": "h3", "url": "a@href"},
            },
        )
        fake_provider.reply_tool_use(
            "web",
            {
                "action": "answer",
                "query": "how much notice before an inspection",
                "urls": [f"{site.url}/guide", f"{site.url}/blog/inspections"],
            },
        )
        fake_provider.reply_tool_use("web", {"action": "monitor", "url": f"{site.url}/prices"})
        fake_provider.reply_text("GOOD — read the site")
        first = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the site."))
        fake_provider.reply_tool_use("web", {"action": "monitor", "url": f"{site.url}/prices"})
        fake_provider.reply_text("GOOD — the prices moved")
        second = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Watch the prices."))
    assert first.status == "completed", first.error
    crawl, resumed, mapped, extracted, answered, baseline = tool_results(first)
    assert crawl.startswith(f"crawled {site.url}/: 3 pages this call, 3 in all")
    assert resumed.startswith(f"resumed the crawl of {site.url}/: 4 pages this call, 7 in all")
    assert "disallowed by robots.txt" in crawl and "redirects to another host" in resumed
    assert mapped.startswith(f"5 URLs on {site.url}, from its sitemaps (4 read) (outputs/map.txt)")
    assert json.loads(extracted) == [
        {"name": "Harbour flat", "url": f"{site.url}/flats/1"},
        {"name": "Garden cottage", "url": f"{site.url}/flats/2"},
    ]
    assert (
        answered.splitlines()[1] == '1. "# Inspections Tenants must be given notice in writing before an inspection."'
    )
    assert baseline.startswith(f"first look at {site.url}/prices: saved a baseline of 3 lines in state/monitor/")
    kept = {a.path: bytes(a.content) for a in Artifact.objects.filter(run=first)}
    assert "outputs/crawl/index.txt" in kept and "outputs/map.txt" in kept and "outputs/extracted.json" in kept
    assert b"| Inspection | 7    |" in kept["outputs/crawl/guide.md"]
    events = [e.data["event"] for e in TraceEvent.objects.filter(run=first, kind="web").order_by("pk")]
    assert events == ["crawl", "crawl", "map", "extract", "answer", "monitor"]
    assert second.status == "completed", second.error
    [changed] = tool_results(second)
    assert changed.splitlines()[1:] == ["+ Pro costs $12 a month.", "+ New: a yearly plan.", "- Pro costs $9 a month."]
