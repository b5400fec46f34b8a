"""A refused model call in a real run: the step's failure line is the spec's sentence."""

from __future__ import annotations

import pytest

from runs.actions import check_start_run
from tests.runs.helpers import drive, push
from vault.actions import do_set_secret


@pytest.fixture
def desk(account, workspace, fake_provider):
    agent = (
        "---\nname: worker\ndescription: d\ntools: [read]\n"
        f"provider: {{name: anthropic, base_url: '{fake_provider.base_url}', key: '${{MODEL_KEY}}', model: m}}\n"
        "---\nWork.\n"
    )
    push(workspace, {"agents/worker/agent.md": agent})
    do_set_secret(account, workspace, "MODEL_KEY", value="sk-refused-planted")
    return workspace


def test_a_revoked_key_fails_the_step_with_the_credential_sentence(desk, alice, fake_provider):
    fake_provider.reply_status(401, message="invalid x-api-key")
    run = drive(check_start_run(workspace=desk, user=alice, agent="worker", task="Go."))
    step = run.steps.get()
    assert run.status == "failed"
    assert step.error == (
        "the credential was refused (HTTP 401) and the response carried no rate-limit headers, so this is the key "
        "itself — invalid, revoked, or wrong for this endpoint — not a spent window — no second supply is configured"
    )
    assert "sk-refused-planted" not in step.error
