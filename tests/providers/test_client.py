"""The model client against the loopback provider, on all three wires."""

from __future__ import annotations

import pytest

from foldrun.providers.client import (
    MissingSecret,
    ModelClient,
    ProviderConfigError,
    ProviderError,
    ProviderRefusal,
    Supply,
    supply_from_block,
)

TOOL = {
    "name": "lookup",
    "description": "Look a thing up.",
    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
}
ASK = [{"role": "user", "content": "What ranks?"}]


def supply(fake, fmt="anthropic", model="m-1", **kw) -> Supply:
    base = fake.base_url if fmt == "anthropic" else fake.openai_base_url
    return Supply(
        name=kw.pop("name", None),
        format=fmt,
        base_url=base,
        model=model,
        key="sk-planted-123",
        key_header=kw.pop("key_header", "x-api-key" if fmt == "anthropic" else "bearer"),
        **kw,
    )


def test_a_preset_name_alone_resolves_through_the_table():
    s = supply_from_block("openrouter", {"OPENROUTER_API_KEY": "v"}.get, default_model="anthropic/claude-x")
    assert (s.format, s.base_url, s.key_header, s.key, s.model) == (
        "anthropic",
        "https://openrouter.ai/api",
        "bearer",
        "v",
        "anthropic/claude-x",
    )


def test_the_long_form_reads_key_base_url_format_models_params_and_fallback():
    block = {
        "name": "openai",
        "format": "responses",
        "key": "${MY_OPENAI}",
        "models": ["gpt-5-mini"],
        "params": {"top_k": 3},
        "fallback": {"name": "anthropic", "key": "${ANTH}"},
    }
    s = supply_from_block(block, {"MY_OPENAI": "a", "ANTH": "b"}.get)
    assert (s.format, s.base_url, s.model, s.params, s.key_name) == (
        "responses",
        "https://api.openai.com/v1",
        "gpt-5-mini",
        {"top_k": 3},
        "MY_OPENAI",
    )
    assert (s.fallback.name, s.fallback.key, s.fallback.model) == ("anthropic", "b", "gpt-5-mini")


def test_an_unknown_name_is_refused_with_the_closest_names():
    with pytest.raises(ProviderConfigError, match="unknown name 'openruoter' — did you mean openrouter"):
        supply_from_block("openruoter", {}.get)


def test_a_key_written_as_a_value_is_refused():
    with pytest.raises(ProviderConfigError, match=r"key: must be a reference like \$\{MY_KEY\}"):
        supply_from_block({"name": "anthropic", "key": "sk-ant-123"}, {}.get)


def test_a_key_not_in_the_vault_is_named():
    with pytest.raises(MissingSecret, match="the provider key ANTHROPIC_API_KEY is not in the vault"):
        supply_from_block("anthropic", {}.get)


def test_a_per_account_preset_without_base_url_says_to_set_it():
    with pytest.raises(ProviderConfigError, match="'litellm' has no fixed address — set base_url:"):
        supply_from_block("litellm", {"LITELLM_API_KEY": "x"}.get)


def test_it_speaks_anthropic_sse_and_returns_the_message(fake_provider):
    fake_provider.reply_tool_use("lookup", {"q": "desk"}, text="Let me look.")
    reply = ModelClient(supply(fake_provider)).create("Be brief.", ASK, [TOOL], 100)
    assert [b["type"] for b in reply["content"]] == ["text", "tool_use"]
    assert reply["content"][1]["input"] == {"q": "desk"}
    assert reply["stop_reason"] == "tool_use"
    assert reply["usage"] == {
        "input_tokens": 12,
        "output_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    sent = fake_provider.last
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-planted-123"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["stream"] is True
    assert sent.body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]


def test_a_bearer_preset_sends_the_key_as_authorization(fake_provider):
    fake_provider.reply_text("ok")
    ModelClient(supply(fake_provider, key_header="bearer")).create(None, ASK, [], 10)
    assert fake_provider.last.headers["authorization"] == "Bearer sk-planted-123"
    assert "x-api-key" not in fake_provider.last.headers


def test_anthropic_never_gets_top_k_or_params(fake_provider):
    fake_provider.reply_text("ok")
    ModelClient(supply(fake_provider, params={"top_k": 5})).create(None, ASK, [], 10, top_k=40)
    assert "top_k" not in fake_provider.last.body


def test_a_stream_that_errors_after_it_began_is_a_provider_error(fake_provider):
    fake_provider.reply_text("partial answer here", error_after=4)
    with pytest.raises(ProviderError, match="the provider's stream broke off with an error: Overloaded"):
        ModelClient(supply(fake_provider)).create(None, ASK, [], 10)


def test_malformed_sse_is_a_provider_error(fake_provider):
    fake_provider.reply_raw("event: message_start\ndata: {not json\n\n")
    with pytest.raises(ProviderError, match="an event was not JSON"):
        ModelClient(supply(fake_provider)).create(None, ASK, [], 10)


