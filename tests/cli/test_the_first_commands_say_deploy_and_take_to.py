"""The edges a newcomer meets first: `init` says to deploy (the README's word), `pull` names its workspace with
`--to` like every other command (`--from` still works, unlisted), and a script tool's trailing newline reaches
neither the model nor the terminal."""

from __future__ import annotations

import json

import pytest

from tests.fakes.providers import last_tool_result

STUB_AGENTS = (
    "---\nprovider:\n  name: stub\n  base_url: {url}\n  key: ${{STUB_KEY}}\n  model: stub-model\n"
    "  format: openai\n---\nThe desk.\n"
)


def test_init_ends_with_check_workspaces_create_and_deploy(cli, tmp_path):
    result = cli("init", tmp_path / "my-desk")
    assert result.code == 0
    assert result.lines[-4:] == [
        "Next:",
        f"  foldrun check {tmp_path / 'my-desk'}",
        "  foldrun workspaces create my-desk",
        f"  foldrun deploy {tmp_path / 'my-desk'} --to my-desk",
    ]
    assert "push" not in result.out


def test_pull_lists_to_in_its_help_and_not_from(cli):
    shown = cli("pull", "--help")
    assert shown.code == 0
    assert "--to WS" in shown.out and "--from" not in shown.out


@pytest.mark.parametrize("flag", ["--to", "--from"])
def test_pull_takes_the_workspace_by_to_and_still_by_from(cli, monkeypatch, canned_server, tmp_path, flag):
    server = canned_server(
        {
            "/api/workspaces/rank-desk/files": (200, "application/json", json.dumps([{"path": "AGENTS.md"}]).encode()),
            "/api/workspaces/rank-desk/files/AGENTS.md": (
                200,
                "application/json",
                b'{"content": "The desk.", "encoding": "utf-8"}',
            ),
        }
    )
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("pull", flag, "rank-desk", tmp_path / "copy")
    assert (result.code, result.out) == (0, f"Pulled 1 file from rank-desk into {tmp_path / 'copy'}.\n")
    assert (tmp_path / "copy" / "AGENTS.md").read_text() == "The desk."


def test_pull_with_both_to_and_library_is_refused_by_the_parser(cli, tmp_path):
    both = cli("pull", "--to", "rank-desk", "--library", tmp_path)
    assert both.code == 2
    assert "argument --library: not allowed with argument --to" in both.err


@pytest.fixture
def stub_desk(cli, tmp_path, fake_provider, foldrun_home):
    from vault.local import LocalVault

    root = tmp_path / "desk"
    assert cli("init", root, "--name", "demo").code == 0
    (root / "AGENTS.md").write_text(STUB_AGENTS.format(url=fake_provider.openai_base_url))
    LocalVault(foldrun_home).set("STUB_KEY", "stub-key-1")
    return root


def test_a_script_tools_printed_line_reaches_the_model_without_its_newline(cli, stub_desk, fake_provider):
    fake_provider.reply_tool_use("word-count", {"text": "three short words"})
    fake_provider.reply_text("GOOD — three words.")
    result = cli("run", "hello", "--local", "--path", stub_desk, "--input", "topic=x")
    assert result.code == 0, result.out + result.err
    assert last_tool_result(fake_provider.requests[1].body) == "3"


def test_tool_test_prints_a_script_tools_answer_as_one_line(cli, stub_desk):
    result = cli("tool", "test", "word-count", "--local", "--path", stub_desk, "--arg", "text=three short words")
    assert result.code == 0, result.err
    assert result.out == "3\n"
