"""run_task, get_task, smoke_test and get_report through /mcp, on a real worker and real Chromium.

The browser agent is the gallery's, on the account's provider — a loopback stand-in speaking Anthropic's
wire (tests/fakes/providers.py), scripted to browse the local test site (tests/fakes/mcp_site.py). Each
browse call drives the task's own session browser (the keeper's Chromium, over CDP).
"""

from __future__ import annotations

import re
import time
from decimal import Decimal

import httpx
import pytest

from browsing.actions import wait_ended
from browsing.models import BrowserSession, SkillRun, Task
from notify.links import report_token
from runs.models import TraceEvent
from tests.conftest import start_worker, stop_worker, wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.mcp_site import arena
from tests.mcp.conftest import token_for
from tests.runs.helpers import push

pytestmark = pytest.mark.e2e

SUMMARY = re.compile(r"^Task (finished|stopped) \((\w+)\) in (\d+) steps?, \$\d+\.\d{4}, \d+ s\.$")


@pytest.fixture
def site():
    with arena() as server:
        yield server


@pytest.fixture
def provider_desk(workspace, fake_provider):  # noqa: F811
    """The account's provider: the workspace's AGENTS.md names the stand-in (the browser agent names none)."""
    push(
        workspace,
        {
            "AGENTS.md": f"---\nprovider: {{name: anthropic, base_url: '{fake_provider.base_url}', "
            f"model: claude-sonnet-4-5}}\n---\n"
        },
    )
    return fake_provider


@pytest.fixture
def live(mcp_platform, settings, alice, provider_desk, mcp_client):
    """A connected client of alice's, report links made absolute on the live server."""
    settings.FOLDRUN_PUBLIC_URL = mcp_platform.base
    with mcp_client(token_for(alice)) as client:
        yield client


def text_of(result) -> str:
    return result.content[0].text


def browse(url: str | None = None, **more) -> dict:
    return {"action": "browse", **({"url": url} if url else {}), "mode": "text", **more}


# ---------------------------------------------------------------- run_task / get_task


def test_a_task_that_reaches_its_goal_finishes_done_with_its_steps_and_cost(live, provider_desk, site):
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"))
    provider_desk.reply_tool_use("web", browse(actions=[{"click": "text=Sign in"}]))
    provider_desk.reply_text("DONE: The Pro plan costs $12 a month, and the sign-in page is open.")
    result = live.call_tool("run_task", {"goal": "Read the Pro plan's price, then open Sign in", "maxSteps": 5})
    lines = text_of(result).splitlines()
    data = result.structured_content
    assert result.is_error is False
    assert SUMMARY.match(lines[0]).groups() == ("finished", "done", "2")
    assert lines[1] == "Answer: The Pro plan costs $12 a month, and the sign-in page is open."
    assert lines[2] == f"Session {data['sessionId']} was closed."
    assert lines[3].endswith(f"call get_report with id {data['task']['taskId']}.")
    task = data["task"]
    assert (task["ok"], task["stoppedBy"], data["sessionClosed"]) == (True, "done", True)
    assert [s["op"] for s in task["steps"]] == ["navigate", "click"]
    assert all(s["ok"] and s["provider"] == "anthropic" and s["error"] is None for s in task["steps"])
    assert task["costMicros"] > 0 and task["costMicros"] == sum(
        s["costMicros"] for s in task["steps"]
    ) + _last_request_micros(task["taskId"])
    # The agent's browse calls drove the session's browser: the site saw both pages, in order.
    assert [p for p in site.seen if p in ("/pricing/", "/login")] == ["/pricing/", "/login"]
    assert BrowserSession.objects.get(public_id=data["sessionId"]).status == "closed"


def _last_request_micros(task_id: str) -> int:
    """The cost of the agent's final reply, which is no step of its own."""
    task = Task.objects.get(public_id=task_id)
    last = TraceEvent.objects.filter(run=task.run, kind="model_request").order_by("-pk").first()
    return int(Decimal(last.data["cost_usd"]) * 1_000_000)


