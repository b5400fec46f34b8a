"""POST /api/invites validates `role` against what the schema documents: only a missing role means viewer."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
@pytest.mark.parametrize("role", [{}, [], "", 0, False])
def test_an_invite_whose_role_is_not_a_role_is_a_400_not_a_viewer_invite(alice_api, role):
    answer = alice_api.post("/api/invites", {"email": "dora@example.com", "role": role}, format="json")
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "invalid" and body["details"] == {
        "field": "role",
        "choices": ["owner", "admin", "editor", "approver", "viewer"],
    }
    assert body["message"].endswith("is not a role; use one of owner, admin, editor, approver, viewer.")


@pytest.mark.django_db
def test_an_invite_with_no_role_invites_a_viewer(alice_api):
    answer = alice_api.post("/api/invites", {"email": "dora@example.com"}, format="json")
    assert answer.status_code == 201
    assert answer.json()["role"] == "viewer"
