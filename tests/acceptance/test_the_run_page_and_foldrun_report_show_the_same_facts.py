"""Issue 3, item 10 (audit3): a finished run's page and `foldrun report`
show the same facts — steps with their tries, the trace, cost and tokens,
the verdict, and the artifacts to download."""

from __future__ import annotations

from django.test import Client

from runs.actions import check_start_run
from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, drive, push


def finished_run(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider, tools="[write]"),
            "flows/weekly.md": (
                "---\nname: weekly\n---\n1. [[publisher]] — Publish.\n"
                "   verify: file outputs/receipt.json\n   retry: 1\n"
            ),
        },
    )
    fake_provider.reply_text("GOOD but no receipt", usage=(100, 20))
    fake_provider.reply_tool_use("Write", {"path": "outputs/receipt.json", "content": '{"id": 7}'}, usage=(100, 20))
    fake_provider.reply_text("GOOD — published with a receipt", usage=(100, 20))
    return drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))


def test_the_run_page_shows_tries_trace_tokens_verdict_and_the_artifact_to_download(workspace, alice, fake_provider):
    run = finished_run(workspace, alice, fake_provider)
    client = Client()
    client.force_login(alice)
    html = client.get(f"/w/rank-desk/runs/{run.public_id}").content.decode()
    artifact = run.artifacts.get()
    assert run.status == "completed"
    assert '<span class="badge lg verdict verdict-GOOD" id="run-verdict">GOOD</span>' in html
    assert "300 tokens in, 60 out" in html
    assert '<td>1</td><td><span class="badge status-failed">failed</span></td>' in html
    assert '<td>2</td><td><span class="badge status-completed">completed</span></td>' in html
    assert "verify: file outputs/receipt.json — the step left no such file, or it is empty" in html
    assert '<span class="ev-title">Tool call · Write</span>' in html
    assert '<span class="ev-title">Model request · claude-sonnet-4-5</span>' in html
    link = f"/api/workspaces/rank-desk/runs/{run.public_id}/artifacts/{artifact.public_id}"
    assert f'<a href="{link}">outputs/receipt.json</a>' in html
    assert client.get(link).content == b'{"id": 7}'


def test_foldrun_report_prints_the_same_facts_tries_and_artifacts_too(
    cli, signed_in_as, workspace, alice, fake_provider
):
    run = finished_run(workspace, alice, fake_provider)
    signed_in_as(alice)
    report = cli("report", run.public_id, "--to", "rank-desk")
    assert report.code == 0, report.err
    assert report.lines[0].startswith(f"{run.public_id}  weekly  completed")
    assert "GOOD — published with a receipt" in report.out
    assert (
        "     try 1: failed — verify: file outputs/receipt.json — the step left no such file, or it is empty"
        in report.lines
    )
    assert f"artifact outputs/receipt.json  9 bytes  ({run.artifacts.get().public_id})" in report.lines


def test_the_runs_list_page_filters_by_flow_and_by_verdict(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/writer/agent.md": agent_file("writer", fake_provider),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[writer]] — Write.\n",
            "flows/daily.md": "---\nname: daily\n---\n1. [[writer]] — Write.\n",
        },
    )
    fake_provider.reply_text("GOOD weekly")
    fake_provider.reply_text("BAD daily")
    weekly = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    daily = drive(check_start_run(workspace=workspace, user=alice, flow="daily"))
    client = Client()
    client.force_login(alice)
    by_flow = client.get("/w/rank-desk/runs/?flow=weekly").content.decode()
    by_verdict = client.get("/w/rank-desk/runs/?verdict=BAD").content.decode()
    assert f"/w/rank-desk/runs/{weekly.public_id}" in by_flow and f"/w/rank-desk/runs/{daily.public_id}" not in by_flow
    assert (
        f"/w/rank-desk/runs/{daily.public_id}" in by_verdict
        and f"/w/rank-desk/runs/{weekly.public_id}" not in by_verdict
    )
