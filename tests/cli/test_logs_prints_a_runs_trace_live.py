"""Issue 35 item 4: `foldrun logs RUN` prints the run's trace (steps, tool calls, sentences) as the Run page
shows it; `--follow` keeps printing until the run ends and exits by its result; `log` says it lists revisions."""

from __future__ import annotations

import pytest

from runs.actions import check_start_run
from tests.runs.helpers import agent_file, drive, push

pytestmark = pytest.mark.django_db(transaction=True)

FLOWS = {
    "flows/hello.md": "---\nname: hello\n---\n1. [[assistant]] — Read the about page and say hello.\n",
    "flows/gated.md": "---\nname: gated\n---\n1. [[assistant]] ! — Publish.\n",
}


@pytest.fixture
def desk(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/assistant/agent.md": agent_file("assistant", fake_provider),
            "knowledge/about.md": "---\ntype: Reference\ntitle: About\ndescription: d\n---\nWe sell tea.\n",
            **FLOWS,
        },
    )
    return workspace


def test_logs_prints_each_step_by_its_agent_with_its_tool_calls_and_the_runs_end(
    cli, desk, alice, signed_in_as, fake_provider
):
    fake_provider.reply_tool_use("Read", {"path": "knowledge/about.md"})
    fake_provider.reply_text("GOOD — said hello to the tea shop")
    run = drive(check_start_run(workspace=desk, user=alice, flow="hello"))
    assert run.status == "completed"
    signed_in_as(alice)
    result = cli("logs", run.public_id, "--to", "rank-desk")
    assert result.code == 0, result.err
    text = result.out
    assert result.lines[0].startswith(f"{run.public_id}  hello  in rank-desk")
    assert "Step 1 · assistant — Read the about page and say hello." in result.lines
    assert "[[assistant]]" not in text
    assert "Model request · claude-sonnet-4-5" in text
    assert "Tool call · Read" in text
    assert '"path": "knowledge/about.md"' in text
    assert "Result · Read  · ok" in text
    assert "We sell tea." in text
    assert any(line.startswith("  → completed · $") for line in result.lines)
    assert result.lines[-1].startswith(f"{run.public_id} completed · GOOD")
    assert result.lines[-1].endswith("— said hello to the tea shop")


def test_logs_of_a_parked_run_says_how_to_decide(cli, desk, alice, signed_in_as):
    run = drive(check_start_run(workspace=desk, user=alice, flow="gated"))
    assert run.status == "awaiting-approval"
    signed_in_as(alice)
    now = cli("logs", "last", "--to", "rank-desk")  # not following: what is there now; exit 0, it printed it
    assert now.code == 0, now.err
    assert f"  approve:  foldrun approve {run.public_id} 1 --to rank-desk" in now.lines


def test_following_a_failed_run_exits_1_and_says_its_error_once(cli, desk, alice, signed_in_as, fake_provider):
    fake_provider.reply_status(
        400, body={"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
    )
    run = drive(check_start_run(workspace=desk, user=alice, flow="hello"))
    assert run.status == "failed"
    signed_in_as(alice)
    followed = cli("logs", run.public_id, "--to", "rank-desk", "--follow")
    assert followed.code == 1
    assert followed.lines[-1].startswith(f"{run.public_id} failed") or followed.lines[-2].startswith(
        f"{run.public_id} failed"
    )
    assert followed.out.count("prompt is too long") == 1, followed.out


def test_logs_under_json_is_the_steps_and_the_trace(cli, desk, alice, signed_in_as, fake_provider):
    fake_provider.reply_text("GOOD — hello")
    run = drive(check_start_run(workspace=desk, user=alice, flow="hello"))
    signed_in_as(alice)
    result = cli("logs", run.public_id, "--to", "rank-desk", "--json")
    assert result.code == 0
    assert (result.json["id"], result.json["status"], result.json["verdict"]) == (run.public_id, "completed", "GOOD")
    assert "model_request" in [e["kind"] for e in result.json["trace"]]


def test_log_and_logs_say_which_is_which_in_help(cli):
    listed = " ".join(cli("--help").out.split())  # argparse wraps its lines to the terminal
    assert "a run's trace: its steps, tool calls and sentences (`log` lists revisions)" in listed
    assert "a workspace's revisions, or one file's (a run's trace: `foldrun logs RUN`)" in listed
