"""Real Chromium for page tests: a signed-in page on the live server, and the
folder where screenshots are kept ($FOLDRUN_ARTIFACTS, else test-artifacts/ at
the repository's root; CI keeps it as an artifact)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def artifacts() -> Path:
    folder = Path(os.environ.get("FOLDRUN_ARTIFACTS") or Path(__file__).resolve().parents[2] / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def chromium(monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the test's own ORM calls between
    # browser steps are plain synchronous ones (no coroutine shares the connection).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # While Playwright's loop runs in this thread, asgiref (under django.db.connections) keeps this
            # thread's connections in a store of their own: ORM calls made meanwhile open a second session, and
            # the test's teardown, made with the loop stopped, never sees it. Closed here, while it is visible;
            # left open, it outlived the test database, whose drop then failed ("being accessed by other users").
            connections.close_all()


@pytest.fixture
def signed_in(chromium, live_server):
    """signed_in(user, width=1200) -> a Playwright page whose session is the user's (the session
    cookie a real sign-in would set; the sign-in form itself is proven in test_library_page)."""
    contexts = []

    def make(user, *, width: int = 1200, height: int = 900):
        client = Client()
        client.force_login(user)
        context = chromium.new_context(viewport={"width": width, "height": height})
        context.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                    "url": live_server.url,
                }
            ]
        )
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def color_of(locator, prop: str = "color") -> str:
    """A computed style, as the browser resolved it (rgb(…))."""
    return locator.evaluate(f"(el) => getComputedStyle(el).getPropertyValue('{prop}')")
