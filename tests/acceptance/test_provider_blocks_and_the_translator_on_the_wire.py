"""Issue 4, items 4-5 (audit4): provider blocks and the translator, on the
loopback wire — the spec's request rules (max_completion_tokens,
reasoning_effort and its drop line, safety_identifier over 64 characters,
store: false, top_k only from params:) and the streaming edge cases the
tests of the helper did not reach."""

from __future__ import annotations

import hashlib
import json

import pytest

from foldrun.contract import Desk, check
from foldrun.providers.client import ModelClient, ProviderError, Supply, supply_from_block
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401

ASK = [{"role": "user", "content": "hi"}]
TOOL = {"name": "lookup", "description": "d", "input_schema": {"type": "object", "properties": {"q": {}}}}


def client(fake, fmt, *, model="gpt-5-mini", name=None, lines=None, params=None):
    return ModelClient(
        Supply(
            name=name,
            format=fmt,
            base_url=fake.openai_base_url,
            model=model,
            key="k",
            key_header="bearer",
            params=params or {},
        ),
        on_line=lines.append if lines is not None else None,
    )


# ---------------------------------------------------------------- provider blocks


def test_check_refuses_an_unknown_name_with_the_closest_names():
    findings = check(Desk(files={"AGENTS.md": "---\nprovider: {name: openruoter}\n---\nx\n"}), mode="check")
    assert [(f.level, f.message) for f in findings if f.code == "provider.unknown_name"] == [
        ("error", "provider.name: 'openruoter' is not a provider foldrun knows; the closest name is openrouter.")
    ]


def test_check_warns_on_params_for_an_anthropic_endpoint_and_not_for_openai():
    files = {
        "AGENTS.md": "---\nprovider: {name: anthropic, params: {top_k: 5}}\n---\nx\n",
        "agents/a.md": "---\nname: a\ndescription: d\nprovider: {name: openai, params: {top_k: 5}}\n---\nx\n",
    }
    findings = [f for f in check(Desk(files=files), mode="check") if f.code == "provider.params_anthropic"]
    assert [(f.file, f.level) for f in findings] == [("AGENTS.md", "warning")]


@pytest.mark.parametrize("fmt", ["openai", "responses"])
def test_params_reach_a_translated_endpoint(fake_provider, fmt):
    fake_provider.reply_text("ok")
    client(fake_provider, fmt, params={"top_k": 7, "temperature": 0.1}).create(None, ASK, [], 10, top_k=40)
    assert (fake_provider.last.body["top_k"], fake_provider.last.body["temperature"]) == (7, 0.1)


def test_no_top_k_goes_out_unless_params_sends_it(fake_provider):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    client(fake_provider, "openai").create(None, ASK, [], 10, top_k=40)
    client(fake_provider, "responses").create(None, ASK, [], 10, top_k=40)
    ModelClient(
        Supply(
            name="anthropic",
            format="anthropic",
            base_url=fake_provider.base_url,
            model="m",
            key="k",
            params={"top_k": 3},
        )
    ).create(None, ASK, [], 10, top_k=40)
    assert all("top_k" not in r.body for r in fake_provider.requests)


def test_a_block_with_a_second_supply_falls_back_to_it(fake_provider):
    block = {
        "name": "anthropic",
        "base_url": fake_provider.base_url,
        "key": "${FIRST}",
        "model": "claude-x",
        "fallback": {"name": "openai", "base_url": fake_provider.openai_base_url, "key": "${SECOND}"},
    }
    fake_provider.reply_status(429)
    fake_provider.reply_text("from the second")
    reply = ModelClient(supply_from_block(block, {"FIRST": "one", "SECOND": "two"}.get)).create(None, ASK, [], 10)
    assert reply["content"] == [{"type": "text", "text": "from the second"}]
    assert (
        fake_provider.requests[1].path,
        fake_provider.requests[1].headers["authorization"],
        fake_provider.requests[1].body["model"],
    ) == ("/v1/chat/completions", "Bearer two", "claude-x")


# ---------------------------------------------------------------- request rules


@pytest.mark.parametrize("name", ["openai", "xai", "groq", "cerebras"])
def test_the_presets_noted_for_it_send_max_completion_tokens(fake_provider, name):
    fake_provider.reply_text("ok")
    client(fake_provider, "openai", name=name).create(None, ASK, [], 77)
    assert fake_provider.last.body["max_completion_tokens"] == 77 and "max_tokens" not in fake_provider.last.body