def test_a_500_is_a_provider_error_with_the_providers_words(fake_provider):
    fake_provider.reply_status(500, message="upstream exploded")
    with pytest.raises(ProviderError, match="the provider answered HTTP 500: upstream exploded") as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 10)
    assert info.value.verdict == "provider-error"


def test_a_timeout_is_unreachable(fake_provider):
    fake_provider.reply_text("late").delay = 1.0
    with pytest.raises(ProviderError, match="did not answer in time") as info:
        ModelClient(supply(fake_provider), timeout=0.3).create(None, ASK, [], 10)
    assert info.value.verdict == "unreachable"


def test_a_base_url_that_is_not_a_url_is_unreachable():
    bad = Supply(name=None, format="anthropic", base_url="not a url", model="m", key="k")
    with pytest.raises(ProviderError, match="is not a URL") as info:
        ModelClient(bad).create(None, ASK, [], 10)
    assert info.value.verdict == "unreachable"


def test_a_429_becomes_a_refusal_with_the_spec_line(fake_provider):
    fake_provider.reply_status(429, headers={"retry-after": "30", "x-secret-thing": "no"})
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 10)
    assert info.value.status == 429
    assert info.value.headers == {"retry-after": "30"}
    assert info.value.line == (
        "the provider rate-limited this request (HTTP 429) and asked us to wait 30s — no second supply is configured"
    )


def test_a_refused_first_supply_moves_to_the_second(fake_provider):
    fake_provider.reply_status(401)
    fake_provider.reply_text("from the second")
    lines: list[str] = []
    s = supply(fake_provider, fallback=supply(fake_provider, fmt="openai", model="gpt-4o-mini"))
    reply = ModelClient(s, on_line=lines.append).create(None, ASK, [], 10)
    assert reply["content"][0]["text"] == "from the second"
    assert lines[-1].endswith("not a spent window — trying the second supply")
    assert fake_provider.requests[1].path == "/v1/chat/completions"


def test_when_the_second_supply_refuses_too_the_line_says_so(fake_provider):
    fake_provider.reply_status(403)
    fake_provider.reply_status(429)
    s = supply(fake_provider, fallback=supply(fake_provider))
    with pytest.raises(ProviderRefusal, match="— the second supply refused it too$"):
        ModelClient(s).create(None, ASK, [], 10)


@pytest.mark.parametrize("fmt", ["openai", "responses"])
def test_the_translated_wires_return_anthropic_messages(fake_provider, fmt):
    fake_provider.reply_tool_use("lookup", {"q": "x"}, text="Looking.")
    reply = ModelClient(supply(fake_provider, fmt=fmt)).create("sys", ASK, [TOOL], 50)
    assert reply["content"][0] == {"type": "text", "text": "Looking."}
    assert reply["content"][1]["name"] == "lookup" and reply["content"][1]["input"] == {"q": "x"}
    assert reply["stop_reason"] == "tool_use"
    assert reply["usage"] == {"input_tokens": 12, "output_tokens": 7}
    assert fake_provider.last.headers["authorization"] == "Bearer sk-planted-123"


def test_a_failing_first_supply_moves_to_the_second(fake_provider):
    fake_provider.reply_status(500, message="upstream exploded")
    fake_provider.reply_text("from the second")
    lines: list[str] = []
    s = supply(fake_provider, fallback=supply(fake_provider))
    reply = ModelClient(s, on_line=lines.append).create(None, ASK, [], 10)
    assert reply["content"][0]["text"] == "from the second"
    assert lines == ["the provider answered HTTP 500: upstream exploded — trying the second supply"]


def test_a_bad_request_is_not_retried_on_the_second_supply(fake_provider):
    fake_provider.reply_status(400, message="messages: field required")
    s = supply(fake_provider, fallback=supply(fake_provider))
    with pytest.raises(ProviderError, match="HTTP 400: messages: field required"):
        ModelClient(s).create(None, ASK, [], 10)
    assert len(fake_provider.requests) == 1


def test_a_private_base_url_is_refused_where_the_install_forbids_it(fake_provider):
    from django.test import override_settings

    with override_settings(FOLDRUN_ALLOW_PRIVATE_URLS=False):
        client = ModelClient(supply(fake_provider))
        with pytest.raises(ProviderError, match="base_url: 127.0.0.1 resolves to 127.0.0.1: private, loopback") as info:
            client.create(None, ASK, [], 10)
    assert info.value.verdict == "unreachable"
    assert fake_provider.requests == []


def test_an_anthropic_base_written_with_v1_is_not_doubled():
    assert (
        Supply(name=None, format="anthropic", base_url="https://x.example/v1/", model="m").endpoint()
        == "https://x.example/v1/messages"
    )
    assert (
        Supply(name=None, format="anthropic", base_url="https://openrouter.ai/api", model="m").endpoint()
        == "https://openrouter.ai/api/v1/messages"
    )