def test_a_stuck_task_is_a_normal_result_and_get_task_reads_it_on_its_kept_session(live, provider_desk, site):
    provider_desk.reply_tool_use("web", browse(f"{site.url}/login"))
    provider_desk.reply_text("STUCK: the form needs a password and the goal gives none")
    result = live.call_tool("run_task", {"goal": "Sign in to the test site", "keepOpen": True})
    data = result.structured_content
    assert result.is_error is False
    assert SUMMARY.match(text_of(result).splitlines()[0]).groups() == ("stopped", "stuck", "1")
    assert "Reason: the form needs a password and the goal gives none" in text_of(result)
    assert (
        f"Session {data['sessionId']} is still open: run another task with sessionId, or stop_session when "
        f"done." in text_of(result)
    )
    read = live.call_tool("get_task", {"sessionId": data["sessionId"], "waitSeconds": 0})
    record = read.structured_content["task"]
    assert (read.structured_content["status"], record["id"], record["stoppedBy"], record["ok"]) == (
        "finished",
        data["task"]["taskId"],
        "stuck",
        False,
    )
    assert record["goal"] == "Sign in to the test site" and record["finishedAt"]
    # The session stayed open, so the task's report says its log is not complete yet.
    report = live.call_tool("get_report", {"id": record["id"], "waitSeconds": 0})
    assert report.structured_content["verdict"] == "fail" and report.is_error is False
    assert (
        "The session log is not available (it is stored when the session ends), so console errors, failed "
        "network calls and URLs are missing." in report.structured_content["notes"]
    )
    assert report.structured_content["finalUrl"] is None
    assert live.call_tool("stop_session", {"sessionId": data["sessionId"]}).structured_content["closed"] is True
    assert wait_ended(BrowserSession.objects.get(public_id=data["sessionId"]))
    again = live.call_tool("get_report", {"id": record["id"], "waitSeconds": 0}).structured_content
    assert again["logComplete"] is True and again["finalUrl"] == f"{site.url}/login"


def test_a_task_that_spends_its_max_steps_stops_by_budget(live, provider_desk, site):
    for path in ("/", "/pricing/", "/about"):
        provider_desk.reply_tool_use("web", browse(f"{site.url}{path}"))
    provider_desk.reply_text("I ran out of steps before finding the team plan's limits.")
    result = live.call_tool("run_task", {"goal": "Find the team plan's seat limit", "maxSteps": 2})
    task = result.structured_content["task"]
    assert result.is_error is False
    assert SUMMARY.match(text_of(result).splitlines()[0]).groups() == ("stopped", "budget", "2")
    assert (task["stoppedBy"], task["ok"], task["limit"]) == ("budget", False, {"maxSteps": 2})
    assert "/about" not in site.seen  # the third call was refused, never made


def test_a_task_longer_than_the_wait_goes_on_and_get_task_reads_it_later(live, provider_desk, site):
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"), delay=4)
    provider_desk.reply_text("DONE: read it")
    result = live.call_tool("run_task", {"goal": "Read the pricing page", "waitSeconds": 1})
    data = result.structured_content
    assert result.is_error is False
    assert (data["status"], data["sessionClosed"]) == ("running", False)
    assert (
        data["note"]
        == text_of(result)
        == (
            f"Task {data['taskId']} is still running on session {data['sessionId']}, which stays open. Call get_report "
            f"with id {data['taskId']} (or get_task), then stop_session when you are done."
        )
    )
    read = live.call_tool("get_task", {"sessionId": data["sessionId"], "taskId": data["taskId"], "waitSeconds": 600})
    assert read.structured_content["status"] == "finished"
    assert read.structured_content["task"]["answer"] == "read it"
    # The wait ended first, so the session stays open for the caller to read the task and stop it.
    assert BrowserSession.objects.get(public_id=data["sessionId"]).status == "live"
    assert live.call_tool("stop_session", {"sessionId": data["sessionId"]}).structured_content["closed"] is True


def test_an_unknown_task_and_a_session_of_another_account_are_not_found(live, mcp_client, charlie):
    missing = live.call_tool("get_task", {"sessionId": "sess_us_nothing"})
    assert missing.is_error is True and missing.structured_content["error"]["code"] == "not_found"
    report = live.call_tool("get_report", {"id": "tsk_nothing"})
    assert text_of(report) == "[not_found] No run or task tsk_nothing in this account."


def test_session_options_together_with_a_session_id_are_invalid_input(live):
    result = live.call_tool(
        "run_task", {"goal": "x", "sessionId": "sess_us_x", "startUrl": "https://a.example", "record": True}
    )
    error = result.structured_content["error"]
    assert result.is_error is True and error["code"] == "invalid_input"
    assert [i["path"] for i in error["details"]["issues"]] == ["startUrl", "record"]


def test_a_wait_above_90_seconds_is_refused_by_run_task(live):
    result = live.call_tool("run_task", {"goal": "x", "waitSeconds": 91})
    assert result.structured_content["error"]["details"]["issues"] == [
        {"path": "waitSeconds", "message": "Must be at most 90."}
    ]


def test_the_goal_warning_about_passwords_is_in_run_tasks_description(live):
    tool = next(t for t in live.list_tools() if t.name == "run_task")
    assert "Do not put real passwords in a goal" in tool.description


