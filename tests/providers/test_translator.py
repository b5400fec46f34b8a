"""The translator, on the wire: requests built for Chat Completions and Responses,
streamed and whole replies read back, stop reasons per the spec's table."""

from __future__ import annotations

import hashlib

import pytest

from foldrun.providers.client import ModelClient, Supply
from foldrun.providers.translate import chat_to_anthropic

TOOL = {
    "name": "lookup",
    "description": "Look a thing up.",
    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
}
PDF = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}}
PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}}
HISTORY = [
    {"role": "user", "content": [{"type": "text", "text": "Read these."}, PNG, PDF]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Looking up both."},
            {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"q": "a"}},
            {"type": "tool_use", "id": "call_2", "name": "lookup", "input": {"q": "b"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "A found"},
            {
                "type": "tool_result",
                "tool_use_id": "call_2",
                "content": [{"type": "text", "text": "B failed"}],
                "is_error": True,
            },
        ],
    },
]


def make(fake, fmt, model="gpt-5-mini", name=None, **kw):
    return Supply(name=name, format=fmt, base_url=fake.openai_base_url, model=model, key="k", key_header="bearer", **kw)


def call(fake, fmt, *, model="gpt-5-mini", name=None, messages=None, tools=(TOOL,), lines=None, params=None, **options):
    client = ModelClient(
        make(fake, fmt, model, name, params=params or {}), on_line=(lines.append if lines is not None else None)
    )
    return client.create("Be brief.", messages or [{"role": "user", "content": "hi"}], list(tools), 256, **options)


# ---------------------------------------------------------------- requests


def test_chat_carries_system_history_tool_calls_results_and_images(fake_provider):
    fake_provider.reply_text("ok")
    lines: list[str] = []
    call(fake_provider, "openai", messages=HISTORY, lines=lines, tool_choice={"type": "any"})
    body = fake_provider.last.body
    assert fake_provider.last.path == "/v1/chat/completions"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Read these."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
    ]
    assert body["messages"][2] == {
        "role": "assistant",
        "content": "Looking up both.",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "a"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "b"}'}},
        ],
    }
    assert body["messages"][3:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "A found"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: B failed"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "lookup", "description": "Look a thing up.", "parameters": TOOL["input_schema"]},
        }
    ]
    assert body["tool_choice"] == "required"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert lines == ["translator dropped: a document (Chat Completions cannot carry it; format: responses can)"]


