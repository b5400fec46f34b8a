"""Push and deploy: all files land in one revision, or none do."""

from __future__ import annotations

import base64

from library.models import Changeset, LibraryFile, Revision

from .conftest import AGENT, CONCEPT, files, push

WS = "workspaces/rank-desk"


def test_a_push_lands_every_file_as_one_revision(alice_api, workspace):
    response = push(
        alice_api,
        WS,
        message="first",
        files=files(**{"agents/researcher/agent.md": AGENT, "knowledge/keywords.md": CONCEPT}),
    )
    assert response.status_code == 201
    body = response.json()
    assert body["revision"]["id"].startswith("rev_")
    assert body["revision"]["number"] == 1
    assert body["revision"]["message"] == "first"
    assert body["revision"]["author"] == "alice@example.com"
    assert body["changed"] == [
        {"path": "agents/researcher/agent.md", "action": "added"},
        {"path": "knowledge/index.md", "action": "added"},
        {"path": "knowledge/keywords.md", "action": "added"},
        {"path": "knowledge/log.md", "action": "added"},
    ]
    assert body["warnings"] == []
    assert Changeset.objects.get(workspace=workspace).number == 1


def test_pushing_the_same_files_again_changes_nothing(alice_api, desk):
    response = push(
        alice_api, WS, files=files(**{"agents/researcher/agent.md": AGENT, "knowledge/keywords.md": CONCEPT})
    )
    assert response.status_code == 201
    assert response.json() == {"revision": None, "changed": [], "warnings": []}
    assert Changeset.objects.filter(workspace=desk).count() == 1


def test_a_second_push_reports_modified_and_deleted(alice_api, desk):
    response = push(
        alice_api,
        WS,
        files=files(**{"agents/researcher/agent.md": AGENT + "More.\n"}),
        delete=["knowledge/keywords.md"],
    )
    body = response.json()
    assert body["revision"]["number"] == 2
    assert body["changed"] == [
        {"path": "agents/researcher/agent.md", "action": "modified"},
        {"path": "knowledge/index.md", "action": "deleted"},
        {"path": "knowledge/keywords.md", "action": "deleted"},
        {"path": "knowledge/log.md", "action": "deleted"},
    ]


def test_a_path_with_dot_dot_refuses_the_whole_push(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"agents/a/agent.md": AGENT, "../etc/passwd": "x"}))
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "files_refused"
    assert body["details"]["findings"][0]["file"] == "../etc/passwd"
    assert (
        body["details"]["findings"][0]["message"] == "../etc/passwd: '..' is refused; a path must stay inside the desk."
    )
    assert LibraryFile.objects.count() == 0
    assert Changeset.objects.count() == 0


def test_an_absolute_path_is_refused(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"/etc/passwd": "x"}))
    assert response.status_code == 422
    assert (
        response.json()["details"]["findings"][0]["message"]
        == "/etc/passwd: absolute paths are refused; give a path relative to the desk."
    )


def test_a_path_ending_in_a_newline_is_refused_naming_it_on_one_line(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"agents/a/agent.md\n": AGENT}))
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["message"] == (
        "'agents/a/agent.md\\n': a path may not contain a control character (a newline, a tab)."
    )
    assert LibraryFile.objects.count() == 0


BINARY = "is not UTF-8 text; a markdown file or a program must be text — keep other bytes in storage/."


def test_a_nul_in_a_text_files_content_is_refused_naming_the_file_as_check_does(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"agents/z/agent.md": "---\nname: z\n---\n\x00"}))
    assert response.status_code == 422
    assert response.json()["message"] == f"Nothing was written: agents/z/agent.md: error: {BINARY}"
    assert LibraryFile.objects.count() == 0


def test_a_nul_in_an_edit_is_refused_naming_the_file(alice_api, desk):
    response = alice_api.put(f"/api/{WS}/files/agents/researcher/agent.md", {"content": "a\x00b"}, format="json")
    assert response.status_code == 422
    assert response.json()["message"] == f"Nothing was written: agents/researcher/agent.md: error: {BINARY}"


def test_a_nul_in_storage_is_kept_as_bytes(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"storage/raw.bin": "a\x00b"}))
    assert response.status_code == 201
    kept = alice_api.get(f"/api/{WS}/files/storage/raw.bin").json()
    assert (kept["encoding"], base64.b64decode(kept["content"])) == ("base64", b"a\x00b")


def test_odd_characters_in_a_path_are_refused(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"notes/a*b.md": "x"}))
    assert response.status_code == 422
    assert "has characters foldrun does not accept in a path" in response.json()["message"]


