"""`foldrun account search-engine set URL` and `foldrun tool test NAME` against a real server, and --local."""

from __future__ import annotations

import pytest

from accounts.models import Account
from tests.web.fakes import Site

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def site():
    with Site() as server:
        yield server


@pytest.fixture
def alice_signed_in(alice, signed_in_as, workspace):
    signed_in_as(alice)
    return alice


def test_account_search_engine_set_show_and_unset(cli, alice_signed_in, account, settings, monkeypatch):
    monkeypatch.delenv("FOLDRUN_SEARXNG_URL", raising=False)
    settings.FOLDRUN_SEARXNG_URL = None
    result = cli("account", "search-engine", "set", "https://search.example.com/")
    assert (result.code, result.lines) == (0, ["Acme searches through its own engine: https://search.example.com"])
    assert Account.objects.get(pk=account.pk).search_engine_url == "https://search.example.com"
    assert cli("account", "search-engine", "show", "--json").json["search_engine_url"] == "https://search.example.com"
    result = cli("account", "search-engine", "unset")
    assert result.lines == [
        "Acme has no search engine, and the install has no default — "
        "`foldrun account search-engine set URL` gives it one"
    ]


def test_a_bad_search_engine_url_is_the_servers_sentence(cli, alice_signed_in):
    result = cli("account", "search-engine", "set", "ftp://x.example.com")
    assert result.code != 0
    assert "search_engine_url 'ftp://x.example.com' is not an http or https URL" in result.err


def test_tool_test_prints_the_raw_result_of_the_call_a_run_makes(cli, alice_signed_in, site):
    result = cli(
        "tool", "test", "web", "--to", "rank-desk", "--arg", "action=fetch", "--arg", f"url={site.url}/article"
    )
    assert result.code == 0
    assert result.lines[0] == "# Owner inspections"
    as_json = cli(
        "tool",
        "test",
        "web",
        "--to",
        "rank-desk",
        "--arg",
        "action=fetch",
        "--arg",
        f"url={site.url}/article",
        "--arg",
        "mode=text",
        "--json",
    ).json
    assert (as_json["tool"], as_json["ok"]) == ("web", True)


def test_a_refused_tool_test_exits_non_zero_with_the_tools_sentence(cli, alice_signed_in):
    result = cli("tool", "test", "web", "--to", "rank-desk", "--arg", "action=nosuch")
    assert result.code == 1
    assert result.out.startswith("web: the argument `action` must be one of search, fetch, browse")


def test_tool_test_local_reads_the_desk_folder_and_the_named_agent(cli, tmp_path, site):
    desk = tmp_path / "desk"
    (desk / "agents" / "reader").mkdir(parents=True)
    (desk / "agents" / "reader" / "agent.md").write_text(
        "---\nname: reader\ntools: [web]\nlanguage: de-AT\n---\nRead.\n"
    )
    result = cli(
        "tool",
        "test",
        "web",
        "--local",
        "--path",
        desk,
        "--agent",
        "reader",
        "--arg",
        "action=fetch",
        "--arg",
        f"url={site.url}/article",
        "--arg",
        "mode=text",
    )
    assert result.code == 0, result.err
    assert "Owner inspections" in result.out
    assert site.seen[-1]["headers"]["accept-language"].startswith("de-AT")
