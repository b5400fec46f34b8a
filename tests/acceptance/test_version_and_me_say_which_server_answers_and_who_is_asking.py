"""/api/version answers without a login, with the server's version and the browsers it drives; /api/me names
the person, their account and their role. (Issue 2, item 5.)"""

from __future__ import annotations

import re


def test_version_answers_without_a_login(client, db):
    body = client.get("/api/version").json()
    assert re.fullmatch(r"\d+\.\d+\.\d+", body["version"])


def test_me_names_the_person_their_account_and_role(alice_api, account):
    body = alice_api.get("/api/me").json()
    assert (body["email"], body["account"]["id"], body["account"]["role"]) == (
        "alice@example.com",
        account.public_id,
        "owner",
    )


def test_version_reports_the_browsers_the_server_drives(client, db):
    body = client.get("/api/version").json()
    assert body["browsers"] == sorted(body["browser_versions"])
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", body["browser_versions"]["chromium"])