@pytest.mark.parametrize("name", ["gemini", "together", "huggingface", "hyperbolic", None])
def test_the_other_openai_endpoints_send_max_tokens(fake_provider, name):
    fake_provider.reply_text("ok")
    client(fake_provider, "openai", name=name).create(None, ASK, [], 77)
    assert fake_provider.last.body["max_tokens"] == 77 and "max_completion_tokens" not in fake_provider.last.body


@pytest.mark.parametrize("fmt", ["openai", "responses"])
@pytest.mark.parametrize(
    "model", ["gpt-4o-mini", "gpt-4.1", "gpt-3.5-turbo", "chatgpt-4o-latest", "gpt-5-chat-latest", "openai/gpt-4o-mini"]
)
def test_reasoning_effort_is_dropped_for_the_non_reasoning_families_with_a_drop_line(fake_provider, fmt, model):
    fake_provider.reply_text("ok")
    lines: list[str] = []
    client(fake_provider, fmt, model=model, lines=lines).create(None, ASK, [], 10, reasoning_effort="low")
    assert "reasoning_effort" not in fake_provider.last.body and "reasoning" not in fake_provider.last.body
    assert lines == [f"translator dropped: reasoning_effort ({model} does not reason)"]


@pytest.mark.parametrize("model", ["o3-mini", "gpt-5-mini", "grok-4", "deepseek-r1", "openai/o4-mini"])
def test_every_other_model_keeps_its_reasoning_effort_on_both_wires(fake_provider, model):
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    lines: list[str] = []
    client(fake_provider, "openai", model=model, lines=lines).create(None, ASK, [], 10, reasoning_effort="high")
    client(fake_provider, "responses", model=model, lines=lines).create(None, ASK, [], 10, reasoning_effort="high")
    assert fake_provider.requests[0].body["reasoning_effort"] == "high"
    assert fake_provider.requests[1].body["reasoning"] == {"effort": "high"}
    assert lines == []


@pytest.mark.parametrize("length,hashed", [(63, False), (64, False), (65, True), (200, True)])
def test_a_safety_identifier_over_64_characters_is_sent_hashed(fake_provider, length, hashed):
    tenant = ("acc_" + "x" * length)[:length]
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    client(fake_provider, "responses").create(None, ASK, [], 10, safety_identifier=tenant)
    client(fake_provider, "openai", name="openai").create(None, ASK, [], 10, safety_identifier=tenant)
    expected = hashlib.sha256(tenant.encode()).hexdigest() if hashed else tenant
    assert [r.body["safety_identifier"] for r in fake_provider.requests] == [expected, expected]
    assert all(len(r.body["safety_identifier"]) <= 64 for r in fake_provider.requests)


def test_responses_sends_store_false_and_never_a_previous_response_id(fake_provider):
    fake_provider.reply_text("ok")
    history = ASK + [{"role": "assistant", "content": "earlier"}, {"role": "user", "content": "again"}]
    client(fake_provider, "responses").create(None, history, [], 10)
    body = fake_provider.last.body
    assert body["store"] is False and "previous_response_id" not in body
    assert [item["role"] for item in body["input"]] == ["user", "assistant", "user"]


def test_a_pdf_by_url_crosses_responses_as_an_input_file(fake_provider):
    fake_provider.reply_text("ok")
    doc = {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}
    client(fake_provider, "responses").create(None, [{"role": "user", "content": [doc]}], [], 10)
    assert fake_provider.last.body["input"][0]["content"] == [
        {"type": "input_file", "file_url": "https://example.com/a.pdf"}
    ]


# ---------------------------------------------------------------- streaming edges


def sse(events: list[tuple[str | None, dict | str]]) -> str:
    out = ""
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out += (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
    return out


def chunk(delta=None, finish=None, **extra):
    return (
        None,
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
            **extra,
        },
    )


