"""`foldrun run --local`, `foldrun report --local last`, and the server verbs `run --to`, `runs`, `report`."""

from __future__ import annotations

import pytest

from runs.models import Run
from tests.runs.helpers import agent_file, push


@pytest.fixture
def laptop_desk(tmp_path, fake_provider):
    root = tmp_path / "desk"
    (root / "agents" / "researcher").mkdir(parents=True)
    (root / "agents" / "reporter").mkdir(parents=True)
    (root / "flows").mkdir()
    (root / "agents" / "researcher" / "agent.md").write_text(agent_file("researcher", fake_provider, tools="[read]"))
    (root / "agents" / "reporter" / "agent.md").write_text(agent_file("reporter", fake_provider))
    (root / "flows" / "weekly.md").write_text(
        "---\nname: weekly\n---\n1. [[researcher]] — Find {{topic}}.\n2. [[reporter]] — Report {{steps.1.output}}.\n"
    )
    return root


def test_run_local_prints_each_step_and_the_report_and_report_last_prints_it_again(cli, laptop_desk, fake_provider):
    fake_provider.reply_tool_use(
        "Write", {"path": "memory/seen.md", "content": "---\ntype: Fact\ntitle: s\ndescription: d\n---\nx\n"}
    )
    fake_provider.reply_text("found two pages")
    fake_provider.reply_text("GOOD — two pages\nthe details")
    result = cli("run", "weekly", "--local", "--path", laptop_desk, "--input", "topic=inspections")
    assert result.code == 0, result.err
    assert result.lines[0] == "✓ step 1 (researcher) completed — found two pages"
    assert result.lines[1] == "✓ step 2 (reporter) completed — GOOD — two pages"
    assert result.lines[2].endswith("  weekly  completed  GOOD")
    assert result.lines[3] == "GOOD — two pages"
    assert "Find inspections." in fake_provider.requests[0].body["messages"][0]["content"]
    assert (laptop_desk / "agents" / "researcher" / "memory" / "seen.md").exists()  # its own memory
    again = cli("report", "last", "--local")
    assert again.lines == result.lines[2:]


def test_report_local_last_with_no_run_says_so(cli):
    result = cli("report", "last", "--local")
    assert result.code == 1
    assert "No local run yet; start one with `foldrun run FLOW --local`." in result.err


def test_run_to_starts_a_server_run_and_runs_and_report_show_it(cli, signed_in_as, alice, workspace, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[a]] ! — Publish.\n",
        },
    )
    signed_in_as(alice)
    started = cli("run", "weekly", "--to", "rank-desk", "--test", "--input", "k=v")
    assert started.code == 0, started.err
    run = Run.objects.get()
    assert started.out.strip() == (
        f"Started {run.public_id} (weekly in rank-desk). See it with `foldrun report {run.public_id} --to rank-desk`."
    )
    assert (run.trigger, run.is_test, run.inputs["k"]) == ("cli", True, "v")
    listing = cli("runs", "--to", "rank-desk")
    assert run.public_id in listing.out
    report = cli("report", run.public_id, "--to", "rank-desk")
    assert report.lines[0].startswith(f"{run.public_id}  weekly  ")


def test_run_local_takes_secrets_from_the_laptop_vault(cli, foldrun_home, laptop_desk, fake_provider):
    from vault.local import LocalVault

    LocalVault(foldrun_home).set("LAPTOP_KEY", "laptop-value-1")
    (laptop_desk / "agents" / "researcher" / "agent.md").write_text(
        agent_file("researcher", fake_provider, tools="[code]", extra="secrets: [LAPTOP_KEY]\n")
    )
    fake_provider.reply_tool_use("Bash", {"command": 'test "$LAPTOP_KEY" = laptop-value-1 && echo matches'})
    fake_provider.reply_text("found")
    fake_provider.reply_text("GOOD")
    result = cli("run", "weekly", "--local", "--path", laptop_desk)
    assert result.code == 0, result.err
    assert fake_provider.requests[1].body["messages"][-1]["content"][0]["content"].startswith("matches")


def test_run_local_with_a_gate_and_nobody_to_ask_stops_parked(cli, laptop_desk, fake_provider):
    (laptop_desk / "flows" / "weekly.md").write_text("---\nname: weekly\n---\n1. [[researcher]] ! — Publish.\n")
    result = cli("run", "weekly", "--local", "--path", laptop_desk)
    assert result.code == 1
    assert result.lines[0].endswith("  weekly  awaiting-approval")
    assert result.lines[1] == "step 1 (researcher) waits for a person; with --local nobody is there to decide"
    assert fake_provider.requests == []


def test_report_without_to_and_no_remembered_workspace_says_what_to_do(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FOLDRUN_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("report", "run_x")
    assert result.code == 1
    assert "Name a workspace with --to WS; ./.foldrun/workspace does not say one." in result.err
