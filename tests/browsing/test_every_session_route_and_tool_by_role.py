"""Every browser-session surface walked with each role, on a live session of a real worker and Chromium: the REST
routes (/v1/sessions…, the DevTools relay, the watch page) and the session MCP tools, as alice (owner), an approver,
bob (read-only) and charlie (another account's owner).

Only a role that may act holds the session's key — its token, `endpoints.cdp`, `endpoints.live` — and that key
drives the browser. The approver and bob read the session's status and get no token of any kind; the watch-only
link the dashboard gives a reader opens the screen, never the DevTools relay. Charlie finds nothing (404,
not_found). No answer is a 5xx or an internal error."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from django.contrib.auth import get_user_model
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

from accounts.models import Membership, Role
from browsing.models import BrowserSession
from browsing.tokens import WATCH, session_token, token_ok
from tests.conftest import client_for
from tests.mcp.conftest import mcp_client, mcp_server, token_for  # noqa: F401 - the platform on a live port

pytestmark = pytest.mark.e2e
KEY = re.compile(r"token", re.IGNORECASE)  # "token", "tokenExpiresAt", "?token=": none may reach a reader
ROLE = {"approver": "approver", "bob": "viewer"}


@pytest.fixture
def approver(account):
    user = get_user_model().objects.create_user(username="dana", email="dana@example.com", password="x" * 20)
    Membership.objects.create(account=account, user=user, role=Role.APPROVER)
    return user


@pytest.fixture
def cast(alice, approver, bob, charlie):
    return {"alice": alice, "approver": approver, "bob": bob, "charlie": charlie}


def no_key(text: str) -> bool:
    return not KEY.search(text)


def drives(cdp: str) -> bool:
    """Whether this DevTools address opens the session's browser and answers a command."""
    try:
        with ws_connect(cdp, open_timeout=10, max_size=None) as socket:
            socket.send(json.dumps({"id": 1, "method": "Target.getTargets"}))
            while True:
                answer = json.loads(socket.recv(timeout=10))
                if answer.get("id") == 1:
                    return "targetInfos" in answer.get("result", {})
    except InvalidStatus:
        return False


