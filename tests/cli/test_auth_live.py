"""version, login, logout, whoami, tokens, workspaces — against a real server.

The CLI runs in-process (`main([...])`) and talks HTTP to pytest-django's
live server, so every request crosses the same wire a laptop's would.
"""

from __future__ import annotations

import io
import json
import stat
import sys

import pytest

import foldrun
from accounts.models import ApiToken, Workspace, hash_token

from .conftest import mint_token

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery"


@pytest.fixture
def answers(monkeypatch):
    """Type `email` at the prompt and `password` at getpass's."""

    def type_in(email: str, password: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(email + "\n"))
        monkeypatch.setattr("getpass.getpass", lambda prompt="Password: ": password)

    return type_in


def test_login_asks_for_a_password_and_keeps_the_token_in_a_private_file(
    cli, live_server, alice, answers, foldrun_home
):
    answers("alice@example.com", PASSWORD)
    result = cli("login", "--url", live_server.url, "--token-name", "laptop")
    assert result.code == 0
    assert result.out == f"Signed in to {live_server.url} as alice@example.com in Acme (owner).\n"
    stored = json.loads((foldrun_home / "config.json").read_text())
    assert stored["url"] == live_server.url
    assert stored["token"].startswith("frt_")
    assert stat.S_IMODE((foldrun_home / "config.json").stat().st_mode) == 0o600
    assert ApiToken.objects.get(public_id=stored["token_id"]).name == "laptop"
    assert stored["token"] not in result.out + result.err


def test_a_signed_in_cli_answers_whoami_from_the_file(cli, live_server, alice, answers):
    answers("alice@example.com", PASSWORD)
    cli("login", "--url", live_server.url)
    result = cli("whoami")
    assert (result.code, result.out) == (0, f"alice@example.com in Acme (owner) at {live_server.url}\n")


def test_a_wrong_password_prints_the_servers_sentence(cli, live_server, alice, answers, foldrun_home):
    answers("alice@example.com", "wrong")
    result = cli("login", "--url", live_server.url)
    assert result.code == 1
    assert result.err == "That email and password do not match an account.\n"
    assert not (foldrun_home / "config.json").exists()


def test_login_token_stdin_stores_a_token_that_works(cli, live_server, alice, monkeypatch, foldrun_home):
    raw = mint_token(alice)
    monkeypatch.setattr(sys, "stdin", io.StringIO(raw + "\n"))
    result = cli("login", "--url", live_server.url, "--token-stdin")
    assert result.code == 0
    assert result.out == f"Signed in to {live_server.url} as alice@example.com in Acme (owner).\n"
    assert json.loads((foldrun_home / "config.json").read_text())["token"] == raw
    assert raw not in result.out + result.err


def test_login_token_stdin_refuses_a_bad_token_with_the_servers_sentence(
    cli, live_server, alice, monkeypatch, foldrun_home
):
    monkeypatch.setattr(sys, "stdin", io.StringIO("frt_not-a-token\n"))
    result = cli("login", "--url", live_server.url, "--token-stdin")
    assert result.code == 1
    assert result.err == "This API token is not valid; run `foldrun login` for a new one.\n"
    assert not (foldrun_home / "config.json").exists()


