"""Issue 4, "Bad input, and what it gets" (audit4), in a real run: a clear
sentence on the step's failure line, the run in a definite state, and
nothing written that should not be."""

from __future__ import annotations

import base64

import pytest
from django.test import override_settings

from runs.actions import check_start_run
from tests.fakes.conftest_plugin import fake_oauth, fake_provider  # noqa: F401
from tests.runs.helpers import drive, push
from vault.actions import do_set_secret
from vault.models import Secret

OLD = base64.b64encode(b"q" * 32).decode()
NEW = base64.b64encode(b"r" * 32).decode()


def agent(base_url: str) -> str:
    return (
        "---\nname: worker\ndescription: d\ntools: [read]\n"
        f"provider: {{name: anthropic, base_url: '{base_url}', key: '${{MODEL_KEY}}', model: m}}\n---\nWork.\n"
    )


def run_with(workspace, alice, base_url: str):
    push(workspace, {"agents/worker/agent.md": agent(base_url)})
    run = drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Go."))
    return run, run.steps.get()


@pytest.fixture
def keyed(account, workspace):
    do_set_secret(account, workspace, "MODEL_KEY", value="sk-bad-input-planted")


def test_a_base_url_that_is_not_a_url_fails_the_step_with_a_sentence(keyed, alice, workspace):
    run, step = run_with(workspace, alice, "not a url")
    assert (run.status, step.status) == ("failed", "failed")
    assert "base_url 'not a url' is not a URL" in step.error


def test_a_500_fails_the_step_with_the_providers_words(keyed, alice, workspace, fake_provider):
    fake_provider.reply_status(500, message="upstream exploded")
    run, step = run_with(workspace, alice, fake_provider.base_url)
    assert (run.status, step.status) == ("failed", "failed")
    assert "the provider answered HTTP 500: upstream exploded" in step.error


def test_malformed_sse_fails_the_step_with_a_sentence(keyed, alice, workspace, fake_provider):
    fake_provider.reply_raw("event: message_start\ndata: {not json\n\n")
    run, step = run_with(workspace, alice, fake_provider.base_url)
    assert run.status == "failed"
    assert "the provider's stream could not be read (an event was not JSON)" in step.error


def test_a_stream_that_errors_after_it_began_fails_the_step_and_keeps_no_half_answer(
    keyed, alice, workspace, fake_provider
):
    fake_provider.reply_text("a half answer that should not be kept", error_after=4)
    run, step = run_with(workspace, alice, fake_provider.base_url)
    assert run.status == "failed"
    assert "the provider's stream broke off with an error: Overloaded" in step.error
    assert "half answer" not in (step.output or "")


def test_the_failure_line_is_the_sentence_itself_not_prefixed_with_a_class_name(keyed, alice, workspace, fake_provider):
    fake_provider.reply_status(500, message="upstream exploded")
    run, step = run_with(workspace, alice, fake_provider.base_url)
    assert step.error == "the provider answered HTTP 500: upstream exploded"


def test_a_provider_key_no_vault_key_opens_is_refused_by_name_with_why(account, alice, workspace, fake_provider):
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        do_set_secret(account, workspace, "MODEL_KEY", value="sk-sealed-under-old")
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):
        run, step = run_with(workspace, alice, fake_provider.base_url)
    assert run.status == "failed"
    assert "the secret MODEL_KEY could not be decrypted with any key in FOLDRUN_VAULT_KEYS" in step.error
    assert fake_provider.requests == []


def test_a_provider_key_no_vault_key_opens_fails_the_step_by_name_and_sends_nothing(
    account, alice, workspace, fake_provider
):
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        row = do_set_secret(account, workspace, "MODEL_KEY", value="sk-sealed-under-old")
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):
        run, step = run_with(workspace, alice, fake_provider.base_url)
    assert run.status == "failed"
    assert "MODEL_KEY" in step.error
    assert fake_provider.requests == []  # never sent as an empty key
    assert bytes(Secret.objects.get(pk=row.pk).sealed) == bytes(row.sealed)  # nothing rewritten


