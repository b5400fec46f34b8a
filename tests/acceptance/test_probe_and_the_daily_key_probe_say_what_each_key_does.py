"""Issue 4, items 7-8 (audit4): `foldrun probe MODEL` and the daily key probe.

The daily probe is proven the way it runs: beat's DatabaseScheduler installs
the entry from the settings, and the task it names runs in a real Celery
worker against the test database. The table is ✓, ✗ with the verdict, or ·
for never checked; a dead key is a non-zero exit."""

from __future__ import annotations

import json

import pytest

from library.actions.writes import FileWrite, do_write_files
from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from vault.actions import do_set_secret
from vault.models import ProviderCheck
from vault.probe import check_account_providers
from tests.notify.conftest import send_outbox

PLANTED = "sk-audit4-probe-planted-42"


def block(fake, key="MODEL_KEY", model="claude-haiku-4-5") -> str:
    return f'{{name: anthropic, base_url: "{fake.base_url}", key: "${{{key}}}", model: {model}}}'


def write(account, workspace, files):
    do_write_files(
        account=account,
        workspace=workspace,
        kind="push",
        writes=[FileWrite(path, text) for path, text in files.items()],
    )


@pytest.mark.e2e
def test_beats_scheduler_installs_the_daily_entry_and_a_real_worker_runs_it(
    celery_worker_process, account, workspace, fake_provider
):
    from django_celery_beat.models import PeriodicTask
    from django_celery_beat.schedulers import DatabaseScheduler

    from foldrun.celery import app

    write(account, workspace, {"AGENTS.md": f"---\nprovider: {block(fake_provider)}\n---\nx\n"})
    do_set_secret(account, workspace, "MODEL_KEY", value=PLANTED)
    fake_provider.reply_text("ok")
    DatabaseScheduler(app=app, lazy=True).setup_schedule()
    entry = PeriodicTask.objects.get(name="vault-daily-key-probe")
    assert (entry.enabled, entry.interval.every, entry.interval.period) == (True, 86400, "seconds")
    app.send_task(entry.task, args=json.loads(entry.args), kwargs=json.loads(entry.kwargs))
    row = wait_for(lambda: ProviderCheck.objects.filter(account=account, verdict="ok").first(), timeout=60)
    assert (row.key_name, row.key_scope, row.model) == ("MODEL_KEY", "workspace rank-desk", "claude-haiku-4-5")
    sent = fake_provider.last
    assert (sent.headers["x-api-key"], sent.body["max_tokens"]) == (PLANTED, 1)
    assert PLANTED not in celery_worker_process.log_path.read_text()


def test_every_block_the_files_use_is_asked_once_per_endpoint_and_key(account, workspace, fake_provider):
    from accounts.models import Workspace

    other = Workspace.objects.create(account=account, name="other-desk")
    write(account, None, {"AGENTS.md": f"---\nprovider: {block(fake_provider, 'ACCOUNT_KEY')}\n---\nx\n"})
    write(
        account,
        workspace,
        {
            "agents/a.md": f"---\nname: a\ndescription: d\nprovider: {block(fake_provider)}\n---\nx\n",
            "agents/b/agent.md": f"---\nname: b\ndescription: d\nprovider: {block(fake_provider)}\n---\nx\n",
        },
    )
    write(account, other, {"AGENTS.md": f"---\nprovider: {block(fake_provider)}\n---\nx\n"})
    do_set_secret(account, None, "ACCOUNT_KEY", value="acct-key-1")
    do_set_secret(account, workspace, "MODEL_KEY", value="desk-key-1")
    do_set_secret(account, other, "MODEL_KEY", value="other-key-1")
    for _ in range(3):
        fake_provider.reply_text("ok")
    rows = check_account_providers(account.pk, report=False)
    assert sorted(r.headers["x-api-key"] for r in fake_provider.requests) == ["acct-key-1", "desk-key-1", "other-key-1"]
    assert sorted((r.key_scope, r.verdict) for r in rows) == [
        ("account", "ok"),
        ("workspace other-desk", "ok"),
        ("workspace rank-desk", "ok"),
    ]


def test_only_the_newly_broken_provider_is_mailed_to_the_owners(account, workspace, alice, bob, fake_provider):
    write(account, workspace, {"AGENTS.md": f"---\nprovider: {block(fake_provider)}\n---\nx\n"})
    do_set_secret(account, workspace, "MODEL_KEY", value=PLANTED)
    fake_provider.reply_status(401)
    check_account_providers(account.pk)
    fake_provider.reply_status(401)
    check_account_providers(account.pk)
    fake_provider.reply_text("ok")
    check_account_providers(account.pk)
    fake_provider.reply_status(403)
    check_account_providers(account.pk)
    assert [m.to for m in send_outbox()] == [["alice@example.com"], ["alice@example.com"]]  # bob is a viewer
    assert all(PLANTED not in m.body + m.subject for m in send_outbox())


