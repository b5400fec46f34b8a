"""Reading a scope: files at a revision, one file, history, revisions, diff,
rollback and check."""

from __future__ import annotations

import pytest

from .conftest import AGENT, CONCEPT, files, push

WS = "workspaces/rank-desk"
NOT_FOUND = {"code": "not_found", "message": "Not found.", "details": {}}


@pytest.fixture
def three(alice_api, desk):
    """Revision 2 edits the agent, revision 3 deletes the concept."""
    push(alice_api, WS, message="second", files=files(**{"agents/researcher/agent.md": AGENT + "Be brief.\n"}))
    push(alice_api, WS, message="third", delete=["knowledge/keywords.md"])
    return desk


def test_files_lists_path_hash_size_and_revision(alice_api, three):
    body = alice_api.get(f"/api/{WS}/files").json()
    assert body["revision"] == 3
    assert body["results"] == [
        {
            "path": "agents/researcher/agent.md",
            "sha256": body["results"][0]["sha256"],
            "size": len((AGENT + "Be brief.\n").encode()),
            "revision": 2,
            "encoding": "utf-8",
            "gallery": None,
        }
    ]


def test_files_at_an_earlier_revision(alice_api, three):
    body = alice_api.get(f"/api/{WS}/files?at=1").json()
    assert body["revision"] == 1
    assert [(f["path"], f["revision"]) for f in body["results"]] == [
        ("agents/researcher/agent.md", 1),
        ("knowledge/index.md", 1),
        ("knowledge/keywords.md", 1),
        ("knowledge/log.md", 1),
    ]


def test_a_bad_at_is_a_400_naming_the_parameter(alice_api, three):
    response = alice_api.get(f"/api/{WS}/files?at=yesterday")
    assert response.status_code == 400
    assert (
        response.json()["message"]
        == "The `at` parameter must be a revision number (a whole number, 0 or more), not 'yesterday'."
    )
    assert response.json()["details"] == {"parameter": "at"}


def test_an_empty_at_is_a_400_too_not_the_head(alice_api, three):
    response = alice_api.get(f"/api/{WS}/files?at=")
    assert response.status_code == 400
    assert (
        response.json()["message"]
        == "The `at` parameter must be a revision number (a whole number, 0 or more), not ''."
    )


def test_an_unknown_revision_number_is_404(alice_api, three):
    assert alice_api.get(f"/api/{WS}/files?at=99").json() == NOT_FOUND
    assert alice_api.get(f"/api/{WS}/revisions/99").status_code == 404


def test_one_file_at_a_revision(alice_api, three):
    body = alice_api.get(f"/api/{WS}/files/agents/researcher/agent.md?at=1").json()
    assert body["content"] == AGENT
    assert body["revision"]["number"] == 1
    assert body["revision"]["author"] == "alice@example.com"
    assert body["revision"]["message"] == "first"


def test_raw_returns_text_plain(alice_api, three):
    response = alice_api.get(f"/api/{WS}/files/agents/researcher/agent.md?raw=1")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == AGENT + "Be brief.\n"


def test_a_deleted_or_unknown_file_is_404(alice_api, three):
    assert alice_api.get(f"/api/{WS}/files/knowledge/keywords.md").json() == NOT_FOUND
    assert alice_api.get(f"/api/{WS}/files/nope.md").json() == NOT_FOUND
    assert alice_api.get(f"/api/{WS}/files/nope.md/history").json() == NOT_FOUND


def test_history_lists_every_revision_of_a_file(alice_api, three):
    rows = alice_api.get(f"/api/{WS}/files/knowledge/keywords.md/history").json()["results"]
    assert [(r["number"], r["deleted"], r["message"], r["who"]) for r in rows] == [
        (3, True, "third", "alice@example.com"),
        (1, False, "first", "alice@example.com"),
    ]
    assert rows[0]["id"].startswith("rev_")
    assert rows[1]["sha256"] == rows[1]["sha256"].lower() and len(rows[1]["sha256"]) == 64
    assert rows[0]["when"]


