"""Issue 4, item 2 (audit4): OAuth2 credentials — one refresh however many
workers ask at once (row lock; run this on PostgreSQL), rotated refresh
tokens saved, and `foldrun connect` catching the redirect on
http://localhost:8642/callback with PKCE, printing nothing secret."""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import threading
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection

from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from tests.fakes.conftest_plugin import fake_oauth  # noqa: F401
from vault.actions import _recipe, access_token_for, do_set_secret, resolve_secrets
from vault.models import Secret

WORKERS = 6


def recipe(fake, refresh_token):
    return {
        "token_url": fake.token_url,
        "client_id": fake.client_id,
        "client_secret": fake.client_secret,
        "refresh_token": refresh_token,
    }


def all_at_once(row_pk: int, count: int) -> tuple[list[str], list[BaseException]]:
    """`count` threads, each with its own database connection, ask for the token together."""
    tokens: list[str] = []
    errors: list[BaseException] = []
    gate = threading.Barrier(count)

    def worker() -> None:
        try:
            row = Secret.objects.get(pk=row_pk)
            gate.wait()
            tokens.append(access_token_for(row))
        except BaseException as exc:  # noqa: BLE001 — surfaced by the caller
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return tokens, errors


@pytest.mark.django_db(transaction=True)
def test_many_workers_needing_a_token_at_once_cause_one_refresh(fake_oauth, account, workspace):
    fake_oauth.token_delay = 0.3
    row = do_set_secret(
        account, workspace, "SHARED_OAUTH", oauth_recipe=recipe(fake_oauth, fake_oauth.grant_refresh_token())
    )
    tokens, errors = all_at_once(row.pk, WORKERS)
    assert errors == []
    assert fake_oauth.refreshes == 1
    assert len(tokens) == WORKERS and len(set(tokens)) == 1


@pytest.mark.django_db(transaction=True)
def test_a_rotating_provider_refreshed_by_many_at_once_keeps_a_working_refresh_token(fake_oauth, account, workspace):
    fake_oauth.token_delay = 0.3
    fake_oauth.rotate_refresh_tokens = True
    row = do_set_secret(
        account, workspace, "ROTATING_OAUTH", oauth_recipe=recipe(fake_oauth, fake_oauth.grant_refresh_token())
    )
    tokens, errors = all_at_once(row.pk, WORKERS)
    assert errors == []
    assert fake_oauth.refreshes == 1
    saved = _recipe(Secret.objects.get(pk=row.pk))["refresh_token"]
    assert saved in fake_oauth.valid_refresh  # the rotated one, which the provider still honours
    assert len(set(tokens)) == 1


def test_a_refused_refresh_leaves_the_step_a_sentence_by_name_not_an_empty_value(fake_oauth, account, workspace):
    do_set_secret(account, workspace, "DEAD_OAUTH", oauth_recipe=recipe(fake_oauth, "rt-revoked"))
    found = resolve_secrets(workspace, ["DEAD_OAUTH"])
    assert "DEAD_OAUTH" not in found
    assert found.failed["DEAD_OAUTH"] == (
        "the token endpoint for DEAD_OAUTH refused the refresh (HTTP 400: invalid_grant)"
    )


# ---------------------------------------------------------------- foldrun connect


@pytest.fixture
def alice_cli(cli, signed_in_as, alice, workspace, transactional_db):
    signed_in_as(alice)
    return cli


@pytest.fixture
def clicking_browser(tmp_path, monkeypatch):
    """A stand-in browser: follows the consent URL's redirects, as a person clicking Allow would."""
    script = tmp_path / "browser.py"
    script.write_text("import sys, httpx\nhttpx.get(sys.argv[1], follow_redirects=True, timeout=10)\n")
    monkeypatch.setenv("BROWSER", f"{sys.executable} {script}")
    monkeypatch.delenv("FOLDRUN_CONNECT_PORT", raising=False)
    monkeypatch.setenv("FOLDRUN_CONNECT_TIMEOUT", "30")


