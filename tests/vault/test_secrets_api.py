"""Secrets through the API: set, list (never values), delete; nearest wins; tenancy."""

from __future__ import annotations

import json

import pytest

from vault.actions import reveal, resolve_secrets
from vault.models import Secret

PLANTED = "sk-planted-4b1d-value"


def test_alice_sets_an_account_secret_and_the_answer_has_no_value(alice_api):
    answer = alice_api.put("/api/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    assert answer.status_code == 200
    assert answer.json()["name"] == "OPENAI_API_KEY"
    assert answer.json()["scope"] == "account"
    assert answer.json()["created_by"] == "alice@example.com"
    assert PLANTED not in answer.content.decode()


def test_the_value_is_sealed_at_rest_and_opens_again(alice_api):
    alice_api.put("/api/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    row = Secret.objects.get(name="OPENAI_API_KEY")
    assert PLANTED.encode() not in bytes(row.sealed)
    assert reveal(row) == PLANTED


def test_the_list_shows_names_scope_who_and_when_never_values(alice_api, workspace):
    alice_api.put("/api/secrets/SHARED_KEY", {"value": PLANTED}, format="json")
    alice_api.put("/api/workspaces/rank-desk/secrets/SHARED_KEY", {"value": "near-" + PLANTED}, format="json")
    listing = alice_api.get("/api/workspaces/rank-desk/secrets")
    assert listing.status_code == 200
    rows = listing.json()["results"]
    assert [(r["name"], r["scope"], r.get("overridden", False)) for r in rows] == [
        ("SHARED_KEY", "workspace", False),
        ("SHARED_KEY", "account", True),
    ]
    assert set(rows[0]) >= {"created_by", "created_at", "updated_by", "updated_at"}
    assert PLANTED not in listing.content.decode()


def test_resolution_is_nearest_wins_and_says_which_store(alice_api, workspace):
    alice_api.put("/api/secrets/SHARED_KEY", {"value": "account-value"}, format="json")
    alice_api.put("/api/secrets/ONLY_ACCOUNT", {"value": "a2"}, format="json")
    alice_api.put("/api/workspaces/rank-desk/secrets/SHARED_KEY", {"value": "workspace-value"}, format="json")
    found = resolve_secrets(workspace, ["SHARED_KEY", "ONLY_ACCOUNT", "NOWHERE"])
    assert (found["SHARED_KEY"].value, found["SHARED_KEY"].scope) == ("workspace-value", "workspace")
    assert (found["ONLY_ACCOUNT"].value, found["ONLY_ACCOUNT"].scope) == ("a2", "account")
    assert found.missing == ["NOWHERE"]
    assert found.scopes() == {"ONLY_ACCOUNT": "account", "SHARED_KEY": "workspace"}


def test_a_lower_case_name_is_refused_with_a_sentence(alice_api):
    answer = alice_api.put("/api/secrets/openai_key", {"value": "x"}, format="json")
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        "A secret's name is UPPER_SNAKE_CASE — capital letters, digits and underscores, starting with a letter, "
        "at most 64 characters (like OPENAI_API_KEY)."
    )


def test_an_empty_value_is_refused_naming_the_field(alice_api):
    answer = alice_api.put("/api/secrets/EMPTY", {"value": ""}, format="json")
    assert answer.status_code == 400
    assert answer.json()["message"] == "value: give the secret's value as a non-empty string."


def test_delete_removes_it(alice_api):
    alice_api.put("/api/secrets/GONE_SOON", {"value": "x"}, format="json")
    assert alice_api.delete("/api/secrets/GONE_SOON").status_code == 204
    assert alice_api.get("/api/secrets").json()["results"] == []


def test_deleting_a_missing_secret_is_404(alice_api):
    assert alice_api.delete("/api/secrets/NEVER_WAS").status_code == 404


def test_hosts_are_kept_for_the_egress_proxy(alice_api):
    answer = alice_api.put("/api/secrets/CRM_KEY", {"value": "x", "hosts": ["api.crm.example"]}, format="json")
    assert answer.json()["hosts"] == ["api.crm.example"]


def test_a_host_with_a_scheme_is_refused(alice_api):
    answer = alice_api.put(
        "/api/secrets/CRM_KEY", {"value": "x", "hosts": ["https://api.crm.example/v1"]}, format="json"
    )
    assert answer.status_code == 400
    assert (
        answer.json()["message"]
        == "hosts: 'https://api.crm.example/v1' is not a host name (no scheme or path: api.example.com)."
    )


# ---------------------------------------------------------------- tenancy


@pytest.mark.parametrize(
    "method,path",
    [
        ("get", "/api/workspaces/rank-desk/secrets"),
        ("put", "/api/workspaces/rank-desk/secrets/OPENAI_API_KEY"),
        ("get", "/api/workspaces/rank-desk/secrets/OPENAI_API_KEY"),
        ("delete", "/api/workspaces/rank-desk/secrets/OPENAI_API_KEY"),
        ("delete", "/api/secrets/OPENAI_API_KEY"),
        ("get", "/api/secrets/OPENAI_API_KEY"),
        ("post", "/api/workspaces/rank-desk/probe"),
    ],
)
def test_charlie_gets_404_on_alices_secrets(charlie_api, alice_api, workspace, method, path):
    alice_api.put("/api/workspaces/rank-desk/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    alice_api.put("/api/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    answer = getattr(charlie_api, method)(path, {"value": "x", "model": "m"}, format="json")
    assert answer.status_code == 404
    assert answer.json() == {"code": "not_found", "message": "Not found.", "details": {}}


def test_charlies_own_account_vault_does_not_show_alices(charlie_api, alice_api):
    alice_api.put("/api/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    assert charlie_api.get("/api/secrets").json()["results"] == []


@pytest.mark.parametrize(
    "method,path",
    [
        ("put", "/api/secrets/OPENAI_API_KEY"),
        ("delete", "/api/secrets/OPENAI_API_KEY"),
        ("put", "/api/workspaces/rank-desk/secrets/OPENAI_API_KEY"),
        ("delete", "/api/workspaces/rank-desk/secrets/OPENAI_API_KEY"),
        ("post", "/api/account/providers"),
        ("post", "/api/workspaces/rank-desk/probe"),
        ("post", "/api/probe"),
        ("post", "/api/oauth/start"),
    ],
)
def test_bob_the_viewer_cannot_write(bob_api, alice_api, workspace, method, path):
    alice_api.put("/api/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    alice_api.put("/api/workspaces/rank-desk/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    answer = getattr(bob_api, method)(path, {"value": "x", "model": "m"}, format="json")
    assert answer.status_code == 403
    assert answer.json()["message"] == "Your role (viewer) can read this account but not change it."


def test_bob_may_list_names_but_sees_no_values(bob_api, alice_api):
    alice_api.put("/api/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    answer = bob_api.get("/api/secrets")
    assert [r["name"] for r in answer.json()["results"]] == ["OPENAI_API_KEY"]
    assert PLANTED not in json.dumps(answer.json())


def test_charlie_cannot_start_a_connect_into_alices_workspace(charlie_api, workspace, settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"
    answer = charlie_api.post(
        "/api/oauth/start",
        {"name": "X_OAUTH", "provider": "github", "client_id": "c", "workspace": "rank-desk"},
        format="json",
    )
    assert answer.status_code == 404


def test_the_connect_start_answers_the_consent_url_and_the_exact_redirect(alice_api, workspace, settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"
    answer = alice_api.post(
        "/api/oauth/start",
        {"name": "GH_OAUTH", "provider": "github", "client_id": "c", "workspace": "rank-desk"},
        format="json",
    ).json()
    assert answer["redirect_uri"] == "https://foldrun.example.com/api/oauth/callback"
    assert answer["consent_url"].startswith("https://github.com/login/oauth/authorize?response_type=code&client_id=c")
    assert "code_challenge_method=S256" in answer["consent_url"] and answer["scopes"] == "repo read:user"
    assert alice_api.get("/api/oauth/redirect-uri").json() == {
        "redirect_uri": "https://foldrun.example.com/api/oauth/callback"
    }


@pytest.mark.parametrize(
    "auth_url",
    [
        "http://f\u00den/authorize",
        "https://idp.example.com/a{b}",
        "https://idp.example.com/%zz",
        "https://idp.example.com:99999/authorize",
    ],
)
def test_an_auth_url_that_is_not_an_ascii_uri_is_refused_so_the_consent_url_always_is_one(
    alice_api, settings, auth_url
):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"
    answer = alice_api.post(
        "/api/oauth/start",
        {
            "name": "X_OAUTH",
            "provider": "custom",
            "client_id": "c",
            "auth_url": auth_url,
            "token_url": "https://idp.example.com/token",
        },
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json()["message"] == "auth_url: give the provider's URL."


def test_a_preset_s_own_auth_url_that_is_not_a_uri_is_a_400_naming_the_pattern_not_a_server_error(alice_api, settings):
    # The pattern holds a % (for %XX), which the validator's sentence must not take for a placeholder.
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"
    answer = alice_api.post(
        "/api/oauth/start",
        {"name": "X_OAUTH", "provider": "github", "client_id": "c", "auth_url": "http://f\u00den/authorize"},
        format="json",
    )
    assert answer.status_code == 400
    message = answer.json()["message"]
    assert message.startswith("auth_url: does not match the pattern ^\\s*https?://") and "(%[0-9A-Fa-f]{2}|" in message
    assert message.endswith(" the API documents.")


def test_without_a_public_url_the_dashboard_connect_says_what_to_set(alice_api, settings):
    settings.FOLDRUN_PUBLIC_URL = None
    answer = alice_api.post(
        "/api/oauth/start", {"name": "GH_OAUTH", "provider": "github", "client_id": "c"}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("Connect from the dashboard needs FOLDRUN_PUBLIC_URL")


def test_bob_cannot_finish_a_connect_alice_started(alice_api, bob_api, settings):
    from vault.models import OAuthPending

    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"
    alice_api.post("/api/oauth/start", {"name": "GH_OAUTH", "provider": "github", "client_id": "c"}, format="json")
    state = OAuthPending.objects.get().state
    assert bob_api.get(f"/api/oauth/callback?state={state}&code=x").status_code == 403


def test_an_unknown_state_is_404(alice_api):
    assert alice_api.get("/api/oauth/callback?state=nope&code=x").status_code == 404