def test_responses_carries_a_pdf_as_an_input_file_and_calls_as_items(fake_provider):
    fake_provider.reply_text("ok")
    call(fake_provider, "responses", messages=HISTORY, tool_choice={"type": "tool", "name": "lookup"})
    body = fake_provider.last.body
    assert fake_provider.last.path == "/v1/responses"
    assert body["instructions"] == "Be brief."
    assert body["input"][0]["content"] == [
        {"type": "input_text", "text": "Read these."},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K", "detail": "auto"},
        {"type": "input_file", "filename": "document.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
    ]
    assert [i["type"] for i in body["input"][1:]] == [
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert body["input"][2] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": '{"q": "a"}',
    }
    assert body["input"][5] == {"type": "function_call_output", "call_id": "call_2", "output": "Error: B failed"}
    assert body["tools"] == [
        {
            "type": "function",
            "name": "lookup",
            "description": "Look a thing up.",
            "parameters": TOOL["input_schema"],
            "strict": False,
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "lookup"}
    assert body["store"] is False and body["max_output_tokens"] == 256
    assert "previous_response_id" not in body


def test_openai_gets_max_completion_tokens_and_mistral_max_tokens(fake_provider):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    call(fake_provider, "openai", name="openai")
    call(fake_provider, "openai", name="mistral", model="mistral-large-latest")
    assert fake_provider.requests[0].body["max_completion_tokens"] == 256
    assert "max_tokens" not in fake_provider.requests[0].body
    assert fake_provider.requests[1].body["max_tokens"] == 256


@pytest.mark.parametrize("fmt", ["openai", "responses"])
def test_reasoning_effort_is_dropped_for_a_model_that_does_not_reason(fake_provider, fmt):
    fake_provider.reply_text("ok")
    lines: list[str] = []
    call(fake_provider, fmt, model="openai/gpt-4o-mini", lines=lines, reasoning_effort="low")
    assert "reasoning_effort" not in fake_provider.last.body and "reasoning" not in fake_provider.last.body
    assert lines == ["translator dropped: reasoning_effort (openai/gpt-4o-mini does not reason)"]


def test_reasoning_effort_is_kept_for_a_reasoning_model_on_both_wires(fake_provider):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    call(fake_provider, "openai", model="gpt-5-mini", reasoning_effort="high")
    call(fake_provider, "responses", model="grok-4", reasoning_effort="high")
    assert fake_provider.requests[0].body["reasoning_effort"] == "high"
    assert fake_provider.requests[1].body["reasoning"] == {"effort": "high"}


def test_a_long_safety_identifier_is_sent_hashed(fake_provider):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    tenant = "acc_" + "x" * 70
    call(fake_provider, "responses", safety_identifier=tenant)
    call(fake_provider, "openai", name="openai", safety_identifier="acc_short")
    assert fake_provider.requests[0].body["safety_identifier"] == hashlib.sha256(tenant.encode()).hexdigest()
    assert len(fake_provider.requests[0].body["safety_identifier"]) == 64
    assert fake_provider.requests[1].body["safety_identifier"] == "acc_short"


def test_a_strict_endpoint_gets_no_field_it_would_refuse(fake_provider):
    fake_provider.reply_text("ok")
    call(fake_provider, "openai", name="mistral", model="mistral-large-latest", safety_identifier="acc_1")
    assert "stream_options" not in fake_provider.last.body and "safety_identifier" not in fake_provider.last.body


def test_top_k_is_sent_only_when_params_asks(fake_provider):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    call(fake_provider, "openai", top_k=40)
    call(fake_provider, "openai", params={"top_k": 20})
    assert "top_k" not in fake_provider.requests[0].body
    assert fake_provider.requests[1].body["top_k"] == 20


def test_stop_sequences_cross_chat_and_are_dropped_on_responses(fake_provider):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    lines: list[str] = []
    call(fake_provider, "openai", stop_sequences=["END"])
    call(fake_provider, "responses", stop_sequences=["END"], lines=lines)
    assert fake_provider.requests[0].body["stop"] == ["END"]
    assert "stop" not in fake_provider.requests[1].body
    assert lines == ["translator dropped: stop_sequences (the Responses API has none)"]


# ---------------------------------------------------------------- streamed replies


@pytest.mark.parametrize("mode", ["pieces", "with_name", "at_end"])
def test_tool_call_arguments_arrive_in_any_shape(fake_provider, mode):
    fake_provider.reply_tool_uses([("lookup", {"q": "first"}), ("lookup", {"q": "second", "n": 2})], args_mode=mode)
    reply = call(fake_provider, "openai")
    assert [(b["name"], b["input"]) for b in reply["content"]] == [
        ("lookup", {"q": "first"}),
        ("lookup", {"q": "second", "n": 2}),
    ]
    assert reply["stop_reason"] == "tool_use"


@pytest.mark.parametrize("after", [True, False])
def test_usage_is_read_after_or_with_the_finish_reason(fake_provider, after):
    fake_provider.reply_text("GOOD", usage=(101, 33), usage_after_finish=after)
    reply = call(fake_provider, "openai")
    assert reply["usage"] == {"input_tokens": 101, "output_tokens": 33}


def test_parallel_calls_on_responses_stream(fake_provider):
    fake_provider.reply_tool_uses([("lookup", {"q": "1"}), ("lookup", {"q": "2"})])
    reply = call(fake_provider, "responses")
    assert [b["input"] for b in reply["content"]] == [{"q": "1"}, {"q": "2"}]
    assert reply["stop_reason"] == "tool_use"


@pytest.mark.parametrize("fmt", ["openai", "responses"])
def test_a_stream_that_errors_after_it_began_is_an_error_not_a_reply(fake_provider, fmt):
    from foldrun.providers.client import ProviderError

    fake_provider.reply_text("half an answer that goes on", error_after=3)
    with pytest.raises(ProviderError, match="the provider's stream broke off with an error: Overloaded"):
        call(fake_provider, fmt)


def test_a_chat_stream_without_a_finish_reason_is_incomplete(fake_provider):
    from foldrun.providers.client import ProviderError

    fake_provider.reply_raw(
        'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
        '"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
    )
    with pytest.raises(ProviderError, match="ended before the reply was complete"):
        call(fake_provider, "openai")


# ---------------------------------------------------------------- stop reasons, as the table says

CHAT_STOPS = [
    ("stop", {}, "end_turn"),
    ("eos_token_weird", {}, "end_turn"),
    ("length", {}, "max_tokens"),
    ("tool_calls", {"tool": True}, "tool_use"),
    ("function_call", {"tool": True}, "tool_use"),
    ("stop", {"tool": True}, "tool_use"),
    ("length", {"tool": True}, "max_tokens"),
    ("content_filter", {}, "refusal"),
    ("content_filter", {"tool": True}, "refusal"),
    ("model_length", {}, "model_context_window_exceeded"),
    ("stop", {"matched": "END"}, "stop_sequence"),
    ("stop", {"matched": "OTHER"}, "end_turn"),
]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("finish,shape,expected", CHAT_STOPS)
def test_chat_finish_reasons_map_per_the_table(fake_provider, finish, shape, expected, stream):
    blocks = [{"type": "text", "text": "t"}]
    if shape.get("tool"):
        blocks.append({"type": "tool_use", "id": "call_x", "name": "lookup", "input": {"q": "x"}})
    from tests.fakes.providers import Reply

    fake_provider.reply(Reply(blocks=blocks, finish_reason=finish, matched_stop=shape.get("matched")))
    if stream:
        reply = call(fake_provider, "openai", stop_sequences=["END"])
    else:
        import httpx

        answer = httpx.post(fake_provider.openai_base_url + "/chat/completions", json={"model": "m"}).json()
        reply = chat_to_anthropic(answer, ["END"])
    assert reply["stop_reason"] == expected
    if expected == "stop_sequence":
        assert reply["stop_sequence"] == "END"


def test_sglangs_matched_stop_reads_as_a_stop_sequence():
    answer = {
        "id": "x",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "a"},
                "finish_reason": "stop",
                "matched_stop": "###",
            }
        ],
    }
    assert chat_to_anthropic(answer, ["###"])["stop_reason"] == "stop_sequence"


