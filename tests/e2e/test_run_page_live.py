"""The Run page in real Chromium while a real Celery worker moves the run: it
updates itself, Answer and Approve need no reload, states read in colour
(computed styles), the timeline is drawn, the trace reads as events."""

from __future__ import annotations

import json

import pytest

from runs.actions import check_start_run
from runs.models import Run
from tests.conftest import wait_for, wait_in_page
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.e2e.conftest import color_of
from tests.runs.helpers import agent_file, push

GREEN, RED, AMBER, GREY, PURPLE = (
    "rgb(23, 112, 58)",
    "rgb(179, 38, 30)",
    "rgb(138, 83, 0)",
    "rgb(93, 104, 120)",
    "rgb(106, 46, 163)",
)

# htmx settles a swapped element in two beats: the new text first, its new class about 20 ms later — so wait for
# both, then read colours.
SETTLED = (
    "(() => {{ const el = document.querySelector('#run-status'); return el && "
    "el.textContent.trim() === '{label}' && el.classList.contains('{cls}'); }})()"
)

FLOW = (
    "---\nname: weekly\n---\n1. [[writer]] — Write the post.\n   ask: Which tone?\n"
    "2. [[publisher]] ! — Publish: {{steps.1.output}}\n"
)


@pytest.mark.e2e
def test_the_run_page_follows_a_real_worker_and_answer_and_approve_need_no_reload(
    celery_worker_process, live_server, signed_in, artifacts, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/writer/agent.md": agent_file("writer", fake_provider, tools="[write]"),
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/weekly.md": FLOW,
        },
    )
    post = {"path": "outputs/post.md", "content": "A cheerful post.", "notes": {"tone": "cheerful", "words": 3}}
    fake_provider.reply_tool_use("Write", post, usage=(1200, 80))
    fake_provider.reply_text("GOOD a cheerful post is written", usage=(1500, 40))
    fake_provider.reply_text("GOOD published", usage=(900, 30))
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    page = signed_in(alice)
    page.goto(f"{live_server.url}/w/rank-desk/runs/{run.public_id}")
    page.evaluate("window.notReloaded = true")

    # The worker parks step 1 on its question; the page shows it by itself, amber, "awaiting an answer".
    status = page.locator("#run-status")
    status.wait_for(state="attached")
    wait_in_page(page, SETTLED.format(label="awaiting an answer", cls="status-awaiting-answer"), timeout=60_000)
    step1 = page.locator("#step-1")
    assert step1.locator(".badge").first.text_content() == "awaiting an answer"
    assert color_of(status) == AMBER
    assert "Which tone?" in step1.locator(".decide-q").text_content()
    page.screenshot(path=str(artifacts / "run-page-awaiting-answer.png"), full_page=True)

    step1.locator("input[name=answer]").fill("cheerful")
    step1.locator("button.approve").click()
    page.locator(".messages li.success").filter(has_text="Step 1 answered.").wait_for(timeout=60_000)

    # Step 1 runs on the worker with the answer; step 2 waits at its gate — again without a reload.
    wait_in_page(page, SETTLED.format(label="awaiting approval", cls="status-awaiting-approval"), timeout=60_000)
    assert page.evaluate("window.notReloaded") is True
    step1, step2 = page.locator("#step-1"), page.locator("#step-2")
    assert step1.locator(".badge.status-answered").text_content() == "answered"
    assert "answered by alice@example.com:" in step1.locator(".answered-line").text_content()
    assert color_of(step1.locator(".badge.status-completed")) == GREEN
    approve, reject = step2.locator("button.approve"), step2.locator("button.reject")
    assert (approve.text_content(), reject.text_content()) == ("Approve", "Reject")
    assert color_of(approve, "background-color") == GREEN
    assert color_of(reject, "background-color") == "rgb(255, 255, 255)" and color_of(reject) == RED
    page.screenshot(path=str(artifacts / "run-page-awaiting-approval.png"), full_page=True)

    approve.click()
    wait_in_page(page, SETTLED.format(label="completed", cls="status-completed"), timeout=60_000)
    assert page.evaluate("window.notReloaded") is True
    assert color_of(page.locator("#run-status")) == GREEN
    assert page.locator("#run-verdict").text_content() == "GOOD"
    assert color_of(page.locator("#run-verdict")) == GREEN
    assert page.locator("#run-live").get_attribute("hx-trigger") is None  # a finished run stops polling

    # The timeline: a row per step, a bar per try, an amber band for each wait for a person.
    rows = page.locator("svg.timeline g.row")
    assert rows.count() == 2
    assert page.locator("svg.timeline g.row[data-step='1'] rect.bar.try.completed").count() == 1
    assert page.locator("svg.timeline rect.bar.wait").count() == 2
    assert page.locator("svg.timeline rect.bar.try.completed").first.bounding_box()["width"] >= 3

    # The trace as events: the model request with stop reason, tokens and seconds; the tool call's
    # arguments as formatted JSON; never a Python dict.
    page.locator("#step-1 details.trace-box > summary").click()
    model = page.locator("#step-1 .ev-model").first
    assert model.locator(".ev-title").text_content() == "Model request · claude-sonnet-4-5"
    facts = model.locator(".fact").all_text_contents()
    # the call's own cost (the preset's price of its tokens) before its seconds
    assert facts[:2] == ["stop: tool_use", "1,200 in · 80 out tokens"]
    assert facts[2].startswith("$") and facts[3].endswith(" s"), facts
    call = page.locator("#step-1 .ev-call")
    assert call.locator(".ev-title").text_content() == "Tool call · Write"
    assert json.loads(call.locator("pre.json").text_content()) == post
    assert '\n  "path": "outputs/post.md",' in call.locator("pre.json").text_content()
    assert page.locator("#step-1 .ev-limit .ev-line").first.text_content().startswith("limits:")
    assert "{'" not in page.locator("#run-live").inner_text()
    assert page.locator("#run-cost").text_content().startswith("$0.0")
    page.locator("#step-1").screenshot(path=str(artifacts / "run-page-trace.png"))
    page.screenshot(path=str(artifacts / "run-page-completed.png"), full_page=True)
    assert Run.objects.get(pk=run.pk).status == "completed"