def test_chat_parallel_calls_whose_argument_pieces_interleave(fake_provider):
    def piece(index, text, **head):
        return chunk(
            {
                "tool_calls": [
                    {"index": index, **head, "function": {"arguments": text, **({"name": "lookup"} if head else {})}}
                ]
            }
        )

    fake_provider.reply_raw(
        sse(
            [
                piece(0, "", id="call_a", type="function"),
                piece(1, "", id="call_b", type="function"),
                piece(0, '{"q": '),
                piece(1, '{"q": '),
                piece(1, '"two"}'),
                piece(0, '"one"}'),
                chunk({}, "tool_calls"),
                (
                    None,
                    {
                        "id": "c1",
                        "object": "chat.completion.chunk",
                        "model": "m",
                        "choices": [],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 9},
                    },
                ),
                (None, "[DONE]"),
            ]
        )
    )
    reply = client(fake_provider, "openai").create(None, ASK, [TOOL], 10)
    assert [(b["id"], b["input"]) for b in reply["content"]] == [("call_a", {"q": "one"}), ("call_b", {"q": "two"})]
    assert (reply["stop_reason"], reply["usage"]) == ("tool_use", {"input_tokens": 5, "output_tokens": 9})


def test_chat_a_cut_off_tool_call_reads_as_max_tokens_not_a_call_to_run(fake_provider):
    fake_provider.reply_raw(
        sse(
            [
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": '{"q": "hal'},
                            }
                        ]
                    }
                ),
                chunk({}, "length"),
                (None, "[DONE]"),
            ]
        )
    )
    reply = client(fake_provider, "openai").create(None, ASK, [TOOL], 10)
    assert reply["stop_reason"] == "max_tokens"