# ---------------------------------------------------------------- smoke_test / get_report


def test_a_smoke_test_of_a_working_flow_passes_with_a_report_link_that_works(live, provider_desk, site):
    provider_desk.reply_tool_use("web", browse(actions=[{"click": "text=Sign in"}]))
    provider_desk.reply_text("DONE: clicked Sign in")
    started = time.monotonic()
    result = live.call_tool(
        "smoke_test",
        {"url": f"{site.url}/pricing/", "steps": ["click Sign in"], "expectUrl": "/login", "waitSeconds": 90},
    )
    report = result.structured_content
    lines = text_of(result).splitlines()
    assert result.is_error is False, text_of(result)
    assert report["verdict"] == "pass"
    counts = report["counts"]
    assert lines[0] == (
        f"Smoke test of {site.url}/pricing/ PASSED in {round(report['ms'] / 1000)} s: "
        f"{counts['passed']} of {counts['total']} steps passed. No console errors or failed network "
        f"calls."
    )
    assert lines[1] == f"Full HTML report (short-lived link): {report['reportUrl']}"
    assert lines[2] == "The whole report is in structuredContent."
    kinds = [(s["index"], s["kind"], s["status"]) for s in report["steps"]]
    assert kinds[0] == (0, "load", "passed") and kinds[1] == (1, "a11y", "passed")
    assert [k for k in kinds if k[1] == "step"][0][2] == "passed"
    # expectText and expectNoText were not asked for: skipped, and not counted as passed.
    assert [s["status"] for s in report["steps"] if s["kind"] == "assert"] == ["skipped", "passed", "skipped"]
    assert counts["passed"] == counts["total"] - 2
    assert report["finalUrl"] == f"{site.url}/login"
    assert SkillRun.objects.get(public_id=report["id"]).session.recording  # always recorded
    page = httpx.get(report["reportUrl"])
    assert page.status_code == 200 and f"Smoke test of {site.url}/pricing/" in page.text
    assert time.monotonic() - started < 90


def test_the_first_failing_step_stops_the_flow_and_the_later_checks_still_run(live, provider_desk, site):
    provider_desk.reply_text("STUCK: there is no Checkout button on this page")
    result = live.call_tool(
        "smoke_test",
        {
            "url": f"{site.url}/pricing/",
            "steps": ["click Checkout", "click Blog"],
            "expectText": "Pricing",
            "maxLinks": 0,
        },
    )
    report = result.structured_content
    flow = [s for s in report["steps"] if s["kind"] == "step"]
    assert report["verdict"] == "fail" and result.is_error is False
    assert [s["status"] for s in flow] == ["failed", "skipped"]
    assert flow[0]["error"] == "stuck: there is no Checkout button on this page"
    assert httpx.get(flow[0]["screenshot"]).content.startswith(b"\x89PNG")
    assert [s["status"] for s in report["steps"] if s["kind"] == "assert"] == ["passed", "skipped", "skipped"]
    assert len(provider_desk.requests) == 1  # the second step was never given to the agent


def test_a_smoke_test_of_a_page_with_a_broken_link_fails_and_is_not_an_error(live, site):
    result = live.call_tool("smoke_test", {"url": site.url, "waitSeconds": 90})
    report = result.structured_content
    broken = next(s for s in report["steps"] if s["kind"] == "link" and s["status"] == "failed")
    assert result.is_error is False and report["verdict"] == "fail"
    assert broken["error"] == f"{site.url}/old-page answered HTTP 404"
    assert (
        f"Step {broken['path']} (check link {site.url}/old-page) failed: {site.url}/old-page answered HTTP "
        f"404." in text_of(result).splitlines()[0]
    )
    assert text_of(result).splitlines()[1] == "Failed steps:"
    # The spec's order: whether every link worked is the last thing the test checks.
    last = report["steps"][-1]
    assert (last["label"], last["kind"], last["status"]) == ("check every link worked", "linkverdict", "failed")
    assert last["error"].endswith(" links are broken") and report["steps"][-2]["condition"] == "expectNoText"


def test_a_broken_link_is_only_a_finding_without_strict_links(live, site):
    report = live.call_tool("smoke_test", {"url": site.url, "strictLinks": False, "waitSeconds": 90})
    assert report.structured_content["verdict"] == "pass"
    assert (
        "1 broken link found; strictLinks is false, so they do not fail the test." in report.structured_content["notes"]
    )


