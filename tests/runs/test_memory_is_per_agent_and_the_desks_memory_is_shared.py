"""Issue 32, item 2: knowledge-and-memory.md — "Memory is per agent by default; the workspace's `memory/` is
shared by the desk". In a step, `memory/` is the agent's own (kept as agents/<name>/memory/ in the workspace)
and `desk/memory/` is the workspace's `memory/`, which every agent of the desk reads and writes. Two agents
writing memory/phone-format.md in one flow each keep their own and find their own the next run; what one
writes to desk/memory/ another reads the next run; a fact pushed into the workspace's memory/ is read at
desk/memory/. On a real worker. (A run's steps read the revision it started from: memory is for the runs after.)"""

from __future__ import annotations

import pytest

from library.services import files_at
from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.runs.helpers import agent_file, push

FACT = "---\ntype: Fact\ntitle: Phone format\ndescription: how {who} writes phones\n---\n{body}\n"
FLOW = "---\nname: phones\n---\n1. [[alpha]] — Learn the format.\n2. [[beta]] — Learn the format.\n"


def finished(run) -> Run:
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=120)
    assert done.status == "completed", done.error
    return done


def results(run: Run) -> list[str]:
    return [e.data["content"] for e in TraceEvent.objects.filter(run=run, kind="tool_result").order_by("id")]


@pytest.mark.e2e
def test_two_agents_keep_their_own_memory_and_share_the_desks(
    celery_worker_process, workspace, account, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/alpha/agent.md": agent_file("alpha", fake_provider, tools="[read]"),
            "agents/beta/agent.md": agent_file("beta", fake_provider, tools="[read]"),
            "memory/house-style.md": FACT.format(who="the desk", body="Dates are ISO."),
            "flows/phones.md": FLOW,
        },
    )
    fake_provider.reply_tool_uses(
        [
            ("Write", {"path": "memory/phone-format.md", "content": FACT.format(who="alpha", body="+61 4xx xxx xxx")}),
            ("Read", {"path": "desk/memory/house-style.md"}),
        ]
    )
    fake_provider.reply_text("alpha learned")
    fake_provider.reply_tool_uses(
        [
            ("Write", {"path": "memory/phone-format.md", "content": FACT.format(who="beta", body="04xx xxx xxx")}),
            ("Write", {"path": "desk/memory/team.md", "content": FACT.format(who="the team", body="Shared by beta.")}),
        ]
    )
    fake_provider.reply_text("GOOD beta learned")
    first = finished(check_start_run(workspace=workspace, user=alice, flow="phones"))

    files = files_at(account, workspace)
    assert "+61 4xx xxx xxx" in files["agents/alpha/memory/phone-format.md"].content
    assert "04xx xxx xxx" in files["agents/beta/memory/phone-format.md"].content
    assert "memory/phone-format.md" not in files  # nothing landed in the desk's by default
    assert "Shared by beta." in files["memory/team.md"].content
    assert "Dates are ISO." in files["memory/house-style.md"].content
    assert "Dates are ISO." in results(first)[1]  # the desk's memory, pushed before, read by alpha
    said = list(TraceEvent.objects.filter(run=first, kind="log").values_list("data__message", flat=True))
    assert (
        "memory/ is this agent's own (agents/alpha/memory/, empty so far); the desk's memory/ (1 file, kept "
        "where it was) is shared at desk/memory/"
    ) in said

    # The next run: each finds its own phone format, and alpha reads what beta left for the desk.
    fake_provider.reply_tool_uses(
        [("Read", {"path": "memory/phone-format.md"}), ("Read", {"path": "desk/memory/team.md"})]
    )
    fake_provider.reply_text("alpha recalled")
    fake_provider.reply_tool_use("Read", {"path": "memory/phone-format.md"})
    fake_provider.reply_text("GOOD beta recalled")
    said = results(finished(check_start_run(workspace=workspace, user=alice, flow="phones")))
    assert "+61 4xx xxx xxx" in said[0] and "beta" not in said[0]  # alpha's own
    assert "Shared by beta." in said[1]  # the desk's, written by beta
    assert "04xx xxx xxx" in said[2] and "+61" not in said[2]  # beta's own


def test_the_prompt_tells_the_agent_where_its_own_and_the_desks_memory_are(fake_provider):
    from foldrun.engine import StepRequest, run_step
    from foldrun.engine.local import LocalHost
    from tests.runs.engine_helpers import SECRETS, agent_md, desk

    fake_provider.reply_text("ok")
    run_step(
        desk({"agents/alpha/agent.md": agent_md("alpha", fake_provider)}),
        StepRequest(run_id="run_m", label="1", agent="alpha", task="Hi."),
        LocalHost(SECRETS),
    )
    system = str(fake_provider.requests[0].body["system"])
    assert "memory/ is yours to write one fact per file (your own: no other agent's memory/ is there)" in system
    assert "desk/memory/ is the desk's memory, shared by every agent" in system
