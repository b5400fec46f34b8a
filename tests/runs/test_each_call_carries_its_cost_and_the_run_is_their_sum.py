"""Issue 34, items 5 and 6: each model request on the trace records its input, output, cache-read and
cache-write tokens and its own cost; each paid tool call carries its own cost; the run's cost is their sum.
The Run page, the API and `foldrun report` show the cache hit rate and what caching saved. Driven in process
against the loopback provider, whose prompt cache answers as Anthropic's does."""

from __future__ import annotations

from decimal import Decimal

import pytest

from foldrun.engine.localrun import report_lines
from foldrun.cli.cmd_run import server_record
from runs.actions import check_start_run
from runs.models import Step, TraceEvent
from tests.conftest import client_for
from tests.fakes.json_api import JsonApi
from tests.fakes.prompt_cache import PromptCache
from tests.runs.helpers import agent_file, drive, push

# A long fixed prompt (some 6,000 tokens), as a real agent's with its house rules and skills runs to.
LONG_PROMPT = "You rank the desk's pages by how they move. " * 550


@pytest.fixture
def api():
    receiver = JsonApi()
    yield receiver
    receiver.stop()


@pytest.fixture
def cached_run(workspace, alice, fake_provider, api):
    fake_provider.prompt_cache = PromptCache()
    push(
        workspace,
        {
            "agents/ranker/agent.md": agent_file("ranker", fake_provider, tools="[crm]", body=LONG_PROMPT),
            "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}/v1\n---\n",
            "flows/rank.md": "---\nname: rank\n---\n1. [[ranker]] — Rank this week's pages.\n",
        },
    )
    fake_provider.reply_tool_use("crm", {"path": "/contacts"})
    fake_provider.reply_tool_use("crm", {"path": "/deals"})
    fake_provider.reply_text("GOOD ranked")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="rank"))
    assert run.status == "completed", run.error
    return run


def lines(run, kind: str) -> list[dict]:
    return list(TraceEvent.objects.filter(run=run, kind=kind).order_by("id").values_list("data", flat=True))


def test_each_model_request_records_its_tokens_its_cache_use_and_its_own_cost(cached_run):
    requests = lines(cached_run, "model_request")
    assert len(requests) == 3
    first, second, third = requests
    assert first["cache_write_tokens"] > 6_000 and first["cache_read_tokens"] == 0
    # The prompt and the conversation so far come back from the cache; only the newest turn is new.
    assert second["cache_read_tokens"] >= first["cache_write_tokens"]
    assert third["cache_read_tokens"] > second["cache_read_tokens"]
    for line in requests:
        assert set(line) >= {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd"}
        assert Decimal(line["cost_usd"]) > 0
    assert Decimal(second["saved_usd"]) > 0 and Decimal(first["saved_usd"]) < 0  # a write costs a quarter more


def test_each_paid_tool_call_carries_its_own_cost_and_the_run_costs_their_sum(cached_run):
    paid = [line for line in lines(cached_run, "tool_result") if line["name"] == "crm"]
    assert len(paid) == 2 and all("cost_usd" in line for line in paid)
    calls = [Decimal(line["cost_usd"]) for line in lines(cached_run, "model_request") + paid]
    assert cached_run.cost_usd == sum(calls)
    assert Step.objects.get(run=cached_run).cost_usd == sum(calls)


def test_the_runs_input_tokens_count_the_cached_ones_too(cached_run):
    requests = lines(cached_run, "model_request")
    every = sum(r["input_tokens"] + r["cache_read_tokens"] + r["cache_write_tokens"] for r in requests)
    assert cached_run.tokens_in == every


def test_the_api_and_foldrun_report_show_the_hit_rate_and_what_caching_saved(cached_run, alice, workspace):
    answer = client_for(alice).get(f"/api/workspaces/{workspace.name}/runs/{cached_run.public_id}").json()
    cache = answer["cache"]
    requests = lines(cached_run, "model_request")
    read = sum(r["cache_read_tokens"] for r in requests)
    assert cache["cache_read_tokens"] == read and cache["hit_rate"] == round(read / cache["prompt_tokens"], 4)
    assert Decimal(cache["saved_usd"]) == sum(Decimal(r["saved_usd"]) for r in requests) > 0
    trace = client_for(alice).get(f"/api/workspaces/{workspace.name}/runs/{cached_run.public_id}/trace").json()
    assert all("cost_usd" in e["data"] for e in trace["events"] if e["kind"] == "model_request")
    said = report_lines(server_record(answer))
    expected = (
        f"cache: {cache['hit_rate']:.0%} of {cache['prompt_tokens']:,} input tokens read from the cache · "
        f"saved ${Decimal(cache['saved_usd']):.4f}"
    )
    assert expected in said


def test_the_run_page_shows_the_cache_line_and_each_calls_cost(cached_run, alice, workspace, client):
    client.force_login(alice)
    page = client.get(f"/w/{workspace.name}/runs/{cached_run.public_id}").content.decode()
    assert 'id="run-cache"' in page and "input tokens read from the cache · saved $" in page
    first = lines(cached_run, "model_request")[0]
    assert f"cache 0 read · {first['cache_write_tokens']:,} written" in page
    assert f"${float(first['cost_usd']):.4f}" in page


def test_a_provider_that_refuses_cache_control_is_asked_again_without_it_and_the_runs_trace_says_so(
    workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/ranker/agent.md": agent_file("ranker", fake_provider, tools="[read]"),
            "flows/rank.md": "---\nname: rank\n---\n1. [[ranker]] — Rank this week's pages.\n",
        },
    )
    fake_provider.reply_status(400, message="system.1.cache_control: Extra inputs are not permitted")
    fake_provider.reply_text("GOOD ranked")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="rank"))
    assert run.status == "completed", run.error
    refused, again = fake_provider.requests
    assert "cache_control" in refused.raw.decode() and "cache_control" not in again.raw.decode()
    said = [line["line"] for line in lines(run, "refusal")]
    assert said == [
        "the provider at 127.0.0.1 refused cache_control (the provider answered HTTP 400: system.1.cache_control: "
        "Extra inputs are not permitted); the request was sent again without it, and this step's later requests "
        "carry none"
    ]
    assert len(lines(run, "model_request")) == 1