def test_binary_content_where_text_belongs_is_refused(alice_api, workspace):
    blob = base64.b64encode(b"\x89PNG\r\n\x1a\n\xff\xfe").decode()
    response = push(alice_api, WS, files=[{"path": "knowledge/logo.md", "content": blob, "encoding": "base64"}])
    assert response.status_code == 422
    assert response.json()["message"] == (
        "Nothing was written: knowledge/logo.md: error: is not UTF-8 text; a markdown file or a program must be text"
        " — keep other bytes in storage/."
    )


def test_binary_content_in_storage_is_kept_as_bytes(alice_api, workspace):
    data = b"\x89PNG\r\n\x1a\n\xff\xfe"
    blob = base64.b64encode(data).decode()
    response = push(alice_api, WS, files=[{"path": "storage/logo.png", "content": blob, "encoding": "base64"}])
    assert response.status_code == 201
    raw = alice_api.get(f"/api/{WS}/files/storage/logo.png?raw=1")
    assert raw.content == data
    assert alice_api.get(f"/api/{WS}/files/storage/logo.png").json()["encoding"] == "base64"


def test_base64_that_is_utf8_text_is_stored_as_text(alice_api, workspace):
    blob = base64.b64encode(AGENT.encode()).decode()
    response = push(
        alice_api, WS, files=[{"path": "agents/researcher/agent.md", "content": blob, "encoding": "base64"}]
    )
    assert response.status_code == 201
    assert alice_api.get(f"/api/{WS}/files/agents/researcher/agent.md").json()["content"] == AGENT


def test_a_file_over_the_size_limit_is_refused(alice_api, workspace, settings):
    settings.FOLDRUN_MAX_FILE_BYTES = 100
    response = push(alice_api, WS, files=files(**{"state/big.csv": "x" * 101}))
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0] == {
        "file": "state/big.csv",
        "line": None,
        "level": "error",
        "message": "is 101 bytes; a file may be at most 100 bytes.",
        "code": "file.too_large",
    }


def test_malformed_frontmatter_is_refused_naming_file_and_line(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"agents/a/agent.md": "---\nname: [unclosed\n---\nbody\n"}))
    assert response.status_code == 422
    finding = response.json()["details"]["findings"][0]
    assert finding["file"] == "agents/a/agent.md"
    assert finding["message"].startswith("the YAML frontmatter is malformed")


def test_a_concept_without_type_is_refused_and_the_message_names_the_file(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"knowledge/prices.md": "---\ntitle: Prices\n---\n$5\n"}))
    assert response.status_code == 422
    assert response.json()["message"] == (
        "Nothing was written: knowledge/prices.md:1: error: has no type: in its frontmatter; a concept in knowledge/ "
        "needs type:, title: and description:, and the server refuses a push that adds one without type:."
    )


def test_a_hand_edit_of_a_generated_index_is_refused(alice_api, desk):
    response = push(alice_api, WS, files=files(**{"knowledge/index.md": "my own index\n"}))
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["file"] == "knowledge/index.md"
    assert response.json()["details"]["findings"][0]["code"] == "knowledge.generated_edit"


def test_a_pulled_generated_file_pushed_back_unchanged_is_accepted(alice_api, desk):
    log = alice_api.get(f"/api/{WS}/files/knowledge/log.md").json()["content"]
    response = push(alice_api, WS, files=files(**{"knowledge/log.md": log}))
    assert response.status_code == 201
    assert response.json()["revision"] is None


def test_a_pulled_log_pushed_back_after_the_log_moved_on_is_not_a_hand_edit(alice_api, desk):
    old_log = alice_api.get(f"/api/{WS}/files/knowledge/log.md").json()["content"]
    push(alice_api, WS, message="edit", files=files(**{"knowledge/keywords.md": CONCEPT + "| b |\n"}))
    response = push(
        alice_api, WS, files=files(**{"knowledge/log.md": old_log, "knowledge/keywords.md": CONCEPT + "| b |\n"})
    )
    assert response.status_code == 201
    assert response.json()["revision"] is None
    assert alice_api.get(f"/api/{WS}/files/knowledge/log.md").json()["content"] != old_log


def test_a_duplicate_path_in_one_request_is_refused(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"agents/a/agent.md": AGENT}) + files(**{"agents/a//agent.md": AGENT}))
    assert response.status_code == 422
    assert response.json()["message"] == (
        "Nothing was written: agents/a/agent.md: error: appears more than once in this request; send each path once."
    )


