"""`check` on `provider:` blocks: names, key references, formats, params, the long form."""

from __future__ import annotations

from foldrun.contract import Desk, check


def _findings(files: dict[str, str], mode: str = "check"):
    return [f for f in check(Desk(files=files), mode=mode) if f.code.startswith("provider.")]


def _agents_md(provider_yaml: str) -> dict[str, str]:
    return {"AGENTS.md": f"---\n{provider_yaml}\n---\nThe desk.\n"}


def _messages(files: dict[str, str]) -> list[str]:
    return [f.message for f in _findings(files)]


def test_a_verified_preset_with_a_key_reference_is_clean():
    files = _agents_md("provider:\n  name: anthropic\n  model: claude-sonnet-4-5\n  key: ${ANTHROPIC_API_KEY}")
    assert _findings(files) == []


def test_the_short_form_name_alone_is_clean():
    assert _findings(_agents_md("provider: openai")) == []


def test_it_refuses_an_unknown_name_with_the_closest_one():
    (finding,) = _findings(_agents_md("provider:\n  name: antropic"))
    assert (
        finding.message == "provider.name: 'antropic' is not a provider foldrun knows; the closest name is anthropic."
    )
    assert (finding.file, finding.line, finding.level, finding.code) == (
        "AGENTS.md",
        3,
        "error",
        "provider.unknown_name",
    )


def test_an_unknown_name_with_nothing_close_lists_every_name():
    (finding,) = _findings(_agents_md("provider: zzqx"))
    assert finding.message.startswith(
        "provider.name: 'zzqx' is not a provider foldrun knows; the names it knows are anthropic, openrouter, deepseek,"
    )
    assert finding.message.endswith("novita, hyperbolic.")


def test_an_unknown_name_beside_a_base_url_is_only_a_warning():
    (finding,) = _findings(
        _agents_md("provider:\n  name: mygateway\n  base_url: https://llm.example.com\n  format: openai")
    )
    assert finding.level == "warning"
    assert finding.message == (
        "provider.name: 'mygateway' is not a preset, so foldrun speaks openai to its base_url with no preset's knowledge of it; "
        "the names it knows are "
        + ", ".join(__import__("foldrun.providers.presets", fromlist=["x"]).PRESET_NAMES)
        + "."
    )


def test_it_says_why_perplexity_is_not_on_the_list():
    (finding,) = _findings(_agents_md("provider: perplexity"))
    assert finding.message == (
        "provider.name: perplexity is not a provider foldrun can reach: Perplexity was removed on 2026-09-06: its Sonar chat route "
        "sunsets on 2026-09-27 and the successor Agent API is not Chat-Completions-shaped, so there is nothing to spell out for it."
    )
    assert finding.code == "provider.not_offered"


def test_it_says_why_vertex_and_bedrock_are_not_on_the_list():
    assert _messages(_agents_md("provider: vertex-ai")) == [
        "provider.name: vertex-ai is not a provider foldrun can reach: Vertex AI puts the model in the URL, so a base URL alone cannot reach it."
    ]
    assert _messages(_agents_md("provider: bedrock")) == [
        "provider.name: bedrock is not a provider foldrun can reach: Bedrock's legacy InvokeModel streams AWS events, not SSE."
    ]


def test_it_refuses_a_literal_key_and_never_repeats_it():
    (finding,) = _findings(_agents_md("provider:\n  name: anthropic\n  key: sk-ant-api03-SECRETVALUE"))
    assert finding.message == (
        "provider.key is not a reference: key: takes ${NAME}, the name of a vault secret, never a value — a credential written "
        "into the file is refused. Store it with `foldrun secrets set NAME` and write key: ${NAME}."
    )
    assert "SECRETVALUE" not in finding.message
    assert (finding.line, finding.code) == (4, "provider.key_not_reference")


def test_a_bare_vault_name_as_key_is_told_how_to_write_the_reference():
    (finding,) = _findings(_agents_md("provider:\n  name: anthropic\n  key: ANTHROPIC_API_KEY"))
    assert (
        finding.message
        == "provider.key names the vault secret ANTHROPIC_API_KEY without marking it as a reference; write key: ${ANTHROPIC_API_KEY}."
    )


def test_a_reference_inside_other_text_is_not_a_reference():
    (finding,) = _findings(_agents_md("provider:\n  name: anthropic\n  key: Bearer ${ANTHROPIC_API_KEY}"))
    assert finding.code == "provider.key_not_reference"
    assert "Bearer" not in finding.message


