"""search_files (BM25, refreshed by one stat pass after a call that may write), recall_runs/read_run, and limits nearest-wins per key."""

from __future__ import annotations

import time

from foldrun.engine import StepRequest, run_step
from foldrun.engine.limits import LimitCounter
from foldrun.engine.local import LocalHost
from foldrun.engine.search import SearchIndex
from runs.actions import check_start_run
from runs.models import Run
from tests.runs.engine_helpers import SECRETS, agent_md, desk
from tests.runs.helpers import agent_file, drive, push


def test_search_ranks_by_bm25_across_knowledge_memory_state_and_the_library(tmp_path):
    for rel, text in {
        "knowledge/a.md": "geelong inspection prices and geelong suburbs",
        "memory/b.md": "a note about melbourne",
        "state/c.md": "geelong once",
        "library/knowledge/d.md": "geelong geelong geelong inspection",
        "agents/other/knowledge/e.md": "geelong, but another agent's own",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    hits = SearchIndex(tmp_path, "me").query("geelong inspection")
    assert [h["path"] for h in hits] == ["library/knowledge/d.md", "knowledge/a.md", "state/c.md"]


def test_search_rereads_only_the_file_that_changed(tmp_path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "one.md").write_text("alpha")
    (tmp_path / "state" / "two.md").write_text("beta")
    index = SearchIndex(tmp_path, "me")
    assert index.query("gamma") == []
    assert index.reads == 2
    time.sleep(0.01)
    (tmp_path / "state" / "two.md").write_text("gamma now")
    assert index.query("gamma") == []  # no tool call since: the index is as it was built
    index.touch()  # what the engine does after a call that may write
    assert [h["path"] for h in index.query("gamma")] == ["state/two.md"]
    assert index.reads == 3
    assert index.passes == 2


def test_a_hit_is_shown_around_its_first_whole_word_match_not_a_word_that_only_contains_it(tmp_path):
    (tmp_path / "state").mkdir()
    words = [f"w{n}" for n in range(30)]
    (tmp_path / "state" / "ascii.md").write_text(
        " ".join(words[:10] + ["parent"] + words[10:20] + ["(Rent),"] + words[20:])
    )
    (tmp_path / "state" / "accents.md").write_text("café " * 9 + "a bond: Bond. " + "déjà " * 20)
    hits = {h["path"]: h["snippet"] for h in SearchIndex(tmp_path, "me").query("rent bond")}
    assert hits["state/ascii.md"] == "…w16 w17 w18 w19 [(Rent),] w20 w21 w22 w23 w24 w25 w26…"
    assert hits["state/accents.md"] == "…café café café a [bond:] [Bond.] déjà déjà déjà déjà déjà déjà…"


def test_the_search_tool_finds_a_file_the_agent_wrote_a_moment_ago(fake_provider):
    files = {"agents/a/agent.md": agent_md("a", fake_provider, tools="[search, write]")}
    fake_provider.reply_tool_use("Write", {"path": "state/cursor.md", "content": "cursor at zebra-42"})
    fake_provider.reply_tool_use("search_files", {"query": "zebra"})
    fake_provider.reply_text("GOOD")
    run_step(desk(files), StepRequest(run_id="r", label="1", agent="a", task="t"), LocalHost(SECRETS))
    assert fake_provider.requests[2].body["messages"][-1]["content"][0]["content"].startswith("state/cursor.md")


def test_history_recalls_earlier_runs_of_the_workspace(workspace, alice, fake_provider):
    Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="weekly",
        status="completed",
        verdict="BAD",
        headline="BAD — 3 targets fell out",
    )
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider, tools="[history]"),
            "flows/f.md": "---\nname: f\n---\n1. [[a]] — What happened last week?\n",
        },
    )
    fake_provider.reply_tool_use("recall_runs", {"limit": 5})
    fake_provider.reply_text("QUIET same as last week")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="f"))
    assert run.status == "completed"
    recalled = fake_provider.requests[1].body["messages"][-1]["content"][0]["content"]
    assert "BAD — 3 targets fell out" in recalled


def test_limits_nearest_wins_per_key_from_account_to_workspace_to_agent_to_step(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "AGENTS.md": "---\nlimits: {read: 5, calls: 9}\n---\n",
            "agents/a/agent.md": agent_file("a", fake_provider, extra="limits: {read: 3}\n"),
            "flows/f.md": "---\nname: f\n---\n1. [[a]] — Go.\n   limits: {read: 1}\n",
        },
    )
    from library.actions.writes import FileWrite, do_write_files

    do_write_files(
        account=workspace.account,
        workspace=None,
        kind="push",
        writes=[FileWrite("AGENTS.md", "---\nlimits: {read: 7, calls: 20, code: 4}\n---\n")],
    )
    fake_provider.reply_text("QUIET")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="f"))
    assert run.steps.get().limits_line == "limits: read 0/1, calls 0/9, code 0/4"


def test_a_refused_call_counts_toward_nothing():
    counter = LimitCounter({"crm": 1, "calls": 2})
    assert counter.check(["crm"]) is None
    assert counter.check(["crm"]) == (
        "limit reached: crm 1 of 1 in this step — work with what you have, or say what more you would need"
    )
    assert counter.check(["other"]) is None
    assert counter.closing_line() == "limits: crm 1/1, calls 2/2 — 1 call refused"
