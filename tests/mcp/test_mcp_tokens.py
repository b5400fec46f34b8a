"""/mcp lets in only a live API token, and its account is the one every call is on."""

from __future__ import annotations

from datetime import timedelta

import httpx2
import pytest
from django.utils import timezone
from mcp.shared.exceptions import MCPError
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from accounts.models import ApiToken

from .conftest import INITIALIZE, raw_post, token_for


def test_initialize_with_a_token_answers_as_foldrun(mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)) as client:
        assert client.initialized.server_info.name == "foldrun"
        assert client.initialized.capabilities.tools is not None
        assert "account of the API token" in client.initialized.instructions


def test_initialize_without_a_token_is_a_401_with_a_json_sentence_and_a_challenge(mcp_server):
    response = raw_post(mcp_server.url, None, INITIALIZE)
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/json"
    assert response.headers["www-authenticate"].startswith('Bearer realm="foldrun", error="invalid_request"')
    assert response.json() == {
        "code": "unauthorized",
        "message": "This endpoint needs an API token: send Authorization: Bearer <token> "
        "(make one on Settings, or run `foldrun login`).",
        "details": {},
    }


@pytest.mark.parametrize("token", ["frt_not-a-token-at-all", "ghp_someone-elses", "frt_"])
def test_initialize_with_a_wrong_token_is_a_401_saying_so(mcp_server, alice, token):
    response = raw_post(mcp_server.url, token, INITIALIZE)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json() == {
        "code": "unauthorized",
        "details": {},
        "message": "This API token is not valid; run `foldrun login` for a new one.",
    }


def test_a_token_sent_as_basic_auth_is_asked_for_as_bearer(mcp_server, alice):
    response = httpx2.post(mcp_server.url, json=INITIALIZE, headers={"Authorization": "Basic YWxpY2U6cHc="})
    assert response.status_code == 401
    assert response.json()["message"].startswith("This endpoint needs an API token: send Authorization: Bearer")


def test_an_expired_token_is_refused_with_its_own_sentence(mcp_server, alice):
    raw = token_for(alice, expires_at=timezone.now() - timedelta(minutes=1))
    response = raw_post(mcp_server.url, raw, INITIALIZE)
    assert response.status_code == 401
    assert response.json()["message"] == "This API token has expired; run `foldrun login` for a new one."


def test_a_revoked_token_is_refused(mcp_server, alice):
    raw = token_for(alice)
    ApiToken.objects.update(revoked_at=timezone.now())
    assert raw_post(mcp_server.url, raw, INITIALIZE).status_code == 401


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def test_the_sdk_client_without_a_token_cannot_initialize(mcp_server, mcp_client):
    with pytest.raises(BaseExceptionGroup) as caught:  # the SDK raises the refused initialize from its task group
        with mcp_client(None):
            pytest.fail("a client without a token was let in")
    assert [str(e) for e in _leaves(caught.value) if isinstance(e, MCPError)] == ["Server returned an error response"]


def test_a_token_marks_itself_used(mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)):
        pass
    assert ApiToken.objects.get().last_used_at is not None


def test_every_request_is_checked_so_a_revoked_token_stops_the_next_call(mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)) as client:
        assert client.list_tools() is not None
        ApiToken.objects.update(revoked_at=timezone.now())
        with pytest.raises(BaseException) as caught:
            client.list_tools()
    assert [str(e) for e in _leaves(caught.value) if isinstance(e, MCPError)] == ["Server returned an error response"]


def test_a_websocket_to_any_other_address_is_refused_not_a_server_error(mcp_server):
    with pytest.raises(InvalidStatus) as refused:
        with connect(mcp_server.base.replace("http", "ws") + "/settings/", open_timeout=10):
            pass
    assert refused.value.response.status_code == 403  # closed before accept; Django's own error would be a 500