def test_connect_catches_the_redirect_on_localhost_8642_with_pkce_and_prints_nothing_secret(
    alice_cli, clicking_browser, fake_oauth, workspace, monkeypatch
):
    monkeypatch.setattr(sys, "stdin", io.StringIO(fake_oauth.client_secret + "\n"))
    done = alice_cli(
        "connect",
        "CRM_OAUTH",
        "--provider",
        "custom",
        "--to",
        "rank-desk",
        "--client-id",
        fake_oauth.client_id,
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
        "--scopes",
        "crm.read crm.write",
    )
    assert done.code == 0, done.err
    asked = fake_oauth.authorize_requests[0]
    assert asked["redirect_uri"] == "http://localhost:8642/callback"
    assert asked["scope"] == "crm.read crm.write"
    assert asked["code_challenge_method"] == "S256"
    verifier = fake_oauth.token_requests[0]["code_verifier"]
    assert (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        == asked["code_challenge"]
    )
    stored = _recipe(Secret.objects.get(name="CRM_OAUTH", workspace=workspace))
    assert done.out == "Stored CRM_OAUTH in workspace rank-desk: it refreshes itself before every use.\n"
    for value in (fake_oauth.client_secret, stored["access_token"], stored["refresh_token"], verifier):
        assert value not in done.out + done.err


def test_a_preset_starts_with_its_example_scopes(alice_cli, clicking_browser, fake_oauth, monkeypatch):
    from vault.oauth import OAUTH_PRESETS

    monkeypatch.setattr(sys, "stdin", io.StringIO(fake_oauth.client_secret))
    done = alice_cli(
        "connect",
        "GMAIL_OAUTH",
        "--provider",
        "google",
        "--client-id",
        fake_oauth.client_id,
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
    )
    assert done.code == 0, done.err
    assert fake_oauth.authorize_requests[0]["scope"] == OAUTH_PRESETS["google"].scopes


def test_a_provider_without_pkce_is_not_sent_a_challenge(alice_cli, clicking_browser, fake_oauth, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(fake_oauth.client_secret))
    done = alice_cli(
        "connect",
        "LI_OAUTH",
        "--provider",
        "linkedin",
        "--client-id",
        fake_oauth.client_id,
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
    )
    assert done.code == 0, done.err
    assert "code_challenge" not in fake_oauth.authorize_requests[0]
    assert "code_verifier" not in fake_oauth.token_requests[0]


def test_a_provider_that_sends_no_refresh_token_is_stored_as_is_with_its_expiry(
    alice_cli, clicking_browser, fake_oauth, monkeypatch
):
    fake_oauth.issue_refresh_tokens = False
    monkeypatch.setattr(sys, "stdin", io.StringIO(fake_oauth.client_secret))
    done = alice_cli(
        "connect",
        "GH_OAUTH",
        "--provider",
        "github",
        "--client-id",
        fake_oauth.client_id,
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
    )
    row = Secret.objects.get(name="GH_OAUTH")
    assert (row.kind, row.refreshable) == ("oauth2", False)
    assert done.out == (
        f"Stored GH_OAUTH in the account vault as is: the provider sent no refresh token, so it "
        f"expires at {row.expires_at:%Y-%m-%d %H:%M} UTC — connect again after that.\n"
    )


def test_the_dashboard_shows_the_exact_redirect_url(alice_api, settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com/"
    assert alice_api.get("/api/oauth/redirect-uri").json() == {
        "redirect_uri": "https://foldrun.example.com/api/oauth/callback"
    }
    started = alice_api.post(
        "/api/oauth/start", {"name": "X_OAUTH", "provider": "github", "client_id": "c"}, format="json"
    ).json()
    query = parse_qs(urlsplit(started["consent_url"]).query)
    assert query["redirect_uri"] == ["https://foldrun.example.com/api/oauth/callback"]
    assert started["redirect_uri"] == "https://foldrun.example.com/api/oauth/callback"