def test_every_refused_file_is_listed_and_nothing_is_written(alice_api, workspace):
    response = push(
        alice_api, WS, files=files(**{"a/../b.md": "x", "knowledge/x.md": "---\ntitle: x\n---\n", "ok.md": "fine"})
    )
    assert response.status_code == 422
    assert [f["file"] for f in response.json()["details"]["findings"]] == ["a/../b.md", "knowledge/x.md"]
    assert Revision.objects.count() == 0


def test_prune_deletes_unmentioned_files_but_keeps_memory_state_and_storage(alice_api, workspace):
    first = files(
        **{
            "agents/a/agent.md": AGENT,
            "flows/old.md": "---\nname: old\n---\n1. [[a]] — x\n",
            "memory/fact.md": "---\ntype: Fact\n---\nx\n",
            "agents/a/memory/seen.md": "---\ntype: Fact\n---\ny\n",
            "state/cursor.txt": "3",
            "storage/report.md": "r",
            "knowledge/k.md": CONCEPT,
        }
    )
    push(alice_api, WS, files=first)
    response = push(alice_api, WS, files=files(**{"agents/a/agent.md": AGENT}), prune=True)
    assert response.json()["changed"] == [
        {"path": "flows/old.md", "action": "deleted"},
        {"path": "knowledge/index.md", "action": "deleted"},
        {"path": "knowledge/k.md", "action": "deleted"},
        {"path": "knowledge/log.md", "action": "deleted"},
    ]
    listing = [f["path"] for f in alice_api.get(f"/api/{WS}/files").json()["results"]]
    assert listing == [
        "agents/a/agent.md",
        "agents/a/memory/index.md",
        "agents/a/memory/log.md",
        "agents/a/memory/seen.md",
        "memory/fact.md",
        "memory/index.md",
        "memory/log.md",
        "state/cursor.txt",
        "storage/report.md",
    ]


def test_a_push_returns_the_contracts_warnings_on_a_concept(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"knowledge/prices.md": "---\ntype: Reference\n---\n$5\n"}))
    assert response.status_code == 201
    assert [(w["file"], w["level"], w["code"]) for w in response.json()["warnings"]] == [
        ("knowledge/prices.md", "warning", "concept.fields")
    ]


def test_binary_bytes_in_a_data_file_outside_storage_are_kept(alice_api, workspace):
    data = b"\x00\x01\xff"
    response = push(
        alice_api,
        WS,
        files=[{"path": "state/blob.bin", "content": base64.b64encode(data).decode(), "encoding": "base64"}],
    )
    assert response.status_code == 201
    assert alice_api.get(f"/api/{WS}/files/state/blob.bin?raw=1").content == data


def test_a_deploy_never_overwrites_memory_a_push_does_not_mention(alice_api, workspace):
    push(
        alice_api, WS, files=files(**{"agents/a/agent.md": AGENT, "memory/fact.md": "---\ntype: Fact\n---\nlearned\n"})
    )
    push(alice_api, WS, verb="deploy", files=files(**{"agents/a/agent.md": AGENT + "v2\n"}), prune=True)
    assert alice_api.get(f"/api/{WS}/files/memory/fact.md").json()["content"] == "---\ntype: Fact\n---\nlearned\n"


def test_a_push_to_an_unknown_workspace_is_404(alice_api, workspace):
    response = push(alice_api, "workspaces/nowhere", files=files(**{"a.md": "x"}))
    assert response.status_code == 404
    assert response.json() == {"code": "not_found", "message": "Not found.", "details": {}}


def test_charlie_cannot_see_alices_workspace(charlie_api, desk):
    for verb in ("push", "deploy"):
        response = push(charlie_api, WS, verb=verb, files=files(**{"a.md": "x"}))
        assert response.status_code == 404
        assert response.json() == {"code": "not_found", "message": "Not found.", "details": {}}


def test_bob_may_not_push_or_deploy(bob_api, desk):
    for where in (WS, "library"):
        for verb in ("push", "deploy"):
            response = push(bob_api, where, verb=verb, files=files(**{"a.md": "x"}))
            assert response.status_code == 403
            assert response.json()["message"] == "Your role (viewer) can read this account but not change it."


def test_a_malformed_body_is_a_400_naming_the_field(alice_api, workspace):
    response = alice_api.post(f"/api/{WS}/push", {"files": "nope"}, format="json")
    assert response.status_code == 400
    assert response.json()["message"].startswith("files:")


def test_a_push_to_the_library_is_its_own_numbering(alice_api, desk):
    response = push(
        alice_api,
        "library",
        files=files(**{"tools/sql.md": "---\nname: sql\ntransport: http\nbase: https://example.com\n---\n"}),
    )
    assert response.status_code == 201
    assert response.json()["revision"]["number"] == 1
    paths = [f["path"] for f in alice_api.get("/api/library/files").json()["results"]]
    assert paths == ["tools/sql.md"]


