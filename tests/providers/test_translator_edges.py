"""What compatible servers actually send that the reference wire does not."""

from __future__ import annotations

import json

from foldrun.providers.client import ModelClient, Supply

ASK = [{"role": "user", "content": "hi"}]
TOOL = {"name": "lookup", "description": "d", "input_schema": {"type": "object", "properties": {}}}


def client(fake, fmt="openai"):
    base = fake.base_url if fmt == "anthropic" else fake.openai_base_url
    return ModelClient(
        Supply(
            name=None,
            format=fmt,
            base_url=base,
            model="m",
            key="k",
            key_header="x-api-key" if fmt == "anthropic" else "bearer",
        )
    )


def chunk(delta=None, finish=None, **extra):
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return (
        "data: "
        + json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice], **extra})
        + "\r\n\r\n"
    )


def test_tool_calls_without_an_index_are_told_apart_by_id(fake_provider):
    fake_provider.reply_raw(
        chunk({"role": "assistant"})
        + chunk({"tool_calls": [{"id": "a", "type": "function", "function": {"name": "lookup", "arguments": '{"q":'}}]})
        + chunk({"tool_calls": [{"function": {"arguments": " 1}"}}]})
        + chunk(
            {"tool_calls": [{"id": "b", "type": "function", "function": {"name": "lookup", "arguments": '{"q": 2}'}}]}
        )
        + chunk({}, "tool_calls")
        + "data: [DONE]\r\n\r\n"
    )
    reply = client(fake_provider).create(None, ASK, [TOOL], 10)
    assert [(b["id"], b["input"]) for b in reply["content"]] == [("a", {"q": 1}), ("b", {"q": 2})]


def test_two_complete_calls_on_the_same_index_stay_two(fake_provider):
    fake_provider.reply_raw(
        chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "lookup", "arguments": '{"q": 1}'}}]})
        + chunk({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "lookup", "arguments": '{"q": 2}'}}]})
        + chunk({}, "stop")
        + "data: [DONE]\n\n"
    )
    reply = client(fake_provider).create(None, ASK, [TOOL], 10)
    assert [b["input"] for b in reply["content"]] == [{"q": 1}, {"q": 2}]
    assert reply["stop_reason"] == "tool_use"


def test_a_server_that_ignores_stream_and_answers_json_is_read(fake_provider):
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    fake_provider.reply_raw(json.dumps(body), content_type="application/json")
    reply = client(fake_provider).create(None, ASK, [], 10)
    assert (reply["content"], reply["usage"]) == (
        [{"type": "text", "text": "whole"}],
        {"input_tokens": 3, "output_tokens": 1},
    )


def test_a_thin_responses_terminal_event_is_rebuilt_from_the_deltas(fake_provider):
    events = [
        ("response.created", {"response": {"id": "r1", "model": "m", "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"output_index": 0, "item": {"type": "message", "id": "i0", "content": []}}),
        ("response.output_text.delta", {"output_index": 0, "content_index": 0, "delta": "Hel"}),
        ("response.output_text.delta", {"output_index": 0, "content_index": 0, "delta": "lo"}),
        (
            "response.output_item.added",
            {
                "output_index": 1,
                "item": {"type": "function_call", "id": "f1", "call_id": "call_9", "name": "lookup", "arguments": ""},
            },
        ),
        ("response.function_call_arguments.delta", {"output_index": 1, "delta": '{"q"'}),
        ("response.function_call_arguments.delta", {"output_index": 1, "delta": ": 3}"}),
        (
            "response.completed",
            {
                "response": {
                    "id": "r1",
                    "model": "m",
                    "status": "completed",
                    "output": [],
                    "usage": {"input_tokens": 9, "output_tokens": 4},
                }
            },
        ),
    ]
    fake_provider.reply_raw("".join(f"event: {n}\ndata: {json.dumps({'type': n, **d})}\n\n" for n, d in events))
    reply = client(fake_provider, "responses").create(None, ASK, [TOOL], 10)
    assert reply["content"] == [
        {"type": "text", "text": "Hello"},
        {"type": "tool_use", "id": "call_9", "name": "lookup", "input": {"q": 3}},
    ]
    assert (reply["stop_reason"], reply["usage"]) == ("tool_use", {"input_tokens": 9, "output_tokens": 4})


def test_anthropic_thinking_blocks_are_kept_with_their_signature(fake_provider):
    events = [
        ("message_start", {"message": {"id": "m1", "model": "claude", "content": [], "usage": {"input_tokens": 5}}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me see."}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "signature_delta", "signature": "sig=="}}),
        ("content_block_stop", {"index": 0}),
        ("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": "Done."}}),
        ("content_block_stop", {"index": 1}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 8}}),
        ("message_stop", {}),
    ]
    fake_provider.reply_raw("".join(f"event: {n}\ndata: {json.dumps({'type': n, **d})}\n\n" for n, d in events))
    reply = client(fake_provider, "anthropic").create(None, ASK, [], 10)
    assert reply["content"] == [
        {"type": "thinking", "thinking": "Let me see.", "signature": "sig=="},
        {"type": "text", "text": "Done."},
    ]
    assert reply["usage"] == {"input_tokens": 5, "output_tokens": 8}


def test_no_parallel_calls_and_no_tool_choice_cross_both_wires(fake_provider):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    choice = {"type": "auto", "disable_parallel_tool_use": True}
    client(fake_provider).create(None, ASK, [TOOL], 10, tool_choice=choice)
    client(fake_provider, "responses").create(None, ASK, [TOOL], 10, tool_choice={"type": "none"})
    assert (fake_provider.requests[0].body["tool_choice"], fake_provider.requests[0].body["parallel_tool_calls"]) == (
        "auto",
        False,
    )
    assert fake_provider.requests[1].body["tool_choice"] == "none"


def test_server_side_tools_are_dropped_with_a_line(fake_provider):
    fake_provider.reply_text("ok")
    lines: list[str] = []
    c = client(fake_provider)
    c.on_line = lines.append
    c.create(None, ASK, [TOOL, {"type": "web_search_20250305", "name": "web_search"}], 10)
    assert [t["function"]["name"] for t in fake_provider.last.body["tools"]] == ["lookup"]
    assert lines == ["translator dropped: server-side tool web_search"]


def test_the_legacy_function_call_shape_reads_as_a_tool_call(fake_provider):
    fake_provider.reply_raw(
        chunk({"role": "assistant", "function_call": {"name": "lookup", "arguments": ""}})
        + chunk({"function_call": {"arguments": '{"q": 7}'}})
        + chunk({}, "function_call")
        + "data: [DONE]\n\n"
    )
    reply = client(fake_provider).create(None, ASK, [TOOL], 10)
    assert [(b["name"], b["input"]) for b in reply["content"]] == [("lookup", {"q": 7})]
    assert reply["stop_reason"] == "tool_use" and reply["content"][0]["id"]
    whole = {
        "id": "x",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "function_call",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "lookup", "arguments": '{"q": 8}'},
                },
            }
        ],
    }
    from foldrun.providers.translate import chat_to_anthropic

    assert chat_to_anthropic(whole)["content"][0]["input"] == {"q": 8}
