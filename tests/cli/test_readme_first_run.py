"""A first run from the README: its example commands, in the order written, against a fresh server
(live_server, a real Celery worker) and a loopback model stub — and the secrets a desk needs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
FOLDRUN = str(Path(sys.executable).parent / "foldrun")
STDIN = {"login": "demo@foldrun.dev\ndemo-password-123\n", "secrets": "sk-ant-not-a-real-key\n"}


def readme_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README[README.index("## Using it") :], re.S)


def readme_commands() -> list[list[str]]:
    return [
        shlex.split(line, comments=True)
        for line in readme_blocks("sh")[0].splitlines()
        if shlex.split(line, comments=True)
    ]


def test_the_readmes_example_block_runs_in_order_on_a_fresh_server(
    live_server, celery_worker_process, fake_provider, tmp_path
):
    call_command("seed_demo")  # what ./scripts/start does before it prints the demo sign-in
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDRUN_URL") and k != "FOLDRUN_TOKEN"}
    env["FOLDRUN_HOME"] = str(tmp_path / "home")
    commands = readme_commands()
    assert [c[1] for c in commands] == [
        "login",
        "init",
        "check",
        "workspaces",
        "secrets",
        "deploy",
        "run",
        "runs",
        "logs",
    ]
    anthropic_block, local_block = readme_blocks("yaml")[:2]
    fake_provider.reply_text("GOOD — this desk answers briefly. Seven words in all.")
    seen: dict[str, subprocess.CompletedProcess] = {}
    for argv in commands:
        assert argv[0] == ".venv/bin/foldrun"
        argv = [FOLDRUN] + [a.replace("http://127.0.0.1:8000", live_server.url) for a in argv[1:]]
        done = subprocess.run(
            argv,
            cwd=tmp_path,
            env=env,
            input=STDIN.get(argv[1], ""),
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,
        )  # no terminal: getpass reads stdin
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and "Error:" not in done.stderr, (argv, done.stderr)
        seen[argv[1]] = done
        if argv[1] == "init":
            agents_md = (tmp_path / "my-desk" / "AGENTS.md").read_text()
            assert anthropic_block in agents_md  # the block the README shows is the one init writes
            # The README's next step for a local model server: the block pointed at it (here, the stub).
            local = local_block.replace("http://127.0.0.1:11434/v1", fake_provider.openai_base_url)
            (tmp_path / "my-desk" / "AGENTS.md").write_text(agents_md.replace(anthropic_block, local))
    assert seen["run"].stdout.splitlines()[0].split()[1:4] == ["hello", "completed", "GOOD"]
    assert "run_" in seen["runs"].stdout and "hello" in seen["runs"].stdout
    # The last step prints the run's trace: its step by the agent's name, the model request, its end.
    assert "Step 1 · assistant" in seen["logs"].stdout and "Model request · llama3.1" in seen["logs"].stdout
    assert seen["logs"].stdout.splitlines()[-1].split()[1:4] == ["completed", "·", "GOOD"]
    assert "This desk needs no secrets." in seen["check"].stderr  # a local server needs no key
    request = fake_provider.requests[0]
    assert request.path == "/v1/chat/completions" and request.body["model"] == "llama3.1"
    system = request.body["messages"][0]
    assert system["role"] == "system"
    # init's AGENTS.md says every agent reads it first: its body reaches the agent's system prompt.
    assert "This is the my-desk desk. Every agent here reads this file first" in str(system["content"])
    assert "Write three sentences about this desk" in str(request.body["messages"][1]["content"])


def test_check_lists_the_secrets_a_fresh_desk_needs_and_which_are_missing(cli, tmp_path, foldrun_home):
    assert cli("init", tmp_path / "d", "--name", "d").code == 0
    result = cli("check", tmp_path / "d")
    assert result.code == 0
    assert result.err_lines == [
        "This desk needs 1 secret:",
        "  ANTHROPIC_API_KEY  for the model provider of agent assistant  MISSING from the laptop vault — "
        "foldrun secrets set ANTHROPIC_API_KEY --local",
    ]
    from vault.local import LocalVault

    LocalVault(foldrun_home).set("ANTHROPIC_API_KEY", "sk-x")
    assert cli("check", tmp_path / "d").err_lines[1].endswith("for the model provider of agent assistant  (set)")


def test_check_json_of_the_demo_desk_names_dataforseo_auth_basic_as_missing_from_the_laptop_vault(cli):
    result = cli("check", REPO / "foldrun" / "demo" / "rank-desk", "--json")
    assert result.err == ""
    dataforseo = [n for n in result.json["secrets"] if n["name"] == "DATAFORSEO_AUTH_BASIC"]
    assert dataforseo == [
        {
            "name": "DATAFORSEO_AUTH_BASIC",
            "for": ["tool dataforseo"],
            "vault": "the laptop vault",
            "set": False,
            "fix": "foldrun secrets set DATAFORSEO_AUTH_BASIC --local",
        }
    ]
    assert "DATAFORSEO_AUTH_BASIC" in result.json["missing"]
    assert result.json["missing"] == [n["name"] for n in result.json["secrets"] if not n["set"]]


def test_check_of_the_demo_desk_says_it_needs_dataforseo_auth_basic(cli):
    result = cli("check", REPO / "foldrun" / "demo" / "rank-desk")
    assert (
        "  DATAFORSEO_AUTH_BASIC  for tool dataforseo  MISSING from the laptop vault — "
        "foldrun secrets set DATAFORSEO_AUTH_BASIC --local"
    ) in result.err_lines


@pytest.mark.django_db
def test_the_workspace_page_lists_the_secrets_the_demo_desk_needs_and_which_are_missing(client):
    from django.contrib.auth import get_user_model

    from vault.actions import do_set_secret
    from accounts.models import Workspace

    call_command("seed_demo")
    workspace = Workspace.objects.get(name="rank-desk")
    do_set_secret(workspace.account, workspace, "ANTHROPIC_API_KEY", value="sk-x")
    client.force_login(get_user_model().objects.get(email="demo@foldrun.dev"))
    page = client.get("/w/rank-desk/").content.decode()
    section = page[page.index('id="secrets-needed"') : page.index('id="flows"')]
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"<code>(\w+)</code>.*?<td>.*?</td>\s*<td[^>]*>(.*?)</td>", section, re.S)
    }
    assert "missing" in rows["DATAFORSEO_AUTH_BASIC"]
    assert "foldrun secrets set DATAFORSEO_AUTH_BASIC --to rank-desk" in rows["DATAFORSEO_AUTH_BASIC"]
    assert "set" in rows["ANTHROPIC_API_KEY"] and "missing" not in rows["ANTHROPIC_API_KEY"]
