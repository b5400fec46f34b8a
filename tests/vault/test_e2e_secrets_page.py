"""In a real browser: set a secret on the Secrets page, and Connect an OAuth app
through a loopback consent screen back to `<dashboard URL>/api/oauth/callback`."""

from __future__ import annotations

import pytest

from vault.models import Secret

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PLANTED = "browser-planted-7777"


@pytest.mark.e2e
def test_alice_sets_a_secret_and_connects_an_oauth_app_from_the_page(
    live_server, alice, workspace, fake_oauth, settings, tmp_path
):
    from playwright.sync_api import expect, sync_playwright

    settings.FOLDRUN_PUBLIC_URL = live_server.url
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        try:
            page.goto(f"{live_server.url}/w/rank-desk/settings/secrets")
            page.fill("input[name=login]", "alice@example.com")
            page.fill("input[name=password]", "correct horse battery")
            page.click("form button[type=submit]")
            expect(page).to_have_url(f"{live_server.url}/w/rank-desk/settings/secrets")

            page.fill("#secret-name", "CRM_KEY")
            page.fill("#secret-value", PLANTED)
            page.click("form[aria-label='Set a secret'] button[type=submit]")
            expect(page.locator(".messages")).to_contain_text("Set CRM_KEY.")
            expect(page.locator("#secrets tbody tr").first).to_contain_text("workspace rank-desk")
            assert PLANTED not in page.content()

            expect(page.locator("#redirect-uri")).to_have_text(f"{live_server.url}/api/oauth/callback")
            page.fill("#connect-name", "LINKEDIN_OAUTH")
            page.select_option("#connect-provider", "custom")
            page.fill("#connect-client-id", fake_oauth.client_id)
            page.fill("#connect-client-secret", fake_oauth.client_secret)
            page.fill("#connect-scopes", "openid profile")
            page.fill("#connect-auth-url", fake_oauth.auth_url)
            page.fill("#connect-token-url", fake_oauth.token_url)
            page.click("form[aria-label='Connect'] button[type=submit]")
            expect(page).to_have_url(f"{live_server.url}/w/rank-desk/settings/secrets?connected=LINKEDIN_OAUTH")
            expect(page.get_by_role("status")).to_have_text("Connected LINKEDIN_OAUTH.")
            expect(page.locator("#secrets")).to_contain_text("oauth2 · refreshes itself")
            page.screenshot(path=str(tmp_path / "secrets-page.png"), full_page=True)
        finally:
            browser.close()
    assert Secret.objects.get(name="LINKEDIN_OAUTH").refreshable is True
    assert fake_oauth.token_requests[0]["code_verifier"]