@pytest.mark.e2e
def test_a_reject_from_the_run_page_fails_the_run_in_red_without_a_reload(
    celery_worker_process, live_server, signed_in, artifacts, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/gated.md": "---\nname: gated\n---\n1. [[publisher]] ! — Publish the draft.\n",
        },
    )
    run = check_start_run(workspace=workspace, user=alice, flow="gated")
    wait_for(lambda: Run.objects.filter(pk=run.pk, status="awaiting-approval").exists(), timeout=60)
    page = signed_in(alice, width=390, height=844)  # an approver on a phone
    page.goto(f"{live_server.url}/w/rank-desk/runs/{run.public_id}")
    page.evaluate("window.notReloaded = true")
    page.screenshot(path=str(artifacts / "run-page-phone-gate.png"), full_page=True)
    page.locator("#step-1 button.reject").click()
    page.locator(".messages li.success").filter(has_text="Step 1 rejected.").wait_for(timeout=60_000)
    wait_in_page(
        page,
        "['failed', 'cancelled'].includes(document.querySelector('#run-status').textContent.trim())",
        timeout=60_000,
    )
    final = page.locator("#run-status").text_content().strip()
    assert color_of(page.locator("#run-status")) == (RED if final == "failed" else GREY)
    assert page.evaluate("window.notReloaded") is True


def stub_agent(name: str, fake) -> str:
    # A model no price table knows: the run is charged nothing, and the page says why.
    return (
        f"---\nname: {name}\ndescription: test agent\ntools: [read]\n"
        f"provider: {{name: anthropic, base_url: '{fake.base_url}', model: stub-model}}\n---\nDo the work.\n"
    )


@pytest.mark.e2e
def test_the_timeline_draws_each_instances_side_by_side_and_a_blocked_verdict_has_its_own_colour(
    celery_worker_process, live_server, signed_in, artifacts, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/lister/agent.md": stub_agent("lister", fake_provider),
            "agents/reader/agent.md": stub_agent("reader", fake_provider),
            "agents/reporter/agent.md": stub_agent("reporter", fake_provider),
            "flows/fan.md": "---\nname: fan\n---\n1. [[lister]] — List.\n2. [[reader]] — Read {{item}}.\n"
            "   each: lines\n3. [[reporter]] — Report: {{steps.2.output}}\n",
        },
    )
    fake_provider.reply_text("alpha\nbeta\ngamma\ndelta")
    for _ in range(4):
        fake_provider.reply_text("read", delay=0.8)
    fake_provider.reply_text("BLOCKED — two pages need a login")
    run = check_start_run(workspace=workspace, user=alice, flow="fan")
    page = signed_in(alice)
    page.goto(f"{live_server.url}/w/rank-desk/runs/{run.public_id}")
    wait_in_page(page, SETTLED.format(label="completed", cls="status-completed"), timeout=60_000)
    rows = page.locator("svg.timeline g.row")
    assert [rows.nth(i).get_attribute("data-step") for i in range(rows.count())] == [
        "1",
        "2.1",
        "2.2",
        "2.3",
        "2.4",
        "3",
    ]
    bars = [
        page.locator(f"svg.timeline g.row[data-step='{s}'] rect.bar.try").bounding_box()
        for s in ("2.1", "2.2", "2.3", "2.4")
    ]
    # Two pool processes take the four instances in whatever pairs the broker hands out: some two overlap in time.
    overlapping = [
        (a, b)
        for i, a in enumerate(bars)
        for b in bars[i + 1 :]
        if a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
    ]
    assert overlapping, bars
    assert all(a["y"] < b["y"] for a, b in zip(bars, bars[1:]))  # each its own row
    assert page.locator("#run-verdict").text_content() == "BLOCKED"
    assert color_of(page.locator("#run-verdict")) == PURPLE
    assert page.locator("#run-cost").text_content().strip() == "no price known for stub-model"
    page.locator(".timeline-card").screenshot(path=str(artifacts / "run-page-timeline-fan-out.png"))
    page.screenshot(path=str(artifacts / "run-page-fan-out.png"), full_page=True)


@pytest.mark.e2e
def test_a_big_runs_trace_loads_when_its_step_is_opened(live_server, signed_in, artifacts, workspace, alice):
    from tests.bench.page_bench import make_run

    push(
        workspace,
        {
            "agents/writer/agent.md": "---\nname: writer\ndescription: W.\ntools: [read]\n---\nW.\n",
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[writer]] — W.\n",
        },
    )
    run = make_run(workspace, 40)
    page = signed_in(alice)
    page.goto(f"{live_server.url}/w/rank-desk/runs/{run.public_id}")
    step = page.locator("#step-40")
    assert step.locator(".ev").count() == 0
    step.locator("details.trace-box > summary").click()
    assert step.locator(".ev-model .ev-title").first.text_content() == "Model request · claude-sonnet-4-5"
    assert step.locator(".ev").count() == 12
    result = step.locator(".ev-result").first
    assert result.locator("details.ev-body > summary").text_content().startswith("result")  # a long result folds
    step.screenshot(path=str(artifacts / "run-page-big-run-step.png"))
