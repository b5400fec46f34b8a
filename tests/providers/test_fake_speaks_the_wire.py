"""The official SDKs accept the stand-in's answers: proof it speaks the real wire."""

from __future__ import annotations

import anthropic
import openai

TOOL = {
    "name": "lookup",
    "description": "Look a thing up.",
    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
}
FN = {"type": "function", "function": {"name": "lookup", "parameters": TOOL["input_schema"]}}


def test_the_anthropic_sdk_reads_a_whole_reply(fake_provider):
    fake_provider.reply_text("GOOD all fine")
    client = anthropic.Anthropic(api_key="k", base_url=fake_provider.base_url, max_retries=0)
    message = client.messages.create(model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "GOOD all fine"
    assert message.stop_reason == "end_turn"
    assert fake_provider.last.path == "/v1/messages"


def test_the_anthropic_sdk_reads_a_streamed_tool_call(fake_provider):
    fake_provider.reply_tool_use("lookup", {"q": "rankings"}, text="Looking.")
    client = anthropic.Anthropic(api_key="k", base_url=fake_provider.base_url, max_retries=0)
    with client.messages.stream(
        model="claude-x", max_tokens=10, tools=[TOOL], messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        message = stream.get_final_message()
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"q": "rankings"}
    assert message.stop_reason == "tool_use"
    assert message.usage.output_tokens == 7


def test_the_anthropic_sdk_sees_a_429_as_a_rate_limit(fake_provider):
    fake_provider.reply_status(429, headers={"retry-after": "30"})
    client = anthropic.Anthropic(api_key="k", base_url=fake_provider.base_url, max_retries=0)
    try:
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    except anthropic.RateLimitError as exc:
        assert exc.response.headers["retry-after"] == "30"
    else:
        raise AssertionError("the 429 was not raised")


def test_the_openai_sdk_reads_a_whole_chat_completion(fake_provider):
    fake_provider.reply_tool_use("lookup", {"q": "a"})
    client = openai.OpenAI(api_key="k", base_url=fake_provider.openai_base_url, max_retries=0)
    done = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], tools=[FN])
    assert done.choices[0].finish_reason == "tool_calls"
    assert done.choices[0].message.tool_calls[0].function.arguments == '{"q": "a"}'


def test_the_openai_sdk_assembles_streamed_chunks(fake_provider):
    fake_provider.reply_tool_uses([("lookup", {"q": "a"}), ("lookup", {"q": "b"})])
    client = openai.OpenAI(api_key="k", base_url=fake_provider.openai_base_url, max_retries=0)
    with client.chat.completions.stream(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "hi"}],
        tools=[FN],
        stream_options={"include_usage": True},
    ) as stream:
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls
    assert [c.function.arguments for c in calls] == ['{"q": "a"}', '{"q": "b"}']
    assert final.usage.completion_tokens == 7


def test_the_openai_sdk_reads_a_whole_response(fake_provider):
    fake_provider.reply_text("GOOD")
    client = openai.OpenAI(api_key="k", base_url=fake_provider.openai_base_url, max_retries=0)
    response = client.responses.create(model="gpt-5-mini", input="hi")
    assert response.output_text == "GOOD"
    assert response.status == "completed"


def test_the_openai_sdk_assembles_streamed_response_events(fake_provider):
    fake_provider.reply_tool_use("lookup", {"q": "z"}, text="Checking.")
    client = openai.OpenAI(api_key="k", base_url=fake_provider.openai_base_url, max_retries=0)
    with client.responses.stream(
        model="gpt-5-mini",
        input="hi",
        tools=[{"type": "function", "name": "lookup", "parameters": TOOL["input_schema"], "strict": False}],
    ) as stream:
        final = stream.get_final_response()
    assert final.output_text == "Checking."
    assert final.output[1].type == "function_call"
    assert final.output[1].arguments == '{"q": "z"}'
    assert final.usage.output_tokens == 7


def test_the_openai_sdk_reads_the_fakes_errors_as_its_own(fake_provider):
    fake_provider.reply_status(429, headers={"retry-after": "7"}, message="Rate limit reached")
    client = openai.OpenAI(api_key="k", base_url=fake_provider.openai_base_url, max_retries=0)
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    except openai.RateLimitError as exc:
        assert exc.message.endswith("Rate limit reached") or "Rate limit reached" in str(exc)
        assert exc.body["type"] == "requests"
    else:
        raise AssertionError("the 429 was not raised")


def test_the_anthropic_sdk_reads_the_fakes_errors_as_its_own(fake_provider):
    fake_provider.reply_status(401, message="invalid x-api-key")
    client = anthropic.Anthropic(api_key="k", base_url=fake_provider.base_url, max_retries=0)
    try:
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    except anthropic.AuthenticationError as exc:
        assert exc.body["error"] == {"type": "authentication_error", "message": "invalid x-api-key"}
    else:
        raise AssertionError("the 401 was not raised")
