"""Is the key still good? One minimal question per distinct endpoint and key, verdicts per the spec."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from accounts.models import Workspace
from library.actions.writes import FileWrite, do_write_files
from vault.actions import do_set_secret
from vault.models import ProviderCheck
from vault.probe import check_account_providers, provider_broken
from vault.tasks import probe_account_providers
from tests.conftest import wait_for
from tests.notify.conftest import send_outbox

PLANTED = "sk-planted-probe-771"


def write(account, workspace, files: dict[str, str]) -> None:
    do_write_files(
        account=account,
        workspace=workspace,
        writes=[FileWrite(p, c) for p, c in files.items()],
        kind="push",
        message="test",
    )


def agents_md(block: str) -> str:
    return f"---\nprovider: {block}\n---\nDefaults.\n"


def agent_md(name: str, block: str) -> str:
    return f"---\nname: {name}\ndescription: d\nprovider: {block}\n---\nDo it.\n"


@pytest.fixture
def desk(account, workspace, fake_provider):
    """Two agents and the workspace sharing one endpoint and key; an account block with another key."""
    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{MODEL_KEY}}", model: claude-x}}'
    write(
        account,
        workspace,
        {"AGENTS.md": agents_md(block), "agents/a/agent.md": agent_md("a", block), "agents/b.md": agent_md("b", block)},
    )
    do_set_secret(account, workspace, "MODEL_KEY", value=PLANTED)
    return block


def test_blocks_sharing_an_endpoint_and_key_are_asked_once(desk, account, fake_provider):
    fake_provider.reply_text("ok")
    rows = check_account_providers(account.pk)
    assert len(fake_provider.requests) == 1
    assert [(r.verdict, r.key_name, r.key_scope) for r in rows] == [("ok", "MODEL_KEY", "workspace rank-desk")]
    assert rows[0].used_by == ["rank-desk: AGENTS.md", "rank-desk: agents/a/agent.md", "rank-desk: agents/b.md"]


def test_the_question_is_one_token_with_the_key_a_run_would_send(desk, account, fake_provider):
    fake_provider.reply_text("ok")
    check_account_providers(account.pk)
    sent = fake_provider.last
    assert sent.body["max_tokens"] == 1
    assert sent.headers["x-api-key"] == PLANTED
    assert sent.body["model"] == "claude-x"


@pytest.mark.parametrize(
    "status,body,verdict",
    [
        (429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, "busy"),
        (
            401,
            {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
            "credential",
        ),
        (402, {"error": {"message": "Payment required"}}, "credential"),
        (403, {"error": {"message": "forbidden"}}, "credential"),
        (429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota"}}, "credential"),
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "Your credit balance is too low to access the Anthropic API.",
                },
            },
            "credential",
        ),
        (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}, "not-found"),
        (400, {"error": {"message": "The model `claude-x` does not exist"}}, "not-found"),
        (500, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}, "provider-error"),
    ],
)
def test_each_answer_reads_as_its_verdict(desk, account, fake_provider, status, body, verdict):
    fake_provider.reply_status(status, body=body)
    rows = check_account_providers(account.pk, report=False)
    assert rows[0].verdict == verdict


def test_a_base_url_that_is_not_a_url_is_unreachable(account, workspace):
    write(
        account, workspace, {"AGENTS.md": agents_md('{name: anthropic, base_url: "not a url", key: "${K}", model: m}')}
    )
    do_set_secret(account, workspace, "K", value="v")
    rows = check_account_providers(account.pk, report=False)
    assert rows[0].verdict == "unreachable"


def test_a_key_missing_from_the_vault_is_a_credential_fault_by_name(account, workspace):
    write(account, workspace, {"AGENTS.md": agents_md("openrouter")})
    rows = check_account_providers(account.pk, report=False)
    assert (rows[0].verdict, rows[0].message) == (
        "credential",
        "the provider key OPENROUTER_API_KEY is not in the vault",
    )


def test_only_a_newly_broken_provider_is_reported(desk, account, alice, fake_provider):
    received = []
    provider_broken.connect(lambda **kw: received.append(kw["check"].verdict), weak=False, dispatch_uid="t1")
    fake_provider.reply_text("ok")
    check_account_providers(account.pk)
    fake_provider.reply_status(401)
    check_account_providers(account.pk)
    fake_provider.reply_status(401)
    check_account_providers(account.pk)
    provider_broken.disconnect(dispatch_uid="t1")
    assert len(send_outbox()) == 1
    assert send_outbox()[0].to == ["alice@example.com"]
    assert send_outbox()[0].subject == "foldrun: a provider key stopped working for Acme"
    assert "MODEL_KEY (workspace rank-desk): credential" in send_outbox()[0].body
    assert PLANTED not in send_outbox()[0].body
    assert received == ["credential"]


def test_a_busy_key_is_never_reported(desk, account, alice, fake_provider):
    fake_provider.reply_status(429)
    check_account_providers(account.pk)
    assert send_outbox() == []


def test_the_api_shows_the_last_check_and_what_would_be_checked(desk, alice_api, fake_provider):
    before = alice_api.get("/api/account/providers").json()
    assert [(r["endpoint"], r["verdict"]) for r in before["results"]] == [
        (fake_provider.base_url + "/v1/messages", None)
    ]
    fake_provider.reply_text("ok")
    after = alice_api.post("/api/account/providers").json()
    assert after["results"][0]["verdict"] == "ok" and after["results"][0]["checked_at"]
    assert PLANTED not in json.dumps(after)


def test_charlie_sees_only_his_own_providers(desk, charlie_api):
    assert charlie_api.get("/api/account/providers").json()["results"] == []


def test_the_task_takes_an_account_id_and_skips_a_fresh_check(desk, account, fake_provider):
    fake_provider.reply_text("ok")
    probe_account_providers(account.pk)
    probe_account_providers(account.pk)
    assert len(fake_provider.requests) == 1


def test_the_beat_schedule_asks_once_a_day():
    from django.conf import settings

    assert settings.CELERY_BEAT_SCHEDULE["vault-daily-key-probe"] == {
        "task": "vault.probe_all_accounts",
        "schedule": 86400.0,
    }


def test_an_account_block_resolves_in_the_account_vault(account, fake_provider):
    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{ACCOUNT_KEY}}", model: m}}'
    write(account, None, {"AGENTS.md": agents_md(block)})
    do_set_secret(account, None, "ACCOUNT_KEY", value="acct-v")
    fake_provider.reply_text("ok")
    rows = check_account_providers(account.pk)
    assert (rows[0].key_scope, rows[0].used_by) == ("account", ["account library: AGENTS.md"])
    assert fake_provider.last.headers["x-api-key"] == "acct-v"


def test_a_second_supply_is_checked_too_with_the_same_model(account, workspace, fake_provider):
    block = (
        f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{FIRST}}", model: claude-x, '
        f'fallback: {{name: openai, base_url: "{fake_provider.openai_base_url}", key: "${{SECOND}}"}}}}'
    )
    write(account, workspace, {"AGENTS.md": agents_md(block)})
    do_set_secret(account, workspace, "FIRST", value="one")
    do_set_secret(account, workspace, "SECOND", value="two")
    fake_provider.reply_text("ok")
    fake_provider.reply_text("ok")
    rows = check_account_providers(account.pk)
    assert sorted((r.key_name, r.verdict) for r in rows) == [("FIRST", "ok"), ("SECOND", "ok")]
    # The two questions are asked in parallel: find the second supply's by its wire.
    (openai_request,) = [r for r in fake_provider.requests if r.path.endswith("/chat/completions")]
    assert openai_request.body["model"] == "claude-x"
    assert openai_request.body["max_completion_tokens"] == 1  # openai takes the newer name


def test_an_unknown_preset_name_is_not_found(account, workspace):
    write(account, workspace, {"AGENTS.md": agents_md("openruoter")})
    rows = check_account_providers(account.pk, report=False)
    assert (rows[0].verdict, rows[0].message) == (
        "not-found",
        "provider: unknown name 'openruoter' — did you mean openrouter?",
    )


def test_a_per_account_preset_without_base_url_is_unreachable(account, workspace):
    write(account, workspace, {"AGENTS.md": agents_md("litellm")})
    do_set_secret(account, workspace, "LITELLM_API_KEY", value="v")
    rows = check_account_providers(account.pk, report=False)
    assert (rows[0].verdict, rows[0].message) == (
        "unreachable",
        "provider: 'litellm' has no fixed address — set base_url:",
    )


def test_two_names_holding_one_key_are_asked_once_and_recorded_each(account, workspace, fake_provider):
    first = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{KEY_A}}", model: m}}'
    second = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{KEY_B}}", model: m}}'
    write(account, workspace, {"AGENTS.md": agents_md(first), "agents/x.md": agent_md("x", second)})
    do_set_secret(account, workspace, "KEY_A", value="same-value")
    do_set_secret(account, workspace, "KEY_B", value="same-value")
    fake_provider.reply_text("ok")
    rows = check_account_providers(account.pk)
    assert len(fake_provider.requests) == 1
    assert sorted((r.key_name, r.verdict) for r in rows) == [("KEY_A", "ok"), ("KEY_B", "ok")]


def test_showing_the_table_decrypts_and_refreshes_nothing(alice_api, account, workspace, fake_provider, fake_oauth):
    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{OAUTH_KEY}}", model: m}}'
    write(account, workspace, {"AGENTS.md": agents_md(block)})
    do_set_secret(
        account,
        workspace,
        "OAUTH_KEY",
        oauth_recipe={
            "token_url": fake_oauth.token_url,
            "client_id": fake_oauth.client_id,
            "client_secret": fake_oauth.client_secret,
            "refresh_token": fake_oauth.grant_refresh_token(),
        },
    )
    table = alice_api.get("/api/account/providers").json()
    assert table["results"][0]["key"] == {"name": "OAUTH_KEY", "scope": "workspace rank-desk"}
    assert fake_oauth.refreshes == 0 and fake_provider.requests == []


def test_the_daily_probe_holds_a_lease_through_its_check_and_lets_it_go_after(
    transactional_db, desk, account, fake_provider
):
    import threading

    from vault.models import KeyProbe

    fake_provider.reply_text("ok", delay=1.5)  # the key is being asked for a second and a half
    worker = threading.Thread(target=probe_account_providers, args=(account.pk,))
    worker.start()
    try:
        wait_for(lambda: fake_provider.requests, timeout=20)
        during = KeyProbe.objects.get(account=account)
        assert during.lease_holder and during.lease_until > timezone.now() and during.finished_at is None
    finally:
        worker.join(timeout=30)
    after = KeyProbe.objects.get(account=account)
    assert after.lease_holder == "" and after.lease_until is None and after.finished_at is not None
    assert ProviderCheck.objects.get().verdict == "ok"


def test_a_probe_another_worker_holds_is_not_asked_twice(desk, account, fake_provider):
    from foldrun import leases
    from vault.models import KeyProbe

    row = KeyProbe.objects.create(account=account)
    assert leases.claim(KeyProbe, row.pk, leases.new_holder())  # a live worker is asking these keys now
    fake_provider.reply_text("ok")
    assert probe_account_providers(account.pk, force=True) == 0
    assert fake_provider.requests == [] and ProviderCheck.objects.count() == 0


def test_a_probe_that_lost_its_lease_writes_no_verdict_and_mails_nobody(desk, account, alice, fake_provider):
    from foldrun import leases
    from notify.models import OutgoingMail
    from vault.models import KeyProbe

    fake_provider.reply_status(401)
    row = KeyProbe.objects.create(account=account)
    holder = leases.new_holder()
    leases.claim(KeyProbe, row.pk, holder)
    beat = leases.Heartbeat(KeyProbe, row.pk, holder)
    KeyProbe.objects.filter(pk=row.pk).update(lease_holder=leases.new_holder())  # the sweep gave it to another
    beat.lost = True
    with pytest.raises(leases.LeaseLost):
        check_account_providers(account.pk, lease=beat)
    assert len(fake_provider.requests) == 1  # it asked…
    assert ProviderCheck.objects.count() == 0 and OutgoingMail.objects.count() == 0  # …and committed nothing
