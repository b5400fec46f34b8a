import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken, hash_token


@pytest.mark.django_db
def test_login_exchanges_a_password_for_a_token_shown_once(alice):
    response = APIClient().post(
        "/api/auth/token", {"email": "alice@example.com", "password": "correct horse battery"}, format="json"
    )
    assert response.status_code == 201
    raw = response.json()["token"]
    assert raw.startswith("frt_")
    stored = ApiToken.objects.get(public_id=response.json()["id"])
    assert stored.token_hash == hash_token(raw)
    assert raw not in str(APIClient().get("/api/tokens", HTTP_AUTHORIZATION=f"Bearer {raw}").json())


@pytest.mark.django_db
def test_a_wrong_password_is_a_401_with_a_sentence(alice):
    response = APIClient().post("/api/auth/token", {"email": "alice@example.com", "password": "nope"}, format="json")
    assert response.status_code == 401
    assert response.json()["message"] == "That email and password do not match an account."


def test_a_revoked_token_stops_working(alice_api, alice):
    created = alice_api.post("/api/tokens", {"name": "laptop"}, format="json").json()
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {created['token']}")
    assert other.get("/api/me").status_code == 200
    assert alice_api.delete(f"/api/tokens/{created['id']}").status_code == 204
    assert other.get("/api/me").status_code == 401


def test_an_expired_token_is_refused_with_a_sentence(alice_api, alice):
    created = alice_api.post("/api/tokens", {"name": "short", "expires_in_days": 1}, format="json").json()
    ApiToken.objects.filter(public_id=created["id"]).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created['token']}")
    response = client.get("/api/me")
    assert response.status_code == 401
    assert response.json()["message"] == "This API token has expired; run `foldrun login` for a new one."


def test_the_token_list_never_shows_a_value_or_hash(alice_api):
    listing = alice_api.get("/api/tokens").json()
    assert listing and all(
        set(t) == {"id", "name", "hint", "created_at", "last_used_at", "expires_at", "revoked_at", "state"}
        for t in listing
    )


def test_charlie_cannot_revoke_alices_token(charlie_api, alice_api, alice):
    token = ApiToken.objects.filter(user=alice).first()
    assert charlie_api.delete(f"/api/tokens/{token.public_id}").status_code == 404
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None


def test_bob_may_make_his_own_token_but_not_revoke_alices(bob_api, alice_api, alice):
    assert bob_api.post("/api/tokens", {"name": "bob laptop"}, format="json").status_code == 201
    token = ApiToken.objects.filter(user=alice).first()
    assert bob_api.delete(f"/api/tokens/{token.public_id}").status_code == 404


@pytest.fixture
def database_down(tmp_path):
    """The default connection pointed where no database answers: a folder that does not exist (SQLite) or a
    port nothing listens on (PostgreSQL). Put back as it was afterwards."""
    import socket

    from django.db import connection

    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = str(tmp_path / "no-such-folder" / "db.sqlite3")
    else:
        with socket.socket() as probe:  # a port just freed: nothing listens there
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(port))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.mark.django_db(transaction=True)
def test_a_token_that_cannot_be_checked_because_the_database_is_down_is_a_503_with_a_sentence(database_down):
    response = APIClient().get("/api/me", HTTP_AUTHORIZATION="Bearer frt_some-token-value")
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "server_error" and body["details"]["incident"].startswith("err_")
    assert body["message"] == (
        f"Checking the API token stopped on an internal error (incident "
        f"{body['details']['incident']}; the platform's log has the details); try again."
    )
    assert "frt_some-token-value" not in response.content.decode()
