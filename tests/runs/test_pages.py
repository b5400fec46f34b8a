"""The Run page and the runs list."""

from __future__ import annotations

import pytest
from django.test import Client

from runs.actions import check_start_run
from runs.models import Approval
from tests.runs.helpers import agent_file, drive, push


@pytest.fixture
def parked(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[publisher]] ! — Publish the draft.\n",
        },
    )
    return drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_run_page_shows_the_steps_timeline_and_approve_buttons_for_an_approver(alice, parked):
    page = browser(alice).get(f"/w/rank-desk/runs/{parked.public_id}")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'aria-label="Steps"' in html
    assert (
        '<span class="step-no">1</span>' in html and '<strong class="agent">publisher</strong>' in html
    )  # the agent's name, not its link
    assert '<svg class="timeline"' in html
    assert ">Approve</button>" in html and ">Reject</button>" in html


def test_a_viewer_sees_the_run_but_no_buttons_and_cannot_decide(bob, parked):
    html = browser(bob).get(f"/w/rank-desk/runs/{parked.public_id}").content.decode()
    assert ">Approve</button>" not in html
    assert "Only approvers may decide." in html
    assert browser(bob).post(f"/w/rank-desk/runs/{parked.public_id}/steps/1/approve").status_code == 403
    assert Approval.objects.get(run=parked).state == "pending"


def test_charlie_gets_404_on_the_run_pages(charlie, parked):
    assert browser(charlie).get(f"/w/rank-desk/runs/{parked.public_id}").status_code == 404
    assert browser(charlie).get("/w/rank-desk/runs/").status_code == 404
    assert browser(charlie).post(f"/w/rank-desk/runs/{parked.public_id}/steps/1/approve").status_code == 404


def test_approving_from_the_page_records_who_decided(alice, parked):
    answer = browser(alice).post(f"/w/rank-desk/runs/{parked.public_id}/steps/1/approve")
    assert answer.status_code == 302
    approval = Approval.objects.get(run=parked)
    assert (approval.state, approval.decided_by_label) == ("approved", "alice@example.com")


def test_the_runs_list_filters_by_status(alice, parked):
    client = browser(alice)
    assert parked.public_id in client.get("/w/rank-desk/runs/?status=awaiting-approval").content.decode()
    assert parked.public_id not in client.get("/w/rank-desk/runs/?status=completed").content.decode()


def test_the_run_now_button_starts_a_manual_run_and_a_viewer_cannot(alice, bob, parked):
    answer = browser(alice).post("/w/rank-desk/runs/start", {"flow": "weekly", "test": "on"})
    from runs.models import Run

    run = Run.objects.exclude(pk=parked.pk).get()
    assert answer.status_code == 302
    assert answer.url == f"/w/rank-desk/runs/{run.public_id}"
    assert (run.trigger, run.is_test) == ("manual", True)
    assert browser(bob).post("/w/rank-desk/runs/start", {"flow": "weekly"}).status_code == 403


def test_the_runs_list_shows_the_schedules_next_fire_times(alice, workspace, fake_provider, parked):
    push(
        workspace,
        {
            "flows/daily.md": '---\nname: daily\nschedule: "0 7 * * *"\ntimezone: Australia/Sydney\n---\n'
            "1. [[publisher]] — Go.\n"
        },
    )
    html = browser(alice).get("/w/rank-desk/runs/").content.decode()
    assert 'id="schedules"' in html
    assert "<code>0 7 * * *</code>" in html and "Australia/Sydney" in html


def test_the_triggers_page_lists_schedules_inbound_webhooks_and_outbound_deliveries(
    alice, charlie, workspace, fake_provider, parked
):
    push(
        workspace,
        {
            "flows/daily.md": '---\nname: daily\nschedule: "0 7 * * *"\n---\n1. [[publisher]] — Go.\n',
            "flows/hooked.md": "---\nname: hooked\nwebhook: {signature: hmac, secret: INBOUND_KEY}\n---\n"
            "1. [[publisher]] — Go.\n",
        },
    )
    page = browser(alice).get("/w/rank-desk/triggers/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "<code>0 7 * * *</code>" in html
    assert f"/api/hooks/{workspace.public_id}/hooked</code>" in html
    assert "HMAC-SHA256 of the body with INBOUND_KEY" in html
    assert html.rstrip().endswith("</html>") and html.index("Outbound webhook deliveries") > html.index(
        "Inbound webhooks"
    )
    assert browser(charlie).get("/w/rank-desk/triggers/").status_code == 404
