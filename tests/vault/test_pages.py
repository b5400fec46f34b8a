"""Settings → Secrets pages and the dashboard's Connect, with tenancy."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest
from django.test import Client, override_settings

from vault.actions import do_set_secret
from vault.models import Secret

PLANTED = "page-planted-0042"


def browser_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_workspace_page_lists_names_and_scopes_never_values(alice, account, workspace):
    do_set_secret(account, None, "SHARED_KEY", value=PLANTED, user=alice)
    do_set_secret(account, workspace, "SHARED_KEY", value=PLANTED + "-ws", user=alice)
    page = browser_for(alice).get("/w/rank-desk/settings/secrets")
    html = page.content.decode()
    assert page.status_code == 200
    assert "<code>SHARED_KEY</code>" in html and "workspace rank-desk" in html and "overridden" in html
    assert PLANTED not in html


def test_alice_sets_and_deletes_a_secret_from_the_page(alice, account):
    browser = browser_for(alice)
    answer = browser.post("/settings/secrets/set", {"name": "FROM_PAGE", "value": PLANTED})
    assert answer.status_code == 302
    assert Secret.objects.filter(name="FROM_PAGE", workspace__isnull=True).exists()
    browser.post("/settings/secrets/FROM_PAGE/delete")
    assert not Secret.objects.filter(name="FROM_PAGE").exists()


def test_a_bad_name_on_the_page_says_why(alice, account):
    browser = browser_for(alice)
    page = browser.post("/settings/secrets/set", {"name": "lower", "value": "v"}, follow=True)
    assert "A secret&#x27;s name is UPPER_SNAKE_CASE" in page.content.decode()


def test_charlie_gets_404_on_alices_workspace_pages(charlie, workspace):
    browser = browser_for(charlie)
    assert browser.get("/w/rank-desk/settings/secrets").status_code == 404
    assert browser.post("/w/rank-desk/settings/secrets/set", {"name": "X", "value": "v"}).status_code == 404
    assert browser.post("/w/rank-desk/settings/secrets/connect", {"name": "X"}).status_code == 404


def test_bob_reads_the_page_but_cannot_write(bob, account, workspace):
    browser = browser_for(bob)
    assert browser.get("/w/rank-desk/settings/secrets").status_code == 200
    assert "Set a secret" not in browser.get("/settings/secrets").content.decode()
    assert browser.post("/settings/secrets/set", {"name": "X", "value": "v"}).status_code == 403
    assert browser.post("/settings/secrets/X/delete").status_code == 403


def test_the_connect_form_shows_the_exact_redirect_url(alice, account):
    with override_settings(FOLDRUN_PUBLIC_URL="https://foldrun.example.com"):
        html = browser_for(alice).get("/settings/secrets").content.decode()
    assert '<code id="redirect-uri">https://foldrun.example.com/api/oauth/callback</code>' in html


def test_without_a_public_url_the_page_points_to_the_terminal(alice, account):
    with override_settings(FOLDRUN_PUBLIC_URL=None):
        html = browser_for(alice).get("/settings/secrets").content.decode()
    assert "needs <code>FOLDRUN_PUBLIC_URL</code>" in html


@pytest.fixture
def consented(alice, workspace, fake_oauth):
    """Alice submits Connect, the provider's consent screen sends her back with a code."""
    with override_settings(FOLDRUN_PUBLIC_URL="http://testserver"):
        browser = browser_for(alice)
        start = browser.post(
            "/w/rank-desk/settings/secrets/connect",
            {
                "name": "LINKEDIN_OAUTH",
                "provider": "custom",
                "client_id": fake_oauth.client_id,
                "client_secret": fake_oauth.client_secret,
                "scopes": "openid",
                "auth_url": fake_oauth.auth_url,
                "token_url": fake_oauth.token_url,
            },
        )
        consent = httpx.get(start["Location"], follow_redirects=False)
        back = urlsplit(consent.headers["location"])
        yield browser, back.path + "?" + back.query


def test_the_dashboard_connect_round_trip_stores_a_refreshing_credential(consented, fake_oauth, workspace):
    browser, callback = consented
    assert fake_oauth.authorize_requests[0]["redirect_uri"] == "http://testserver/api/oauth/callback"
    with override_settings(FOLDRUN_PUBLIC_URL="http://testserver"):
        answer = browser.get(callback)
    assert answer.status_code == 302
    assert answer["Location"] == "/w/rank-desk/settings/secrets?connected=LINKEDIN_OAUTH"
    row = Secret.objects.get(name="LINKEDIN_OAUTH")
    assert (row.kind, row.refreshable, row.workspace_id) == ("oauth2", True, workspace.pk)
    assert fake_oauth.token_requests[0]["code_verifier"]


def test_charlie_cannot_finish_alices_connect(consented, charlie):
    _, callback = consented
    with override_settings(FOLDRUN_PUBLIC_URL="http://testserver"):
        assert browser_for(charlie).get(callback).status_code == 404
    assert not Secret.objects.filter(name="LINKEDIN_OAUTH").exists()


def test_a_refused_consent_stores_nothing(alice, workspace):
    with override_settings(FOLDRUN_PUBLIC_URL="http://testserver"):
        browser = browser_for(alice)
        browser.post("/settings/secrets/connect", {"name": "X_OAUTH", "provider": "github", "client_id": "c"})
        from vault.models import OAuthPending

        state = OAuthPending.objects.get().state
        page = browser.get(f"/api/oauth/callback?state={state}&error=access_denied", follow=True)
    assert "The provider did not grant access (access_denied); nothing was stored." in page.content.decode()
    assert not Secret.objects.exists()


def test_check_now_shows_each_provider_keys_verdict(alice, account, workspace, fake_provider):
    from library.actions.writes import FileWrite, do_write_files

    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{MODEL_KEY}}", model: m}}'
    do_write_files(
        account=account,
        workspace=workspace,
        kind="push",
        writes=[FileWrite("AGENTS.md", f"---\nprovider: {block}\n---\nx\n")],
    )
    do_set_secret(account, workspace, "MODEL_KEY", value=PLANTED)
    fake_provider.reply_status(401)
    page = browser_for(alice).post("/settings/secrets/providers/check", follow=True)
    html = page.content.decode()
    assert "1 of 1 provider key(s) are not working." in html
    assert "✗ credential" in html and "MODEL_KEY" in html
    assert PLANTED not in html


def test_bob_cannot_force_a_check_from_the_page(bob, account):
    assert browser_for(bob).post("/settings/secrets/providers/check").status_code == 403


def test_broken_vault_keys_are_a_sentence_on_the_page(alice, account, settings):
    settings.FOLDRUN_VAULT_KEYS = ["bad!!"]
    page = browser_for(alice).post("/settings/secrets/set", {"name": "SOME_KEY", "value": "v"}, follow=True)
    assert page.status_code == 200
    assert "Nothing was saved: FOLDRUN_VAULT_KEYS: entry 1 is not base64" in page.content.decode()


def test_a_plain_http_dashboard_is_warned_that_providers_may_refuse_it(alice, account, settings):
    settings.FOLDRUN_PUBLIC_URL = "http://foldrun.internal:8000"
    html = browser_for(alice).get("/settings/secrets").content.decode()
    assert 'id="plain-http-note"' in html
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"
    assert 'id="plain-http-note"' not in browser_for(alice).get("/settings/secrets").content.decode()
