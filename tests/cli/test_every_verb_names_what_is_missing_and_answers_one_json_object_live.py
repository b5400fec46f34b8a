"""Issue 35 item 3, verb by verb: a flow, a secret, a tool, a gallery copy, a revision or a run that is not
there is named with where it was looked for and what is there instead; under --json the failure is one
`{"error": {...}}` object on stdout (nothing on stderr) with a non-zero exit, and push and deploy answer a
documented object of their own (docs/index.md). Against a real server, alice signed in."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.actions import check_start_run
from runs.models import Run
from tests.runs.helpers import agent_file, drive, push
from vault.actions import check_set_secret

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def desk(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[publisher]] — Publish.\n",
            "flows/daily.md": "---\nname: daily\n---\n1. [[publisher]] ! — Publish.\n",
            "tools/word-count.md": "---\nname: word-count\ndescription: counts words\nrun: wc -w\n---\n",
        },
    )
    return workspace


@pytest.fixture
def alice_signed_in(alice, signed_in_as):
    signed_in_as(alice)
    return alice


@pytest.fixture
def folder(cli, tmp_path) -> Path:
    path = tmp_path / "desk"
    assert cli("init", path, "--name", "rank-desk").code == 0
    return path


def only_json(result) -> dict:
    """The one error object on stdout, nothing on stderr, a non-zero exit."""
    assert result.code != 0
    assert result.err == ""
    return result.json["error"]


def test_run_of_a_flow_that_is_not_there_lists_the_workspaces_flows(cli, desk, alice_signed_in):
    result = cli("run", "nosuchflow", "--to", "rank-desk")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        "flow: there is no flow nosuchflow in workspace rank-desk (flows/nosuchflow.md); its flows are daily, weekly.\n"
    )
    assert only_json(cli("run", "nosuchflow", "--to", "rank-desk", "--json")) == {
        "code": "not_found",
        "status": 404,
        "message": "flow: there is no flow nosuchflow in workspace rank-desk (flows/nosuchflow.md); "
        "its flows are daily, weekly.",
        "what": "flow",
        "name": "nosuchflow",
        "where": "rank-desk",
        "choices": ["daily", "weekly"],
    }
    assert not Run.objects.exists()


def test_run_local_of_a_flow_that_is_not_there_lists_the_folders_flows_and_starts_nothing(cli, folder, foldrun_home):
    result = cli("run", "nosuchflow", "--local", "--path", folder)
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        f"There is no flow nosuchflow in {folder.resolve()} (flows/nosuchflow.md); its flows are hello.\n"
    )
    assert not (foldrun_home / "runs").exists()
    assert only_json(cli("run", "nosuchflow", "--local", "--path", folder, "--json"))["choices"] == ["hello"]


def test_report_of_a_local_run_that_is_not_kept_lists_the_newest(cli, foldrun_home):
    runs = foldrun_home / "runs"
    assert cli("report", "--local", "last").err == "No local run yet; start one with `foldrun run FLOW --local`.\n"
    runs.mkdir(parents=True)
    (runs / "run_local_abc.json").write_text("{}")
    result = cli("report", "--local", "run_nope")
    assert (result.code, result.err) == (
        1,
        f"There is no local run run_nope in {runs}; the newest are run_local_abc.\n",
    )
    assert only_json(cli("report", "--local", "run_nope", "--json"))["choices"] == ["run_local_abc"]


def test_approving_a_step_that_does_not_wait_names_the_step_that_does(cli, desk, alice, alice_signed_in):
    run = drive(check_start_run(workspace=desk, user=alice, flow="daily"))
    result = cli("approve", run.public_id, "2", "--to", "rank-desk")
    assert (result.code, result.err) == (1, f"Step 2 of {run.public_id} is not waiting for a decision; step 1 is.\n")
    error = only_json(cli("reject", run.public_id, "2", "--to", "rank-desk", "--json"))
    assert (error["code"], error["status"], error["what"], error["choices"]) == ("not_waiting", 409, "step", [1])


def test_logs_of_a_run_that_is_not_there_lists_the_newest(cli, desk, alice_signed_in):
    result = cli("logs", "run_nope", "--to", "rank-desk")
    assert (result.code, result.err) == (
        1,
        "There is no run run_nope in rank-desk; it has no runs yet (`foldrun runs --to rank-desk` lists them).\n",
    )
    assert only_json(cli("logs", "run_nope", "--to", "rank-desk", "--json"))["what"] == "run"


def test_secrets_in_a_workspace_that_is_not_there_names_the_workspace(cli, desk, alice_signed_in):
    result = cli("secrets", "list", "--to", "nosuchws")
    assert (result.code, result.err) == (
        1,
        "There is no workspace called nosuchws in this account; this token can see rank-desk.\n",
    )
    error = only_json(cli("secrets", "delete", "KEY", "--to", "nosuchws", "--json"))
    assert (error["what"], error["name"], error["choices"]) == ("workspace", "nosuchws", ["rank-desk"])


def test_deleting_a_secret_that_is_not_there_lists_the_ones_the_vault_holds(cli, desk, alice, alice_signed_in):
    check_set_secret(alice.memberships.get(), desk, "API_KEY", {"value": "v"})
    result = cli("secrets", "delete", "NOPE", "--to", "rank-desk")
    assert (result.code, result.err) == (1, "There is no secret NOPE in workspace rank-desk; it holds API_KEY.\n")
    assert only_json(cli("secrets", "delete", "NOPE", "--json")) == {
        "code": "not_found",
        "message": "There is no secret NOPE in the account vault; it holds none yet.",
        "what": "secret",
        "name": "NOPE",
        "where": "the account vault",
        "choices": [],
    }


def test_deleting_a_secret_the_laptop_vault_does_not_hold_says_so(cli, foldrun_home):
    result = cli("secrets", "delete", "NOPE", "--local")
    assert (result.code, result.err) == (1, "There is no secret NOPE in the laptop vault; it holds none yet.\n")


def test_tool_test_of_a_tool_that_is_not_there_lists_the_desks_tools(cli, desk, alice_signed_in):
    result = cli("tool", "test", "ghost", "--to", "rank-desk")
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        "tool ghost is not in the workspace's tools/, the account library or the gallery; this desk has "
        "word-count (`foldrun gallery` lists the gallery's).\n"
    )
    error = only_json(cli("tool", "test", "ghost", "--to", "rank-desk", "--json"))
    assert (error["code"], error["what"], error["name"], error["where"], error["choices"]) == (
        "not_found",
        "tool",
        "ghost",
        "rank-desk",
        ["word-count"],
    )


def test_tool_test_local_of_a_tool_that_is_not_there_lists_the_folders_tools(cli, folder):
    error = only_json(cli("tool", "test", "ghost", "--local", "--path", folder, "--json"))
    assert error == {
        "code": "not_found",
        "message": "Tool ghost is not in the workspace's tools/, the account library or the gallery; this desk "
        "has word-count (`foldrun gallery` lists the gallery's).",
        "what": "tool",
        "name": "ghost",
        "choices": ["word-count"],
    }


def test_gallery_upgrade_in_a_workspace_that_is_not_there_names_the_workspace(cli, desk, alice_signed_in):
    result = cli("gallery", "upgrade", "web", "--to", "nosuchws")
    assert (result.code, result.err) == (
        1,
        "There is no workspace called nosuchws in this account; this token can see rank-desk.\n",
    )
    error = only_json(cli("gallery", "upgrade", "webb", "--json"))
    assert (error["code"], error["what"], error["choices"]) == ("not_found", "tool", ["web"])


def test_pull_at_a_revision_that_is_not_there_names_the_newest(cli, folder, desk, alice_signed_in, tmp_path):
    error = only_json(cli("pull", "--to", "rank-desk", "--at", "99", tmp_path / "old", "--json"))
    assert error == {
        "code": "not_found",
        "status": 404,
        "message": "There is no revision 99 in rank-desk; its newest is revision 1.",
        "what": "revision",
        "name": 99,
        "where": "rank-desk",
        "newest": 1,
    }


def test_push_json_is_one_object_of_what_it_wrote(cli, folder, workspace, alice_signed_in):
    result = cli("push", folder, "--to", "rank-desk", "-m", "first", "--json")
    assert (result.code, result.err) == (0, "")
    answer = result.json
    assert {k: answer[k] for k in ("verb", "workspace", "library", "revision", "unchanged", "sent")} == {
        "verb": "push",
        "workspace": "rank-desk",
        "library": False,
        "revision": 1,
        "unchanged": False,
        "sent": 6,
    }
    assert {"path": "flows/hello.md", "change": "added", "generated": False} in answer["changed"]
    assert (answer["errors"], answer["secrets"], answer["skipped"]) == (0, [], [])
    again = cli("push", folder, "--json").json
    assert (again["revision"], again["unchanged"], again["changed"]) == (None, True, [])


def test_deploy_json_says_the_secrets_the_desk_needs_and_which_are_missing(cli, folder, workspace, alice_signed_in):
    result = cli("deploy", folder, "--to", "rank-desk", "--json")
    assert (result.code, result.err) == (0, "")
    answer = result.json
    assert (answer["verb"], answer["revision"]) == ("deploy", 1)
    assert answer["missing"] == ["ANTHROPIC_API_KEY"]
    assert answer["secrets"][0] | {"for": []} == {
        "name": "ANTHROPIC_API_KEY",
        "for": [],
        "vault": "the rank-desk vault",
        "set": False,
        "fix": "foldrun secrets set ANTHROPIC_API_KEY --to rank-desk",
    }


def test_a_refused_deploy_under_json_is_one_error_object_with_its_findings(cli, folder, workspace, alice_signed_in):
    (folder / "flows/hello.md").write_text("---\nname: hello\n---\n1. [[nobody]] — Say hello.\n")
    error = only_json(cli("deploy", folder, "--to", "rank-desk", "--json"))
    assert (error["code"], error["status"]) == ("check_failed", 422)
    assert "flows/hello.md" in error["message"]
    assert [f["file"] for f in error["findings"]] == ["flows/hello.md"]
    assert error["findings"][0]["level"] == "error"


def test_a_command_outside_a_pushed_folder_without_to_says_where_it_looked(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert only_json(cli("runs", "--json")) == {
        "code": "no_workspace",
        "message": "Name a workspace with --to WS; ./.foldrun/workspace does not say one.",
        "what": "workspace",
        "where": "./.foldrun/workspace",
    }


def test_webhooks_name_a_missing_workspace_and_a_missing_delivery(cli, desk, alice_signed_in):
    result = cli("webhooks", "deliveries", "--to", "nosuchws")
    assert (result.code, result.err) == (
        1,
        "There is no workspace called nosuchws in this account; this token can see rank-desk.\n",
    )
    missing = cli("webhooks", "redeliver", "dlv_nope", "--to", "rank-desk")
    assert (missing.code, missing.err) == (
        1,
        "There is no delivery dlv_nope in rank-desk; it has none in the last 30 days "
        "(`foldrun webhooks deliveries --to rank-desk` lists them).\n",
    )
    error = only_json(cli("notify", "test", "--to", "nosuchws", "--json"))
    assert (error["what"], error["name"], error["choices"]) == ("workspace", "nosuchws", ["rank-desk"])