# ---------------------------------------------------------------- the terminal


@pytest.fixture
def alice_cli(cli, signed_in_as, alice, workspace, transactional_db):
    signed_in_as(alice)
    return cli


def test_account_providers_prints_a_tick_a_cross_with_the_verdict_or_a_dot(
    alice_cli, account, workspace, fake_provider
):
    write(account, workspace, {"AGENTS.md": f"---\nprovider: {block(fake_provider)}\n---\nx\n"})
    do_set_secret(account, workspace, "MODEL_KEY", value=PLANTED)
    do_set_secret(account, workspace, "SECOND_KEY", value="second-key-1")
    fake_provider.reply_text("ok")
    first = alice_cli("account", "providers", "--check")
    write(
        account,
        workspace,
        {
            "agents/x.md": "---\nname: x\ndescription: d\nprovider: "
            f"{block(fake_provider, 'SECOND_KEY', 'other-model')}\n---\nx\n"
        },
    )
    mixed = alice_cli("account", "providers")
    fake_provider.reply_text("ok")
    fake_provider.reply_status(404, message="model: other-model")
    dead = alice_cli("account", "providers", "--check")
    assert (first.code, [line.split()[0] for line in first.lines[1:]]) == (0, ["✓"])
    assert (mixed.code, sorted(line.split()[0] for line in mixed.lines[1:])) == (0, ["·", "✓"])
    assert dead.code == 1
    assert sorted(line.split()[0] for line in dead.lines[1:]) == ["✓", "✗"]
    assert [line.split()[1] for line in dead.lines[1:] if line.startswith("✗")] == ["not-found"]
    assert PLANTED not in first.out + mixed.out + dead.out + dead.err


def test_probe_prints_the_stop_reason_the_requests_and_the_cost_on_responses(
    alice_cli, account, workspace, fake_provider
):
    do_set_secret(account, workspace, "OPENAI_KEY", value=PLANTED)
    fake_provider.reply_tool_use("get_code", {"reason": "asked"})
    fake_provider.reply_echo_tool_result(usage=(1000, 20))
    provider = json.dumps(
        {"name": "openai", "format": "responses", "base_url": fake_provider.openai_base_url, "key": "${OPENAI_KEY}"}
    )
    done = alice_cli("probe", "gpt-4o-mini", "--provider", provider, "--to", "rank-desk")
    assert done.code == 0, done.err
    assert done.lines[0] == f"model: gpt-4o-mini at {fake_provider.openai_base_url}/responses"
    assert done.lines[1:4] == ["tool call made: yes; result read back: yes", "stop reason: end_turn", "requests: 2"]
    assert done.lines[4].startswith("cost: $")
    assert [r.path for r in fake_provider.requests] == ["/v1/responses", "/v1/responses"]
    assert fake_provider.requests[1].body["input"][-1]["type"] == "function_call_output"
    assert PLANTED not in done.out + done.err


def test_a_probe_that_is_refused_says_why_and_exits_non_zero(alice_cli, account, workspace, fake_provider):
    do_set_secret(account, workspace, "MODEL_KEY", value=PLANTED)
    fake_provider.reply_status(401)
    provider = json.dumps({"name": "anthropic", "base_url": fake_provider.base_url, "key": "${MODEL_KEY}"})
    done = alice_cli("probe", "claude-haiku-4-5", "--provider", provider, "--to", "rank-desk")
    assert done.code == 1
    assert done.lines[0] == (
        f"probe failed at {fake_provider.base_url}/v1/messages: the credential was refused "
        "(HTTP 401) and the response carried no rate-limit headers, so this is the key itself — "
        "invalid, revoked, or wrong for this endpoint — not a spent window — no second supply is "
        "configured"
    )


def test_a_local_probe_whose_laptop_key_cannot_be_opened_says_so_by_name(cli, foldrun_home, fake_provider, monkeypatch):
    import base64

    from vault.local import LocalVault

    monkeypatch.setenv("FOLDRUN_LOCAL_VAULT_KEY", base64.b64encode(b"a" * 32).decode())
    LocalVault(foldrun_home).set("PROBE_KEY", PLANTED)
    monkeypatch.setenv("FOLDRUN_LOCAL_VAULT_KEY", base64.b64encode(b"b" * 32).decode())
    provider = json.dumps({"name": "anthropic", "base_url": fake_provider.base_url, "key": "${PROBE_KEY}"})
    done = cli("probe", "claude-haiku-4-5", "--provider", provider, "--local")
    assert done.code == 1
    assert done.err == (
        "The secret PROBE_KEY could not be decrypted with any key in FOLDRUN_LOCAL_VAULT_KEY — it was "
        "sealed under a key that is no longer configured (the laptop vault: "
        "`foldrun secrets set NAME --local`).\n"
    )
    assert fake_provider.requests == []
