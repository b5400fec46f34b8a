"""One scoped base for every API view: another account's object is a 404 with the same body as a missing one,
and trying every route changes nothing of it; a token acts in its own account only. (Issue 2, item 2.)

The routes are read from the URLconf, so a route added later is covered
without anyone remembering to add it here."""

from __future__ import annotations

from .conftest import MISSING, NOT_FOUND, WRITE_BODY, api_routes, fill, params_of


# Routes that name no object of an account: nothing of alice's to reach.
NOT_ACCOUNT_OBJECTS = {
    "/api/gallery/<str:tool>",  # the shelf is the same for everyone
    "/api/library/gallery/<str:tool>/install",  # installs the shelf's tool into the caller's own library
    "/api/library/gallery/<str:tool>/upgrade",
}
# Routes a caller addresses inside their own account by name: a PUT there
# creates the caller's own object, which is not a way into alice's.
CREATES_IN_OWN_ACCOUNT = {("/api/library/files/<path:path>", "put"), ("/api/secrets/<str:name>", "put")}
# The inbound webhook takes no login; it is addressed by the workspace's public id.
NO_LOGIN = {"/api/hooks/<str:ws>/<str:flow>"}


def scoped_requests():
    """(method, route) for every route whose URL names an account's object."""
    for route, _cls, methods in api_routes():
        names = set(params_of(route))
        if not names or route in NOT_ACCOUNT_OBJECTS or route in NO_LOGIN:
            continue
        for method in methods:
            if (route, method) not in CREATES_IN_OWN_ACCOUNT:
                yield method, route


def ask(client, method: str, path: str):
    if method in ("get", "delete"):
        return getattr(client, method)(path)
    return getattr(client, method)(path, WRITE_BODY, format="json")


def test_the_enumeration_finds_every_kind_of_route():
    routes = {route for _m, route in scoped_requests()}
    assert "/api/workspaces/<str:ws>" in routes
    assert "/api/workspaces/<str:ws>/runs/<str:run_id>/artifacts/<str:artifact_id>" in routes
    assert "/api/workspaces/<str:ws>/notify/deliveries/<str:delivery_id>/redeliver" in routes
    assert "/api/members/<str:member_id>" in routes
    assert "/api/library/revisions/<int:number>" in routes
    assert len(list(scoped_requests())) >= 40


def test_alice_reaches_every_object_the_charlie_tests_name(world, alice_api):
    # Without this the 404s below could be 404s for everyone.
    missed = {}
    for method, route in scoped_requests():
        if method == "get":
            response = alice_api.get(fill(route, world))
            if response.status_code != 200:
                missed[route] = response.status_code
    assert missed == {}


def test_charlie_gets_the_not_found_body_on_every_route_naming_alices_objects(world, charlie_api):
    answers = {}
    for method, route in scoped_requests():
        response = ask(charlie_api, method, fill(route, world))
        answers[f"{method.upper()} {route}"] = (response.status_code, response.json())
    assert {k: v for k, v in answers.items() if v != (404, NOT_FOUND)} == {}


def test_charlie_gets_the_same_body_for_alices_objects_as_for_missing_ones(world, charlie_api):
    differ = {}
    for method, route in scoped_requests():
        hers = ask(charlie_api, method, fill(route, world))
        missing = ask(charlie_api, method, fill(route, MISSING))
        if (hers.status_code, hers.json()) != (missing.status_code, missing.json()):
            differ[f"{method.upper()} {route}"] = (
                (hers.status_code, hers.json()),
                (missing.status_code, missing.json()),
            )
    assert differ == {}