def test_revisions_are_paginated_newest_first(alice_api, three):
    body = alice_api.get(f"/api/{WS}/revisions?page_size=2").json()
    assert body["count"] == 3
    assert [r["number"] for r in body["results"]] == [3, 2]
    assert body["results"][0]["files"] == 3
    assert body["next"].endswith(f"/api/{WS}/revisions?page=2&page_size=2")
    second = alice_api.get(body["next"]).json()
    assert [r["number"] for r in second["results"]] == [1]
    assert second["next"] is None


def test_one_revision_lists_the_files_it_changed(alice_api, three):
    body = alice_api.get(f"/api/{WS}/revisions/2").json()
    assert body["revision"]["message"] == "second"
    assert [(c["path"], c["action"]) for c in body["changed"]] == [("agents/researcher/agent.md", "modified")]
    first = alice_api.get(f"/api/{WS}/revisions/1").json()
    assert ("knowledge/keywords.md", "added") in [(c["path"], c["action"]) for c in first["changed"]]


def test_diff_of_one_file_is_unified(alice_api, three):
    body = alice_api.get(f"/api/{WS}/diff?path=agents/researcher/agent.md&from=1&to=2").json()
    assert (
        body["diff"]
        == ("--- a/agents/researcher/agent.md\n+++ b/agents/researcher/agent.md\n@@ -4,0 +5 @@\n+Be brief.\n")
        or "+Be brief.\n" in body["diff"]
    )
    assert body["diff"].startswith("--- a/agents/researcher/agent.md\n+++ b/agents/researcher/agent.md\n")
    assert "+Be brief.\n" in body["diff"]


def test_diff_without_a_path_lists_every_changed_file(alice_api, three):
    body = alice_api.get(f"/api/{WS}/diff?from=1&to=3").json()
    assert [(f["path"], f["action"]) for f in body["files"]] == [
        ("agents/researcher/agent.md", "modified"),
        ("knowledge/index.md", "deleted"),
        ("knowledge/keywords.md", "deleted"),
        ("knowledge/log.md", "deleted"),
    ]
    assert "-type: Reference\n" in body["files"][2]["diff"]


def test_diff_with_a_bad_from_names_it(alice_api, three):
    response = alice_api.get(f"/api/{WS}/diff?from=-1")
    assert response.status_code == 400
    assert response.json()["details"] == {"parameter": "from"}