def test_an_oauth_key_whose_token_endpoint_refuses_fails_the_step_saying_so(
    account, alice, workspace, fake_provider, fake_oauth
):
    do_set_secret(
        account,
        workspace,
        "MODEL_KEY",
        oauth_recipe={
            "token_url": fake_oauth.token_url,
            "client_id": fake_oauth.client_id,
            "client_secret": fake_oauth.client_secret,
            "refresh_token": "rt-revoked",
        },
    )
    run, step = run_with(workspace, alice, fake_provider.base_url)
    assert "the token endpoint for MODEL_KEY refused the refresh (HTTP 400: invalid_grant)" in step.error


def test_an_oauth_key_whose_token_endpoint_refuses_fails_the_step_and_changes_nothing(
    account, alice, workspace, fake_provider, fake_oauth
):
    row = do_set_secret(
        account,
        workspace,
        "MODEL_KEY",
        oauth_recipe={
            "token_url": fake_oauth.token_url,
            "client_id": fake_oauth.client_id,
            "client_secret": fake_oauth.client_secret,
            "refresh_token": "rt-revoked",
        },
    )
    run, step = run_with(workspace, alice, fake_provider.base_url)
    assert run.status == "failed" and "MODEL_KEY" in step.error
    assert fake_provider.requests == []
    assert bytes(Secret.objects.get(pk=row.pk).sealed) == bytes(row.sealed)


# ---------------------------------------------------------------- a malformed provider block


@pytest.mark.parametrize(
    "provider,sentence",
    [
        ({"name": ["anthropic"]}, "provider: name: must be a preset's name as text, e.g. anthropic"),
        (
            {"name": "anthropic", "params": [1], "key": "${MODEL_KEY}"},
            "provider: params: must be a mapping of request fields, e.g. params: {temperature: 0.2}",
        ),
        ({"name": "anthropic", "base_url": 5, "key": "${MODEL_KEY}"}, "provider: base_url: must be text"),
        (
            {"name": "anthropic", "key_header": ["x"], "key": "${MODEL_KEY}"},
            "provider: key_header: must be x-api-key or bearer",
        ),
        (
            {"name": "anthropic", "fallback": 5, "key": "${MODEL_KEY}"},
            "provider: must be a preset name or a block with name:, key:, base_url:",
        ),
    ],
)
def test_a_probe_with_a_malformed_block_is_a_400_naming_the_field(alice_api, keyed, provider, sentence):
    answer = alice_api.post("/api/workspaces/rank-desk/probe", {"model": "m", "provider": provider}, format="json")
    assert (answer.status_code, answer.json()["message"]) == (400, sentence)


def test_one_malformed_block_does_not_stop_the_daily_check_of_the_others(keyed, account, workspace, fake_provider):
    from vault.probe import check_account_providers

    push(
        workspace,
        {
            "AGENTS.md": f"---\nprovider: {{name: anthropic, base_url: '{fake_provider.base_url}', "
            "key: '${MODEL_KEY}', model: m}\n---\nx\n",
            "agents/bad.md": "---\nname: bad\ndescription: d\nprovider: {name: anthropic, params: [1]}\n---\nx\n",
        },
    )
    fake_provider.reply_text("ok")
    rows = check_account_providers(account.pk, report=False)
    assert sorted((r.used_by[0], r.verdict) for r in rows) == [
        ("rank-desk: AGENTS.md", "ok"),
        ("rank-desk: agents/bad.md", "unreachable"),
    ]
    assert [r.message for r in rows if r.verdict == "unreachable"] == [
        "provider: params: must be a mapping of request fields, e.g. params: {temperature: 0.2}"
    ]


def test_a_run_on_a_malformed_block_fails_the_step_with_the_sentence(keyed, alice, workspace):
    push(
        workspace,
        {
            "agents/worker/agent.md": "---\nname: worker\ndescription: d\ntools: [read]\n"
            "provider: {name: anthropic, params: [1]}\n---\nWork.\n"
        },
    )
    run = drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Go."))
    assert run.status == "failed"
    assert "provider: params: must be a mapping of request fields" in run.steps.get().error