def test_every_session_route_and_tool_by_role(mcp_server, mcp_client, session_worker, cast, account, settings):  # noqa: F811
    settings.FOLDRUN_PUBLIC_URL = mcp_server.base
    api = {name: client_for(user) for name, user in cast.items()}
    answers: list[int] = []

    # POST /v1/sessions: the owner opens one; a reader or an approver may not; an outsider's lands in his own.
    created = api["alice"].post("/v1/sessions", {"record": True, "idleTimeoutMs": 120_000}, format="json")
    assert created.status_code == 201, created.content
    session_id = created.json()["id"]
    assert created.json()["status"] == "live" and token_ok(session_id, created.json()["token"])
    for name in ("approver", "bob"):
        refused = api[name].post("/v1/sessions", {}, format="json")
        answers.append(refused.status_code)
        assert refused.status_code == 403 and no_key(refused.content.decode())
    assert BrowserSession.objects.filter(account=account).count() == 1
    route = f"/v1/sessions/{session_id}"

    # GET /v1/sessions: every member lists it, without keys; the outsider does not see it.
    for name in ("alice", "approver", "bob", "charlie"):
        listed = api[name].get("/v1/sessions")
        answers.append(listed.status_code)
        ids = [s["id"] for s in listed.json()["sessions"]]
        assert ids == ([] if name == "charlie" else [session_id]) and no_key(listed.content.decode())

    # GET /v1/sessions/<id>: the owner gets the key; a reader the status and endpoints.http only.
    owner = api["alice"].get(route).json()
    assert token_ok(session_id, owner["token"]) and f"/cdp?token={owner['token']}" in owner["endpoints"]["cdp"]
    for name in ("approver", "bob"):
        read = api[name].get(route)
        answers.append(read.status_code)
        body = read.json()
        assert read.status_code == 200 and (body["id"], body["status"]) == (session_id, "live")
        assert body["endpoints"] == {"http": f"http://testserver{route}", "cdp": None, "live": None}
        assert "token" not in body and "tokenExpiresAt" not in body and no_key(read.content.decode())
    outsider = api["charlie"].get(route)
    answers.append(outsider.status_code)
    assert outsider.status_code == 404 and outsider.json()["message"] == f"No session {session_id} in this account."

    # GET /v1/sessions/<id>/recording: written when the session ends; another account's is not found.
    for name in ("alice", "approver", "bob", "charlie"):
        recording = api[name].get(f"{route}/recording")
        answers.append(recording.status_code)
        assert recording.status_code == 404
        assert recording.json()["message"] == (
            f"No session {session_id} in this account."
            if name == "charlie"
            else f"Session {session_id} has no recording yet: it is written when the session ends."
        )

    # DELETE /v1/sessions/<id>: refused to a reader and an approver, not found for the outsider; still live.
    for name, status in (("approver", 403), ("bob", 403), ("charlie", 404)):
        stop = api[name].delete(route)
        answers.append(stop.status_code)
        assert stop.status_code == status
    assert BrowserSession.objects.get(public_id=session_id).status == "live"

    # The session tools over MCP, each role with its own API token.
    with mcp_client(token_for(cast["alice"])) as client:
        mine = client.call_tool("get_session", {"sessionId": session_id}).structured_content
        assert token_ok(session_id, mine["token"])
        cdp = mine["endpoints"]["cdp"]
        assert cdp.startswith(f"ws{mcp_server.base[4:]}{route}/cdp?token=")
        assert (
            client.call_tool("get_task", {"sessionId": session_id}).structured_content["error"]["code"] == "not_found"
        )  # no task on it yet
    for name in ("approver", "bob"):
        with mcp_client(token_for(cast[name])) as client:
            read = client.call_tool("get_session", {"sessionId": session_id})
            assert not read.is_error and read.structured_content["status"] == "live"
            assert read.structured_content["endpoints"]["cdp"] is None
            listed = client.call_tool("list_sessions", {})
            assert [s["id"] for s in listed.structured_content["sessions"]] == [session_id]
            for result in (read, listed):
                assert no_key(json.dumps(result.structured_content)) and no_key(result.content[0].text)
            for tool, arguments in (
                ("create_session", {}),
                ("stop_session", {"sessionId": session_id}),
                ("run_task", {"goal": "Read the page", "sessionId": session_id}),
            ):
                refused = client.call_tool(tool, arguments)
                assert refused.is_error and refused.structured_content["error"]["code"] == "forbidden", tool
                assert refused.content[0].text == (
                    f"[forbidden] Your role ({ROLE[name]}) can read this "
                    f"account but not change it, and {tool} changes it."
                )
            assert (
                client.call_tool("get_task", {"sessionId": session_id}).structured_content["error"]["code"]
                == "not_found"
            )
    with mcp_client(token_for(cast["charlie"])) as client:
        for tool, arguments in (
            ("get_session", {"sessionId": session_id}),
            ("get_task", {"sessionId": session_id}),
            ("run_task", {"goal": "Read the page", "sessionId": session_id}),
        ):
            result = client.call_tool(tool, arguments)
            assert result.is_error and result.structured_content["error"]["code"] == "not_found", tool
            assert no_key(result.content[0].text)
        assert client.call_tool("list_sessions", {}).structured_content == {"sessions": []}
        assert client.call_tool("stop_session", {"sessionId": session_id}).structured_content == {
            "deleted": False,
            "closed": False,
        }
    assert BrowserSession.objects.get(public_id=session_id).status == "live"

    # The keys themselves: the owner's drives the browser; the dashboard's watch-only link (what a reader gets on
    # the Browser sessions tab) opens the screen and never the DevTools relay.
    assert drives(cdp)
    watch, _ = session_token(session_id, use=WATCH)
    assert not drives(f"ws{mcp_server.base[4:]}{route}/cdp?token={watch}")
    assert httpx.get(f"{mcp_server.base}{route}/watch?token={watch}").status_code == 200

    # The owner stops it; every answer above was a 2xx or a 4xx.
    with mcp_client(token_for(cast["alice"])) as client:
        assert client.call_tool("stop_session", {"sessionId": session_id}).structured_content == {
            "deleted": True,
            "closed": True,
        }
    assert all(status < 500 for status in answers)
