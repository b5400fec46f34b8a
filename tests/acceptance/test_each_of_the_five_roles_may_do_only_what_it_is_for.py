"""The five roles and what each may do; a viewer gets 403, in a sentence naming his role, on every write route
(read from the URLconf) and writes nothing by trying. (Issue 2, item 2.)"""

from __future__ import annotations

import pytest

from accounts.models import Membership, Role, Workspace
from tests.conftest import _user, client_for

from .conftest import WRITE_BODY, api_routes, fill


DENIED_WRITE = "can read this account but not change it."

# Writes a viewer may make, and why.
VIEWER_MAY = {
    ("/api/auth/token", "post"): "signing in takes no account role",
    ("/api/invites/accept", "post"): "the invite token is the proof, for any signed-in person",
    ("/api/tokens", "post"): "a viewer may mint a token for himself",
    ("/api/tokens/<str:token_id>", "delete"): "another member's token is as missing as another account's: 404",
    ("/api/workspaces/<str:ws>/check", "post"): "a check writes nothing",
    ("/api/library/check", "post"): "a check writes nothing",
    ("/api/hooks/<str:ws>/<str:flow>", "post"): "the inbound webhook takes no login",
    ("/api/me/notifications", "patch"): "a person's own inbox, not the account's data",
}


def write_requests():
    for route, _cls, methods in api_routes():
        for method in methods:
            if method != "get" and (route, method) not in VIEWER_MAY:
                yield method, route


def test_bob_the_viewer_gets_403_on_every_write_route(world, bob_api):
    answers = {}
    for method, route in write_requests():
        path = fill(route, world)
        response = (
            bob_api.delete(path) if method == "delete" else getattr(bob_api, method)(path, WRITE_BODY, format="json")
        )
        answers[f"{method.upper()} {route}"] = response.status_code
    assert {k: v for k, v in answers.items() if v != 403} == {}
    assert len(answers) >= 30


def test_bobs_403_is_a_sentence_naming_his_role(world, bob_api):
    response = bob_api.post("/api/workspaces/rank-desk/push", WRITE_BODY, format="json")
    assert response.json() == {
        "code": "permission_denied",
        "message": f"Your role (viewer) {DENIED_WRITE}",
        "details": {},
    }


def test_bob_wrote_nothing_by_trying_every_write_route(world, bob_api, alice_api):
    before = (
        alice_api.get("/api/workspaces/rank-desk/revisions").json(),
        alice_api.get("/api/library/revisions").json(),
        alice_api.get("/api/members").json(),
        alice_api.get("/api/secrets").json(),
        alice_api.get("/api/workspaces").json(),
    )
    for method, route in write_requests():
        path = fill(route, world)
        bob_api.delete(path) if method == "delete" else getattr(bob_api, method)(path, WRITE_BODY, format="json")
    after = (
        alice_api.get("/api/workspaces/rank-desk/revisions").json(),
        alice_api.get("/api/library/revisions").json(),
        alice_api.get("/api/members").json(),
        alice_api.get("/api/secrets").json(),
        alice_api.get("/api/workspaces").json(),
    )
    assert after == before


# role → (push a desk, invite someone, reject a waiting step, make bob an owner, delete a workspace)
ROLES = {
    Role.OWNER: (201, 201, 200, 200, 204),
    Role.ADMIN: (201, 201, 200, 403, 204),
    Role.EDITOR: (201, 403, 200, 403, 403),
    Role.APPROVER: (403, 403, 200, 403, 403),
    Role.VIEWER: (403, 403, 403, 403, 403),
}


def test_there_are_exactly_five_roles():
    assert sorted(Role.values) == ["admin", "approver", "editor", "owner", "viewer"]


@pytest.mark.parametrize("role", list(ROLES))
def test_what_each_role_may_do(world, account, role):
    dana = _user("dana@example.com")
    Membership.objects.create(account=account, user=dana, role=role)
    api = client_for(dana)
    assert api.get("/api/workspaces/rank-desk/files").status_code == 200
    push = api.post(
        "/api/workspaces/rank-desk/push",
        {
            "message": "m",
            "files": [
                {
                    "path": "knowledge/more.md",
                    "content": "---\ntype: Reference\ntitle: More\ndescription: More.\n---\nx\n",
                }
            ],
        },
        format="json",
    )
    invite = api.post("/api/invites", {"email": "erin@example.com", "role": "viewer"}, format="json")
    reject = api.post(f"/api/workspaces/rank-desk/runs/{world['run_id']}/steps/1/reject", {}, format="json")
    promote = api.patch(f"/api/members/{world['member_id']}", {"role": "owner"}, format="json")
    Workspace.objects.create(account=account, name="scratch")
    delete = api.delete("/api/workspaces/scratch")
    assert (push.status_code, invite.status_code, reject.status_code, promote.status_code, delete.status_code) == ROLES[
        role
    ]
