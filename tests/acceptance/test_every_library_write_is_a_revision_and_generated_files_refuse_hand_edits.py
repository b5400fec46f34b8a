"""Issue 2, item 3: every write is a revision (who or which run, when, why,
content hash); read any file at any revision, its history, a diff, a rollback
that is a new revision; index.md and log.md regenerated and refused as hand
edits."""

from __future__ import annotations

import hashlib

from .conftest import AGENT

P = "/api/workspaces/rank-desk"
FILE = "agents/researcher/agent.md"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_push_deploy_edit_and_rollback_are_each_a_revision_with_who_when_why_and_hash(world, alice_api):
    deployed = alice_api.post(
        f"{P}/deploy", {"message": "deploy it", "files": [{"path": FILE, "content": AGENT + "More.\n"}]}, format="json"
    )
    edited = alice_api.put(f"{P}/files/{FILE}", {"message": "edit it", "content": AGENT + "Edited.\n"}, format="json")
    rolled = alice_api.post(f"{P}/files/{FILE}/rollback", {"message": "undo", "to": 1}, format="json")
    assert (deployed.status_code, edited.status_code, rolled.status_code) == (201, 201, 201)
    history = alice_api.get(f"{P}/files/{FILE}/history").json()["results"]
    assert [(h["number"], h["kind"], h["who"]) for h in history] == [
        (4, "rollback", "alice@example.com"),
        (3, "edit", "alice@example.com"),
        (2, "deploy", "alice@example.com"),
        (1, "push", "alice@example.com"),
    ]
    assert [h["message"] for h in history][1:] == ["edit it", "deploy it", "first"]
    assert [h["sha256"] for h in history] == [sha(AGENT), sha(AGENT + "Edited.\n"), sha(AGENT + "More.\n"), sha(AGENT)]
    assert all(h["when"] for h in history)


def test_any_file_reads_at_any_revision(world, alice_api):
    alice_api.post(
        f"{P}/push", {"message": "two", "files": [{"path": FILE, "content": AGENT + "Two.\n"}]}, format="json"
    )
    alice_api.post(
        f"{P}/push", {"message": "three", "files": [{"path": FILE, "content": AGENT + "Three.\n"}]}, format="json"
    )
    contents = [alice_api.get(f"{P}/files/{FILE}?at={n}").json()["content"] for n in (1, 2, 3)]
    assert contents == [AGENT, AGENT + "Two.\n", AGENT + "Three.\n"]
    assert alice_api.get(f"{P}/files/{FILE}?at=2").json()["sha256"] == sha(AGENT + "Two.\n")


def test_a_diff_of_two_revisions_is_unified(world, alice_api):
    alice_api.post(
        f"{P}/push", {"message": "two", "files": [{"path": FILE, "content": AGENT + "Two.\n"}]}, format="json"
    )
    diff = alice_api.get(f"{P}/diff?from=1&to=2&path={FILE}").json()["diff"]
    assert diff.splitlines()[:2] == [f"--- a/{FILE}", f"+++ b/{FILE}"]
    assert "+Two." in diff.splitlines()


def test_index_and_log_are_regenerated_on_every_write_to_knowledge(world, alice_api):
    alice_api.post(
        f"{P}/push",
        {
            "message": "add prices",
            "files": [
                {
                    "path": "knowledge/prices.md",
                    "content": "---\ntype: Reference\ntitle: Prices\ndescription: What things cost.\n---\n$5\n",
                }
            ],
        },
        format="json",
    )
    index = alice_api.get(f"{P}/files/knowledge/index.md").json()["content"]
    log = alice_api.get(f"{P}/files/knowledge/log.md").json()["content"]
    assert "| Prices | Reference | What things cost. | [prices.md](prices.md) |" in index
    assert "| Keywords | Reference |" in index
    assert log.splitlines()[-1].endswith("alice@example.com · created · prices.md — add prices")
    assert len([line for line in log.splitlines() if line.startswith("- ")]) == 2


def test_a_hand_edited_log_is_refused_in_a_push_and_nothing_is_written(world, alice_api):
    before = alice_api.get(f"{P}/revisions").json()["count"]
    response = alice_api.post(
        f"{P}/push",
        {
            "message": "mine",
            "files": [
                {"path": FILE, "content": AGENT + "Changed.\n"},
                {"path": "knowledge/log.md", "content": "# my log\n"},
            ],
        },
        format="json",
    )
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["file"] == "knowledge/log.md"
    assert alice_api.get(f"{P}/revisions").json()["count"] == before
    assert alice_api.get(f"{P}/files/{FILE}").json()["content"] == AGENT


def test_a_dashboard_edit_of_a_generated_index_is_refused(world, alice_api):
    response = alice_api.put(
        f"{P}/files/knowledge/index.md", {"message": "mine", "content": "# my index\n"}, format="json"
    )
    assert response.status_code == 422
    assert "knowledge/index.md" in response.json()["message"]
    assert alice_api.get(f"{P}/files/knowledge/index.md").json()["revision"]["number"] == 1


def test_a_concept_without_type_is_refused_naming_the_file(world, alice_api):
    response = alice_api.post(
        f"{P}/push",
        {
            "message": "m",
            "files": [{"path": "knowledge/untyped.md", "content": "---\ntitle: T\ndescription: D.\n---\nx\n"}],
        },
        format="json",
    )
    assert response.status_code == 422
    assert response.json()["message"].startswith("Nothing was written: knowledge/untyped.md:1: error: has no type:")
    assert alice_api.get(f"{P}/files/knowledge/untyped.md").status_code == 404
