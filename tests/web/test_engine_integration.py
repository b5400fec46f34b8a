"""The web tool inside a real engine step (the engine takes it as foldrun/web/__init__.py describes).

Skipped on an engine without the call-dependent limit keys; it holds the contract between the two.
"""

from __future__ import annotations

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from foldrun.engine.tools.base import Tool
from tests.fakes.providers import FakeProvider
from tests.runs.engine_helpers import SECRETS, agent_md, desk

pytestmark = pytest.mark.skipif(
    not hasattr(Tool, "call_limit_keys"),
    reason="the engine does not take the web tool yet (foldrun/web/__init__.py says how)",
)


class TracingHost(LocalHost):
    def __init__(self, secrets: dict[str, str]) -> None:
        super().__init__(secrets)
        self.web_events: list[dict] = []

    def trace(self, kind: str, payload: dict) -> None:
        if kind == "web":
            self.web_events.append(payload)
        return super().trace(kind, payload)


def test_a_step_granting_web_fetches_twenty_urls_as_one_count_toward_web_fetch(site):
    with FakeProvider() as fake:
        files = {"agents/a/agent.md": agent_md("a", fake, tools="[web]", extra="limits: {web.fetch: 1}\n")}
        fake.reply_tool_use("web", {"action": "fetch", "urls": [f"{site.url}/json"] * 20})
        fake.reply_tool_use("web", {"action": "fetch", "url": f"{site.url}/article"})
        fake.reply_text("GOOD")
        host = TracingHost(SECRETS)
        result = run_step(
            desk(files), StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True), host
        )
        assert result.status == "completed"
        assert result.limits_line == "limits: web.fetch 1/1 — 1 call refused"
        assert [t["name"] for t in fake.requests[0].body["tools"]].count("web") == 1
        assert fake.requests[1].body["messages"][-1]["content"][0]["content"].count('{"items": [1, 2, 3]}') == 20
        assert len(host.web_events) == 20


def test_a_step_browses_and_its_browser_is_closed_when_the_step_ends(site):
    from foldrun.web.browse import thread_pool

    with FakeProvider() as fake:
        files = {"agents/a/agent.md": agent_md("a", fake, tools="[web]")}
        fake.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/app", "mode": "text"})
        fake.reply_text("GOOD")
        host = TracingHost(SECRETS)
        result = run_step(
            desk(files), StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True), host
        )
        assert result.status == "completed"
        reply = fake.requests[1].body["messages"][-1]["content"][0]
        assert reply["content"].startswith("Rendered listings\nHarbour flat")
        assert host.web_events[0]["event"] == "browse"
        assert thread_pool().users == 0
        assert thread_pool()._browser is None


def test_a_model_providers_own_search_rides_in_its_request_and_counts_as_web_search():
    from tests.fakes.providers import Reply

    with FakeProvider() as fake:
        files = {
            "agents/a/agent.md": agent_md(
                "a", fake, tools="[web]", extra="web: {search: anthropic}\nlimits: {web.search: 2}\n"
            )
        }
        fake.reply(
            Reply(
                blocks=[
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_01",
                        "name": "web_search",
                        "input": {"query": "notice period NSW"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_01",
                        "content": [
                            {
                                "type": "web_search_result",
                                "url": "https://example.com/notice",
                                "title": "Notice",
                                "encrypted_content": "EqgfCio",
                                "page_age": "2026-11-01",
                            }
                        ],
                    },
                    {"type": "text", "text": "GOOD seven days"},
                ]
            )
        )
        host = TracingHost(SECRETS)
        result = run_step(
            desk(files), StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True), host
        )
        assert result.status == "completed", result.error
        assert result.output == "GOOD seven days"
        tools = fake.requests[0].body["tools"]
        assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 2} in tools
        assert result.limits_line == "limits: web.search 1/2"
        assert host.web_events == [
            {"event": "search", "provider": "model", "server_tool": "web_search", "query": "notice period NSW"}
        ]


def test_zais_own_search_is_the_same_server_tool_on_its_anthropic_shaped_endpoint():
    from tests.fakes.providers import Reply

    with FakeProvider() as fake:
        agent = (
            f"---\nname: a\ndescription: test agent\ntools: [web]\n"
            f"provider: {{name: zai, base_url: '{fake.base_url}', key: '${{ZAI_API_KEY}}', model: glm-4.6}}\n"
            f"web: {{search: zai}}\nlimits: {{web.search: 3}}\n---\nYou research things.\n"
        )
        fake.reply(
            Reply(
                blocks=[
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_01",
                        "name": "web_search",
                        "input": {"query": "租房 通知"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_01",
                        "content": [
                            {"type": "web_search_result", "url": "https://example.cn/notice", "title": "Notice"}
                        ],
                    },
                    {"type": "text", "text": "GOOD"},
                ]
            )
        )
        host = TracingHost({"ZAI_API_KEY": "zai-test-key-0123456789"})
        result = run_step(
            desk({"agents/a/agent.md": agent}),
            StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True),
            host,
        )
        assert result.status == "completed", result.error
        assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 3} in fake.requests[0].body["tools"]
        assert result.limits_line == "limits: web.search 1/3"
        assert host.web_events == [
            {"event": "search", "provider": "model", "server_tool": "web_search", "query": "租房 通知"}
        ]


