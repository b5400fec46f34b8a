"""Error lines that give the fix, probe --local reading the desk's AGENTS.md, --to always a workspace,
and shell completion built from the parser."""

from __future__ import annotations

import argparse
import shutil
import subprocess

import pytest

from foldrun.cli.main import build_parser

STUB_DESK_AGENTS = (
    "---\nprovider:\n  name: stub\n  base_url: {url}\n  key: ${{STUB_KEY}}\n  model: stub-model\n"
    "  format: openai\n---\nThe desk.\n"
)


@pytest.fixture
def stub_desk(cli, tmp_path, fake_provider):
    root = tmp_path / "desk"
    assert cli("init", root, "--name", "demo").code == 0
    (root / "AGENTS.md").write_text(STUB_DESK_AGENTS.format(url=fake_provider.openai_base_url))
    return root


def test_a_local_run_without_the_provider_key_says_the_command_that_sets_it(cli, stub_desk, fake_provider):
    result = cli("run", "hello", "--local", "--path", stub_desk, "--input", "topic=x")
    assert result.code == 1
    fix = "the provider key STUB_KEY is not in the laptop vault — foldrun secrets set STUB_KEY --local"
    assert result.lines[0] == f"✗ step 1 (assistant) failed — {fix}"
    assert f"step 1 (assistant) failed: {fix}" in result.lines
    assert "MissingSecret" not in result.out + result.err
    assert fake_provider.requests == []


def test_probe_local_reads_the_desks_agents_md(cli, stub_desk, fake_provider, foldrun_home, monkeypatch):
    monkeypatch.chdir(stub_desk)
    missing = cli("probe", "stub-model", "--local")
    assert (missing.code, missing.err) == (
        1,
        "the provider key STUB_KEY is not in the laptop vault — foldrun secrets set STUB_KEY --local\n",
    )
    from vault.local import LocalVault

    LocalVault(foldrun_home).set("STUB_KEY", "stub-key-1")
    fake_provider.reply_tool_use("get_code", {})
    fake_provider.reply_echo_tool_result()
    done = cli("probe", "stub-model", "--local")
    assert done.code == 0, done.err
    assert fake_provider.requests[0].path == "/v1/chat/completions"
    assert fake_provider.requests[0].headers["authorization"] == "Bearer stub-key-1"
    assert fake_provider.requests[0].body["model"] == "stub-model"


def _options(parser: argparse.ArgumentParser, path: str = "foldrun"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _options(child, f"{path} {name}")
        elif action.option_strings:
            yield path, action


def test_to_is_always_a_workspace():
    tos = [(path, action.metavar) for path, action in _options(build_parser()) if "--to" in action.option_strings]
    assert len(tos) >= 20
    assert {metavar for _, metavar in tos} == {"WS"}, tos


def _complete(script: str, *words: str) -> list[str]:
    line = " ".join(f"'{w}'" for w in words)
    program = (
        f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _foldrun; printf '%s\\n' \"${{COMPREPLY[@]}}\"\n"
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completion_offers_commands_subcommands_and_flags(cli):
    result = cli("completion", "bash")
    assert result.code == 0
    assert result.out.startswith("# foldrun completion for bash")
    assert set(_complete(result.out, "foldrun", "ap")) == {"approve"}
    assert {"answer", "account", "approve"} <= set(_complete(result.out, "foldrun", "a"))
    assert _complete(result.out, "foldrun", "workspaces", "de") == ["delete"]
    assert _complete(result.out, "foldrun", "workspaces", "delete", "--y") == ["--yes"]
    assert _complete(result.out, "foldrun", "run", "--json", "--wa") == ["--wait"]


def test_zsh_completion_is_the_same_table_through_bashcompinit(cli):
    bash, zsh = cli("completion", "bash").out, cli("completion", "zsh").out
    assert zsh.startswith("# foldrun completion for zsh")
    assert "bashcompinit" in zsh
    assert bash.split("\n", 1)[1] in zsh
    if shutil.which("zsh"):
        assert subprocess.run(["zsh", "-n", "-c", zsh], capture_output=True, timeout=20).returncode == 0


def test_an_unknown_shell_is_a_usage_sentence(cli):
    result = cli("completion", "fish")
    assert result.code == 2
    assert "argument SHELL: invalid choice: 'fish'" in result.err and "Traceback" not in result.err
