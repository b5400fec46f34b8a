"""Issue 5 (audit5): tenancy on every notify route, API and page.

The routes are read from the URLconf (every pattern whose view lives in the
`notify` app), so a route added later fails the classification test until
someone says what charlie (another account) and bob (alice's viewer) get
there. Charlie gets the not-found body on anything of alice's — the same as
for a missing one; bob may read and gets a 403 on every write, which sends
nothing.
"""

from __future__ import annotations

import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from notify.actions import do_record_delivery, perform_attempt
from notify.models import Delivery
from tests.notify.conftest import receiver, write_agents_md  # noqa: F401

NOT_FOUND = {"code": "not_found", "message": "Not found.", "details": {}}
VIEWER = "Your role (viewer) can read this account but not change it."


def notify_routes() -> set[str]:
    found: set[str] = set()

    def walk(patterns, prefix=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                view = getattr(p.callback, "view_class", None) or p.callback
                if (getattr(view, "__module__", "") or "").startswith("notify."):
                    found.add("/" + prefix + str(p.pattern))

    walk(get_resolver().url_patterns)
    return found


# (method, route) → "read" (bob may; charlie 404) or "write" (bob 403; charlie 404).
SCOPED = {
    ("get", "/api/workspaces/<str:ws>/notify/deliveries"): "read",
    ("get", "/api/workspaces/<str:ws>/notify/deliveries/<str:delivery_id>"): "read",
    ("post", "/api/workspaces/<str:ws>/notify/deliveries/<str:delivery_id>/redeliver"): "write",
    ("post", "/api/workspaces/<str:ws>/notify/test"): "write",
    ("get", "/w/<str:ws>/notifications/"): "read",
    ("post", "/w/<str:ws>/notifications/test"): "write",
    ("post", "/w/<str:ws>/notifications/deliveries/<str:delivery_id>/redeliver"): "write",
}
# Routes that address the caller's own inbox, or take a token instead of a login.
OWN = {"/api/me/notifications", "/profile/notifications/"}
TOKEN = {
    "/api/unsubscribe",
    "/decide/<str:token>",
    "/reports/<str:token>",
    "/reports/<str:token>/steps/<int:index>.png",
}


def test_every_notify_route_is_classified():
    assert notify_routes() == {route for _m, route in SCOPED} | OWN | TOKEN


@pytest.fixture
def failed_delivery(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(500, b"", 0.0)]
    delivery = do_record_delivery(workspace, "failed", json.dumps({"text": "x"}))
    perform_attempt(delivery.pk)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", next_attempt_at=None)
    receiver.answers = [(200, b"ok", 0.0)]
    return Delivery.objects.get(pk=delivery.pk)


def _path(route: str, ws: str, delivery_id: str) -> str:
    return route.replace("<str:ws>", ws).replace("<str:delivery_id>", delivery_id)


def _ask(client, method: str, path: str):
    return client.get(path) if method == "get" else client.post(path)


def test_charlie_gets_the_missing_answer_on_every_scoped_notify_route(
    charlie, charlie_api, client, failed_delivery, receiver
):
    client.force_login(charlie)
    differ = {}
    for (method, route), _kind in SCOPED.items():
        caller = charlie_api if route.startswith("/api/") else client
        hers = _ask(caller, method, _path(route, "rank-desk", failed_delivery.public_id))
        missing = _ask(caller, method, _path(route, "no-such-desk", "dlv_missing0000"))
        got = (hers.status_code, hers.json() if route.startswith("/api/") else None)
        want = (404, NOT_FOUND if route.startswith("/api/") else None)
        if got != want or missing.status_code != 404:
            differ[f"{method} {route}"] = (got, missing.status_code)
    assert differ == {}
    assert len(receiver.requests) == 1  # only the fixture's own attempt


def test_bob_reads_every_scoped_notify_route_and_is_refused_every_write(
    bob, bob_api, client, failed_delivery, receiver
):
    client.force_login(bob)
    got = {}
    for (method, route), kind in SCOPED.items():
        caller = bob_api if route.startswith("/api/") else client
        answer = _ask(caller, method, _path(route, "rank-desk", failed_delivery.public_id))
        got[f"{method} {route}"] = answer.status_code
        if kind == "write" and route.startswith("/api/"):
            assert answer.json()["message"] == VIEWER
    assert got == {f"{m} {r}": (200 if kind == "read" else 403) for (m, r), kind in SCOPED.items()}
    assert len(receiver.requests) == 1
    assert Delivery.objects.get(pk=failed_delivery.pk).attempts.count() == 1


def test_alice_reaches_every_scoped_notify_route(alice, alice_api, client, failed_delivery, receiver):
    client.force_login(alice)
    got = {}
    for (method, route), _kind in SCOPED.items():
        caller = alice_api if route.startswith("/api/") else client
        answer = _ask(caller, method, _path(route, "rank-desk", failed_delivery.public_id))
        got[f"{method} {route}"] = answer.status_code
    # The pages' writes answer with a redirect back to the page.
    assert got == {f"{m} {r}": (302 if (r.startswith("/w/") and m == "post") else 200) for (m, r) in SCOPED}


def test_a_delivery_of_one_workspace_is_not_found_under_another_of_the_same_account(
    alice_api, account, failed_delivery
):
    from accounts.models import Workspace

    Workspace.objects.create(account=account, name="seo-desk")
    for method, route in [
        ("get", "/api/workspaces/seo-desk/notify/deliveries/{id}"),
        ("post", "/api/workspaces/seo-desk/notify/deliveries/{id}/redeliver"),
    ]:
        answer = _ask(alice_api, method, route.format(id=failed_delivery.public_id))
        assert (answer.status_code, answer.json()) == (404, NOT_FOUND)
    assert alice_api.get("/api/workspaces/seo-desk/notify/deliveries").json() == {"deliveries": []}


def test_my_notifications_show_only_my_account_s_workspaces(charlie_api, alice_api, workspace):
    mine = alice_api.get("/api/me/notifications").json()
    theirs = charlie_api.get("/api/me/notifications").json()
    alerts = next(c for c in mine["categories"] if c["category"] == "run-alerts")
    assert [w["workspace"] for w in alerts["workspaces"]] == ["rank-desk"]
    other = next(c for c in theirs["categories"] if c["category"] == "run-alerts")
    assert "rank-desk" not in [w["workspace"] for w in other["workspaces"]]
    assert theirs["email"] == "charlie@example.com"


def test_the_token_routes_need_no_login_and_a_bad_token_changes_nothing(client):
    assert client.get("/decide/not-a-token").status_code == 400
    assert client.post("/decide/not-a-token").status_code == 400
    assert (
        client.post(
            "/api/unsubscribe?token=not-a-token",
            "List-Unsubscribe=One-Click",
            content_type="application/x-www-form-urlencoded",
        ).status_code
        == 400
    )


def test_anonymous_callers_are_refused_every_scoped_route(client, failed_delivery, receiver):
    got = {}
    for (method, route), _kind in SCOPED.items():
        answer = _ask(client, method, _path(route, "rank-desk", failed_delivery.public_id))
        got[f"{method} {route}"] = answer.status_code
    assert all(code in (401, 403, 302) for code in got.values()), got
    assert len(receiver.requests) == 1
