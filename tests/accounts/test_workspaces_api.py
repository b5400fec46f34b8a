import pytest

from accounts.models import Workspace


def test_alice_creates_a_workspace_with_a_public_id(alice_api):
    response = alice_api.post("/api/workspaces", {"name": "rank-desk"}, format="json")
    assert response.status_code == 201
    assert response.json()["id"].startswith("ws_")
    assert response.json()["name"] == "rank-desk"


def test_a_name_with_odd_characters_is_refused_naming_the_field(alice_api):
    response = alice_api.post("/api/workspaces", {"name": "Rank Desk!"}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == (
        "name: 'Rank Desk!' is not a valid workspace name; use lowercase letters, digits and dashes, "
        "starting with a letter or digit, at most 63 characters."
    )


def test_a_duplicate_name_is_a_conflict(alice_api, workspace):
    response = alice_api.post("/api/workspaces", {"name": "rank-desk"}, format="json")
    assert response.status_code == 409
    assert response.json()["message"] == "name: a workspace called 'rank-desk' already exists in this account."


def test_a_body_that_is_not_an_object_is_a_400(alice_api):
    response = alice_api.post("/api/workspaces", ["rank-desk"], format="json")
    assert response.status_code == 400
    assert response.json()["message"] == "The request body must be a JSON object."


def test_malformed_json_is_a_400_not_a_500(alice_api):
    response = alice_api.generic("POST", "/api/workspaces", "{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "parse_error"


def test_bob_lists_workspaces_but_cannot_create_one(bob_api, workspace):
    assert [w["name"] for w in bob_api.get("/api/workspaces").json()] == ["rank-desk"]
    response = bob_api.post("/api/workspaces", {"name": "other"}, format="json")
    assert response.status_code == 403
    assert response.json()["message"] == "Your role (viewer) can read this account but not change it."


def test_charlie_sees_none_of_alices_workspaces(charlie_api, workspace):
    assert charlie_api.get("/api/workspaces").json() == []


def test_charlie_gets_the_same_404_as_for_a_missing_workspace(charlie_api, workspace):
    theirs = charlie_api.get("/api/workspaces/rank-desk")
    missing = charlie_api.get("/api/workspaces/no-such-desk")
    assert theirs.status_code == 404
    assert theirs.json() == missing.json() == {"code": "not_found", "message": "Not found.", "details": {}}


def test_charlie_cannot_rename_or_delete_alices_workspace(charlie_api, workspace):
    assert charlie_api.patch("/api/workspaces/rank-desk", {"name": "mine"}, format="json").status_code == 404
    assert charlie_api.delete("/api/workspaces/rank-desk").status_code == 404
    assert Workspace.objects.filter(name="rank-desk").exists()


def test_bob_cannot_rename_or_delete(bob_api, workspace):
    assert bob_api.patch("/api/workspaces/rank-desk", {"name": "mine"}, format="json").status_code == 403
    assert bob_api.delete("/api/workspaces/rank-desk").status_code == 403


def test_alice_renames_a_workspace(alice_api, workspace):
    response = alice_api.patch("/api/workspaces/rank-desk", {"name": "seo-desk"}, format="json")
    assert response.status_code == 200
    assert alice_api.get("/api/workspaces/seo-desk").json()["id"] == workspace.public_id


@pytest.mark.django_db
def test_the_openapi_schema_is_served(alice_api):
    response = alice_api.get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/workspaces" in response.content
