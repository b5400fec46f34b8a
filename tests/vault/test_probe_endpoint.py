"""`foldrun probe MODEL` on the server: a real tool loop through the chosen endpoint."""

from __future__ import annotations

import json

import pytest

from vault.actions import do_set_secret

PLANTED = "sk-planted-probe-555"


@pytest.fixture
def keyed(account, workspace):
    do_set_secret(account, workspace, "PROBE_KEY", value=PLANTED)


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_the_probe_closes_a_tool_loop_and_says_how(alice_api, keyed, fake_provider, fmt):
    base = fake_provider.base_url if fmt == "anthropic" else fake_provider.openai_base_url
    fake_provider.reply_tool_use("get_code", {"reason": "asked"})
    fake_provider.reply_echo_tool_result(usage=(40, 5))
    answer = alice_api.post(
        "/api/workspaces/rank-desk/probe",
        {
            "model": "gpt-4o-mini",
            "provider": {
                "name": "openai" if fmt != "anthropic" else "anthropic",
                "format": fmt,
                "base_url": base,
                "key": "${PROBE_KEY}",
            },
        },
        format="json",
    )
    data = answer.json()
    assert answer.status_code == 200
    assert (data["ok"], data["tool_called"], data["read_back"], data["stop_reason"], data["requests"]) == (
        True,
        True,
        True,
        "end_turn",
        2,
    )
    assert data["printed"][1:4] == [
        "tool call made: yes; result read back: yes",
        "stop reason: end_turn",
        "requests: 2",
    ]
    assert data["printed"][4].startswith("cost: $")
    second = fake_provider.requests[1].body
    assert "PROBE-" in json.dumps(second)  # the tool's answer went back to the model
    assert PLANTED not in answer.content.decode()


def test_a_refused_probe_answers_the_refusal_line(alice_api, keyed, fake_provider):
    fake_provider.reply_status(401)
    answer = alice_api.post(
        "/api/workspaces/rank-desk/probe",
        {"model": "m", "provider": {"name": "anthropic", "base_url": fake_provider.base_url, "key": "${PROBE_KEY}"}},
        format="json",
    )
    assert answer.json()["ok"] is False
    assert answer.json()["error"].startswith("the credential was refused (HTTP 401)")


def test_a_model_that_never_calls_the_tool_is_not_ok(alice_api, keyed, fake_provider):
    fake_provider.reply_text("I don't know any code word.")
    answer = alice_api.post(
        "/api/workspaces/rank-desk/probe",
        {"model": "m", "provider": {"name": "anthropic", "base_url": fake_provider.base_url, "key": "${PROBE_KEY}"}},
        format="json",
    )
    assert (answer.json()["ok"], answer.json()["tool_called"]) == (False, False)


def test_a_probe_without_a_model_is_refused_naming_the_field(alice_api, keyed):
    answer = alice_api.post("/api/workspaces/rank-desk/probe", {}, format="json")
    assert answer.status_code == 400
    assert answer.json()["message"] == "model: name the model to probe, e.g. claude-haiku-4-5."


def test_a_key_not_in_the_vault_is_named(alice_api, workspace):
    answer = alice_api.post("/api/workspaces/rank-desk/probe", {"model": "m", "provider": "openrouter"}, format="json")
    assert answer.status_code == 409  # a well-formed request; the vault lacks the key
    assert answer.json()["message"] == "the provider key OPENROUTER_API_KEY is not in the vault"
    assert (answer.json()["code"], answer.json()["details"]) == ("missing_secret", {"secret": "OPENROUTER_API_KEY"})


def test_a_probe_cut_off_names_the_failure_a_run_would_hit(alice_api, keyed, fake_provider):
    fake_provider.reply_text("PROBE-", stop_reason="max_tokens")
    answer = alice_api.post(
        "/api/workspaces/rank-desk/probe",
        {"model": "m", "provider": {"name": "anthropic", "base_url": fake_provider.base_url, "key": "${PROBE_KEY}"}},
        format="json",
    )
    assert answer.json()["printed"][2:] == [
        "stop reason: max_tokens",
        "requests: 1",
        "cost: $0.0000",
        "the reply was cut off at the output limit — a run would stop the same way",
    ]


def test_the_account_probe_reads_the_account_vault_and_its_agents_md(alice_api, account, fake_provider):
    from library.actions.writes import FileWrite, do_write_files

    block = f'{{name: openai, base_url: "{fake_provider.openai_base_url}", key: "${{ACCOUNT_MODEL_KEY}}"}}'
    do_write_files(
        account=account,
        workspace=None,
        kind="push",
        writes=[FileWrite("AGENTS.md", f"---\nprovider: {block}\n---\nx\n")],
    )
    do_set_secret(account, None, "ACCOUNT_MODEL_KEY", value=PLANTED)
    fake_provider.reply_tool_use("get_code", {})
    fake_provider.reply_echo_tool_result()
    answer = alice_api.post("/api/probe", {"model": "gpt-4o-mini"}, format="json").json()
    assert (answer["ok"], answer["format"], answer["stop_reason"]) == (True, "openai", "end_turn")
    assert fake_provider.requests[0].headers["authorization"] == f"Bearer {PLANTED}"
    assert fake_provider.requests[0].body["model"] == "gpt-4o-mini"
