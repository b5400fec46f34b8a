"""The runs API: start, list, read, decide, events, cancel, artifacts, schedules, tool test — and tenancy."""

from __future__ import annotations

import pytest

from runs.actions import check_start_run
from runs.models import Approval, Artifact, Run, Step
from tests.runs.helpers import agent_file, drive, push

NOT_FOUND = {"code": "not_found", "message": "Not found.", "details": {}}


@pytest.fixture
def desk(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/weekly.md": '---\nname: weekly\nschedule: "0 7 * * MON"\ntimezone: Australia/Sydney\n---\n'
            "1. [[publisher]] ! — Publish.\n",
            "flows/signed.md": "---\nname: signed\n---\n1. [[publisher]] — Go.\n   wait: event signed-off\n",
            "tools/echo.md": "---\ntransport: script\nname: echo\nargs: {word: the word}\n---\n```python\nimport sys, json\n"
            "print('echo', json.load(sys.stdin)['word'])\n```\n",
        },
    )
    return workspace


@pytest.fixture
def parked(desk, alice):
    return drive(check_start_run(workspace=desk, user=alice, flow="weekly"))


def test_alice_starts_a_flow_run(alice_api, desk):
    answer = alice_api.post(
        "/api/workspaces/rank-desk/runs", {"flow": "weekly", "inputs": {"topic": "x"}}, format="json"
    )
    assert answer.status_code == 201
    assert answer.json()["id"].startswith("run_")
    assert answer.json()["status"] == "queued"
    assert answer.json()["inputs"] == {"topic": "x"}


def test_alice_starts_an_adhoc_run(alice_api, desk):
    answer = alice_api.post(
        "/api/workspaces/rank-desk/runs", {"agent": "publisher", "task": "Say hi", "test": True}, format="json"
    )
    assert answer.status_code == 201
    assert (answer.json()["name"], answer.json()["kind"], answer.json()["is_test"]) == (
        "adhoc:publisher",
        "adhoc",
        True,
    )


def test_an_unknown_flow_is_a_404_naming_it_and_the_flows_there_are(alice_api, desk):
    answer = alice_api.post("/api/workspaces/rank-desk/runs", {"flow": "nope"}, format="json")
    assert answer.status_code == 404
    assert answer.json() == {
        "code": "not_found",
        "message": "flow: there is no flow nope in workspace rank-desk (flows/nope.md); its flows are signed, weekly.",
        "details": {"what": "flow", "name": "nope", "where": "rank-desk", "choices": ["signed", "weekly"]},
    }


def test_bob_may_not_start_a_run(bob_api, desk):
    assert bob_api.post("/api/workspaces/rank-desk/runs", {"flow": "weekly"}, format="json").status_code == 403


def test_charlie_gets_404_on_every_runs_endpoint(charlie_api, parked):
    base = f"/api/workspaces/rank-desk/runs/{parked.public_id}"
    for method, path in [
        ("get", "/api/workspaces/rank-desk/runs"),
        ("post", "/api/workspaces/rank-desk/runs"),
        ("get", base),
        ("get", f"{base}/status"),
        ("get", f"{base}/trace"),
        ("post", f"{base}/steps/1/approve"),
        ("post", f"{base}/steps/1/reject"),
        ("post", f"{base}/events/signed-off"),
        ("post", f"{base}/cancel"),
        ("get", f"{base}/artifacts"),
        ("get", f"{base}/artifacts/art_x"),
        ("get", "/api/workspaces/rank-desk/schedules"),
        ("post", "/api/workspaces/rank-desk/tools/echo/test"),
    ]:
        answer = getattr(charlie_api, method)(path, {}, format="json")
        assert (path, answer.status_code, answer.json()) == (path, 404, NOT_FOUND)


def test_bob_gets_403_on_every_runs_write(bob_api, parked):
    base = f"/api/workspaces/rank-desk/runs/{parked.public_id}"
    for path in [
        f"{base}/steps/1/approve",
        f"{base}/steps/1/reject",
        f"{base}/events/signed-off",
        f"{base}/cancel",
        "/api/workspaces/rank-desk/tools/echo/test",
    ]:
        assert (path, bob_api.post(path, {}, format="json").status_code) == (path, 403)
    assert Approval.objects.get(run=parked).state == "pending"


