"""Issue 35 item 3: "Not found." says something. Every error names what was not found and where, lists
the valid choices, and under --json is `{"error": {...}}` on stdout with a non-zero exit — on a real server."""

from __future__ import annotations

import json

import pytest

from runs.actions import check_start_run
from runs.models import Run
from tests.runs.helpers import agent_file, drive, push

pytestmark = pytest.mark.django_db(transaction=True)

STATUSES = "queued, running, awaiting-approval, waiting, completed, failed, cancelled"


@pytest.fixture
def desk(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/gated.md": "---\nname: gated\n---\n1. [[publisher]] ! — Publish.\n",
        },
    )
    return workspace


def parked_run(desk, alice) -> Run:
    return drive(check_start_run(workspace=desk, user=alice, flow="gated"))


def test_run_in_a_workspace_that_is_not_there_names_it_and_those_the_token_sees(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("run", "gated", "--to", "nosuchws")
    assert (result.code, result.out) == (1, "")
    assert result.err == "There is no workspace called nosuchws in this account; this token can see rank-desk.\n"
    assert not Run.objects.exists()


def test_the_same_under_json_is_an_error_object_on_stdout(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("run", "gated", "--to", "nosuchws", "--json")
    assert (result.code, result.err) == (1, "")
    assert result.json == {
        "error": {
            "code": "not_found",
            "status": 404,
            "message": "There is no workspace called nosuchws in this account; this token can see rank-desk.",
            "what": "workspace",
            "name": "nosuchws",
            "where": result.json["error"]["where"],
            "choices": ["rank-desk"],
        }
    }
    assert result.json["error"]["where"].startswith("http://")


def test_report_of_a_run_that_is_not_there_names_it_and_lists_the_newest(cli, desk, alice, signed_in_as):
    run = parked_run(desk, alice)
    signed_in_as(alice)
    result = cli("report", "run_nope", "--to", "rank-desk")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        f"There is no run run_nope in rank-desk; its newest are {run.public_id} "
        "(`foldrun runs --to rank-desk` lists them).\n"
    )
    as_json = cli("report", "run_nope", "--to", "rank-desk", "--json")
    assert as_json.code == 1
    assert json.loads(as_json.out)["error"] | {"message": "…"} == {
        "code": "not_found",
        "status": 404,
        "message": "…",
        "what": "run",
        "name": "run_nope",
        "where": "rank-desk",
        "choices": [run.public_id],
    }


def test_report_last_on_the_server_is_the_newest_run(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    none_yet = cli("report", "last", "--to", "rank-desk")
    assert (none_yet.code, none_yet.err) == (
        1,
        "There are no runs in rank-desk yet; start one with `foldrun run FLOW --to rank-desk`.\n",
    )
    run = parked_run(desk, alice)
    newest = cli("report", "last", "--to", "rank-desk")
    assert newest.code == 0, newest.err
    assert newest.lines[0].startswith(f"{run.public_id}  gated  awaiting-approval")


def test_report_last_in_a_workspace_that_is_not_there_names_the_workspace(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("report", "last", "--to", "my-desk")
    assert (result.code, result.err) == (
        1,
        "There is no workspace called my-desk in this account; this token can see rank-desk.\n",
    )


def test_charlie_sees_no_workspace_and_is_told_how_to_make_one(cli, desk, charlie, signed_in_as):
    signed_in_as(charlie)
    result = cli("runs", "--to", "rank-desk")
    assert (result.code, result.err) == (
        1,
        "There is no workspace called rank-desk in this account; this token "
        "sees none yet; `foldrun workspaces create NAME` makes one.\n",
    )


def test_runs_with_a_status_that_is_not_one_lists_the_statuses(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("runs", "--to", "rank-desk", "--status", "bogus")
    assert (result.code, result.out) == (2, "")
    assert result.err == f"--status bogus is not a run's status; use one of: {STATUSES}.\n"
    as_json = cli("runs", "--to", "rank-desk", "--status", "bogus", "--json")
    assert as_json.code == 2
    assert as_json.json == {
        "error": {
            "code": "invalid",
            "message": f"--status bogus is not a run's status; use one of: {STATUSES}.",
            "what": "status",
            "name": "bogus",
            "choices": STATUSES.split(", "),
        }
    }


def test_the_api_lists_a_refused_choice(alice_api, workspace):
    response = alice_api.get("/api/workspaces/rank-desk/runs", {"verdict": "MEH"})
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid",
        "message": 'verdict: "MEH" is not a valid choice; use one of: GOOD, BAD, QUIET, BLOCKED.',
        "details": {"field": "verdict", "choices": ["GOOD", "BAD", "QUIET", "BLOCKED"]},
    }


def test_a_usage_mistake_under_json_is_an_error_object_too(cli):
    result = cli("runs", "--json", "--nope")
    assert result.code == 2
    assert result.json == {
        "error": {"code": "usage", "message": "foldrun: unrecognized arguments: --nope. See `foldrun --help`."}
    }
