"""The daily key probe delivered twice at once (audit3): Celery beat and an
acks_late redelivery can hand the same day's task to two workers. The
claim is held through the check, so the second finds the keys just asked
and asks nothing: one question per endpoint and key, one mail."""

from __future__ import annotations

import os
import threading

import pytest
from django.db import connection

from library.actions.writes import FileWrite, do_write_files
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.providers import Reply
from vault.actions import do_set_secret
from vault.tasks import probe_account_providers
from tests.notify.conftest import send_outbox

pytestmark = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="two workers at once need row locks (PostgreSQL); SQLite runs one worker",
)


def deliver_twice_at_once(account_id: int) -> list:
    answers: list = []

    def deliver() -> None:
        try:
            answers.append(probe_account_providers(account_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def test_two_deliveries_of_the_daily_probe_ask_each_key_once_and_mail_once(
    transactional_db, account, alice, workspace, fake_provider
):
    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{MODEL_KEY}}", model: claude-x}}'
    do_write_files(
        account=account,
        workspace=workspace,
        kind="push",
        message="test",
        writes=[FileWrite("AGENTS.md", f"---\nprovider: {block}\n---\nDefaults.\n")],
    )
    do_set_secret(account, workspace, "MODEL_KEY", value="sk-probe-twice-1234")
    fake_provider.reply(Reply(status=401, refusal="invalid x-api-key", delay=1.0))
    fake_provider.reply(Reply(status=401, refusal="invalid x-api-key", delay=1.0))
    answers = deliver_twice_at_once(account.pk)
    assert sorted(answers) == [0, 1]
    assert len(fake_provider.requests) == 1
    assert len(send_outbox()) == 1  # one mail in the outbox, sent by its own task