def test_charlie_changed_nothing_of_alices_by_trying_every_route(world, charlie_api, alice_api):
    before = {
        "files": alice_api.get("/api/workspaces/rank-desk/files").json(),
        "library": alice_api.get("/api/library/files").json(),
        "members": alice_api.get("/api/members").json(),
        "secrets": alice_api.get("/api/secrets").json(),
        "workspaces": alice_api.get("/api/workspaces").json(),
        "tokens": len(alice_api.get("/api/tokens").json()),
    }
    for method, route in scoped_requests():
        ask(charlie_api, method, fill(route, world))
    after = {
        "files": alice_api.get("/api/workspaces/rank-desk/files").json(),
        "library": alice_api.get("/api/library/files").json(),
        "members": alice_api.get("/api/members").json(),
        "secrets": alice_api.get("/api/secrets").json(),
        "workspaces": alice_api.get("/api/workspaces").json(),
        "tokens": len(alice_api.get("/api/tokens").json()),
    }
    assert after == before


def test_no_list_charlie_can_read_names_anything_of_alices(world, charlie_api):
    alices = [world[k] for k in ("ws_id", "member_id", "invite_id", "token_id", "run_id", "artifact_id", "delivery_id")]
    alices += [
        "rank-desk",
        "ALICE_KEY",
        "DESK_KEY",
        "alice@example.com",
        "bob@example.com",
        "dora@example.com",
        "tools/shared.md",
    ]
    leaked = {}
    for route, _cls, methods in api_routes():
        if "get" in methods and not params_of(route) and route != "/api/schema/":
            text = charlie_api.get(route).content.decode(errors="replace")
            seen = [value for value in alices if value in text]
            if seen:
                leaked[route] = seen
    assert leaked == {}


def test_charlie_changing_his_preferences_for_alices_workspace_is_a_404(world, charlie_api):
    response = charlie_api.patch(
        "/api/me/notifications", {"category": "run-alerts", "enabled": False, "workspace": "rank-desk"}, format="json"
    )
    assert (response.status_code, response.json()) == (404, NOT_FOUND)


def test_the_inbound_webhook_answers_a_missing_workspace_like_a_flow_without_a_webhook(world, client):
    from accounts.models import Workspace

    missing = client.post("/api/hooks/ws_missing0000/weekly", {}, content_type="application/json")
    no_flow = client.post(f"/api/hooks/{world['ws_id']}/no-such-flow", {}, content_type="application/json")
    assert (missing.status_code, missing.json()) == (404, NOT_FOUND)
    assert (no_flow.status_code, no_flow.json()) == (404, NOT_FOUND)
    assert Workspace.objects.filter(public_id=world["ws_id"]).exists()


# Views that answer before anyone is a member, or without a login at all.
UNSCOPED = {
    "SpectacularAPIView": "the schema",
    "VersionView": "no login",
    "AuthTokenView": "signing in",
    "InviteAcceptView": "joining: the invite token is the proof",
    "HookView": "inbound webhook, no login",
    "unsubscribe": "RFC 8058 one-click, no login",
    "HealthView": "a load balancer's probe: no login, no account data",
}


def test_every_api_view_stands_on_the_scoped_base():
    from accounts.access import ScopedAPIView

    outside = {}
    for route, cls, _methods in api_routes():
        name = cls.__name__ if cls else "unsubscribe"
        if name not in UNSCOPED and not (cls and issubclass(cls, ScopedAPIView)):
            outside[route] = name
    assert outside == {}


def test_a_token_acts_in_its_own_account_only_even_for_a_member_of_two(world, charlie, alice):
    from accounts.models import ApiToken, Membership, Role, Workspace, hash_token
    from rest_framework.test import APIClient

    other = charlie.memberships.get().account
    Workspace.objects.create(account=other, name="charlies-desk")
    Membership.objects.create(account=other, user=alice, role=Role.VIEWER)
    raw = ApiToken.mint()
    ApiToken.objects.create(user=alice, account=other, name="other", token_hash=hash_token(raw), hint=raw[:8])
    in_other = APIClient()
    in_other.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert in_other.get("/api/me").json()["account"]["role"] == "viewer"
    assert in_other.get("/api/workspaces/charlies-desk").status_code == 200
    assert (
        in_other.get("/api/workspaces/rank-desk").status_code,
        in_other.get("/api/workspaces/rank-desk").json(),
    ) == (404, NOT_FOUND)
    assert (
        in_other.post("/api/workspaces/charlies-desk/push", {"message": "m", "files": []}, format="json").status_code
        == 403
    )
