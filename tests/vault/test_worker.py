"""The daily key probe through a real Celery worker: beat's task fans out by account id."""

from __future__ import annotations

import pytest

from library.actions.writes import FileWrite, do_write_files
from tests.conftest import wait_for
from vault.actions import do_set_secret
from vault.models import ProviderCheck


@pytest.mark.e2e
def test_a_real_worker_checks_every_account_from_beats_task(celery_worker_process, account, workspace, fake_provider):
    from foldrun.celery import app

    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{MODEL_KEY}}", model: m}}'
    do_write_files(
        account=account,
        workspace=workspace,
        kind="push",
        writes=[FileWrite("AGENTS.md", f"---\nprovider: {block}\n---\nx\n")],
    )
    do_set_secret(account, workspace, "MODEL_KEY", value="sk-worker-planted")
    fake_provider.reply_text("ok")
    app.send_task("vault.probe_all_accounts")
    row = wait_for(lambda: ProviderCheck.objects.filter(account=account, verdict="ok").first(), timeout=60)
    assert row.key_name == "MODEL_KEY"
    assert fake_provider.last.headers["x-api-key"] == "sk-worker-planted"
    assert "sk-worker-planted" not in celery_worker_process.log_path.read_text()
