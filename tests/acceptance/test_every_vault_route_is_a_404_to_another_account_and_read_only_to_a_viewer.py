"""Tenancy on every vault endpoint: charlie gets a 404, bob may only read.

The vault's routes are read from the URLconf (every API route and page whose
view lives in the `vault` app), so a route added later fails the
classification test below until someone says what charlie and bob get there.
Charlie (another account) gets the not-found body on anything of alice's;
bob (alice's viewer) gets a 403 on every write and may read.
"""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from vault.models import OAuthPending, Secret, SiteLogin

from .conftest import url_patterns

NOT_FOUND = {"code": "not_found", "message": "Not found.", "details": {}}
VIEWER = "Your role (viewer) can read this account but not change it."
PLANTED = "tenancy-planted-value-6060"


def vault_routes() -> set[str]:
    """Every URL pattern (API and page) whose view is in the vault app."""

    def module(p) -> str:
        return getattr(getattr(p.callback, "view_class", None) or p.callback, "__module__", "") or ""

    return {"/" + route for route, p in url_patterns() if module(p).startswith("vault.")}


# (method, route) → what charlie gets. "404": the not-found body. "own": the
# route addresses charlie's own account and must show nothing of alice's.
CHARLIE = {
    ("get", "/api/secrets"): "own",
    ("get", "/api/secrets/<str:name>"): "404",
    ("put", "/api/secrets/<str:name>"): "own",
    ("delete", "/api/secrets/<str:name>"): "404",
    ("get", "/api/workspaces/<str:ws>/secrets"): "404",
    ("get", "/api/workspaces/<str:ws>/secrets/<str:name>"): "404",
    ("put", "/api/workspaces/<str:ws>/secrets/<str:name>"): "404",
    ("delete", "/api/workspaces/<str:ws>/secrets/<str:name>"): "404",
    ("get", "/api/account/providers"): "own",
    ("post", "/api/account/providers"): "own",
    ("post", "/api/probe"): "own",
    ("post", "/api/workspaces/<str:ws>/probe"): "404",
    ("post", "/api/oauth/start"): "404",  # with workspace: rank-desk in the body
    ("get", "/api/oauth/redirect-uri"): "own",
    ("get", "/api/oauth/callback"): "404",  # with alice's state
    ("get", "/api/logins"): "own",
    ("post", "/api/logins"): "own",
    ("delete", "/api/logins/<str:login_id>"): "404",
}
PAGES = {
    "/settings/secrets",
    "/settings/secrets/set",
    "/settings/secrets/connect",
    "/settings/secrets/providers/check",
    "/settings/secrets/<str:name>/delete",
    "/w/<str:ws>/settings/secrets",
    "/w/<str:ws>/settings/secrets/set",
    "/w/<str:ws>/settings/secrets/connect",
    "/w/<str:ws>/settings/secrets/<str:name>/delete",
}


def test_every_vault_route_is_classified_here():
    assert vault_routes() == {route for _m, route in CHARLIE} | PAGES


@pytest.fixture
def alices(alice_api, account, workspace, settings):
    settings.FOLDRUN_PUBLIC_URL = "http://testserver"
    assert alice_api.put("/api/secrets/ALICE_KEY", {"value": PLANTED}, format="json").status_code == 200
    assert (
        alice_api.put("/api/workspaces/rank-desk/secrets/DESK_KEY", {"value": PLANTED}, format="json").status_code
        == 200
    )
    started = alice_api.post(
        "/api/oauth/start",
        {"name": "LINKEDIN_OAUTH", "provider": "github", "client_id": "c", "workspace": "rank-desk"},
        format="json",
    )
    assert started.status_code == 200, started.json()
    login = alice_api.post(
        "/api/logins", {"host": "portal.example.com", "username": "alice", "password": PLANTED}, format="json"
    )
    assert login.status_code in (200, 201), login.json()
    return OAuthPending.objects.get().state


def path_for(route: str, state: str) -> str:
    login_id = SiteLogin.objects.values_list("public_id", flat=True).first() or "vlg_missing0000"
    path = (
        route.replace("<str:ws>", "rank-desk")
        .replace("<str:name>", "DESK_KEY" if "workspaces" in route else "ALICE_KEY")
        .replace("<str:login_id>", login_id)
    )
    return path + (f"?state={state}" if route.endswith("/callback") else "")


BODY = {
    "value": "charlie-writes-1",
    "model": "m",
    "provider": "anthropic",
    "name": "X_OAUTH",
    "client_id": "c",
    "workspace": "rank-desk",
}


