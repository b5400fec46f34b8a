"""`foldrun secrets`, `foldrun connect`, `foldrun probe`, `foldrun account providers` against a live server."""

from __future__ import annotations

import io
import json
import sys

import pytest

from vault.actions import resolve_secrets
from vault.local import LocalVault
from vault.models import Secret

PLANTED = "sk-cli-planted-31337"


@pytest.fixture
def stdin(monkeypatch):
    def feed(text: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))

    return feed


@pytest.fixture
def alice_cli(cli, signed_in_as, alice, workspace, transactional_db):
    signed_in_as(alice)
    return cli


def test_secrets_set_reads_the_value_from_stdin_and_never_prints_it(alice_cli, stdin, workspace):
    stdin(PLANTED + "\n")
    done = alice_cli("secrets", "set", "OPENAI_API_KEY", "--to", "rank-desk")
    assert (done.code, done.out) == (0, "Set OPENAI_API_KEY in workspace rank-desk.\n")
    assert resolve_secrets(workspace, ["OPENAI_API_KEY"])["OPENAI_API_KEY"].value == PLANTED
    listing = alice_cli("secrets", "--to", "rank-desk")
    assert listing.lines[0].split() == ["NAME", "SCOPE", "KIND", "BY", "UPDATED"]
    assert listing.lines[1].startswith("OPENAI_API_KEY  workspace rank-desk  value  alice@example.com")
    assert PLANTED not in done.out + done.err + listing.out + listing.err


def test_secrets_set_has_no_argument_for_the_value(alice_cli, stdin):
    stdin("")
    done = alice_cli("secrets", "set", "OPENAI_API_KEY", PLANTED)
    assert done.code == 2
    assert Secret.objects.count() == 0


def test_an_empty_stdin_is_refused(alice_cli, stdin):
    stdin("")
    done = alice_cli("secrets", "set", "OPENAI_API_KEY")
    assert done.code == 1
    assert done.err == "No value was given; type it at the prompt or pipe it on stdin (never as an argument).\n"


def test_a_bad_name_is_refused_before_anything_is_asked(alice_cli, stdin):
    stdin(PLANTED)
    done = alice_cli("secrets", "set", "openai")
    assert done.err.startswith("A secret's name is UPPER_SNAKE_CASE")


def test_secrets_list_and_delete_in_the_account_vault(alice_cli, stdin):
    stdin("v1")
    alice_cli("secrets", "set", "ACCOUNT_KEY")
    assert alice_cli("secrets", "list").lines[1].startswith("ACCOUNT_KEY  account")
    done = alice_cli("secrets", "delete", "ACCOUNT_KEY")
    assert done.out == "Deleted ACCOUNT_KEY from the account vault.\n"
    assert alice_cli("secrets").out == "No secrets in the account vault.\n"


def test_the_laptop_vault_is_encrypted_under_foldrun_home(cli, stdin, foldrun_home):
    stdin(PLANTED)
    done = cli("secrets", "set", "LOCAL_KEY", "--local")
    assert done.out == "Set LOCAL_KEY in the laptop vault.\n"
    stored = (foldrun_home / "vault.json").read_text()
    assert "LOCAL_KEY" in stored and PLANTED not in stored
    assert (foldrun_home / "vault.key").stat().st_mode & 0o777 == 0o600
    assert LocalVault(foldrun_home).values() == {"LOCAL_KEY": PLANTED}
    assert cli("secrets", "--local", "--json").json[0]["scope"] == "local"
    assert cli("secrets", "delete", "LOCAL_KEY", "--local").code == 0
    assert LocalVault(foldrun_home).values() == {}


def test_bob_cannot_set_a_secret(cli, signed_in_as, bob, workspace, stdin, transactional_db):
    signed_in_as(bob)
    stdin("x")
    done = cli("secrets", "set", "NOPE")
    assert (done.code, done.err) == (1, "Your role (viewer) can read this account but not change it.\n")