def test_rollback_writes_the_old_content_as_a_new_revision(alice_api, three):
    response = alice_api.post(
        f"/api/{WS}/files/agents/researcher/agent.md/rollback", {"to": 1, "message": "undo"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["revision"]["number"] == 4
    assert body["revision"]["message"] == "undo"
    assert alice_api.get(f"/api/{WS}/files/agents/researcher/agent.md").json()["content"] == AGENT
    rows = alice_api.get(f"/api/{WS}/files/agents/researcher/agent.md/history").json()["results"]
    assert [(r["number"], r["kind"]) for r in rows] == [(4, "rollback"), (2, "push"), (1, "push")]


def test_rollback_of_a_deleted_concept_brings_it_and_its_index_back(alice_api, three):
    response = alice_api.post(f"/api/{WS}/files/knowledge/keywords.md/rollback", {"to": 1}, format="json")
    assert [c["path"] for c in response.json()["changed"]] == [
        "knowledge/index.md",
        "knowledge/keywords.md",
        "knowledge/log.md",
    ]
    assert response.json()["revision"]["message"] == "Roll knowledge/keywords.md back to revision 1"


def test_rollback_to_an_unknown_revision_or_path_is_404(alice_api, three):
    assert (
        alice_api.post(f"/api/{WS}/files/agents/researcher/agent.md/rollback", {"to": 9}, format="json").status_code
        == 404
    )
    assert alice_api.post(f"/api/{WS}/files/nope.md/rollback", {"to": 1}, format="json").json() == NOT_FOUND


def test_check_returns_findings_for_files_laid_over_the_current_ones(alice_api, three):
    response = alice_api.post(
        f"/api/{WS}/check", {"files": files(**{"knowledge/x.md": "---\ntitle: x\n---\n"})}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is False
    assert body["errors"] == 1
    assert body["findings"][0]["file"] == "knowledge/x.md"
    assert body["findings"][0]["code"] == "concept.type"


def test_check_of_the_current_files_writes_nothing(alice_api, three):
    body = alice_api.post(f"/api/{WS}/check", {}, format="json").json()
    assert body["errors"] == 0
    assert alice_api.get(f"/api/{WS}/revisions").json()["count"] == 3


def test_the_library_has_the_same_reading_endpoints(alice_api, account, alice):
    push(alice_api, "library", message="lib", files=files(**{"knowledge/glossary.md": CONCEPT}))
    push(alice_api, "library", message="lib2", files=files(**{"knowledge/glossary.md": CONCEPT + "more\n"}))
    assert [f["path"] for f in alice_api.get("/api/library/files").json()["results"]] == [
        "knowledge/glossary.md",
        "knowledge/index.md",
        "knowledge/log.md",
    ]
    assert alice_api.get("/api/library/files/knowledge/glossary.md?at=1").json()["content"] == CONCEPT
    assert len(alice_api.get("/api/library/files/knowledge/glossary.md/history").json()["results"]) == 2
    assert alice_api.get("/api/library/revisions").json()["count"] == 2
    assert alice_api.get("/api/library/revisions/2").json()["revision"]["message"] == "lib2"
    assert "+more\n" in alice_api.get("/api/library/diff?path=knowledge/glossary.md&from=1&to=2").json()["diff"]
    assert alice_api.post("/api/library/check", {}, format="json").status_code == 200
    response = alice_api.post("/api/library/files/knowledge/glossary.md/rollback", {"to": 1}, format="json")
    assert response.json()["revision"]["number"] == 3


READS = [
    "files",
    "files?at=1",
    "files/agents/researcher/agent.md",
    "files/agents/researcher/agent.md/history",
    "revisions",
    "revisions/1",
    "diff?from=0&to=1",
]


@pytest.mark.parametrize("endpoint", READS)
def test_charlie_gets_the_same_404_on_every_read(charlie_api, desk, endpoint):
    response = charlie_api.get(f"/api/{WS}/{endpoint}")
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


def test_charlie_gets_404_on_check_and_rollback(charlie_api, desk):
    assert charlie_api.post(f"/api/{WS}/check", {}, format="json").json() == NOT_FOUND
    assert (
        charlie_api.post(f"/api/{WS}/files/agents/researcher/agent.md/rollback", {"to": 1}, format="json").json()
        == NOT_FOUND
    )


@pytest.mark.parametrize("endpoint", READS)
def test_bob_may_read(bob_api, desk, endpoint):
    assert bob_api.get(f"/api/{WS}/{endpoint}").status_code == 200


def test_bob_may_check_but_not_roll_back(bob_api, desk):
    assert bob_api.post(f"/api/{WS}/check", {}, format="json").status_code == 200
    assert (
        bob_api.post(f"/api/{WS}/files/agents/researcher/agent.md/rollback", {"to": 1}, format="json").status_code
        == 403
    )
    assert bob_api.post("/api/library/files/x.md/rollback", {"to": 1}, format="json").status_code == 403


def test_charlies_library_is_his_own_and_alices_files_are_404_to_him(alice_api, charlie_api, account, alice):
    push(alice_api, "library", files=files(**{"knowledge/glossary.md": CONCEPT}))
    assert charlie_api.get("/api/library/files").json()["results"] == []
    assert charlie_api.get("/api/library/files/knowledge/glossary.md").json() == NOT_FOUND
    assert charlie_api.get("/api/library/files/knowledge/glossary.md/history").json() == NOT_FOUND
    assert charlie_api.get("/api/library/revisions/1").json() == NOT_FOUND
    assert (
        charlie_api.post("/api/library/files/knowledge/glossary.md/rollback", {"to": 1}, format="json").json()
        == NOT_FOUND
    )


def test_a_file_called_history_can_still_be_read(alice_api, workspace):
    push(alice_api, WS, files=files(**{"notes/history": "what happened\n"}))
    assert alice_api.get(f"/api/{WS}/files/notes/history").json()["content"] == "what happened\n"
    assert alice_api.get(f"/api/{WS}/files/notes/history/history").json()["results"][0]["number"] == 1
