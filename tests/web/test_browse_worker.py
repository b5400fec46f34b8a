"""`web action=browse` through a real run on a real Celery worker, with real Chromium.

The step's trace and run log are written by the worker's ORM while Playwright's
sync API holds an event loop in the browsing thread; these runs prove the two
never meet (a SynchronousOnlyOperation fails the step).
"""

from __future__ import annotations

import os
import signal
import threading

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.processes import descendants_named
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e


def finished(run) -> Run:
    return wait_for(
        lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed", "cancelled"]).first(), timeout=120
    )


def tool_results(run) -> list[str]:
    return [e.data["content"] for e in TraceEvent.objects.filter(run=run, kind="tool_result").order_by("pk")]


def test_a_browse_call_on_a_real_worker_completes_and_its_trace_reaches_the_run(
    celery_worker_process, workspace, alice, fake_provider, site
):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/app", "mode": "text"})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/broken", "mode": "text"})
    fake_provider.reply_text("GOOD — read both pages")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the listings."))
    results = tool_results(done)
    events = [e.data for e in TraceEvent.objects.filter(run=done, kind="web").order_by("pk")]
    assert done.status == "completed", done.error
    assert results[0].startswith("Rendered listings\nHarbour flat")
    assert [e["event"] for e in events] == ["browse", "browse"]
    assert events[0]["url"] == f"{site.url}/app"
    assert done.headline == "GOOD — read both pages"


def pods_of(worker) -> list[int]:
    """The pids of the Playwright browser servers a worker's processes started (its account's pods)."""
    return descendants_named(worker.pid, b"run-server")


def kill_the_pod_when_the_page_is_asked_for(worker, site, path: str) -> dict:
    """Wait until the pod's browser asks `site` for `path`, then kill -9 the pod's server mid-call."""

    killed: dict = {}

    def watch():
        wait_for(lambda: any(r["path"] == path for r in site.seen), timeout=60, interval=0.02)
        killed["pids"] = pods_of(worker)
        for pid in killed["pids"]:
            os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    killed["thread"] = thread
    return killed


def log_lines(run) -> list[str]:
    return [e.data["message"] for e in TraceEvent.objects.filter(run=run, kind="log").order_by("pk")]


def a_slow_read_with_its_pod_killed(
    worker, workspace, alice, fake_provider, site, *, extra: str = ""
) -> tuple[Run, dict]:
    """A reader's run (its agent file's `extra` added) whose one browse call reads `site`'s /slow while the pod
    rendering it is killed mid-call: the finished run, and what `kill_the_pod_when_the_page_is_asked_for` kept."""
    site.seen.clear()
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]", extra=extra)})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/slow", "mode": "text"})
    fake_provider.reply_text("GOOD — read it after the pod came back")
    killed = kill_the_pod_when_the_page_is_asked_for(worker, site, "/slow")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the slow page."))
    killed["thread"].join(timeout=5)
    return done, killed


def test_a_read_only_call_cut_by_killing_the_pod_is_run_again_on_the_replaced_pod(
    celery_worker_process, workspace, alice, fake_provider, site
):
    done, killed = a_slow_read_with_its_pod_killed(celery_worker_process, workspace, alice, fake_provider, site)
    lines = [line for line in log_lines(done) if line.startswith("browser pod:")]
    assert done.status == "completed", done.error
    assert len(killed["pids"]) == 1
    assert tool_results(done) == ["late"]
    assert len(lines) == 1 and lines[0].startswith("browser pod: reconnected (try 1 of 3, at ")
    assert [r["path"] for r in site.seen].count("/slow") == 2  # asked again, on the pod that replaced it