def test_the_models_own_search_called_through_web_names_the_tool_that_answers_it():
    with FakeProvider() as fake:
        files = {"agents/a/agent.md": agent_md("a", fake, tools="[web]", extra="web: {search: anthropic}\n")}
        fake.reply_tool_use("web", {"action": "search", "query": "x"})
        fake.reply_text("GOOD")
        run_step(
            desk(files),
            StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True),
            TracingHost(SECRETS),
        )
        reply = fake.requests[1].body["messages"][-1]["content"][0]
        assert reply["content"] == (
            "web.search: this agent's search is anthropic's own, on its servers — use "
            "web_search, which anthropic runs inside its own tool loop; web action=search "
            "does not reach it"
        )


def _responses_sse(output: list[dict]) -> bytes:
    """A Responses stream whose terminal event carries the whole response (OpenAI's streaming reference)."""
    import json

    final = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5",
        "output": output,
        "usage": {"input_tokens": 20, "output_tokens": 9},
        "incomplete_details": None,
        "error": None,
    }
    events = [
        (
            "response.created",
            {"type": "response.created", "response": {**final, "status": "in_progress", "output": []}},
        ),
        ("response.completed", {"type": "response.completed", "response": final}),
    ]
    return "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in events).encode()


def test_openais_own_search_rides_in_a_responses_request_and_counts_as_web_search():
    with FakeProvider() as fake:
        agent = (
            f"---\nname: a\ndescription: test agent\ntools: [web]\n"
            f"provider: {{name: openai, base_url: '{fake.openai_base_url}', format: responses, model: gpt-5}}\n"
            f"web: {{search: openai}}\nlimits: {{web.search: 3}}\n---\nYou research things.\n"
        )
        fake.reply_raw(
            _responses_sse(
                [
                    {
                        "type": "web_search_call",
                        "id": "ws_1",
                        "status": "completed",
                        "action": {"type": "search", "query": "notice period NSW"},
                    },
                    {
                        "type": "message",
                        "id": "msg_1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "GOOD seven days", "annotations": []}],
                    },
                ]
            )
        )
        host = TracingHost(SECRETS)
        result = run_step(
            desk({"agents/a/agent.md": agent}),
            StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True),
            host,
        )
        assert result.status == "completed", result.error
        assert result.output == "GOOD seven days"
        assert {"type": "web_search"} in fake.requests[0].body["tools"]
        assert result.limits_line == "limits: web.search 1/3"
        assert host.web_events[0]["query"] == "notice period NSW"


def test_moonshots_own_search_is_its_builtin_whose_arguments_the_loop_hands_back():
    import json

    with FakeProvider() as fake:
        agent = (
            f"---\nname: a\ndescription: test agent\ntools: [web]\n"
            f"provider: {{name: kimi, base_url: '{fake.openai_base_url}', format: openai, model: kimi-k2}}\n"
            f"web: {{search: kimi}}\nlimits: {{web.search: 1}}\n---\nYou research things.\n"
        )
        fake.reply_tool_use("$web_search", {"search_result": {"search_id": "s-1"}, "usage": {"total_tokens": 900}})
        fake.reply_text("GOOD seven days")
        host = TracingHost(SECRETS)
        result = run_step(
            desk({"agents/a/agent.md": agent}),
            StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True),
            host,
        )
        assert result.status == "completed", result.error
        assert {"type": "builtin_function", "function": {"name": "$web_search"}} in fake.requests[0].body["tools"]
        handed_back = fake.requests[1].body["messages"][-1]
        assert (handed_back["role"], json.loads(handed_back["content"])) == (
            "tool",
            {"search_result": {"search_id": "s-1"}, "usage": {"total_tokens": 900}},
        )
        assert result.limits_line == "limits: web.search 1/1"


def test_openrouters_own_search_is_its_web_plugin_counted_once_a_request():
    with FakeProvider() as fake:
        agent = (
            f"---\nname: a\ndescription: test agent\ntools: [web]\n"
            f"provider: {{name: openrouter, base_url: '{fake.base_url}', model: anthropic/claude-sonnet-4.5}}\n"
            f"web: {{search: openrouter}}\nlimits: {{web.search: 1}}\n---\nYou research things.\n"
        )
        fake.reply_tool_use("web", {"action": "fetch", "url": "https://example.invalid/"})
        fake.reply_text("GOOD")
        result = run_step(
            desk({"agents/a/agent.md": agent}),
            StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True),
            TracingHost(SECRETS),
        )
        assert result.status == "completed", result.error
        assert fake.requests[0].body["plugins"] == [{"id": "web"}]
        assert "plugins" not in fake.requests[1].body  # web.search 1 is spent: the second request goes without
        assert result.limits_line == "limits: web.search 1/1"


def test_anthropics_own_fetch_rides_as_web_fetch_and_counts_as_web_fetch():
    from tests.fakes.providers import Reply

    with FakeProvider() as fake:
        files = {"agents/a/agent.md": agent_md("a", fake, tools="[web]", extra="web: {fetch: anthropic}\n")}
        fake.reply(
            Reply(
                blocks=[
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_02",
                        "name": "web_fetch",
                        "input": {"url": "https://example.com/"},
                    },
                    {"type": "text", "text": "GOOD read it"},
                ]
            )
        )
        result = run_step(
            desk(files),
            StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True),
            TracingHost(SECRETS),
        )
        assert result.status == "completed", result.error
        assert {"type": "web_fetch_20250910", "name": "web_fetch"} in fake.requests[0].body["tools"]
