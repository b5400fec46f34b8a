"""The engine alone: one step against the loopback model server, no Django."""

from __future__ import annotations

import json


from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from tests.runs.engine_helpers import SECRETS, agent_md, desk


def request(agent="researcher", task="Find it.", **kw) -> StepRequest:
    kw.setdefault("allow_private_urls", True)
    return StepRequest(run_id="run_local", label="step 1", agent=agent, task=task, **kw)


def test_a_step_reads_a_file_and_ends_with_the_models_reply(fake_provider):
    files = {
        "agents/researcher/agent.md": agent_md("researcher", fake_provider),
        "knowledge/prices.md": "---\ntype: Reference\ntitle: Prices\ndescription: d\n---\nwidget costs 7\n",
    }
    fake_provider.reply_tool_use("Read", {"path": "knowledge/prices.md"})
    fake_provider.reply_text("GOOD the widget costs 7\nmore detail")
    host = LocalHost(SECRETS)
    result = run_step(desk(files), request(), host)
    assert result.status == "completed"
    assert result.output == "GOOD the widget costs 7\nmore detail"
    second = fake_provider.requests[1].body
    tool_result = second["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert "widget costs 7" in json.dumps(tool_result["content"])
    assert [k for k, _ in host.events].count("model_request") == 2


def test_paths_outside_the_sandbox_are_refused_before_any_work(fake_provider):
    files = {"agents/researcher/agent.md": agent_md("researcher", fake_provider, tools="[read, write]")}
    fake_provider.reply_tool_uses(
        [
            ("Read", {"path": "../../etc/passwd"}),
            ("Read", {"path": "/etc/passwd"}),
            ("Write", {"path": "knowledge/x.md", "content": "no"}),
        ]
    )
    fake_provider.reply_text("QUIET done")
    host = LocalHost(SECRETS)
    result = run_step(desk(files), request(), host)
    results = fake_provider.requests[1].body["messages"][-1]["content"]
    assert all(r.get("is_error") for r in results)
    assert "'..' is refused" in results[0]["content"]
    assert "absolute paths are refused" in results[1]["content"]
    assert "knowledge/ is given, not learned" in results[2]["content"]
    assert result.writes == {}


def test_memory_is_writable_without_the_write_grant_and_comes_back_as_a_write(fake_provider):
    files = {"agents/researcher/agent.md": agent_md("researcher", fake_provider)}
    fake_provider.reply_tool_uses(
        [
            ("Write", {"path": "memory/fact.md", "content": "learned"}),
            ("Write", {"path": "state/cursor.txt", "content": "3"}),
        ]
    )
    fake_provider.reply_text("GOOD")
    result = run_step(desk(files), request(), LocalHost(SECRETS))
    results = fake_provider.requests[1].body["messages"][-1]["content"]
    assert "is_error" not in results[0]
    assert "not granted `write`" in results[1]["content"]
    assert result.writes == {"agents/researcher/memory/fact.md": "learned"}  # its own memory


def test_a_limit_refuses_the_call_with_the_spec_sentence_and_ends_with_the_limits_line(fake_provider):
    files = {
        "agents/researcher/agent.md": agent_md("researcher", fake_provider, extra="limits: {read: 1}\n"),
        "state/a.txt": "a",
    }
    fake_provider.reply_tool_use("Read", {"path": "state/a.txt"})
    fake_provider.reply_tool_use("Glob", {"pattern": "*"})
    fake_provider.reply_text("GOOD")
    host = LocalHost(SECRETS)
    result = run_step(desk(files), request(), host)
    refused = fake_provider.requests[2].body["messages"][-1]["content"][0]["content"]
    assert (
        refused == "limit reached: read 1 of 1 in this step — work with what you have, or say what more you would need"
    )
    assert result.limits_line == "limits: read 1/1 — 1 call refused"


def test_malformed_tool_arguments_are_an_error_the_model_sees_and_the_loop_goes_on(fake_provider):
    files = {"agents/researcher/agent.md": agent_md("researcher", fake_provider)}
    fake_provider.reply_tool_use("Read", {"file": "x"})
    fake_provider.reply_text("BAD could not read")
    result = run_step(desk(files), request(), LocalHost(SECRETS))
    error = fake_provider.requests[1].body["messages"][-1]["content"][0]
    assert error["is_error"] is True
    assert "the argument `path` is required" in error["content"]
    assert result.status == "completed"


def test_a_provider_refusal_fails_the_step_with_the_refusal_line(fake_provider):
    files = {"agents/researcher/agent.md": agent_md("researcher", fake_provider)}
    fake_provider.reply_status(401)
    host = LocalHost(SECRETS)
    result = run_step(desk(files), request(), host)
    assert result.status == "failed"
    assert result.error
    assert ("refusal", {"line": result.error}) in host.events


def test_an_unknown_agent_fails_the_step_naming_it(fake_provider):
    result = run_step(desk({}), request(agent="ghost"), LocalHost(SECRETS))
    assert result.status == "failed"
    assert result.error == "agent ghost is not in this workspace (agents/ghost/agent.md or agents/ghost.md)"