def test_an_acting_call_cut_by_killing_the_pod_is_not_sent_again_and_says_it_may_have_acted(
    celery_worker_process, workspace, alice, fake_provider, site
):
    site.seen.clear()
    push(workspace, {"agents/clerk/agent.md": agent_file("clerk", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "mode": "text",
            "actions": [{"fill": "#name", "text": "Alice"}, {"goto": f"{site.url}/slow"}],
        },
    )
    fake_provider.reply_text("BAD — the pod went")
    killed = kill_the_pod_when_the_page_is_asked_for(celery_worker_process, site, "/slow")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="clerk", task="Fill the form."))
    killed["thread"].join(timeout=5)
    lines = [line for line in log_lines(done) if line.startswith("browser pod:")]
    assert len(killed["pids"]) == 1
    assert tool_results(done)[0] == (
        "browse: the browser pod closed during this call, after it may have acted (it "
        "clicks, fills, types or runs script); it was not sent again — look at the page "
        "before repeating it"
    )
    assert len(lines) == 1 and lines[0].startswith("browser pod: reconnected (try 1 of 3, at ")
    assert [r["path"] for r in site.seen].count("/form") == 1 and [r["path"] for r in site.seen].count("/slow") == 1


def test_two_accounts_steps_browse_on_pods_of_their_own_and_never_share_cookies(
    celery_worker_process, workspace, alice, charlie, fake_provider, site
):
    from accounts.models import Workspace

    theirs = Workspace.objects.create(account=charlie.memberships.get().account, name="other-desk")
    for desk in (workspace, theirs):
        push(desk, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{site.url}/echo-headers",
            "mode": "text",
            "actions": [{"cookie": "sid", "value": "alices-session"}, {"reload": True}],
        },
    )
    fake_provider.reply_text("GOOD — alice signed in")
    first = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Sign in."))
    pods_after_alice = set(pods_of(celery_worker_process))
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/echo-headers", "mode": "text"})
    fake_provider.reply_text("GOOD — charlie looked")
    second = finished(check_start_run(workspace=theirs, user=charlie, agent="reader", task="Look."))
    pods_after_charlie = set(pods_of(celery_worker_process))
    assert first.status == "completed" and second.status == "completed", (first.error, second.error)
    assert "cookie sid=alices-session" in tool_results(first)[0]
    assert "cookie None" in tool_results(second)[0]
    assert len(pods_after_alice) >= 1 and pods_after_charlie - pods_after_alice  # charlie's account has its own


def test_a_call_that_never_ends_stops_at_its_deadline_with_what_it_had_done_on_a_real_worker(
    celery_worker_process, workspace, alice, fake_provider, site
):
    import time

    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "timeout": 6,
            "actions": [{"get": "title"}, {"eval": "new Promise(() => {})"}],
        },
    )
    fake_provider.reply_text("BAD — the page never answered")
    started = time.monotonic()
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the form."))
    assert done.status == "completed", done.error
    assert tool_results(done)[0] == (
        'browse: the call stopped at its 6-second deadline, at step 2 (eval "new Promise(() => {})") — pass timeout= '
        '(at most 600) for a longer one\n\nWhat it had done:\n[\n {\n  "get": "title",\n  "value": "Sign up"\n }\n]'
    )
    assert time.monotonic() - started < 30


def test_two_runs_of_one_account_never_share_cookies_and_neither_do_two_calls_of_one_step(
    celery_worker_process, workspace, alice, fake_provider, site
):
    # The second call of a step takes the context made while the first ran (spare.py): it is still its own.
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{site.url}/echo-headers",
            "mode": "text",
            "actions": [{"cookie": "sid", "value": "first-run"}, {"reload": True}],
        },
    )
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/echo-headers", "mode": "text"})
    fake_provider.reply_text("GOOD — signed in, then looked again")
    first = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Sign in."))
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/echo-headers", "mode": "text"})
    fake_provider.reply_text("GOOD — looked")
    second = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Look."))
    assert first.status == "completed" and second.status == "completed", (first.error, second.error)
    signed_in, looked_again = tool_results(first)[:2]
    assert "cookie sid=first-run" in signed_in
    assert "cookie None" in looked_again
    assert "cookie None" in tool_results(second)[0]
