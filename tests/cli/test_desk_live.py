"""push, deploy, pull, log, diff — a desk made by `foldrun init`, sent to a real server."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from accounts.models import Workspace
from foldrun.cli.output import short_time
from foldrun.contract import Desk, check
from library.models import Changeset
from library.services import files_at

pytestmark = pytest.mark.django_db(transaction=True)

BAD_NOTIFY = "---\nnotify: {email: ops@example.com, events: [sometimes]}\n---\nThe desk.\n"


@pytest.fixture
def desk(cli, tmp_path) -> Path:
    path = tmp_path / "desk"
    assert cli("init", path, "--name", "rank-desk").code == 0
    return path


@pytest.fixture
def alice_signed_in(alice, signed_in_as, workspace):
    signed_in_as(alice)
    return alice


def test_push_sends_every_file_as_one_revision_and_prints_what_changed(cli, desk, alice_signed_in, workspace):
    result = cli("push", desk, "--to", "rank-desk", "-m", "first draft")
    assert result.code == 0
    assert result.lines[0] == "Pushed 6 files to rank-desk: revision 1."
    assert result.lines[2].split() == ["CHANGE", "PATH"]
    assert ["added", "AGENTS.md"] in [line.split() for line in result.lines[3:]]
    changeset = Changeset.objects.get(workspace=workspace, number=1)
    assert (changeset.kind, changeset.message) == ("push", "first draft")
    assert files_at(workspace.account, workspace)["flows/hello.md"].content == (desk / "flows/hello.md").read_text()


def test_the_first_push_remembers_the_workspace_for_the_next(cli, desk, alice_signed_in, workspace):
    cli("push", desk, "--to", "rank-desk")
    assert (desk / ".foldrun" / "workspace").read_text() == "rank-desk\n"
    (desk / "flows/hello.md").write_text((desk / "flows/hello.md").read_text() + "2. [[assistant]] — Again.\n")
    result = cli("push", desk)
    assert result.lines[0] == "Pushed 6 files to rank-desk: revision 2 (1 modified, 5 unchanged)."
    assert [line.split() for line in result.lines[3:]] == [["modified", "flows/hello.md"]]


def test_pushing_the_same_files_again_changes_nothing(cli, desk, alice_signed_in, workspace):
    cli("push", desk, "--to", "rank-desk")
    result = cli("push", desk, "--to", "rank-desk")
    assert (result.code, result.out) == (0, "Nothing changed in rank-desk; 6 files were already there.\n")


def test_push_json_prints_the_revision_and_each_changed_file(cli, desk, alice_signed_in, workspace):
    answer = cli("push", desk, "--to", "rank-desk", "--json").json
    assert (answer["verb"], answer["workspace"], answer["revision"], answer["sent"]) == ("push", "rank-desk", 1, 6)
    assert {"path": "AGENTS.md", "change": "added", "generated": False} in answer["changed"]


def test_a_binary_file_travels_as_base64_and_comes_back_byte_for_byte(cli, desk, alice_signed_in, workspace, tmp_path):
    logo = bytes(range(256))
    (desk / "storage").mkdir()
    (desk / "storage/logo.png").write_bytes(logo)
    assert cli("push", desk, "--to", "rank-desk").code == 0
    result = cli("pull", "--to", "rank-desk", tmp_path / "copy")
    assert result.code == 0
    assert (tmp_path / "copy/storage/logo.png").read_bytes() == logo


def test_pull_writes_the_workspaces_files_and_at_n_gives_an_older_revision(
    cli, desk, alice_signed_in, workspace, tmp_path
):
    cli("push", desk, "--to", "rank-desk")
    first = (desk / "AGENTS.md").read_text()
    (desk / "AGENTS.md").write_text(first + "A second paragraph.\n")
    cli("push", desk)
    now = cli("pull", "--to", "rank-desk", tmp_path / "now")
    then = cli("pull", "--to", "rank-desk", "--at", "1", tmp_path / "then")
    assert now.code == then.code == 0
    assert then.out.startswith("Pulled ")
    assert then.out.endswith(f" files from rank-desk at revision 1 into {tmp_path / 'then'}.\n")
    assert (tmp_path / "now/AGENTS.md").read_text() == first + "A second paragraph.\n"
    assert (tmp_path / "then/AGENTS.md").read_text() == first
    assert (tmp_path / "now/.foldrun/workspace").read_text() == "rank-desk\n"


def test_a_pulled_desk_pushes_back_unchanged(cli, desk, alice_signed_in, workspace, tmp_path):
    cli("push", desk, "--to", "rank-desk")
    cli("pull", "--to", "rank-desk", tmp_path / "copy")
    result = cli("push", tmp_path / "copy")
    assert result.out.startswith("Nothing changed in rank-desk;")


def test_push_prune_deletes_what_the_folder_no_longer_has(cli, desk, alice_signed_in, workspace):
    cli("push", desk, "--to", "rank-desk")
    (desk / "tools/word-count.md").unlink()
    kept = cli("push", desk)
    pruned = cli("push", desk, "--prune")
    assert kept.out.startswith("Nothing changed")
    assert ["deleted", "tools/word-count.md"] in [line.split() for line in pruned.lines[3:]]
    assert "tools/word-count.md" not in files_at(workspace.account, workspace)


def test_deploy_refusal_prints_the_same_findings_as_an_offline_check(cli, desk, alice_signed_in, workspace):
    (desk / "AGENTS.md").write_text(BAD_NOTIFY)
    (desk / "flows/hello.md").write_text("---\nname: hello\n---\n1. [[nobody]] — Say hello.\n")
    offline = check(Desk.from_folder(desk), mode="check")
    checked = cli("check", desk)
    deployed = cli("deploy", desk, "--to", "rank-desk")
    assert offline and all(f.level == "error" for f in offline)
    assert checked.code == deployed.code == 1
    assert deployed.err_lines[0].startswith("The deploy was refused; nothing was written")
    assert deployed.err_lines[1:] == checked.lines[:-1] == [f.format() for f in offline]
    assert not Changeset.objects.filter(workspace=workspace).exists()


def test_deploy_of_a_clean_desk_is_a_deploy_revision(cli, desk, alice_signed_in, workspace):
    result = cli("deploy", desk, "--to", "rank-desk", "-m", "go live")
    assert result.code == 0
    assert result.lines[0] == "Deployed 6 files to rank-desk: revision 1."
    assert Changeset.objects.get(workspace=workspace, number=1).kind == "deploy"


def test_push_library_sends_to_the_account_library(cli, alice_signed_in, workspace, tmp_path):
    (tmp_path / "lib/skills/plain").mkdir(parents=True)
    (tmp_path / "lib/skills/plain/SKILL.md").write_text(
        "---\nname: plain\ndescription: Write plainly. Use always.\n---\nBe plain.\n"
    )
    result = cli("push", tmp_path / "lib", "--library", "-m", "shared skill")
    assert result.code == 0
    assert result.lines[0] == "Pushed 1 file to the account library: revision 1."
    assert "skills/plain/SKILL.md" in files_at(workspace.account, None)
    assert not (tmp_path / "lib/.foldrun/workspace").exists()


def test_log_lists_revisions_newest_first(cli, desk, alice_signed_in, workspace):
    cli("push", desk, "--to", "rank-desk", "-m", "first draft")
    (desk / "AGENTS.md").write_text((desk / "AGENTS.md").read_text() + "More.\n")
    cli("push", desk, "-m", "say more")
    result = cli("log", "--to", "rank-desk")
    assert result.code == 0
    assert result.lines[0].split() == ["REV", "KIND", "WHO", "WHEN", "FILES", "MESSAGE"]
    first, second = Changeset.objects.get(number=1), Changeset.objects.get(number=2)
    assert [re.split(r"\s{2,}", line) for line in result.lines[1:]] == [
        ["2", "push", "alice@example.com", short_time(second.created_at.isoformat()), "1", "say more"],
        [
            "1",
            "push",
            "alice@example.com",
            short_time(first.created_at.isoformat()),
            str(first.revisions.count()),
            "first draft",
        ],
    ]
    assert [r["number"] for r in cli("log", "--to", "rank-desk", "--json").json] == [2, 1]


def test_log_of_one_file_lists_its_history(cli, desk, alice_signed_in, workspace):
    cli("push", desk, "--to", "rank-desk", "-m", "first draft")
    (desk / "AGENTS.md").write_text((desk / "AGENTS.md").read_text() + "More.\n")
    cli("push", desk, "-m", "say more")
    result = cli("log", "--to", "rank-desk", "flows/hello.md")
    assert result.code == 0
    assert len(result.lines) == 2
    assert result.lines[1].split()[:3] == ["1", "push", "alice@example.com"]


def test_diff_prints_a_unified_diff_between_two_revisions(cli, desk, alice_signed_in, workspace):
    cli("push", desk, "--to", "rank-desk")
    agents = (desk / "AGENTS.md").read_text()
    (desk / "AGENTS.md").write_text(agents.replace("house rules", "house rules and taboos"))
    cli("push", desk)
    result = cli("diff", "--to", "rank-desk", "--from", "1", "--to-rev", "2")
    assert result.code == 0
    assert "--- a/AGENTS.md" in result.lines[0]
    assert "+++ b/AGENTS.md" in result.lines[1]
    assert "-the desk is for, who reads its output, and the house rules (tone, units," in result.lines
    assert "+the desk is for, who reads its output, and the house rules and taboos (tone, units," in result.lines
    assert "\x1b[" not in result.out


def test_diff_of_one_file_defaults_to_the_last_change(cli, desk, alice_signed_in, workspace):
    cli("push", desk, "--to", "rank-desk")
    (desk / "flows/hello.md").write_text((desk / "flows/hello.md").read_text() + "2. [[assistant]] — Again.\n")
    cli("push", desk)
    result = cli("diff", "--to", "rank-desk", "flows/hello.md")
    assert result.lines[-1] == "+2. [[assistant]] — Again."


def test_charlie_gets_not_found_for_alices_workspace(cli, desk, charlie, signed_in_as, workspace):
    signed_in_as(charlie)
    pushed = cli("push", desk, "--to", "rank-desk")
    pulled = cli("pull", "--to", "rank-desk", desk / "copy")
    # What alice would read for a workspace that does not exist (she would be shown hers).
    missing = (
        "There is no workspace called rank-desk in this account; this token sees none yet; "
        "`foldrun workspaces create NAME` makes one.\n"
    )
    assert (pushed.code, pushed.err) == (1, missing)
    assert (pulled.code, pulled.err) == (1, missing)
    assert not Changeset.objects.filter(workspace=workspace).exists()


def test_bob_the_viewer_may_pull_but_not_push(cli, desk, alice_signed_in, bob, signed_in_as, workspace, tmp_path):
    cli("push", desk, "--to", "rank-desk")
    signed_in_as(bob)
    pushed = cli("push", desk, "--to", "rank-desk")
    pulled = cli("pull", "--to", "rank-desk", tmp_path / "bobs")
    assert (pushed.code, pushed.err) == (1, "Your role (viewer) can read this account but not change it.\n")
    assert pulled.code == 0
    assert Workspace.objects.get(name="rank-desk").changesets.count() == 1


def test_the_library_can_be_pulled_logged_and_diffed_like_a_workspace(cli, alice_signed_in, workspace, tmp_path):
    (tmp_path / "lib/tools").mkdir(parents=True)
    crm = (
        "---\ntransport: http\nname: crm\ndescription: The CRM. GET to read.\nbase: https://crm.example.com/api\n---\n"
    )
    (tmp_path / "lib/tools/crm.md").write_text(crm)
    cli("push", tmp_path / "lib", "--library", "-m", "crm")
    (tmp_path / "lib/tools/crm.md").write_text(crm.replace("GET to read.", "GET to read, never to write."))
    cli("push", tmp_path / "lib", "--library", "-m", "clearer")
    pulled = cli("pull", "--library", tmp_path / "copy")
    logged = cli("log", "--library", "--json")
    diffed = cli("diff", "--library", "tools/crm.md")
    assert pulled.out == f"Pulled 1 file from the account library into {tmp_path / 'copy'}.\n"
    assert (tmp_path / "copy/tools/crm.md").read_text() == crm.replace("GET to read.", "GET to read, never to write.")
    assert not (tmp_path / "copy/.foldrun/workspace").exists()
    assert [(r["number"], r["message"]) for r in logged.json] == [(2, "clearer"), (1, "crm")]
    assert "+description: The CRM. GET to read, never to write." in diffed.lines


def test_a_deploy_with_warnings_prints_the_same_warnings_as_an_offline_check(cli, desk, alice_signed_in, workspace):
    tool = desk / "tools/word-count.md"
    tool.write_text(tool.read_text().replace("import json\n", "import json\nimport requests\n"))
    checked = cli("check", desk)
    deployed = cli("deploy", desk, "--to", "rank-desk")
    assert checked.lines == [
        "tools/word-count.md:11: warning: imports requests, which nothing declares; add it to runtime: packages: in "
        "tools/word-count.md, or the program fails on its first platform call.",
        "0 errors, 1 warning",
    ]
    assert (checked.code, deployed.code) == (0, 0)
    assert deployed.lines[-1] == checked.lines[0]
    assert deployed.lines[0] == "Deployed 6 files to rank-desk: revision 1."


def test_a_missing_workspace_revision_or_file_is_named(cli, desk, alice_signed_in, workspace, tmp_path):
    cli("push", desk, "--to", "rank-desk")
    no_desk = cli("push", desk, "--to", "no-such-desk")
    no_revision = cli("pull", "--to", "rank-desk", "--at", "99", tmp_path / "old")
    no_file = cli("log", "--to", "rank-desk", "flows/nope.md")
    no_diff = cli("diff", "--to", "rank-desk", "flows/nope.md")
    assert (no_desk.code, no_desk.err) == (
        1,
        "There is no workspace called no-such-desk in this account; this token can see rank-desk.\n",
    )
    assert (no_revision.code, no_revision.err) == (
        1,
        "There is no revision 99 in rank-desk; its newest is revision 1.\n",
    )
    assert (no_file.code, no_file.err) == (1, "flows/nope.md is not in rank-desk; flows/ holds hello.md.\n")
    assert (no_diff.code, no_diff.err) == (1, "flows/nope.md is not in rank-desk; flows/ holds hello.md.\n")
    assert not Workspace.objects.filter(name="no-such-desk").exists()


def test_a_desk_bigger_than_a_form_upload_pushes_in_one_request(cli, desk, alice_signed_in, workspace):
    big = os.urandom(3 * 1024 * 1024)
    (desk / "storage").mkdir()
    (desk / "storage/archive.bin").write_bytes(big)
    result = cli("push", desk, "--to", "rank-desk")
    assert result.code == 0, result.err
    assert result.lines[0] == "Pushed 7 files to rank-desk: revision 1."
    assert files_at(workspace.account, workspace)["storage/archive.bin"].encoding == "base64"
