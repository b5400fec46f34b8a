"""The slim marker (spec tools.md, "Slim steps and a lost pod"): the Run page shows `slim · browser pod` beside a step
whose browse calls rendered in the account's browser pod, and the record says `image: {variant: "slim", pod: true}`.
A step that never browsed carries neither; one whose browser ran inside it (a live page) says `full`. Through real
runs on a real worker with real Chromium."""

from __future__ import annotations

import pytest
from django.urls import reverse

from runs.actions import check_start_run
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.fakes import Site
from tests.web.test_browse_worker import finished

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site():
    with Site() as server:
        yield server


MARK = '<span class="tag image-mark">slim · browser pod</span>'


def step_record(alice_api, workspace, run) -> dict:
    answer = alice_api.get(f"/api/workspaces/{workspace.name}/runs/{run.public_id}")
    assert answer.status_code == 200, answer.content
    return answer.json()["steps"][0]


def page_of(client, alice, workspace, run) -> str:
    client.force_login(alice)
    return client.get(reverse("run-page", args=[workspace.name, run.public_id])).content.decode()


def test_a_step_whose_browse_calls_rendered_in_the_pod_is_marked_slim_on_the_page_and_in_the_record(
    celery_worker_process, workspace, alice, alice_api, client, fake_provider, site
):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/article", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read it."))
    assert done.status == "completed", done.error
    step = step_record(alice_api, workspace, done)
    assert step["image"] == {"variant": "slim", "pod": True}
    assert [t["image"] for t in step["tries"]] == ["slim"]
    assert MARK in page_of(client, alice, workspace, done)


def test_a_step_that_never_browsed_has_no_marker_and_no_image(
    celery_worker_process, workspace, alice, alice_api, client, fake_provider
):
    push(workspace, {"agents/writer/agent.md": agent_file("writer", fake_provider)})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="writer", task="Say hello."))
    assert done.status == "completed", done.error
    assert step_record(alice_api, workspace, done)["image"] is None
    assert "slim · browser pod" not in page_of(client, alice, workspace, done)


def test_a_step_whose_browser_ran_inside_it_is_full_not_slim(
    celery_worker_process, workspace, alice, alice_api, client, fake_provider, site
):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/article", "live": True})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read it live."))
    assert done.status == "completed", done.error
    assert step_record(alice_api, workspace, done)["image"] == {"variant": "full", "pod": False}
    assert "slim · browser pod" not in page_of(client, alice, workspace, done)
