"""Issue 34, item 5: prompt caching. On the Anthropic wire the system prompt, the knowledge preamble, the tool
list and the growing conversation carry `cache_control` breakpoints (four at most); Chat Completions' and
Responses' automatic caching is read back; a provider that refuses `cache_control` is asked again without it,
once, and the trace says so."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest

from foldrun.providers import caching
from foldrun.providers.client import ModelClient, ProviderError, Supply
from foldrun.trace_view import view

EPHEMERAL = {"type": "ephemeral"}
SYSTEM = [{"type": "text", "text": "You rank things."}, {"type": "text", "text": "You work in a workspace folder."}]
TOOLS = [
    {"name": "lookup", "description": "Look it up.", "input_schema": {"type": "object"}},
    {"name": "write", "description": "Write it.", "input_schema": {"type": "object"}},
]


def supply(fake, fmt: str = "anthropic") -> Supply:
    base = fake.base_url if fmt == "anthropic" else fake.openai_base_url
    header = "x-api-key" if fmt == "anthropic" else "bearer"
    return Supply(name=None, format=fmt, base_url=base, model="m-1", key="sk-planted-123", key_header=header)


def breakpoints(body: dict) -> list[str]:
    """Where the request's cache_control marks are, in prefix order."""
    found = [f"tools[{i}]" for i, t in enumerate(body.get("tools") or []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += [f"system[{i}]" for i, b in enumerate(system) if "cache_control" in b]
    for i, message in enumerate(body.get("messages") or []):
        content = message["content"]
        if isinstance(content, list):
            found += [f"messages[{i}][{j}]" for j, b in enumerate(content) if "cache_control" in b]
    return found


def loop(turns: int) -> list[dict]:
    """A tool loop's conversation after `turns` tool calls: the task, then call and result, turn by turn."""
    messages: list[dict] = [{"role": "user", "content": "Rank the desk."}]
    for n in range(turns):
        messages.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "lookup", "input": {}}]}
        )
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x"}]})
    return messages


def test_the_first_request_marks_the_tools_the_system_prompt_and_the_preamble_and_leaves_the_task_as_it_is():
    body = caching.mark({"tools": TOOLS, "system": SYSTEM, "messages": loop(0)})
    assert breakpoints(body) == ["tools[1]", "system[0]", "system[1]"]
    assert body["messages"] == loop(0)


def test_the_second_request_marks_its_first_tool_result_too():
    body = caching.mark({"tools": TOOLS, "system": SYSTEM, "messages": loop(1)})
    assert breakpoints(body) == ["tools[1]", "system[0]", "system[1]", "messages[2][0]"]


def test_a_growing_loop_marks_the_last_turn_and_the_one_before_it_and_never_more_than_four():
    for turns in range(2, 8):
        body = caching.mark({"tools": TOOLS, "system": SYSTEM, "messages": loop(turns)})
        last = 2 * turns
        assert breakpoints(body) == ["system[0]", "system[1]", f"messages[{last - 2}][0]", f"messages[{last}][0]"]


def test_marking_copies_and_leaves_the_callers_conversation_as_it_was():
    messages, system, tools = loop(3), copy.deepcopy(SYSTEM), copy.deepcopy(TOOLS)
    before = copy.deepcopy((messages, system, tools))
    caching.mark({"tools": tools, "system": system, "messages": messages})
    assert (messages, system, tools) == before


def test_an_empty_text_block_and_a_thinking_block_are_never_marked():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": ""}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}]},
    ]
    body = caching.mark({"system": "Be brief.", "messages": messages})
    assert breakpoints(body) == ["system[0]"]


def test_the_client_sends_the_breakpoints_on_the_anthropic_wire(fake_provider):
    fake_provider.reply_text("ok")
    ModelClient(supply(fake_provider)).create(SYSTEM, loop(2), TOOLS, 100)
    assert breakpoints(fake_provider.last.body) == ["system[0]", "system[1]", "messages[2][0]", "messages[4][0]"]


def test_chat_completions_and_responses_send_no_cache_control_and_read_the_cached_tokens_back(fake_provider):
    for fmt in ("openai", "responses"):
        fake_provider.reply_text("ok", usage=(300, 9), cache_read=1_200)
        reply = ModelClient(supply(fake_provider, fmt)).create(SYSTEM, loop(1), TOOLS, 100)
        assert "cache_control" not in fake_provider.last.raw.decode()
        # 1,500 prompt tokens of which 1,200 came from the cache: in the loop's terms, 300 read in full.
        assert reply["usage"]["input_tokens"] == 300
        assert reply["usage"]["cache_read_input_tokens"] == 1_200


def test_a_provider_that_refuses_cache_control_is_asked_again_without_it_once_and_the_trace_says_so(fake_provider):
    lines: list[str] = []
    fake_provider.reply_status(400, message="system.0.cache_control: Extra inputs are not permitted")
    fake_provider.reply_text("first")
    fake_provider.reply_text("second")
    client = ModelClient(supply(fake_provider), on_line=lines.append)
    assert client.create(SYSTEM, loop(0), TOOLS, 100)["content"][0]["text"] == "first"
    assert client.create(SYSTEM, loop(1), TOOLS, 100)["content"][0]["text"] == "second"
    refused, again, later = fake_provider.requests
    assert breakpoints(refused.body) and not breakpoints(again.body) and not breakpoints(later.body)
    assert again.body["messages"] == loop(0) and again.body["tools"] == TOOLS
    host = fake_provider.base_url.split("//", 1)[1].split(":", 1)[0]
    assert lines == [
        f"the provider at {host} refused cache_control (the provider answered HTTP 400: "
        "system.0.cache_control: Extra inputs are not permitted); the request was sent again without it, and "
        "this step's later requests carry none"
    ]


def test_the_request_sent_again_is_sent_once_and_its_own_failure_stands(fake_provider):
    fake_provider.reply_status(400, message="tools.1.cache_control: Extra inputs are not permitted")
    fake_provider.reply_status(400, message="max_tokens: too large")
    with pytest.raises(ProviderError, match="the provider answered HTTP 400: max_tokens: too large"):
        ModelClient(supply(fake_provider)).create(SYSTEM, loop(0), TOOLS, 100)
    assert len(fake_provider.requests) == 2


def test_a_400_that_does_not_name_cache_control_is_not_sent_again(fake_provider):
    fake_provider.reply_status(400, message="messages: roles must alternate")
    with pytest.raises(ProviderError, match="roles must alternate"):
        ModelClient(supply(fake_provider)).create(SYSTEM, loop(0), TOOLS, 100)
    assert len(fake_provider.requests) == 1


def test_the_trace_shows_the_request_sent_again_as_a_note_not_as_what_stopped_the_step():
    line = (
        "the provider at api.example.com refused cache_control (the provider answered HTTP 400: "
        "cache_control: Extra inputs are not permitted); the request was sent again without it, and this "
        "step's later requests carry none"
    )
    shown = view(SimpleNamespace(pk=1, at=None, try_n=1, kind="refusal", data={"line": line}))
    assert (shown.title, shown.line, shown.error) == ("Sent again without cache_control", line, False)