def test_it_refuses_a_format_that_is_not_one_of_the_three():
    (finding,) = _findings(_agents_md("provider:\n  name: openai\n  format: chat"))
    assert finding.message == "provider.format: 'chat' is not a format; use anthropic, openai or responses."


def test_format_responses_on_openai_is_clean():
    assert _findings(_agents_md("provider:\n  name: openai\n  format: responses\n  key: ${OPENAI_API_KEY}")) == []


def test_params_on_an_anthropic_format_endpoint_is_a_warning():
    (finding,) = _findings(_agents_md("provider:\n  name: anthropic\n  params: {top_k: 5}"))
    assert finding.level == "warning"
    assert finding.message == (
        "provider.params reaches only openai- and responses-format endpoints, where the translator builds the request; "
        "this one is anthropic-shaped and spoken to directly by the SDK, so set its knobs at the provider (an OpenRouter preset, say)."
    )


def test_params_on_an_openai_format_endpoint_is_clean():
    assert _findings(_agents_md("provider:\n  name: openai\n  params: {temperature: 0.2}")) == []


def test_params_follow_a_format_the_block_sets_over_the_presets():
    assert (
        _findings(
            _agents_md(
                "provider:\n  name: openrouter\n  base_url: https://openrouter.ai/api/v1\n  format: responses\n  params: {temperature: 0}"
            )
        )
        == []
    )


def test_params_that_are_not_a_mapping_are_refused():
    (finding,) = _findings(_agents_md("provider:\n  name: openai\n  params: [temperature]"))
    assert finding.message == "provider.params must be a mapping of request fields, e.g. params: {temperature: 0.2}."


def test_a_preset_without_a_fixed_address_needs_base_url():
    messages = _messages(_agents_md("provider:\n  name: litellm\n  key: ${LITELLM_KEY}"))
    assert messages == [
        "provider: litellm has no fixed address (per account); set base_url: — base_url is your proxy, e.g. "
        "http://litellm.internal:4000. It presents an Anthropic endpoint and speaks anything behind it.",
        "provider.name: litellm is documented, not proven — nobody here has watched an agent complete a run against it; "
        "run `foldrun probe <model>` before a flow depends on one.",
    ]


def test_an_unverified_preset_is_a_warning_naming_the_model_to_probe():
    (finding,) = _findings(
        _agents_md("provider:\n  name: deepseek\n  model: deepseek-chat\n  key: ${DEEPSEEK_API_KEY}")
    )
    assert finding.level == "warning"
    assert finding.message == (
        "provider.name: deepseek is documented, not proven — nobody here has watched an agent complete a run against it; "
        "run `foldrun probe deepseek-chat` before a flow depends on one."
    )


def test_a_base_url_that_is_not_a_url_is_refused():
    (finding,) = [
        f for f in _findings(_agents_md("provider:\n  name: vllm\n  base_url: my-gpu-box:8000")) if f.level == "error"
    ]
    assert (
        finding.message
        == "provider.base_url is not a URL; give the endpoint's address, e.g. https://api.anthropic.com."
    )


def test_a_base_url_carrying_a_password_is_refused_without_repeating_it():
    (finding,) = _findings(_agents_md("provider:\n  name: openai\n  base_url: https://me:hunter2@llm.example.com/v1"))
    assert (
        finding.message
        == "provider.base_url carries a user name or password; put the credential in the vault and write key: ${NAME}."
    )


def test_xai_has_no_anthropic_route():
    (finding,) = [f for f in _findings(_agents_md("provider:\n  name: xai\n  format: anthropic")) if f.level == "error"]
    assert (
        finding.message
        == "provider.format: xAI documents no Anthropic-shaped route, so xAI is reached as openai; drop format: anthropic."
    )


def test_an_unknown_key_names_the_closest_and_the_keys():
    (finding,) = _findings(_agents_md("provider:\n  name: anthropic\n  modle: claude-sonnet-4-5"))
    assert finding.message == (
        "provider.modle is not a provider key; did you mean model? "
        "The keys are name, model, key, base_url, format, models, params, fallback."
    )


def test_a_block_without_a_name_is_refused():
    (finding,) = _findings(_agents_md("provider:\n  model: claude-sonnet-4-5"))
    assert (
        finding.message
        == "provider has no name:; name the provider, e.g. name: anthropic (the 29 names are in providers.md)."
    )


