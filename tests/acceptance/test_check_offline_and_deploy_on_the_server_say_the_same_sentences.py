"""Issue 2, item 6: the CLI's offline `check` and the server's deploy print
the same sentences for the same files; exit 1 on an error; `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldrun.contract import Desk, check
from library.models import Changeset
from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)

ANTHROPIC_VALUE = "sk-ant-api03-" + "Ab3" * 10
BAD_DESK = {
    "AGENTS.md": "---\nnotify: {email: ops@example.com, events: [sometimes]}\n---\nThe desk.\n",
    "agents/writer/agent.md": (
        "---\nname: writer\ndescription: Writes.\ntools: [read, web, nosuchtool]\n"
        f"secrets: [{ANTHROPIC_VALUE}]\nlimits: {{read: 0, web.search: 2.5}}\n"
        "web: {search: deepseek}\n---\nWrite.\n"
    ),
    "agents/reader/agent.md": "---\nname: reader\ndescription: Reads.\ntools: [read]\nlimits: {web.search: 3}\n---\nRead.\n",
    "flows/weekly.md": "---\nname: weekly\n---\n1. [[nobody]] — Say hello.\n2. [[reader]] — Read.\n",
    "tools/broken.md": "---\ntransport: http\nname: [unclosed\n---\n",
    "knowledge/untyped.md": "---\ntitle: T\ndescription: D.\n---\nx\n",
}
EMAIL_TOOL = "---\ntransport: script\nname: email\noutward: true\nrun: send.py\nsecrets: [RESEND_API_KEY]\n---\n"
UNGUARDED_DESK = {
    "agents/writer/agent.md": "---\nname: writer\ndescription: Writes.\ntools: [read, email]\n---\nWrite.\n",
    "agents/reader/agent.md": "---\nname: reader\ndescription: Reads.\ntools: [read]\n---\nRead.\n",
    "tools/email/tool.md": EMAIL_TOOL,
    "tools/email/send.py": "import json, sys\nprint(json.load(sys.stdin))\n",
    "flows/f.md": "---\nname: f\n---\n1. [[reader]] — Read.\n2. [[writer]] — Send it.\n",
}


def lay_down(folder: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


RULE_ERRORS = {k: v for k, v in BAD_DESK.items() if k not in ("tools/broken.md", "knowledge/untyped.md")}


def test_a_desk_breaking_many_rules_gets_the_same_sentences_offline_and_on_deploy(
    cli, signed_in_as, alice, workspace, tmp_path
):
    desk = lay_down(tmp_path / "desk", RULE_ERRORS)
    signed_in_as(alice)
    checked = cli("check", desk)
    deployed = cli("deploy", desk, "--to", "rank-desk")
    assert (checked.code, deployed.code) == (1, 1)
    assert checked.lines[-1] == "8 errors, 1 warning"
    assert deployed.err_lines[0].startswith("The deploy was refused; nothing was written")
    # The same sentences, in the same order (the contract's sort_findings).
    assert deployed.err_lines[1:] == checked.lines[:-1]
    assert ANTHROPIC_VALUE not in checked.out + deployed.out + deployed.err
    assert not Changeset.objects.filter(workspace=workspace).exists()


def test_a_desk_with_malformed_yaml_too_gets_every_sentence_on_deploy(cli, signed_in_as, alice, workspace, tmp_path):
    desk = lay_down(tmp_path / "desk", BAD_DESK)
    signed_in_as(alice)
    checked = cli("check", desk)
    deployed = cli("deploy", desk, "--to", "rank-desk")
    assert (checked.code, deployed.code) == (1, 1)
    assert checked.lines[-1] == "10 errors, 1 warning"
    assert not Changeset.objects.filter(workspace=workspace).exists()
    assert deployed.err_lines[1:] == checked.lines[:-1]


def test_check_json_gives_the_same_findings_as_the_servers_check_endpoint(
    cli, signed_in_as, alice, alice_api, workspace, tmp_path
):
    desk = lay_down(tmp_path / "desk", BAD_DESK)
    offline = cli("check", desk, "--json")
    server = alice_api.post(
        "/api/workspaces/rank-desk/check",
        {"files": [{"path": p, "content": c} for p, c in BAD_DESK.items()]},
        format="json",
    ).json()
    assert offline.code == 1
    assert [(f["file"], f["line"], f["level"], f["message"]) for f in offline.json["findings"]] == [
        (f["file"], f["line"], f["level"], f["message"]) for f in server["findings"]
    ]


def test_an_outward_step_is_an_error_offline_and_a_warning_on_deploy_in_the_same_words(
    cli, signed_in_as, alice, workspace, tmp_path
):
    desk = lay_down(tmp_path / "desk", UNGUARDED_DESK)
    signed_in_as(alice)
    checked = cli("check", desk)
    deployed = cli("deploy", desk, "--to", "rank-desk")
    sentence = (
        "step 2 ([[writer]]) grants the outward tool email but has neither verify: nor a gate; add verify: "
        "file <path>, verify: reply <regex> or verify: grows <path>, put ! after [[writer]], or add ask: "
        "<question>."
    )
    assert checked.code == 1
    assert checked.lines[0] == f"flows/f.md:5: error: {sentence}"
    assert deployed.code == 0
    assert f"flows/f.md:5: warning: {sentence}" in deployed.lines
    assert Changeset.objects.get(workspace=workspace).kind == "deploy"


def test_a_clean_desk_checks_with_exit_0(cli, tmp_path):
    assert cli("init", tmp_path / "d", "--name", "d").code == 0
    checked = cli("check", tmp_path / "d")
    assert checked.code == 0
    assert [f for f in check(Desk.from_folder(tmp_path / "d"), mode="deploy") if f.level == "error"] == []


def test_an_expired_token_prints_the_servers_sentence_and_exits_1(cli, signed_in_as, alice, workspace, tmp_path):
    import datetime as dt

    from django.utils import timezone

    from accounts.models import ApiToken, hash_token

    raw = signed_in_as(alice)
    ApiToken.objects.filter(token_hash=hash_token(raw)).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    result = cli("workspaces")
    assert result.code == 1
    assert "This API token has expired; run `foldrun login` for a new one." in result.err


def test_a_file_over_the_servers_default_size_limit_gets_the_same_sentence_offline_and_on_push(
    cli, signed_in_as, alice, workspace, tmp_path
):
    desk = tmp_path / "d"
    assert cli("init", desk, "--name", "d").code == 0
    (desk / "state").mkdir()
    (desk / "state/big.csv").write_text("x" * 6_000_000)
    signed_in_as(alice)
    checked = cli("check", desk)
    pushed = cli("push", desk, "--to", "rank-desk")
    assert (checked.code, pushed.code) == (1, 1)
    assert checked.lines[0] == "state/big.csv: error: is 5.7 MB; a file may be at most 5.0 MB."
    assert checked.lines[0] in pushed.err_lines
    assert not Changeset.objects.filter(workspace=workspace).exists()


PINNED_UA = (
    "---\nname: a\ndescription: d.\ntools: [web]\nweb:\n  browse:\n    engine: chromium\n"
    '    user_agent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) '
    'Chrome/99.0.0.0 Safari/537.36"\n---\nx\n'
)


def test_a_pinned_user_agent_of_another_chrome_major_warns_on_deploy(alice_api, workspace):
    response = alice_api.post(
        "/api/workspaces/rank-desk/deploy",
        {"message": "m", "files": [{"path": "agents/a/agent.md", "content": PINNED_UA}]},
        format="json",
    )
    assert response.status_code == 201
    assert any("user_agent" in w["message"] and "99" in w["message"] for w in response.json()["warnings"])
