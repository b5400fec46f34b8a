"""The local test site answers as its docstring says, in the real Chromium the tools drive."""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright

from foldrun.web.browse import CHROMIUM, LAUNCH_ARGS
from tests.fakes.mcp_site import EMAIL, PASSWORD, arena

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def page():
    with arena() as site, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        tab = browser.new_page()
        tab.site = site  # type: ignore[attr-defined]
        yield tab
        browser.close()


def test_signing_in_with_the_demo_account_reaches_the_dashboard(page):
    page.goto(page.site.url + "/login")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/dashboard")
    assert page.locator("h1").inner_text() == "Welcome back"


def test_a_wrong_password_answers_the_form_again_saying_invalid_password(page):
    page.context.clear_cookies()
    page.goto(page.site.url + "/login")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text() == "Invalid password"
    page.goto(page.site.url + "/dashboard")
    assert page.url.endswith("/login")


def test_the_old_page_linked_from_home_is_a_broken_link(page):
    page.goto(page.site.url + "/")
    assert page.locator("a[href='/old-page']").count() == 1
    assert page.goto(page.site.url + "/old-page").status == 404


def test_the_console_error_page_logs_an_error_and_throws_one(page):
    messages: list[str] = []
    errors: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page.site.url + "/console-error")
    page.wait_for_timeout(200)
    assert "error: Widget failed to load" in messages
    assert any("The widget crashed" in e for e in errors)


def test_robots_txt_disallows_private_and_names_the_sitemap_which_lists_an_unlinked_page(page):
    robots = page.goto(page.site.url + "/robots.txt").text()
    assert "Disallow: /private/" in robots and f"Sitemap: {page.site.url}/sitemap.xml" in robots
    assert f"<loc>{page.site.url}/unlinked</loc>" in page.goto(page.site.url + "/sitemap.xml").text()