def test_the_environment_overrides_the_stored_sign_in(cli, live_server, alice, bob, answers, monkeypatch):
    answers("alice@example.com", PASSWORD)
    cli("login", "--url", live_server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", mint_token(bob))
    assert cli("whoami").out == f"bob@example.com in Acme (viewer) at {live_server.url}\n"


def test_logout_revokes_the_token_and_forgets_it(cli, live_server, alice, answers, foldrun_home):
    answers("alice@example.com", PASSWORD)
    cli("login", "--url", live_server.url)
    token_id = json.loads((foldrun_home / "config.json").read_text())["token_id"]
    result = cli("logout")
    assert (result.code, result.out) == (0, f"Signed out of {live_server.url}.\n")
    assert ApiToken.objects.get(public_id=token_id).revoked_at is not None
    assert "token" not in json.loads((foldrun_home / "config.json").read_text())
    assert cli("whoami").err == f"You are not signed in to {live_server.url}; run `foldrun login` first.\n"


def test_a_revoked_token_prints_the_servers_401_sentence(cli, live_server, alice, signed_in_as):
    raw = signed_in_as(alice)
    ApiToken.objects.filter(token_hash=hash_token(raw)).update(revoked_at="2026-01-01T00:00:00Z")
    result = cli("workspaces")
    assert result.code == 1
    assert result.err == "This API token is not valid; run `foldrun login` for a new one.\n"


def test_version_prints_the_client_and_the_servers_versions(cli, live_server, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("version")
    assert result.code == 0
    # Lines after these two list the server's browsers when it reports them (see test_offline).
    assert result.lines[:2] == [
        f"foldrun {foldrun.__version__}",
        f"server {foldrun.__version__} at {live_server.url} (api 1)",
    ]
    assert cli("version", "--json").json["server"]["version"] == foldrun.__version__


def test_workspaces_create_then_list_as_a_table_and_as_json(cli, alice, signed_in_as):
    signed_in_as(alice)
    created = cli("workspaces", "create", "rank-desk")
    ws = Workspace.objects.get(name="rank-desk")
    assert created.out == f"Created workspace rank-desk ({ws.public_id}).\n"
    listed = cli("workspaces")
    assert listed.lines[0].split() == ["NAME", "ID", "CREATED", "DESCRIPTION"]
    assert listed.lines[1].split()[:2] == ["rank-desk", ws.public_id]
    assert [w["name"] for w in cli("workspaces", "--json").json] == ["rank-desk"]
    assert [w["name"] for w in cli("--json", "workspaces").json] == ["rank-desk"]


def test_workspaces_create_prints_the_servers_refusal(cli, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("workspaces", "create", "Rank Desk!")
    assert result.code == 1
    assert result.err == (
        "name: 'Rank Desk!' is not a valid workspace name; use lowercase letters, digits and dashes, "
        "starting with a letter or digit, at most 63 characters.\n"
    )


def test_bob_the_viewer_is_told_he_cannot_create_a_workspace(cli, bob, signed_in_as):
    signed_in_as(bob)
    result = cli("workspaces", "create", "mine")
    assert result.code == 1
    assert result.err == "Your role (viewer) can read this account but not change it.\n"


def test_tokens_lists_without_values_and_revokes_by_id(cli, alice, signed_in_as):
    raw = signed_in_as(alice)
    other = ApiToken.objects.create(
        user=alice, account=alice.memberships.first().account, name="old laptop", token_hash="0" * 64, hint="frt_old1"
    )
    listed = cli("tokens")
    assert listed.lines[0].split() == ["ID", "NAME", "STARTS", "STATE", "CREATED", "LAST", "USED", "EXPIRES"]
    assert other.public_id in listed.out
    assert raw not in listed.out
    revoked = cli("tokens", "revoke", other.public_id)
    assert (revoked.code, revoked.out) == (0, f"Revoked {other.public_id}.\n")
    other.refresh_from_db()
    assert other.revoked_at is not None


def test_charlie_cannot_revoke_alices_token(cli, alice, charlie, signed_in_as):
    signed_in_as(charlie)
    token = ApiToken.objects.create(
        user=alice, account=alice.memberships.first().account, name="x", token_hash="1" * 64, hint="frt_abc1"
    )
    result = cli("tokens", "revoke", token.public_id)
    assert (result.code, result.err) == (1, "Not found.\n")
    token.refresh_from_db()
    assert token.revoked_at is None


def _read_until(fd: int, marker: bytes, seen: bytearray, timeout: float = 20.0) -> None:
    import os
    import select
    import time

    deadline = time.monotonic() + timeout
    while marker not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no {marker!r} on the terminal; it showed {bytes(seen)!r}")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 1024)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"the terminal closed before {marker!r}; it showed {bytes(seen)!r}")
            seen.extend(chunk)


def test_login_on_a_real_terminal_prompts_and_never_echoes_the_password(live_server, alice, tmp_path):
    import os
    import pty

    script = os.path.join(os.path.dirname(sys.executable), "foldrun")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDRUN_URL") and k != "FOLDRUN_TOKEN"}
    env["FOLDRUN_HOME"] = str(tmp_path / "home")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI, with the pty as its controlling terminal
        os.execve(script, [script, "login", "--url", live_server.url], env)
    seen = bytearray()
    _read_until(fd, b"Email: ", seen)
    os.write(fd, b"alice@example.com\n")
    _read_until(fd, b"Password: ", seen)
    os.write(fd, PASSWORD.encode() + b"\n")
    _read_until(fd, b"(owner).", seen)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert PASSWORD.encode() not in seen
    assert f"Signed in to {live_server.url} as alice@example.com in Acme (owner).".encode() in seen
    assert json.loads((tmp_path / "home" / "config.json").read_text())["url"] == live_server.url


def test_a_piped_login_without_a_url_says_to_name_one(cli, monkeypatch, foldrun_home):
    monkeypatch.setattr(sys, "stdin", io.StringIO("frt_abc\n"))
    result = cli("login", "--token-stdin")
    assert (result.code, result.err) == (1, "Name the server with --url URL (or set $FOLDRUN_URL).\n")
    assert not (foldrun_home / "config.json").exists()


def test_a_second_login_reuses_the_stored_url(cli, live_server, alice, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(mint_token(alice) + "\n"))
    cli("login", "--url", live_server.url, "--token-stdin")
    monkeypatch.setattr(sys, "stdin", io.StringIO(mint_token(alice) + "\n"))
    again = cli("login", "--token-stdin")
    assert again.out == f"Signed in to {live_server.url} as alice@example.com in Acme (owner).\n"