def test_a_desk_larger_than_a_form_body_is_pushed_in_one_request(alice_api, workspace):
    # Over Django's 2.5 MB form cap, well under FOLDRUN_MAX_PUSH_BYTES.
    body = files(**{f"state/f{i}.txt": "x" * 900_000 for i in range(4)})
    response = push(alice_api, WS, files=body)
    assert response.status_code == 201
    assert len(response.json()["changed"]) == 4


def test_a_request_over_the_push_cap_is_413_with_a_sentence(alice_api, workspace, settings):
    settings.FOLDRUN_MAX_PUSH_BYTES = 1_000
    response = push(alice_api, WS, files=files(**{"state/a.txt": "x" * 2_000}))
    assert response.status_code == 413
    assert response.json()["message"] == (
        "The request is larger than 1,000 bytes (FOLDRUN_MAX_PUSH_BYTES); push the desk in parts."
    )


def test_a_body_that_is_not_json_is_a_400(alice_api, workspace):
    response = alice_api.post(f"/api/{WS}/push", data="{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["message"].startswith("JSON parse error")


def test_a_push_never_overwrites_state_already_on_the_server(alice_api, workspace):
    push(alice_api, WS, files=files(**{"state/rankings.csv": "date,pos\n2026-11-01,3\n"}))
    response = push(
        alice_api, WS, verb="deploy", files=files(**{"state/rankings.csv": "date,pos\n", "state/new.csv": "a\n"})
    )
    assert response.json()["changed"] == [{"path": "state/new.csv", "action": "added"}]
    assert response.json()["warnings"] == [
        {
            "file": "state/rankings.csv",
            "line": None,
            "level": "warning",
            "code": "state.kept",
            "message": "is already on the server and differs; a deploy never overwrites state/, so the server's copy was kept "
            "(delete it first to replace it).",
        }
    ]
    assert alice_api.get(f"/api/{WS}/files/state/rankings.csv").json()["content"] == "date,pos\n2026-11-01,3\n"


def test_state_can_still_be_deleted_by_name(alice_api, workspace):
    push(alice_api, WS, files=files(**{"state/cursor.txt": "3"}))
    response = push(alice_api, WS, delete=["state/cursor.txt"])
    assert response.json()["changed"] == [{"path": "state/cursor.txt", "action": "deleted"}]


def test_a_file_where_the_desk_has_a_folder_is_a_conflict_naming_both(alice_api, desk):
    response = push(alice_api, WS, files=files(**{"agents/": "x", "notes/a.md": "x"}))
    assert response.status_code == 409
    assert response.json()["message"] == (
        "Nothing was written: agents: error: is a folder holding agents/researcher/agent.md; a path cannot be both a "
        "file and a folder."
    )
    assert Changeset.objects.filter(workspace=desk).count() == 1


def test_a_file_inside_a_path_that_is_a_file_is_a_conflict_naming_both(alice_api, desk):
    response = push(alice_api, WS, files=files(**{"agents/researcher/agent.md/notes.md": "x"}))
    assert response.status_code == 409
    assert response.json()["details"]["findings"] == [
        {
            "file": "agents/researcher/agent.md/notes.md",
            "line": None,
            "level": "error",
            "code": "path.clash",
            "message": "would lie inside agents/researcher/agent.md, which is a file; a path cannot be both a file and a "
            "folder.",
        }
    ]
    assert Changeset.objects.filter(workspace=desk).count() == 1


def test_a_file_and_a_folder_of_one_name_in_one_push_are_both_refused(alice_api, workspace):
    response = push(alice_api, WS, files=files(**{"notes": "x", "notes/a.md": "y"}))
    assert [f["file"] for f in response.json()["details"]["findings"]] == ["notes", "notes/a.md"]
    assert LibraryFile.objects.count() == 0


def test_a_folder_emptied_in_the_same_push_may_become_a_file(alice_api, desk):
    response = push(alice_api, WS, files=files(**{"knowledge": "x"}), delete=["knowledge/keywords.md"])
    assert response.status_code == 201
    assert {"path": "knowledge", "action": "added"} in response.json()["changed"]


def test_a_refused_push_lists_its_findings_in_the_order_check_prints_them(alice_api, workspace):
    response = push(
        alice_api, WS, files=files(**{"notes/z*.md": "x", "agents/a/agent.md": "---\nname: [x\n---\n", "../up.md": "x"})
    )
    assert [f["file"] for f in response.json()["details"]["findings"]] == [
        "../up.md",
        "agents/a/agent.md",
        "notes/z*.md",
    ]