def ask(client, method, path):
    if method in ("get", "delete"):
        return getattr(client, method)(path)
    if path == "/api/oauth/start":  # a valid connect (a closed body) naming another account's desk
        body = {"name": "X_OAUTH", "provider": "github", "client_id": "c", "workspace": "rank-desk"}
    else:
        body = BODY
    return getattr(client, method)(path, body, format="json")


@pytest.mark.parametrize("method,route", sorted(k for k, v in CHARLIE.items() if v == "404"))
def test_charlie_gets_the_not_found_body_on_alices_vault(alices, charlie_api, method, route):
    answer = ask(charlie_api, method, path_for(route, alices))
    assert (answer.status_code, answer.json()) == (404, NOT_FOUND)


@pytest.mark.parametrize("method,route", sorted(k for k, v in CHARLIE.items() if v == "own"))
def test_charlies_own_account_routes_show_nothing_of_alices(alices, charlie_api, method, route):
    answer = ask(charlie_api, method, path_for(route, alices))
    assert answer.status_code < 500
    assert "ALICE_KEY" not in answer.content.decode() and "DESK_KEY" not in answer.content.decode()
    assert PLANTED not in answer.content.decode()


def test_nothing_charlie_did_changed_alices_vault(alices, charlie_api, account):
    for method, route in CHARLIE:
        ask(charlie_api, method, path_for(route, alices))
    mine = {(s.name, s.workspace_id is not None) for s in Secret.objects.filter(account=account)}
    assert mine == {("ALICE_KEY", False), ("DESK_KEY", True)}
    assert OAuthPending.objects.filter(account=account).count() == 1
    assert list(SiteLogin.objects.filter(account=account).values_list("host", "username")) == [
        ("portal.example.com", "alice")
    ]


WRITES = sorted((m, r) for (m, r) in CHARLIE if m in ("put", "post", "delete")) + [("get", "/api/oauth/callback")]


@pytest.mark.parametrize("method,route", WRITES)
def test_bob_gets_403_on_every_vault_write(alices, bob_api, method, route):
    answer = ask(bob_api, method, path_for(route, alices))
    assert answer.status_code == 403
    assert answer.json()["message"] == VIEWER


@pytest.mark.parametrize(
    "method,route", sorted((m, r) for (m, r) in CHARLIE if m == "get" and not r.endswith("/callback"))
)
def test_bob_may_read_and_sees_no_value(alices, bob_api, method, route):
    answer = ask(bob_api, method, path_for(route, alices))
    assert answer.status_code == 200
    assert PLANTED not in answer.content.decode()


# ---------------------------------------------------------------- the pages

PAGE_WRITES = [
    "/settings/secrets/set",
    "/settings/secrets/connect",
    "/settings/secrets/providers/check",
    "/settings/secrets/ALICE_KEY/delete",
    "/w/rank-desk/settings/secrets/set",
    "/w/rank-desk/settings/secrets/connect",
    "/w/rank-desk/settings/secrets/DESK_KEY/delete",
]


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "path",
    [
        "/w/rank-desk/settings/secrets",
        "/w/rank-desk/settings/secrets/set",
        "/w/rank-desk/settings/secrets/connect",
        "/w/rank-desk/settings/secrets/DESK_KEY/delete",
    ],
)
def test_charlie_gets_404_on_alices_workspace_pages(alices, charlie, path):
    page = browser(charlie)
    answer = page.get(path) if path.endswith("/secrets") else page.post(path, {"name": "X_KEY", "value": "v"})
    assert answer.status_code == 404
    assert Secret.objects.filter(name="X_KEY").count() == 0


def test_charlies_own_secrets_page_shows_nothing_of_alices(alices, charlie):
    html = browser(charlie).get("/settings/secrets").content.decode()
    assert "ALICE_KEY" not in html and PLANTED not in html


def test_charlie_deleting_alices_name_on_his_own_page_leaves_hers(alices, charlie, account):
    answer = browser(charlie).post("/settings/secrets/ALICE_KEY/delete")
    assert answer.status_code == 404
    assert Secret.objects.filter(account=account, name="ALICE_KEY").exists()


@pytest.mark.parametrize("path", PAGE_WRITES)
def test_bob_gets_403_on_every_page_write(alices, bob, path):
    answer = browser(bob).post(path, {"name": "BOB_KEY", "value": "v", "provider": "github", "client_id": "c"})
    assert answer.status_code == 403
    assert not Secret.objects.filter(name="BOB_KEY").exists()
    assert Secret.objects.filter(name__in=["ALICE_KEY", "DESK_KEY"]).count() == 2


def test_bob_reads_both_pages_without_a_value(alices, bob):
    for path in ("/settings/secrets", "/w/rank-desk/settings/secrets"):
        answer = browser(bob).get(path)
        assert answer.status_code == 200
        assert PLANTED not in answer.content.decode()