def test_a_refusal_field_on_chat_reads_as_refusal(fake_provider):
    from tests.fakes.providers import Reply

    fake_provider.reply(Reply(blocks=[], refusal="I can't help with that.", finish_reason="stop"))
    reply = call(fake_provider, "openai")
    assert reply["stop_reason"] == "refusal"
    assert reply["content"] == [{"type": "text", "text": "I can't help with that."}]


RESPONSES_STOPS = [
    ({}, "end_turn"),
    ({"incomplete_reason": "max_output_tokens"}, "max_tokens"),
    ({"incomplete_reason": "max_output_tokens", "tool": True}, "max_tokens"),
    ({"tool": True}, "tool_use"),
    ({"refusal": "No."}, "refusal"),
    ({"refusal": "No.", "tool": True}, "refusal"),
    ({"incomplete_reason": "content_filter"}, "refusal"),
]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("shape,expected", RESPONSES_STOPS)
def test_responses_outcomes_map_per_the_table(fake_provider, shape, expected, stream):
    from foldrun.providers.translate import responses_to_anthropic
    from tests.fakes.providers import Reply

    blocks = [{"type": "text", "text": "t"}]
    if shape.get("tool"):
        blocks.append({"type": "tool_use", "id": "call_x", "name": "lookup", "input": {}})
    fake_provider.reply(
        Reply(blocks=blocks, incomplete_reason=shape.get("incomplete_reason"), refusal=shape.get("refusal"))
    )
    if stream:
        reply = call(fake_provider, "responses")
    else:
        import httpx

        reply = responses_to_anthropic(
            httpx.post(fake_provider.openai_base_url + "/responses", json={"model": "m"}).json()
        )
    assert reply["stop_reason"] == expected


def test_a_repeated_tool_call_id_is_made_distinct():
    answer = {
        "id": "x",
        "model": "kimi",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "same", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                        {"id": "same", "type": "function", "function": {"name": "b", "arguments": "{}"}},
                    ],
                },
            }
        ],
    }
    ids = [b["id"] for b in chat_to_anthropic(answer)["content"]]
    assert len(set(ids)) == 2
