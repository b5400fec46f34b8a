"""Session `credentials`: the vault's logins by host, filled into a login form by the session's keeper.

The logins are set, listed and deleted over the API (`/api/logins`), which never answers a password; a session
opened with `credentials` (run_task here, through /mcp, on a real worker and real Chromium) fills the sign-in
form of the local test site from the login of its host, and `autoSubmit` sends it. The password reaches the
page's field and nowhere else: not the model, the run's trace, the task's record, the session's record or the
worker's log.
"""

from __future__ import annotations

import json

import pytest

from browsing.attach import attach
from browsing.models import BrowserSession, Task
from runs.models import TraceEvent
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.mcp_site import EMAIL, PASSWORD
from tests.mcp.test_tasks_and_reports import browse, live, provider_desk, site, text_of  # noqa: F401
from vault.models import SiteLogin


def _set(api, **body):
    return api.post("/api/logins", body, format="json")


def test_a_login_is_set_listed_and_deleted_and_its_password_never_answered(alice_api, charlie_api):
    made = _set(alice_api, host="Staging.Example.com", username="qa@example.com", password="s3cret-value")
    assert made.status_code == 200
    login = made.json()
    assert (login["host"], login["namespace"], login["username"]) == (
        "staging.example.com",
        "default",
        "qa@example.com",
    )
    assert login["id"].startswith("vlg_") and "password" not in login
    again = _set(alice_api, host="staging.example.com", username="qa2@example.com", password="other-value")
    assert again.json()["id"] == login["id"]  # one login per host and namespace: set again, replaced
    listed = alice_api.get("/api/logins")
    assert [r["username"] for r in listed.json()["results"]] == ["qa2@example.com"]
    assert "other-value" not in listed.content.decode() and "s3cret" not in listed.content.decode()
    row = SiteLogin.objects.get(public_id=login["id"])
    assert b"other-value" not in bytes(row.sealed_password)  # sealed at rest
    assert charlie_api.get("/api/logins").json()["results"] == []
    assert charlie_api.delete(f"/api/logins/{login['id']}").status_code == 404  # another account's: a 404
    assert alice_api.delete(f"/api/logins/{login['id']}").status_code == 204
    assert not SiteLogin.objects.exists()


@pytest.mark.parametrize(
    ("body", "field", "sentence"),
    [
        (
            {"host": "https://a.example/login", "username": "u", "password": "p"},
            "host",
            "host must be a host name such as staging.example.com, or *.example.com for its subdomains (no scheme, port "
            "or path).",
        ),
        (
            {"host": "a.example", "username": "u", "password": ""},
            "password",
            "password must be the login's password, 1 to 1,024 characters.",
        ),
        (
            {"host": "a.example", "username": "u", "password": "p", "namespace": "a b"},
            "namespace",
            "namespace must be 1 to 64 letters, digits, . _ or -.",
        ),
        (
            {"host": "a.example", "username": "u", "password": "p", "value": "x"},
            "value",
            "value is not a field of a login; give host, namespace, username and password.",
        ),
    ],
)
def test_a_bad_login_is_refused_with_a_sentence_naming_its_field(alice_api, body, field, sentence):
    answer = _set(alice_api, **body)
    assert answer.status_code == 400
    assert answer.json()["message"] == sentence and answer.json()["details"] == {"field": field}
    assert not SiteLogin.objects.exists()


@pytest.mark.e2e
def test_a_task_with_credentials_signs_in_from_the_vault_and_the_password_goes_nowhere_else(
    live, alice_api, provider_desk, site, tmp_path
):
    assert _set(alice_api, host="127.0.0.1", username=EMAIL, password=PASSWORD).status_code == 200
    provider_desk.reply_tool_use("web", browse())
    provider_desk.reply_text("DONE: the dashboard says Welcome back")
    result = live.call_tool(
        "run_task",
        {"goal": "Tell me what the page says", "startUrl": f"{site.url}/login", "credentials": {"autoSubmit": True}},
    )
    assert result.is_error is False, text_of(result)
    # The keeper filled and sent the form before the session was live: the agent's first read is the dashboard.
    assert "/dashboard" in site.seen
    task = Task.objects.get(public_id=result.structured_content["task"]["taskId"])
    read = TraceEvent.objects.filter(run=task.run, kind="tool_result").first()
    assert "Welcome back" in json.dumps(read.data)
    session = BrowserSession.objects.get(public_id=result.structured_content["sessionId"])
    assert session.options["credentials"] == {"namespace": "default", "autoSubmit": True}
    everywhere = [
        json.dumps([e.data for e in TraceEvent.objects.filter(run=task.run)]),
        json.dumps(task.steps),
        task.answer,
        task.reason,
        json.dumps(session.options),
        session.status_reason,
        *(r.raw.decode(errors="replace") for r in provider_desk.requests),
        text_of(result),
        json.dumps(result.structured_content),
    ]
    assert len(provider_desk.requests) == 2  # the model saw the signed-in page twice, and never the password
    assert not [text for text in everywhere if PASSWORD in text]
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.rglob("*.log"))
    assert logs and PASSWORD not in logs


@pytest.mark.e2e
def test_credentials_without_auto_submit_fill_the_form_and_send_nothing(live, alice_api, site):
    assert _set(alice_api, host="127.0.0.1", namespace="staff", username=EMAIL, password=PASSWORD).status_code == 200
    created = live.call_tool(
        "create_session", {"startUrl": f"{site.url}/login", "credentials": {"namespace": "staff", "autoSubmit": False}}
    )
    assert created.is_error is False, text_of(created)
    session = BrowserSession.objects.get(public_id=created.structured_content["id"])
    with attach(session) as page:
        filled = (page.url, page.input_value("input[name=email]"), page.input_value("input[name=password]"))
    assert filled == (f"{site.url}/login", EMAIL, PASSWORD)
    assert "/dashboard" not in site.seen
    assert live.call_tool("stop_session", {"sessionId": session.public_id}).structured_content["closed"] is True


@pytest.mark.e2e
def test_credentials_of_another_namespace_fill_nothing(live, alice_api, site):
    assert _set(alice_api, host="127.0.0.1", namespace="staff", username=EMAIL, password=PASSWORD).status_code == 200
    created = live.call_tool("create_session", {"startUrl": f"{site.url}/login", "credentials": True})
    session = BrowserSession.objects.get(public_id=created.structured_content["id"])
    with attach(session) as page:
        assert (page.input_value("input[name=email]"), page.input_value("input[name=password]")) == ("", "")
    assert "/dashboard" not in site.seen
    live.call_tool("stop_session", {"sessionId": session.public_id})