# ---------------------------------------------------------------- connect


@pytest.fixture
def browser(tmp_path, monkeypatch):
    """A stand-in browser: follows the consent URL's redirects, as a person clicking Allow would."""
    script = tmp_path / "browser.py"
    script.write_text("import sys, httpx\nhttpx.get(sys.argv[1], follow_redirects=True, timeout=10)\n")
    monkeypatch.setenv("BROWSER", f"{sys.executable} {script}")
    import socket

    with socket.socket() as probe:  # a free port, so parallel test sessions never collide
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("FOLDRUN_CONNECT_PORT", str(port))
    return port
    monkeypatch.setenv("FOLDRUN_CONNECT_TIMEOUT", "20")


def test_connect_catches_the_redirect_uses_pkce_and_stores_a_refreshing_credential(
    alice_cli, browser, fake_oauth, stdin, workspace
):
    stdin(fake_oauth.client_secret + "\n")
    done = alice_cli(
        "connect",
        "LINKEDIN_OAUTH",
        "--provider",
        "custom",
        "--to",
        "rank-desk",
        "--client-id",
        fake_oauth.client_id,
        "--scopes",
        "openid profile",
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
    )
    assert done.code == 0, done.err
    assert done.out == "Stored LINKEDIN_OAUTH in workspace rank-desk: it refreshes itself before every use.\n"
    assert done.err_lines[0] == "Open this address to give consent:"
    asked = fake_oauth.authorize_requests[0]
    assert asked["redirect_uri"] == f"http://localhost:{browser}/callback"
    assert asked["code_challenge_method"] == "S256" and asked["scope"] == "openid profile"
    assert fake_oauth.token_requests[0]["code_verifier"]
    row = Secret.objects.get(name="LINKEDIN_OAUTH")
    assert (row.kind, row.refreshable, row.workspace_id) == ("oauth2", True, workspace.pk)
    assert fake_oauth.client_secret not in done.out + done.err


def test_connect_without_a_refresh_token_says_when_it_expires(alice_cli, browser, fake_oauth, stdin):
    fake_oauth.issue_refresh_tokens = False
    stdin(fake_oauth.client_secret)
    done = alice_cli(
        "connect",
        "GITHUB_OAUTH",
        "--provider",
        "github",
        "--client-id",
        fake_oauth.client_id,
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
    )
    assert done.code == 0
    assert done.out.startswith(
        "Stored GITHUB_OAUTH in the account vault as is: the provider sent no refresh token, so it expires at "
    )
    assert done.out.endswith(" — connect again after that.\n")


def test_connect_says_the_default_redirect_is_localhost_8642():
    from vault.oauth import CLI_REDIRECT_URI, OAUTH_PRESETS

    assert CLI_REDIRECT_URI == "http://localhost:8642/callback"
    assert all(p.scopes or p.name == "notion" for p in OAUTH_PRESETS.values())


def test_connect_with_a_refusing_token_endpoint_stores_nothing(alice_cli, browser, fake_oauth, stdin):
    fake_oauth.refuse_next = "invalid_grant"
    stdin(fake_oauth.client_secret)
    done = alice_cli(
        "connect",
        "X_OAUTH",
        "--provider",
        "custom",
        "--client-id",
        fake_oauth.client_id,
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
    )
    assert (done.code, done.err_lines[-1]) == (
        1,
        "The token endpoint for X_OAUTH refused the code exchange (HTTP 400: invalid_grant); nothing was stored.",
    )
    assert Secret.objects.count() == 0


def test_connect_local_keeps_the_credential_in_the_laptop_vault(cli, browser, fake_oauth, stdin, foldrun_home):
    stdin(fake_oauth.client_secret)
    done = cli(
        "connect",
        "LOCAL_OAUTH",
        "--provider",
        "custom",
        "--local",
        "--client-id",
        fake_oauth.client_id,
        "--auth-url",
        fake_oauth.auth_url,
        "--token-url",
        fake_oauth.token_url,
    )
    assert done.out == "Stored LOCAL_OAUTH in the laptop vault: it refreshes itself before every use.\n"
    assert LocalVault(foldrun_home).get("LOCAL_OAUTH").startswith("at-")


