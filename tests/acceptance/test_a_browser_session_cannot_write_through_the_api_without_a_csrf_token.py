"""A signed-in browser's session cookie alone cannot write through the API: without a CSRF token it is a 403,
while a read still answers. (Issue 2, item 2.)"""

from __future__ import annotations


def test_a_browser_session_cannot_write_through_the_api_without_a_csrf_token(world, alice):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    response = browser.post("/api/workspaces", {"name": "forged"}, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["message"].startswith("CSRF Failed")
    assert browser.get("/api/workspaces/rank-desk").status_code == 200
