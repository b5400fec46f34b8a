"""The Run page's pieces that need no browser: costs one way, the trace as
events, the live poll that answers 204 when nothing moved."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

from django.test import Client

from runs.models import Run, Step, TraceEvent
from foldrun.trace_view import view
from runs.templatetags.foldrun_ui import cost_text


def test_a_cost_reads_one_way_and_a_model_with_no_price_says_so():
    assert cost_text(Decimal("0.0013")) == "$0.0013"
    assert cost_text(Decimal("12.5")) == "$12.5000"
    assert cost_text(Decimal("0.00001")) == "<$0.0001"
    assert cost_text(Decimal("0"), ["stub-model"]) == "no price known for stub-model"
    assert cost_text(Decimal("0"), ["claude-sonnet-4-5"]) == "$0.0000"
    assert cost_text(Decimal("0")) == "$0.0000"


def test_a_tool_call_is_formatted_json_and_a_long_result_is_folded():
    call = view(TraceEvent(pk=1, kind="tool_call", data={"name": "crm", "input": {"q": "ann", "n": 2}}))
    result = view(
        TraceEvent(
            pk=2,
            kind="tool_result",
            data={"name": "crm", "error": False, "seconds": 0.25, "content": '{"rows": [' + "1," * 400 + "1]}"},
        )
    )
    refused = view(TraceEvent(pk=3, kind="limit", data={"tool": "crm", "refused": "crm: limit 1 reached"}))
    assert (call.title, call.blocks[0].text) == ("Tool call · crm", '{\n  "q": "ann",\n  "n": 2\n}')
    assert (result.facts, result.blocks[0].is_json, result.blocks[0].long) == (["ok", "0.25 s"], True, True)
    assert (refused.kind, refused.title, refused.line) == (
        "limit refused",
        "Limit reached · crm",
        "crm: limit 1 reached",
    )


def test_the_live_poll_answers_204_until_the_run_moves(alice, workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="running")
    Step.objects.create(run=run, index=1, agent="writer", status="running")
    client = Client()
    client.force_login(alice)
    url = f"/w/rank-desk/runs/{run.public_id}"
    first = client.get(url, headers={"HX-Request": "true"})
    since = first.content.decode().split('"since": "')[1].split('"')[0]
    assert first.status_code == 200 and 'hx-trigger="every 2s"' in first.content.decode()
    assert "<html" not in first.content.decode()  # the live part alone
    assert client.get(url, {"since": since}, headers={"HX-Request": "true"}).status_code == 204
    TraceEvent.objects.create(run=run, step=run.steps.get(), kind="log", data={"message": "moved"})
    moved = client.get(url, {"since": since}, headers={"HX-Request": "true"})
    assert moved.status_code == 200 and "moved" in moved.content.decode()


def test_the_runs_list_says_no_price_known_for_a_free_run_of_an_unpriced_model(alice, workspace):
    free = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="completed")
    TraceEvent.objects.create(run=free, kind="model_request", data={"model": "stub-model", "stop_reason": "end_turn"})
    Run.objects.create(
        account=workspace.account, workspace=workspace, name="daily", status="completed", cost_usd=Decimal("0.0013")
    )
    client = Client()
    client.force_login(alice)
    listed = client.get("/w/rank-desk/runs/").content.decode()
    desk = client.get("/w/rank-desk/").content.decode()
    for page in (listed, desk):
        assert "no price known for stub-model" in page and "$0.0013" in page


def test_the_home_page_lists_runs_waiting_for_a_decision_and_the_latest_runs(alice, workspace, charlie):
    waiting = Run.objects.create(
        account=workspace.account, workspace=workspace, name="weekly", status="awaiting-approval"
    )
    Run.objects.create(account=workspace.account, workspace=workspace, name="daily", status="failed", verdict="BAD")
    client = Client()
    client.force_login(alice)
    home = client.get("/").content.decode()
    theirs = Client()
    theirs.force_login(charlie)
    assert 'id="waiting"' in home and f'href="/w/rank-desk/runs/{waiting.public_id}">rank-desk · weekly</a>' in home
    assert '<span class="badge verdict verdict-BAD">BAD</span>' in home
    assert waiting.public_id not in theirs.get("/").content.decode()


def test_a_refusal_is_titled_by_what_stopped_the_step_never_one_word_for_all():
    def title(line: str) -> str:
        return view(SimpleNamespace(pk=1, at=None, try_n=1, kind="refusal", data={"line": line})).title

    assert title("limit reached: web.search 20 of 20 in this step — work with what you have") == "Limit reached"
    assert title("api.example.com: connection refused (port 443)") == "Connection refused"
    assert title("the provider answered HTTP 400: prompt is too long") == "Provider refused"
    assert title("secret X is not in the vault") == "Stopped"
