import pytest


@pytest.mark.django_db
def test_version_answers_without_login(client):
    response = client.get("/api/version")
    assert response.status_code == 200
    assert response.json()["version"]


def test_me_names_the_account_and_role(alice_api):
    body = alice_api.get("/api/me").json()
    assert body["email"] == "alice@example.com"
    assert body["account"]["role"] == "owner"
    assert body["account"]["id"].startswith("acc_")


@pytest.mark.django_db
def test_a_request_without_a_token_is_refused_as_json(client):
    response = client.get("/api/me")
    assert response.status_code in (401, 403)
    assert set(response.json()) == {"code", "message", "details"}


@pytest.mark.django_db
def test_an_unknown_token_is_refused_with_a_sentence(client):
    response = client.get("/api/me", HTTP_AUTHORIZATION="Bearer frt_nope")
    assert response.status_code == 401
    assert response.json()["message"] == "This API token is not valid; run `foldrun login` for a new one."
