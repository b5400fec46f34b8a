"""The sessions REST routes: scoped to the token's account, refusals in the API's error shape."""

from __future__ import annotations

import pytest
from django.utils import timezone

from browsing.models import BrowserSession
from browsing.tokens import token_ok


def live(account) -> BrowserSession:
    return BrowserSession.objects.create(
        account=account, status="live", live_at=timezone.now(), cdp_endpoint="ws://127.0.0.1:9/devtools/browser/x"
    )


def test_a_session_of_another_account_is_a_404(charlie_api, alice, account):
    theirs = live(account)
    for answer in (
        charlie_api.get(f"/v1/sessions/{theirs.public_id}"),
        charlie_api.delete(f"/v1/sessions/{theirs.public_id}"),
    ):
        assert answer.status_code == 404
        assert answer.json() == {
            "code": "not_found",
            "message": f"No session {theirs.public_id} in this account.",
            "details": {},
        }
    assert charlie_api.get("/v1/sessions").json() == {"sessions": []}
    assert BrowserSession.objects.get(pk=theirs.pk).status == "live"


def test_a_read_only_member_reads_sessions_but_cannot_open_or_stop_one(bob_api, account):
    session = live(account)
    assert bob_api.get(f"/v1/sessions/{session.public_id}").status_code == 200
    assert bob_api.post("/v1/sessions", {}, format="json").status_code == 403
    assert bob_api.delete(f"/v1/sessions/{session.public_id}").status_code == 403


def test_a_bad_body_is_a_400_naming_each_option(alice_api):
    answer = alice_api.post("/v1/sessions", {"url": "https://example.com", "idleTimeoutMs": 1}, format="json")
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "invalid_input"
    assert [i["path"] for i in body["details"]["issues"]] == ["url", "idleTimeoutMs"]
    assert alice_api.post("/v1/sessions", ["x"], format="json").status_code == 400


def test_a_busy_account_is_a_429_capacity_exceeded(alice_api, account, settings):
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1
    live(account)
    answer = alice_api.post("/v1/sessions", {}, format="json")
    assert answer.status_code == 429 and answer.json()["code"] == "capacity_exceeded"


def test_an_open_session_shows_its_endpoints_and_a_token_a_closed_one_does_not(alice_api, account):
    session = live(account)
    record = alice_api.get(f"/v1/sessions/{session.public_id}").json()
    assert record["endpoints"] == {
        "http": f"http://testserver/v1/sessions/{session.public_id}",
        "cdp": f"ws://testserver/v1/sessions/{session.public_id}/cdp?token={record['token']}",
        "live": f"ws://testserver/v1/sessions/{session.public_id}/live?token={record['token']}",
    }
    assert token_ok(session.public_id, record["token"])
    assert not token_ok("sess_us_" + "1" * 24, record["token"])  # bound to its session
    assert alice_api.delete(f"/v1/sessions/{session.public_id}").json() == {"deleted": True, "closed": True}
    assert alice_api.delete(f"/v1/sessions/{session.public_id}").json() == {"deleted": True, "closed": False}
    ended = alice_api.get(f"/v1/sessions/{session.public_id}").json()
    assert (ended["status"], ended["endReason"], ended["reason"]) == (
        "closed",
        "stopped",
        "stopped by DELETE /v1/sessions by alice@example.com",
    )
    assert "token" not in ended and "endpoints" not in ended


def test_a_queued_session_answers_201_at_once_with_its_placement(alice_api, account, settings):
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1
    live(account)
    answer = alice_api.post("/v1/sessions", {"queueForCapacity": {"maxWaitSeconds": 30}}, format="json")
    assert answer.status_code == 201
    assert (answer.json()["status"], answer.json()["placement"]) == ("starting", "queued")


def test_the_schema_documents_every_session_route_and_status(alice_api):
    schema = alice_api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    routes = schema["paths"]
    assert set(routes["/v1/sessions"]) >= {"get", "post"}
    assert set(routes["/v1/sessions/{session_id}"]) >= {"get", "delete"}
    # 503: the API token could not be checked (the database did not answer).
    assert set(routes["/v1/sessions"]["post"]["responses"]) == {
        "201",
        "400",
        "401",
        "403",
        "413",
        "415",
        "422",
        "429",
        "502",
        "503",
    }
    assert set(routes["/v1/sessions/{session_id}"]["delete"]["responses"]) == {"200", "401", "403", "404", "503"}


@pytest.mark.parametrize("token", ["", "123.abc", "9999999999.wrong"])
def test_a_forged_or_malformed_session_token_is_refused(token):
    assert not token_ok("sess_us_" + "2" * 24, token)


def test_a_recording_is_downloaded_by_its_own_account_only(alice_api, charlie_api, account, tmp_path):
    video = tmp_path / "video.webm"
    video.write_bytes(b"\x1a\x45\xdf\xa3 a webm")
    session = BrowserSession.objects.create(
        account=account,
        status="closed",
        options={"record": True},
        recording=str(video),
        recording_bytes=video.stat().st_size,
    )
    answer = alice_api.get(f"/v1/sessions/{session.public_id}/recording")
    assert answer.status_code == 200 and answer["Content-Type"] == "video/webm"
    assert b"".join(answer.streaming_content) == video.read_bytes()
    assert charlie_api.get(f"/v1/sessions/{session.public_id}/recording").status_code == 404
    record = alice_api.get(f"/v1/sessions/{session.public_id}").json()["recording"]
    assert record == {
        "available": True,
        "bytes": video.stat().st_size,
        "url": f"http://testserver/v1/sessions/{session.public_id}/recording",
    }


def test_a_session_without_a_recording_says_so(alice_api, account):
    session = live(account)
    answer = alice_api.get(f"/v1/sessions/{session.public_id}/recording")
    assert answer.status_code == 404
    assert answer.json()["message"] == f"Session {session.public_id} has no recording."
