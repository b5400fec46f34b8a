"""Deploy: a push that runs the whole contract over the resulting desk."""

from __future__ import annotations

from foldrun.contract import Finding
from foldrun.contract.check import rule
from library.models import Changeset

from .conftest import AGENT, files, push

WS = "workspaces/rank-desk"


@rule("tests.library.deploy-warning")
def _warn_on_marker(desk, context):
    # A rule only this module's marker file triggers: a warning at deploy.
    if context.mode == "deploy" and "notes/warn-on-deploy.md" in desk.files:
        yield Finding(
            "notes/warn-on-deploy.md", None, "warning", "this file asks for a warning at deploy.", "tests.warn"
        )


def test_a_deploy_with_a_check_error_is_refused_and_writes_nothing(alice_api, desk):
    response = push(alice_api, WS, verb="deploy", files=files(**{"AGENTS.md": "---\nnotify: 42\n---\nDefaults.\n"}))
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "check_failed"
    assert body["message"].startswith("The deploy was refused; nothing was written: AGENTS.md:2: error: ")
    assert body["details"]["findings"][0]["file"] == "AGENTS.md"
    assert body["details"]["findings"][0]["level"] == "error"
    assert Changeset.objects.filter(workspace=desk).count() == 1


def test_the_same_files_go_through_a_push_which_does_not_run_the_check(alice_api, desk):
    response = push(alice_api, WS, files=files(**{"AGENTS.md": "---\nnotify: 42\n---\nDefaults.\n"}))
    assert response.status_code == 201
    assert response.json()["revision"]["number"] == 2


def test_a_deploy_returns_warnings_and_lands(alice_api, desk):
    response = push(alice_api, WS, verb="deploy", message="ship", files=files(**{"notes/warn-on-deploy.md": "hi\n"}))
    assert response.status_code == 201
    body = response.json()
    assert body["revision"]["number"] == 2
    assert body["warnings"] == [
        {
            "file": "notes/warn-on-deploy.md",
            "line": None,
            "level": "warning",
            "message": "this file asks for a warning at deploy.",
            "code": "tests.warn",
        }
    ]
    assert Changeset.objects.get(workspace=desk, number=2).kind == "deploy"


def test_a_deploy_checks_files_already_there_not_only_the_ones_sent(alice_api, desk):
    push(alice_api, WS, files=files(**{"AGENTS.md": "---\nnotify: 42\n---\nDefaults.\n"}))
    response = push(alice_api, WS, verb="deploy", files=files(**{"agents/researcher/agent.md": AGENT + "v2\n"}))
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["file"] == "AGENTS.md"


def test_a_deploy_to_the_library_runs_the_check_too(alice_api, account, alice):
    response = push(alice_api, "library", verb="deploy", files=files(**{"AGENTS.md": "---\nnotify: 42\n---\n"}))
    assert response.status_code == 422
    assert response.json()["code"] == "check_failed"


def test_charlie_gets_404_for_deploy_and_bob_403(charlie_api, bob_api, desk):
    assert push(charlie_api, WS, verb="deploy", files=[]).status_code == 404
    assert push(bob_api, WS, verb="deploy", files=[]).status_code == 403


def test_check_in_deploy_mode_shows_what_a_deploy_would_say(alice_api, desk):
    body = {"files": files(**{"notes/warn-on-deploy.md": "hi\n"}), "mode": "deploy"}
    answer = alice_api.post(f"/api/{WS}/check", body, format="json").json()
    assert {
        "file": "notes/warn-on-deploy.md",
        "line": None,
        "level": "warning",
        "message": "this file asks for a warning at deploy.",
        "code": "tests.warn",
    } in answer["findings"]
    plain = alice_api.post(f"/api/{WS}/check", {"files": body["files"]}, format="json").json()
    assert "tests.warn" not in [f["code"] for f in plain["findings"]]


def test_a_deploy_refused_by_the_push_gate_still_names_everything_the_check_finds(alice_api, desk):
    response = push(
        alice_api,
        WS,
        verb="deploy",
        files=files(
            **{"AGENTS.md": "---\nnotify: 42\n---\nDefaults.\n", "tools/broken.md": "---\nname: [unclosed\n---\n"}
        ),
    )
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "check_failed"
    assert body["message"].startswith("The deploy was refused; nothing was written: AGENTS.md:2: error: ")
    assert [(f["file"], f["line"]) for f in body["details"]["findings"]] == [("AGENTS.md", 2), ("tools/broken.md", 2)]
    assert Changeset.objects.filter(workspace=desk).count() == 1
