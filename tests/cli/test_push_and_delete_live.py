"""push's honesty (no desk refused, links named, check's findings, counts as the server wrote them),
a refused deploy's findings said once, and `workspaces delete` — against a real server."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from accounts.models import Workspace
from library.models import Changeset
from runs.models import Run

pytestmark = pytest.mark.django_db(transaction=True)

CONCEPT = "---\ntype: Fact\ntitle: Opening hours\ndescription: When the shop opens.\n---\nNine to five.\n"


@pytest.fixture
def desk(cli, tmp_path) -> Path:
    path = tmp_path / "desk"
    assert cli("init", path, "--name", "rank-desk").code == 0
    return path


@pytest.fixture
def alice_signed_in(alice, signed_in_as, workspace):
    signed_in_as(alice)
    return alice


def test_a_folder_that_is_no_desk_is_refused_before_anything_is_sent(cli, alice_signed_in, workspace, tmp_path):
    (tmp_path / "notes.txt").write_text("shopping list\n")
    result = cli("push", tmp_path, "--to", "rank-desk")
    assert (result.code, result.err) == (
        1,
        f"{tmp_path} is not a desk: it has no AGENTS.md, agents/ or flows/. "
        f"Start one with `foldrun init {tmp_path}`, or give the desk's folder "
        "(push --library sends the account library).\n",
    )
    assert not Changeset.objects.filter(workspace=workspace).exists()


def test_push_names_the_symlinks_it_skipped(cli, desk, alice_signed_in, workspace, tmp_path):
    (tmp_path / "elsewhere.md").write_text("outside\n")
    (tmp_path / "shared").mkdir()
    os.symlink(tmp_path / "elsewhere.md", desk / "linked.md")
    os.symlink(tmp_path / "shared", desk / "shared")
    result = cli("push", desk, "--to", "rank-desk")
    assert result.code == 0, result.err
    assert result.err_lines == [
        "Skipped 2 symlinks (a push sends files, not links; copy the file in to send it): linked.md, shared/"
    ]
    assert result.lines[0] == "Pushed 6 files to rank-desk: revision 1."


def test_push_warns_with_checks_findings_and_still_lands(cli, desk, alice_signed_in, workspace):
    (desk / "flows/hello.md").write_text("---\nname: hello\n---\n1. [[nobody]] — Say hello.\n")
    checked = cli("check", desk)
    pushed = cli("push", desk, "--to", "rank-desk")
    assert pushed.code == 0, pushed.err
    assert Changeset.objects.filter(workspace=workspace, number=1).exists()
    at = pushed.lines.index(
        "check found 1 error, 0 warnings (a deploy refuses the errors; `foldrun check` says the same):"
    )
    assert pushed.lines[at + 1 :] == checked.lines[:-1]


def test_counts_say_what_the_server_wrote_and_generated_files_as_such(cli, desk, alice_signed_in, workspace):
    (desk / "knowledge").mkdir(exist_ok=True)
    (desk / "knowledge/hours.md").write_text(CONCEPT)
    result = cli("push", desk, "--to", "rank-desk")
    assert result.code == 0, result.err
    assert result.lines[0] == "Pushed 7 files to rank-desk: revision 1."
    assert any(line.split() == ["added", "(generated)", "knowledge/index.md"] for line in result.lines)
    assert any(line.split() == ["added", "(generated)", "knowledge/log.md"] for line in result.lines)
    assert (
        "The server wrote 2 files itself (index.md and log.md of each knowledge folder a push changes); "
        "pull them, never edit them."
    ) in result.lines
    (desk / "knowledge/hours.md").write_text(CONCEPT.replace("Nine", "Ten"))
    again = cli("push", desk)
    assert again.lines[0] == "Pushed 7 files to rank-desk: revision 2 (1 modified, 6 unchanged)."


def test_a_refused_deploy_prints_each_finding_once(cli, desk, alice_signed_in, workspace):
    (desk / "flows/hello.md").write_text("---\nname: hello\n---\n1. [[nobody]] — Say hello.\n")
    (desk / "flows/bye.md").write_text("---\nname: bye\n---\n1. [[noone]] — Say bye.\n")
    deployed = cli("deploy", desk, "--to", "rank-desk")
    assert deployed.code == 1
    assert deployed.err_lines[0] == "The deploy was refused; nothing was written (2 errors, 0 warnings):"
    findings = deployed.err_lines[1:]
    assert len(findings) == 2 and len(set(findings)) == 2
    assert all(deployed.err.count(f) == 1 for f in findings)


def test_workspaces_delete_asks_for_the_name_and_says_how_many_runs_go(cli, alice_signed_in, workspace, monkeypatch):
    for _ in range(3):
        Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="completed")
    monkeypatch.setattr("sys.stdin", io.StringIO("rank-desk\n"))
    result = cli("workspaces", "delete", "rank-desk")
    assert result.code == 0, result.err
    assert result.err.startswith(
        "Deleting rank-desk removes its files and every revision, 3 runs with their traces "
        "and artifacts, its schedules, its secrets and its delivery log. There is no undo.\n"
        "Type the workspace's name (rank-desk) to delete it: "
    )
    assert result.out == "Deleted workspace rank-desk and its 3 runs.\n"
    assert not Workspace.objects.filter(pk=workspace.pk).exists()
    assert not Run.objects.exists()


def test_a_wrong_name_typed_deletes_nothing(cli, alice_signed_in, workspace, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("rank\n"))
    result = cli("workspaces", "delete", "rank-desk")
    assert result.code == 1
    assert result.err_lines[-1].endswith(
        "You typed 'rank', not rank-desk; nothing was deleted (pass --yes to skip the question in a script)."
    )
    assert Workspace.objects.filter(pk=workspace.pk).exists()


def test_yes_deletes_without_asking_for_scripts(cli, alice_signed_in, workspace, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    result = cli("workspaces", "delete", "rank-desk", "--yes")
    assert (result.code, result.out, result.err) == (0, "Deleted workspace rank-desk and its 0 runs.\n", "")
    assert not Workspace.objects.filter(pk=workspace.pk).exists()


def test_bob_may_not_delete_and_charlie_is_told_it_is_not_there(cli, alice, bob, charlie, signed_in_as, workspace):
    signed_in_as(bob)
    refused = cli("workspaces", "delete", "rank-desk", "--yes")
    assert (refused.code, refused.err) == (
        1,
        "Your role (viewer) cannot delete a workspace; ask an owner or admin of the account.\n",
    )
    signed_in_as(charlie)
    missing = cli("workspaces", "delete", "rank-desk", "--yes")
    assert (missing.code, missing.err) == (
        1,
        "There is no workspace called rank-desk in this account; "
        "this token sees none yet; `foldrun workspaces create NAME` makes one.\n",
    )
    assert Workspace.objects.filter(pk=workspace.pk).exists()


def test_the_api_delete_is_refused_to_bob_hidden_from_charlie_and_documents_what_it_removes(
    bob_api, charlie_api, alice_api, workspace
):
    from accounts.actions import WORKSPACE_DELETE_REMOVES

    assert bob_api.delete("/api/workspaces/rank-desk").status_code == 403
    assert charlie_api.delete("/api/workspaces/rank-desk").status_code == 404
    assert alice_api.get("/api/workspaces/rank-desk").json()["run_count"] == 0
    schema = alice_api.get("/api/schema/?format=json").json()
    described = schema["paths"]["/api/workspaces/{ws}"]["delete"]["description"]
    assert described.startswith(WORKSPACE_DELETE_REMOVES)
    assert "its runs (with their steps, tries, trace, approvals and artifacts)" in described
    assert alice_api.delete("/api/workspaces/rank-desk").status_code == 204


def test_check_in_a_pushed_desk_looks_the_needed_secrets_up_in_its_workspaces_vault(
    cli, desk, alice_signed_in, workspace
):
    from vault.actions import do_set_secret

    assert cli("push", desk, "--to", "rank-desk").code == 0
    missing = cli("check", desk)
    assert missing.err_lines == [
        "This desk needs 1 secret:",
        "  ANTHROPIC_API_KEY  for the model provider of agent assistant  MISSING from the rank-desk vault — "
        "foldrun secrets set ANTHROPIC_API_KEY --to rank-desk",
    ]
    do_set_secret(workspace.account, None, "ANTHROPIC_API_KEY", value="sk-account-wide")  # the account's counts too
    assert cli("check", desk).err_lines[1].endswith("for the model provider of agent assistant  (set)")


def test_check_json_lists_the_secrets_the_desk_needs_and_which_its_workspaces_vault_is_missing(
    cli, desk, alice_signed_in, workspace
):
    from vault.actions import do_set_secret

    assert cli("push", desk, "--to", "rank-desk").code == 0
    missing = cli("check", desk, "--json")
    assert missing.code == 0
    assert (missing.json["ok"], missing.json["errors"], missing.json["findings"]) == (True, 0, [])
    assert missing.json["secrets"] == [
        {
            "name": "ANTHROPIC_API_KEY",
            "for": ["the model provider of agent assistant"],
            "vault": "the rank-desk vault",
            "set": False,
            "fix": "foldrun secrets set ANTHROPIC_API_KEY --to rank-desk",
        }
    ]
    assert missing.json["missing"] == ["ANTHROPIC_API_KEY"]
    assert missing.err == ""  # JSON on stdout is the whole answer: no remark beside it
    do_set_secret(workspace.account, workspace, "ANTHROPIC_API_KEY", value="sk-workspace")
    held = cli("check", desk, "--json").json
    assert (held["secrets"][0]["set"], held["missing"]) == (True, [])
