"""OAuth2 credentials: refreshed before use, cached, one refresh for two workers, rotation saved."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from django.db import connection
from django.utils import timezone

from vault import actions
from vault.actions import access_token_for, do_set_secret, resolve_secrets
from vault.models import Secret


def recipe(fake, refresh_token):
    return {
        "token_url": fake.token_url,
        "client_id": fake.client_id,
        "client_secret": fake.client_secret,
        "refresh_token": refresh_token,
    }


def test_the_first_use_exchanges_the_refresh_token(fake_oauth, account, workspace):
    row = do_set_secret(
        account, workspace, "LINKEDIN_OAUTH", oauth_recipe=recipe(fake_oauth, fake_oauth.grant_refresh_token())
    )
    token = access_token_for(row)
    assert token.startswith("at-")
    assert fake_oauth.refreshes == 1
    assert fake_oauth.token_requests[0]["grant_type"] == "refresh_token"


def test_a_fresh_token_is_reused_until_near_expiry(fake_oauth, account, workspace):
    row = do_set_secret(
        account, workspace, "LINKEDIN_OAUTH", oauth_recipe=recipe(fake_oauth, fake_oauth.grant_refresh_token())
    )
    first = access_token_for(row)
    again = access_token_for(Secret.objects.get(pk=row.pk))
    assert again == first
    assert fake_oauth.refreshes == 1


def test_a_token_near_expiry_is_refreshed(fake_oauth, account, workspace):
    row = do_set_secret(
        account, workspace, "LINKEDIN_OAUTH", oauth_recipe=recipe(fake_oauth, fake_oauth.grant_refresh_token())
    )
    first = access_token_for(row)
    Secret.objects.filter(pk=row.pk).update(expires_at=timezone.now() + dt.timedelta(seconds=30))
    second = access_token_for(Secret.objects.get(pk=row.pk))
    assert second != first
    assert fake_oauth.refreshes == 2


def test_a_rotated_refresh_token_is_saved(fake_oauth, account, workspace):
    fake_oauth.rotate_refresh_tokens = True
    original = fake_oauth.grant_refresh_token()
    row = do_set_secret(account, workspace, "ROTATING", oauth_recipe=recipe(fake_oauth, original))
    access_token_for(row)
    stored = actions._recipe(Secret.objects.get(pk=row.pk))
    assert stored["refresh_token"] != original
    assert stored["refresh_token"] in fake_oauth.valid_refresh
    Secret.objects.filter(pk=row.pk).update(expires_at=timezone.now())
    access_token_for(Secret.objects.get(pk=row.pk))  # works only with the rotated one
    assert fake_oauth.refreshes == 2


def test_a_refusing_token_endpoint_is_a_sentence_and_nothing_changes(fake_oauth, account, workspace):
    row = do_set_secret(
        account, workspace, "LINKEDIN_OAUTH", oauth_recipe=recipe(fake_oauth, fake_oauth.grant_refresh_token())
    )
    fake_oauth.refuse_next = "invalid_grant"
    with pytest.raises(actions.oauth.OAuthError) as info:
        access_token_for(row)
    assert str(info.value) == "the token endpoint for LINKEDIN_OAUTH refused the refresh (HTTP 400: invalid_grant)"
    assert Secret.objects.get(pk=row.pk).sealed == row.sealed


def test_resolution_reports_a_failed_refresh_by_name_never_as_empty(fake_oauth, account, workspace):
    do_set_secret(account, workspace, "LINKEDIN_OAUTH", oauth_recipe=recipe(fake_oauth, "rt-unknown"))
    found = resolve_secrets(workspace, ["LINKEDIN_OAUTH"])
    assert "LINKEDIN_OAUTH" not in found
    assert found.failed == {
        "LINKEDIN_OAUTH": "the token endpoint for LINKEDIN_OAUTH refused the refresh (HTTP 400: invalid_grant)"
    }


def test_an_access_token_without_refresh_is_used_until_it_expires(account, workspace):
    soon = (timezone.now() + dt.timedelta(hours=2)).isoformat()
    row = do_set_secret(
        account,
        workspace,
        "GITHUB_OAUTH",
        oauth_recipe={
            "token_url": "https://github.com/login/oauth/access_token",
            "access_token": "gho_abc",
            "expires_at": soon,
        },
    )
    assert access_token_for(row) == "gho_abc"
    Secret.objects.filter(pk=row.pk).update(expires_at=timezone.now() - dt.timedelta(minutes=1))
    with pytest.raises(
        actions.oauth.OAuthError,
        match="expired at .* and has no refresh token — connect it again with `foldrun connect GITHUB_OAUTH`",
    ):
        access_token_for(Secret.objects.get(pk=row.pk))


def test_the_api_takes_a_refresh_recipe_and_never_returns_it(alice_api, fake_oauth, workspace):
    rt = fake_oauth.grant_refresh_token()
    answer = alice_api.put(
        "/api/workspaces/rank-desk/secrets/LINKEDIN_OAUTH", {"oauth": recipe(fake_oauth, rt)}, format="json"
    )
    assert answer.status_code == 200
    assert answer.json()["kind"] == "oauth2" and answer.json()["refreshable"] is True
    assert rt not in answer.content.decode() and fake_oauth.client_secret not in answer.content.decode()


def test_a_recipe_without_client_id_is_refused(alice_api, workspace):
    answer = alice_api.put(
        "/api/secrets/X_OAUTH", {"oauth": {"token_url": "https://x.example/token", "refresh_token": "r"}}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json()["message"] == "oauth.client_id: a refresh recipe needs the app's client_id."


@pytest.mark.django_db(transaction=True)
def test_two_workers_at_once_cause_one_refresh(fake_oauth, account, workspace):
    fake_oauth.token_delay = 0.4
    row = do_set_secret(
        account, workspace, "SHARED_OAUTH", oauth_recipe=recipe(fake_oauth, fake_oauth.grant_refresh_token())
    )
    tokens: list[str] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            tokens.append(access_token_for(Secret.objects.get(pk=row.pk)))
        except BaseException as exc:  # noqa: BLE001 — surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert fake_oauth.refreshes == 1
    assert tokens[0] == tokens[1]
