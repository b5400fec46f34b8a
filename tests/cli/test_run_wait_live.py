"""`foldrun run --wait` on a gated flow, on a real worker: it stops where the run waits and says how to decide."""

from __future__ import annotations

import pytest

from runs.models import Run
from tests.runs.helpers import agent_file, push

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.e2e]


def test_run_wait_on_a_gated_flow_says_where_it_waits_and_how_to_decide(
    cli, signed_in_as, alice, workspace, fake_provider, celery_worker_process, live_server, tmp_path, monkeypatch
):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider),
            "flows/gated.md": "---\nname: gated\n---\n1. [[a]] ! — Publish.\n",
        },
    )
    (tmp_path / ".foldrun").mkdir()
    (tmp_path / ".foldrun" / "workspace").write_text("rank-desk\n")
    monkeypatch.chdir(tmp_path)  # the workspace comes from the desk folder
    signed_in_as(alice)
    result = cli("run", "gated", "--wait")
    assert result.code == 1
    run = Run.objects.get()
    assert result.lines[0].startswith(f"{run.public_id}  gated  awaiting-approval")
    assert result.lines[-5:] == [
        "Step 1 waits for approval.",
        f"  approve:  foldrun approve {run.public_id} 1 --to rank-desk",
        f"  reject:   foldrun reject {run.public_id} 1 --to rank-desk",
        f"  or decide on the dashboard: {live_server.url}/w/rank-desk/runs/{run.public_id}",
        f"  stop it:  foldrun cancel {run.public_id} --to rank-desk",
    ]
    fake_provider.reply_text("GOOD — published")
    assert cli("approve", run.public_id, "1").code == 0