# ---------------------------------------------------------------- probe and account providers


def test_probe_prints_stop_reason_requests_and_cost(alice_cli, stdin, fake_provider, workspace):
    stdin(PLANTED)
    alice_cli("secrets", "set", "PROBE_KEY", "--to", "rank-desk")
    fake_provider.reply_tool_use("get_code", {})
    fake_provider.reply_echo_tool_result()
    block = json.dumps({"name": "anthropic", "base_url": fake_provider.base_url, "key": "${PROBE_KEY}"})
    done = alice_cli("probe", "claude-haiku-4-5", "--provider", block, "--to", "rank-desk")
    assert done.code == 0
    assert done.lines[1:5] == [
        "tool call made: yes; result read back: yes",
        "stop reason: end_turn",
        "requests: 2",
        "cost: $0.0001",
    ]  # 24 in, 14 out at claude-haiku-4 prices


def test_probe_local_uses_the_laptop_vault(cli, stdin, fake_provider, foldrun_home):
    LocalVault(foldrun_home).set("PROBE_KEY", PLANTED)
    fake_provider.reply_tool_use("get_code", {})
    fake_provider.reply_echo_tool_result()
    block = json.dumps({"name": "openai", "base_url": fake_provider.openai_base_url, "key": "${PROBE_KEY}"})
    done = cli("probe", "gpt-4o-mini", "--provider", block, "--local")
    assert done.code == 0
    assert "stop reason: end_turn" in done.lines
    assert fake_provider.requests[0].headers["authorization"] == f"Bearer {PLANTED}"


def test_account_providers_check_exits_non_zero_on_a_dead_key(alice_cli, account, workspace, fake_provider):
    from library.actions.writes import FileWrite, do_write_files
    from vault.actions import do_set_secret

    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{MODEL_KEY}}", model: m}}'
    do_write_files(
        account=account,
        workspace=workspace,
        kind="push",
        writes=[FileWrite("AGENTS.md", f"---\nprovider: {block}\n---\nx\n")],
    )
    do_set_secret(account, workspace, "MODEL_KEY", value=PLANTED)
    never = alice_cli("account", "providers")
    assert (never.code, never.lines[1].split()[0]) == (0, "·")
    fake_provider.reply_status(401)
    dead = alice_cli("account", "providers", "--check")
    assert dead.code == 1
    assert dead.lines[1].startswith("✗ credential")
    fake_provider.reply_text("ok")
    alive = alice_cli("account", "providers", "--check")
    assert (alive.code, alive.lines[1].split()[0]) == (0, "✓")


def test_a_refresh_recipe_can_be_set_from_stdin(alice_cli, stdin, fake_oauth, workspace):
    rt = fake_oauth.grant_refresh_token()
    stdin(
        json.dumps(
            {
                "token_url": fake_oauth.token_url,
                "client_id": fake_oauth.client_id,
                "client_secret": fake_oauth.client_secret,
                "refresh_token": rt,
            }
        )
    )
    done = alice_cli("secrets", "set", "CRM_OAUTH", "--oauth", "--to", "rank-desk")
    assert done.out == "Set CRM_OAUTH in workspace rank-desk.\n"
    assert resolve_secrets(workspace, ["CRM_OAUTH"])["CRM_OAUTH"].value.startswith("at-")
    assert rt not in done.out + done.err


def test_a_recipe_that_is_not_json_is_refused(alice_cli, stdin):
    stdin("token_url=x")
    done = alice_cli("secrets", "set", "CRM_OAUTH", "--oauth")
    assert done.err == (
        "--oauth: the value must be a JSON object with token_url, client_id, client_secret and refresh_token.\n"
    )