def test_a_smoke_test_of_a_page_with_a_console_error_fails_on_the_console_check(live, site):
    result = live.call_tool("smoke_test", {"url": f"{site.url}/console-error", "maxLinks": 0})
    report = result.structured_content
    console = next(s for s in report["steps"] if s["kind"] == "console")
    assert report["verdict"] == "fail" and console["status"] == "failed"
    assert report["consoleErrors"]
    assert "console error" in text_of(result).splitlines()[0]


def test_a_missing_expect_text_fails_with_the_specs_sentence_and_a_screenshot_link(live, site):
    result = live.call_tool("smoke_test", {"url": f"{site.url}/pricing/", "expectText": "Enterprise", "maxLinks": 0})
    report = result.structured_content
    step = next(s for s in report["steps"] if s["kind"] == "assert" and s["status"] == "failed")
    head = text_of(result).splitlines()[0]
    assert report["verdict"] == "fail" and result.is_error is False
    assert f'Step {step["path"]} (assert 1 condition) failed: Expected text "Enterprise" is not on the page.' in head
    assert (
        f'- Step {step["path"]} (assert 1 condition): Expected text "Enterprise" is not on the page '
        f"(screenshot: {step['screenshot']})" in text_of(result)
    )
    shot = httpx.get(step["screenshot"])
    assert shot.status_code == 200 and shot.content.startswith(b"\x89PNG")
    # get_report reads the same report, by the run's id.
    again = live.call_tool("get_report", {"id": report["id"]})
    assert again.structured_content["verdict"] == "fail" and again.is_error is False


def test_an_expired_report_link_shows_a_page_that_says_so(live, alice, site, mcp_platform):
    result = live.call_tool("smoke_test", {"url": f"{site.url}/pricing/", "maxLinks": 0})
    old = report_token(
        result.structured_content["id"], alice.memberships.first().account.public_id, now=time.time() - 3600
    )
    page = httpx.get(f"{mcp_platform.base}/reports/{old}")
    assert page.status_code == 410
    assert "This report link has expired" in page.text
    tampered = httpx.get(f"{mcp_platform.base}/reports/{old[:-3]}abc")
    assert tampered.status_code == 403 and "This report link is not valid" in tampered.text


def test_signed_in_smoke_tests_are_refused_with_the_specs_sentence(live):
    result = live.call_tool("smoke_test", {"url": "https://staging.example.com", "session": {"credentials": True}})
    assert text_of(result) == ("[invalid_input] Signed-in skill runs are not available yet: remove session.credentials")


# ---------------------------------------------------------------- blocked addresses (no private opt-in)


@pytest.fixture
def guarded_platform(mcp_server, settings, tmp_path):
    """The live server with a worker of an install that has not opted in to private addresses."""
    settings.FOLDRUN_PUBLIC_URL = mcp_server.base
    process = start_worker(tmp_path / "worker.log", {"FOLDRUN_TEST_ALLOW_PRIVATE_URLS": "0"})
    yield mcp_server
    stop_worker(process)


def test_a_task_whose_start_page_is_blocked_ends_navigation_blocked_before_its_run_and_closes_its_session(
    guarded_platform, mcp_client, alice, provider_desk, site
):
    with mcp_client(token_for(alice)) as client:
        result = client.call_tool("run_task", {"goal": "Read the pricing page", "startUrl": f"{site.url}/pricing/"})
    data = result.structured_content
    task = data["task"]
    assert result.is_error is True
    assert SUMMARY.match(text_of(result).splitlines()[0]).groups() == ("stopped", "navigation_blocked", "0")
    assert (task["ok"], task["stoppedBy"], task["steps"], data["sessionClosed"]) == (
        False,
        "navigation_blocked",
        [],
        True,
    )
    assert task["reason"].startswith(
        f"the start URL {site.url}/pricing/ was not opened: 127.0.0.1 resolves to 127.0.0.1: private, loopback"
    )
    assert f"Reason: {task['reason']}" in text_of(result)
    session = BrowserSession.objects.get(public_id=data["sessionId"])
    assert (session.status, session.end_reason) == ("closed", "navigation_blocked")
    assert Task.objects.get(public_id=task["taskId"]).run is None  # no run began, so no model was asked
    assert not provider_desk.requests and "/pricing/" not in site.seen


def test_a_smoke_test_whose_page_is_blocked_is_verdict_error_and_is_error(guarded_platform, mcp_client, alice, site):
    with mcp_client(token_for(alice)) as client:
        result = client.call_tool("smoke_test", {"url": f"{site.url}/pricing/"})
        report = result.structured_content
        assert result.is_error is True and report["verdict"] == "error"
        assert text_of(result).startswith(f"Smoke test of {site.url}/pricing/ could not run: ")
        assert wait_for(lambda: BrowserSession.objects.get(public_id=report["sessionId"]).status == "closed")