def test_bob_reads_the_runs_list_a_run_with_steps_and_tries_its_status_and_its_trace(bob_api, parked):
    listing = bob_api.get("/api/workspaces/rank-desk/runs?status=awaiting-approval&flow=weekly")
    assert [r["id"] for r in listing.json()["runs"]] == [parked.public_id]
    assert listing.json()["next"] is None
    base = f"/api/workspaces/rank-desk/runs/{parked.public_id}"
    detail = bob_api.get(base).json()
    assert detail["status"] == "awaiting-approval"
    assert detail["steps"][0]["status"] == "awaiting-approval"
    assert detail["approvals"][0]["state"] == "pending"
    assert "trace" not in detail
    assert bob_api.get(f"{base}/status").json()["status"] == "awaiting-approval"
    trace = bob_api.get(f"{base}/trace").json()
    assert any(e["kind"] == "log" for e in trace["events"])
    assert trace["status"] == "awaiting-approval" and trace["next"] is None


def test_the_runs_list_filters_by_verdict(alice_api, desk, workspace):
    Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", verdict="BAD", status="completed")
    assert alice_api.get("/api/workspaces/rank-desk/runs?verdict=GOOD").json()["runs"] == []
    assert len(alice_api.get("/api/workspaces/rank-desk/runs?verdict=BAD").json()["runs"]) == 1


def test_alice_approves_through_the_api_and_a_second_decision_is_refused(alice_api, parked):
    base = f"/api/workspaces/rank-desk/runs/{parked.public_id}/steps/1"
    first = alice_api.post(f"{base}/approve", {}, format="json")
    assert first.status_code == 200
    assert (first.json()["state"], first.json()["decided_by"]) == ("approved", "alice@example.com")
    second = alice_api.post(f"{base}/reject", {}, format="json")
    assert second.status_code == 409
    assert second.json()["message"] == "Step 1 was already approved by alice@example.com; a decision is made once."


def test_an_event_resumes_a_waiting_run(alice_api, desk, alice):
    run = drive(check_start_run(workspace=desk, user=alice, flow="signed"))
    assert run.status == "waiting"
    answer = alice_api.post(
        f"/api/workspaces/rank-desk/runs/{run.public_id}/events/signed-off", {"ok": 1}, format="json"
    )
    assert answer.status_code == 200
    assert Step.objects.get(run=run, index=1).status == "pending"
    again = alice_api.post(f"/api/workspaces/rank-desk/runs/{run.public_id}/events/signed-off", {}, format="json")
    assert again.status_code == 409


def test_alice_cancels_a_parked_run(alice_api, parked):
    answer = alice_api.post(f"/api/workspaces/rank-desk/runs/{parked.public_id}/cancel", {}, format="json")
    assert answer.json()["status"] == "cancelled"


def test_an_artifact_downloads(alice_api, parked):
    artifact = Artifact.objects.create(run=parked, path="outputs/r.json", content=b"{}", size=2)
    answer = alice_api.get(f"/api/workspaces/rank-desk/runs/{parked.public_id}/artifacts/{artifact.public_id}")
    assert answer.status_code == 200
    assert answer.content == b"{}"


def test_schedules_list_the_next_fire_time_in_the_flows_timezone(alice_api, desk):
    schedules = alice_api.get("/api/workspaces/rank-desk/schedules").json()["schedules"]
    assert [(s["flow"], s["cron"], s["timezone"]) for s in schedules] == [("weekly", "0 7 * * MON", "Australia/Sydney")]
    assert schedules[0]["next_fire_at"].endswith(("T20:00:00Z", "T21:00:00Z"))  # 07:00 Sydney, on Sunday UTC


def test_the_tool_test_button_runs_a_fenced_script_with_typed_arguments(alice_api, desk):
    answer = alice_api.post(
        "/api/workspaces/rank-desk/tools/echo/test", {"arguments": {"word": "hello"}}, format="json"
    )
    assert answer.status_code == 200
    assert (answer.json()["ok"], answer.json()["result"].strip()) == (True, "echo hello")


def test_the_tool_test_button_says_when_a_tool_does_not_exist(alice_api, desk):
    answer = alice_api.post("/api/workspaces/rank-desk/tools/ghost/test", {"arguments": {}}, format="json")
    assert answer.status_code == 404
    assert answer.json()["message"].startswith("tool ghost is not in the workspace's tools/")


def test_when_the_flow_names_approvers_an_editor_who_is_not_one_may_not_decide(workspace, alice, fake_provider):
    from django.contrib.auth import get_user_model
    from accounts.models import Membership
    from tests.conftest import client_for

    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/named.md": "---\nname: named\napprovers: [dana@example.com]\n---\n1. [[publisher]] ! — Go.\n",
        },
    )
    erin = get_user_model().objects.create_user(username="erin", email="erin@example.com", password="x" * 12)
    Membership.objects.create(account=workspace.account, user=erin, role="editor")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="named"))
    answer = client_for(erin).post(f"/api/workspaces/rank-desk/runs/{run.public_id}/steps/1/approve", {}, format="json")
    assert answer.status_code == 403
    assert answer.json()["message"] == (
        "Only the flow's approvers (dana@example.com) or an owner or admin may decide step 1."
    )