def test_a_provider_that_is_neither_a_name_nor_a_block_is_refused():
    (finding,) = _findings(_agents_md("provider: [anthropic]"))
    assert (
        finding.message
        == "provider must be a provider name (provider: anthropic) or a block with name:, model: and key: ${NAME}."
    )


def test_models_must_be_a_list_of_ids():
    (finding,) = _findings(_agents_md("provider:\n  name: anthropic\n  models: claude-sonnet-4-5"))
    assert finding.message == "provider.models must be a list of model ids, e.g. models: [claude-sonnet-4-5]."


def test_the_fallback_is_checked_like_the_block_it_backs():
    files = _agents_md(
        "provider:\n  name: anthropic\n  key: ${ANTHROPIC_API_KEY}\n  fallback:\n    name: openrouter\n    key: or-live-abc\n    formt: openai"
    )
    found = {(f.line, f.message) for f in _findings(files)}
    assert found == {
        (
            7,
            "provider.fallback.key is not a reference: key: takes ${NAME}, the name of a vault secret, never a value — a credential "
            "written into the file is refused. Store it with `foldrun secrets set NAME` and write key: ${NAME}.",
        ),
        (
            8,
            "provider.fallback.formt is not a provider key; did you mean format? The keys are name, model, key, base_url, format, "
            "models, params, fallback.",
        ),
    }


def test_a_fallback_of_the_same_endpoint_and_key_cannot_help():
    files = _agents_md("provider:\n  name: anthropic\n  key: ${K}\n  fallback:\n    name: anthropic\n    key: ${K}")
    (finding,) = _findings(files)
    assert finding.message == (
        "provider.fallback is the same endpoint and key as the block it backs, so it cannot help when that one refuses; name another supply."
    )


def test_a_fallback_that_is_not_a_block_is_refused():
    (finding,) = _findings(_agents_md("provider:\n  name: anthropic\n  fallback: 3"))
    assert (
        finding.message
        == "provider.fallback must be a second provider block, e.g. fallback: {name: openrouter, key: ${OPENROUTER_API_KEY}}."
    )


def test_blocks_in_agents_and_flows_are_checked_too():
    files = {
        "agents/researcher/agent.md": "---\nname: researcher\nprovider: {name: anthropic, key: sk-live}\n---\nPrompt.\n",
        "flows/weekly.md": "---\nname: weekly\nprovider: {name: opnai}\n---\n1. [[researcher]] — Go.\n",
    }
    found = sorted((f.file, f.line, f.code) for f in _findings(files))
    assert found == [
        ("agents/researcher/agent.md", 3, "provider.key_not_reference"),
        ("flows/weekly.md", 3, "provider.unknown_name"),
    ]


def test_the_deploy_refuses_the_same_things():
    findings = _findings(_agents_md("provider:\n  name: anthropic\n  key: sk-ant-x"), mode="deploy")
    assert [(f.level, f.code) for f in findings] == [("error", "provider.key_not_reference")]


def test_responses_on_a_preset_without_that_route_warns():
    (finding,) = [
        f
        for f in _findings(_agents_md("provider:\n  name: mistral\n  format: responses"))
        if f.code == "provider.format_without_base_url"
    ]
    assert finding.level == "warning"
    assert finding.message == (
        "provider.format: responses is not what mistral's address speaks (openai), and no base_url: says where its responses route is; "
        "the Responses API is offered by OpenAI, and xAI, Groq, Nebius, Cloudflare in various states of beta; set base_url: to that route or drop format:."
    )


def test_responses_on_groq_is_clean_and_a_format_with_its_base_url_is_clean():
    assert [f.code for f in _findings(_agents_md("provider:\n  name: groq\n  format: responses"))] == [
        "provider.unverified"
    ]
    files = _agents_md("provider:\n  name: novita\n  format: anthropic\n  base_url: https://api.novita.ai/anthropic")
    assert [f.code for f in _findings(files)] == ["provider.unverified"]


def test_anthropic_format_on_an_openai_preset_without_its_route_warns():
    (finding,) = [
        f
        for f in _findings(_agents_md("provider:\n  name: novita\n  format: anthropic"))
        if f.code == "provider.format_without_base_url"
    ]
    assert finding.message == (
        "provider.format: anthropic is not what novita's address speaks (openai), and no base_url: says where its anthropic route is; "
        "set base_url: to that route or drop format:."
    )
