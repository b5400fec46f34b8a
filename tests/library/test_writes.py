"""Generated index/log, dashboard edits and what runs write."""

from __future__ import annotations

import pytest

from foldrun.contract.generated import render_index
from library.actions.pushes import do_edit_file
from library.actions.run_files import do_write_run_files
from library.actions.writes import WriteRefused
from library.models import Changeset
from library.services import files_at

from .conftest import AGENT, CONCEPT, files, push

WS = "workspaces/rank-desk"
FACT = "---\ntype: Fact\ntitle: Phone format\ndescription: How the customer writes phone numbers.\n---\n+61 3 …\n"


def test_every_concept_write_regenerates_the_index_in_the_same_revision(alice_api, desk):
    index = alice_api.get(f"/api/{WS}/files/knowledge/index.md").json()
    assert index["revision"]["number"] == 1
    assert index["content"] == render_index({"keywords.md": CONCEPT})


def test_the_log_says_who_changed_what_and_why(alice_api, desk):
    push(alice_api, WS, message="tighten", files=files(**{"knowledge/keywords.md": CONCEPT + "| b |\n"}))
    log = alice_api.get(f"/api/{WS}/files/knowledge/log.md").json()["content"]
    lines = [line for line in log.splitlines() if line.startswith("- ")]
    assert len(lines) == 2
    assert lines[0].endswith("· alice@example.com · created · keywords.md — first")
    assert lines[1].endswith("· alice@example.com · updated · keywords.md — tighten")


def test_an_agents_own_memory_gets_its_own_index(alice_api, desk):
    response = push(alice_api, WS, files=files(**{"agents/researcher/memory/phone.md": FACT}))
    assert [c["path"] for c in response.json()["changed"]] == [
        "agents/researcher/memory/index.md",
        "agents/researcher/memory/log.md",
        "agents/researcher/memory/phone.md",
    ]
    index = alice_api.get(f"/api/{WS}/files/agents/researcher/memory/index.md").json()["content"]
    assert "Phone format" in index


def test_a_write_elsewhere_leaves_the_index_alone(alice_api, desk):
    response = push(alice_api, WS, files=files(**{"agents/researcher/agent.md": AGENT + "x\n"}))
    assert response.json()["changed"] == [{"path": "agents/researcher/agent.md", "action": "modified"}]


def test_the_library_knowledge_is_indexed_too(alice_api, account, alice):
    push(alice_api, "library", files=files(**{"knowledge/glossary.md": CONCEPT}))
    assert "Target keywords" in alice_api.get("/api/library/files/knowledge/index.md").json()["content"]


def test_a_dashboard_edit_is_a_revision_of_kind_edit(alice, account, desk):
    result = do_edit_file(
        account=account,
        workspace=desk,
        path="agents/researcher/agent.md",
        content=AGENT + "Edited.\n",
        author=alice,
        message="from the page",
    )
    assert result.changeset.kind == "edit"
    assert result.changeset.message == "from the page"
    assert files_at(account, desk)["agents/researcher/agent.md"].content == AGENT + "Edited.\n"


def test_a_dashboard_edit_is_validated_like_a_push(alice, account, desk):
    with pytest.raises(WriteRefused) as refused:
        do_edit_file(
            account=account, workspace=desk, path="knowledge/keywords.md", content="---\ntitle: x\n---\n", author=alice
        )
    assert refused.value.findings[0].code == "concept.type"
    assert Changeset.objects.filter(workspace=desk).count() == 1


def test_an_edit_through_the_api_and_bob_and_charlie(alice_api, bob_api, charlie_api, desk):
    url = f"/api/{WS}/files/agents/researcher/agent.md"
    assert alice_api.put(url, {"content": AGENT + "api\n"}, format="json").json()["revision"]["kind"] == "edit"
    assert bob_api.put(url, {"content": "x"}, format="json").status_code == 403
    assert charlie_api.put(url, {"content": "x"}, format="json").status_code == 404


def test_a_run_writes_memory_and_state_attributed_to_the_run(alice_api, account, desk):
    result = do_write_run_files(
        "run_abc123",
        account=account,
        workspace=desk,
        files={"agents/researcher/memory/phone.md": FACT, "state/cursor.txt": "42\n"},
    )
    assert result.changeset.kind == "run"
    assert result.changeset.run_public_id == "run_abc123"
    rows = alice_api.get(f"/api/{WS}/files/state/cursor.txt/history").json()["results"]
    assert rows[0]["who"] == "run_abc123"
    log = alice_api.get(f"/api/{WS}/files/agents/researcher/memory/log.md").json()["content"]
    assert "· run_abc123 · created · phone.md" in log


def test_a_run_may_not_write_knowledge_and_nothing_is_written(account, desk):
    with pytest.raises(WriteRefused) as refused:
        do_write_run_files(
            "run_abc123",
            account=account,
            workspace=desk,
            files={"memory/ok.md": FACT, "knowledge/keywords.md": CONCEPT + "x"},
        )
    assert (
        refused.value.findings[0].message
        == "knowledge/keywords.md: knowledge/ is given, not learned; a run may not write it."
    )
    assert Changeset.objects.filter(workspace=desk).count() == 1


def test_a_run_may_not_write_outside_memory_state_and_storage(account, desk):
    with pytest.raises(WriteRefused) as refused:
        do_write_run_files("run_abc123", account=account, workspace=desk, files={"agents/researcher/agent.md": "x"})
    assert refused.value.findings[0].code == "run.outside"


def test_two_writes_get_consecutive_numbers(alice_api, account, desk):
    do_write_run_files("run_1", account=account, workspace=desk, files={"state/a.txt": "1"})
    do_write_run_files("run_2", account=account, workspace=desk, files={"state/a.txt": "2"})
    numbers = list(Changeset.objects.filter(workspace=desk).order_by("number").values_list("number", flat=True))
    assert numbers == [1, 2, 3]


def test_a_run_may_write_bytes_to_storage(alice_api, account, desk):
    do_write_run_files("run_abc123", account=account, workspace=desk, files={"storage/chart.png": b"\x89PNG\xff\x00"})
    assert alice_api.get(f"/api/{WS}/files/storage/chart.png?raw=1").content == b"\x89PNG\xff\x00"


def test_a_run_may_not_write_a_file_inside_a_path_that_is_a_file(account, desk):
    do_write_run_files("run_abc123", account=account, workspace=desk, files={"state/cursor": "1"})
    with pytest.raises(WriteRefused) as refused:
        do_write_run_files("run_abc124", account=account, workspace=desk, files={"state/cursor/2.txt": "2"})
    assert refused.value.findings[0].format() == (
        "state/cursor/2.txt: error: would lie inside state/cursor, which is a file; a path cannot be both a file and a "
        "folder."
    )
    assert Changeset.objects.filter(workspace=desk).count() == 2