def test_responses_arguments_arriving_only_in_the_done_event(fake_provider):
    fake_provider.reply_raw(
        sse(
            [
                (
                    "response.created",
                    {"type": "response.created", "response": {"id": "r1", "model": "m", "output": []}},
                ),
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": 0,
                        "item": {
                            "type": "function_call",
                            "id": "fc1",
                            "call_id": "call_1",
                            "name": "lookup",
                            "arguments": "",
                        },
                    },
                ),
                (
                    "response.function_call_arguments.done",
                    {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": '{"q": "end"}'},
                ),
                (
                    "response.completed",
                    {
                        "type": "response.completed",
                        "response": {
                            "id": "r1",
                            "model": "m",
                            "status": "completed",
                            "output": [],
                            "usage": {"input_tokens": 3, "output_tokens": 4},
                        },
                    },
                ),
            ]
        )
    )
    reply = client(fake_provider, "responses").create(None, ASK, [TOOL], 10)
    assert reply["content"] == [{"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"q": "end"}}]
    assert (reply["stop_reason"], reply["usage"]) == ("tool_use", {"input_tokens": 3, "output_tokens": 4})


def test_responses_arguments_arriving_with_the_name(fake_provider):
    fake_provider.reply_raw(
        sse(
            [
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": 0,
                        "item": {
                            "type": "function_call",
                            "id": "fc1",
                            "call_id": "call_1",
                            "name": "lookup",
                            "arguments": '{"q": "whole"}',
                        },
                    },
                ),
                (
                    "response.completed",
                    {
                        "type": "response.completed",
                        "response": {"id": "r1", "model": "m", "status": "completed", "output": []},
                    },
                ),
            ]
        )
    )
    reply = client(fake_provider, "responses").create(None, ASK, [TOOL], 10)
    assert reply["content"] == [{"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"q": "whole"}}]


def test_responses_a_full_context_is_a_400_that_crosses_as_an_error(fake_provider):
    fake_provider.reply_status(
        400,
        body={
            "error": {
                "message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
        },
    )
    with pytest.raises(ProviderError) as info:
        client(fake_provider, "responses").create(None, ASK, [], 10)
    assert info.value.message == (
        "the provider answered HTTP 400: Your input exceeds the context window of this model."
    )
    assert info.value.status == 400


@pytest.mark.parametrize("fmt", ["openai", "responses"])
def test_malformed_sse_on_a_translated_wire_is_a_sentence(fake_provider, fmt):
    fake_provider.reply_raw('data: {"id": "c1", "choices": [\n\n')
    with pytest.raises(ProviderError, match=r"^the provider's stream could not be read \(an event was not JSON\)$"):
        client(fake_provider, fmt).create(None, ASK, [], 10)


@pytest.mark.parametrize("fmt", ["openai", "responses"])
def test_a_stream_cut_before_its_end_is_not_a_reply(fake_provider, fmt):
    events = (
        [chunk({"content": "half"})]
        if fmt == "openai"
        else [
            ("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0, "delta": "half"})
        ]
    )
    fake_provider.reply_raw(sse(events))
    with pytest.raises(ProviderError, match="ended before the reply was complete"):
        client(fake_provider, fmt).create(None, ASK, [], 10)


def test_an_http_200_carrying_an_error_object_instead_of_a_stream_is_an_error(fake_provider):
    fake_provider.reply_raw(
        json.dumps({"error": {"message": "upstream overloaded", "code": 502}}), content_type="application/json"
    )
    with pytest.raises(ProviderError, match="^the provider answered with an error: upstream overloaded$"):
        client(fake_provider, "openai").create(None, ASK, [], 10)


SHAPES = [
    (
        "anthropic",
        "Anthropic Messages",
        'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}\n\n',
    ),
    ("anthropic", "Anthropic Messages", 'event: message_start\ndata: {"type": "message_start", "message": "x"}\n\n'),
    ("openai", "Chat Completions", 'data: {"choices": "x"}\n\n'),
    (
        "openai",
        "Chat Completions",
        'data: {"choices": [{"delta": {"content": "a"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": "x"}}\n\n'
        "data: [DONE]\n\n",
    ),
    (
        "responses",
        "Responses",
        'event: response.completed\ndata: {"type": "response.completed", "response": {"output": "x"}}\n\n',
    ),
    (
        "responses",
        "Responses",
        'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "output_index": {}, '
        '"delta": "a"}\n\n',
    ),
]


@pytest.mark.parametrize("fmt,wire,raw", SHAPES)
def test_an_event_of_the_wrong_shape_is_a_sentence_not_a_crash(fake_provider, fmt, wire, raw):
    fake_provider.reply_raw(raw)
    base = fake_provider.base_url if fmt == "anthropic" else fake_provider.openai_base_url
    with pytest.raises(ProviderError) as info:
        ModelClient(Supply(name=None, format=fmt, base_url=base, model="m", key="k")).create(None, ASK, [], 10)
    assert (
        info.value.message == f"the provider's answer could not be read (it is not shaped as the {wire} wire documents)"
    )
    assert info.value.verdict == "provider-error"


def test_a_whole_json_answer_of_the_wrong_shape_is_a_sentence_too(fake_provider):
    fake_provider.reply_raw(
        json.dumps({"id": "x", "choices": [{"message": "not an object"}]}), content_type="application/json"
    )
    with pytest.raises(
        ProviderError,
        match=r"^the provider's answer could not be read \(it is not shaped as the "
        r"Chat Completions wire documents\)$",
    ):
        client(fake_provider, "openai").create(None, ASK, [], 10)


@pytest.mark.parametrize(
    "fmt,params",
    [
        ("openai", {"reasoning_effort": "high", "temperature": 0.2}),
        ("responses", {"reasoning": {"effort": "high"}, "temperature": 0.2}),
    ],
)
def test_params_cannot_send_a_reasoning_effort_to_a_family_that_refuses_it(fake_provider, fmt, params):
    fake_provider.reply_text("ok")
    lines: list[str] = []
    client(fake_provider, fmt, model="gpt-4o-mini", lines=lines, params=params).create(None, ASK, [], 10)
    assert "reasoning_effort" not in fake_provider.last.body and "reasoning" not in fake_provider.last.body
    assert fake_provider.last.body["temperature"] == 0.2
    assert lines == ["translator dropped: reasoning_effort (gpt-4o-mini does not reason)"]


@pytest.mark.parametrize(
    "fmt,params,field",
    [
        ("openai", {"reasoning_effort": "high"}, "reasoning_effort"),
        ("responses", {"reasoning": {"effort": "high"}}, "reasoning"),
    ],
)
def test_params_send_a_reasoning_effort_to_a_model_that_reasons(fake_provider, fmt, params, field):
    fake_provider.reply_text("ok")
    client(fake_provider, fmt, model="o3-mini", params=params).create(None, ASK, [], 10)
    assert fake_provider.last.body[field] == params[field]


def test_a_run_on_the_responses_wire_sends_a_tenant_safety_identifier_of_at_most_64_characters(
    account, alice, workspace, fake_provider
):
    from runs.actions import check_start_run
    from tests.runs.helpers import drive, push

    push(
        workspace,
        {
            "agents/worker/agent.md": (
                "---\nname: worker\ndescription: d\ntools: [read]\n"
                f"provider: {{name: openai, format: responses, base_url: '{fake_provider.openai_base_url}', model: gpt-5-mini}}\n"
                "---\nWork.\n"
            )
        },
    )
    fake_provider.reply_text("GOOD")
    drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Go."))
    body = fake_provider.last.body
    assert body["store"] is False
    assert 0 < len(body["safety_identifier"]) <= 64
