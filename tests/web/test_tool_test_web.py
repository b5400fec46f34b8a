"""The account's own engine and the Tool Test for `web`: the API, the Settings form, the Tools tab, and the CLI."""

from __future__ import annotations

import json

import pytest

from accounts.models import Account
from foldrun.web.search import NO_ENGINE
from tests.fakes.web_vendors import Vendor
from tests.runs.helpers import push
from tests.web.fakes import FakeSearxng, Site

TEST = "/api/workspaces/rank-desk/tools/web/test"


@pytest.fixture
def site():
    with Site() as server:
        yield server


@pytest.fixture
def searxng():
    with FakeSearxng() as server:
        yield server


@pytest.fixture
def fake_provider():
    from tests.fakes.providers import FakeProvider

    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def no_default_engine(monkeypatch, settings):
    monkeypatch.delenv("FOLDRUN_SEARXNG_URL", raising=False)
    settings.FOLDRUN_SEARXNG_URL = None


# ------------------------------------------------------------ the account's own engine


def test_alice_sets_the_accounts_search_engine_and_bob_reads_it(alice_api, bob_api, account, no_default_engine):
    answer = alice_api.patch("/api/account", {"search_engine_url": "https://search.example.com/"}, format="json")
    assert answer.status_code == 200
    assert answer.json() == {
        "id": account.public_id,
        "name": "Acme",
        "search_engine_url": "https://search.example.com",
        "search_engine": "https://search.example.com",
    }
    assert bob_api.get("/api/account").json()["search_engine_url"] == "https://search.example.com"
    refused = bob_api.patch("/api/account", {"search_engine_url": ""}, format="json")
    assert refused.status_code == 403
    assert Account.objects.get(pk=account.pk).search_engine_url == "https://search.example.com"


def test_charlie_sees_and_changes_only_his_own_account(alice_api, charlie_api, account):
    alice_api.patch("/api/account", {"search_engine_url": "https://search.example.com"}, format="json")
    mine = charlie_api.get("/api/account").json()
    assert (mine["name"], mine["search_engine_url"]) == ("Other Co", "")
    charlie_api.patch("/api/account", {"search_engine_url": "https://charlie.example.com"}, format="json")
    assert Account.objects.get(pk=account.pk).search_engine_url == "https://search.example.com"


@pytest.mark.parametrize(
    "value,sentence",
    [
        (
            "ftp://search.example.com",
            "search_engine_url 'ftp://search.example.com' is not an http or https URL such as "
            "https://search.example.com.",
        ),
        (
            "https://me:pw@search.example.com",
            "search_engine_url must not carry a user name or password; the address is shown to every member.",
        ),
        (42, "search_engine_url must be a URL such as https://search.example.com, or empty for the install's default."),
    ],
)
def test_a_bad_search_engine_url_is_one_sentence(alice_api, value, sentence):
    answer = alice_api.patch("/api/account", {"search_engine_url": value}, format="json")
    assert answer.status_code == 400
    assert answer.json()["message"] == sentence


def test_without_an_engine_of_its_own_the_install_default_is_the_accounts(alice_api, settings):
    settings.FOLDRUN_SEARXNG_URL = "https://searxng.internal:8080"
    assert alice_api.get("/api/account").json()["search_engine"] == "https://searxng.internal:8080"


# ------------------------------------------------------------ the Tool Test for web


def test_the_tool_test_runs_web_fetch_as_a_run_would(alice_api, workspace, site):
    answer = alice_api.post(TEST, {"arguments": {"action": "fetch", "url": f"{site.url}/article"}}, format="json")
    assert answer.status_code == 200
    body = answer.json()
    assert (body["tool"], body["ok"]) == ("web", True)
    assert body["result"].startswith("# Owner inspections")


def test_the_tool_test_searches_the_accounts_own_engine(alice_api, workspace, searxng, no_default_engine):
    alice_api.patch("/api/account", {"search_engine_url": searxng.url}, format="json")
    body = alice_api.post(
        TEST, {"arguments": {"action": "search", "query": "rental inspections"}}, format="json"
    ).json()
    assert body["ok"] is True
    assert [r["path"] for r in searxng.seen if r["path"] == "/search"] == ["/search"]
    assert searxng.seen[-1]["query"]["q"] == "rental inspections"


def test_a_search_step_says_plainly_when_the_account_has_no_engine(alice_api, workspace, no_default_engine):
    body = alice_api.post(TEST, {"arguments": {"action": "search", "query": "x"}}, format="json").json()
    assert body == {**body, "ok": False, "result": NO_ENGINE}


def test_the_tool_test_calls_web_as_the_named_agent_with_its_provider_and_vault_key(alice_api, workspace, monkeypatch):
    with Vendor("firecrawl") as firecrawl:
        monkeypatch.setenv("FOLDRUN_WEB_ENDPOINTS", json.dumps({"firecrawl": firecrawl.url}))
        push(
            workspace,
            {"agents/mapper/agent.md": "---\nname: mapper\ntools: [web]\nweb:\n  map: firecrawl\n---\nMap.\n"},
        )
        _store(workspace, "FIRECRAWL_API_KEY", firecrawl.key)
        body = alice_api.post(
            TEST, {"agent": "mapper", "arguments": {"action": "map", "url": "https://example.com/"}}, format="json"
        ).json()
    assert body["ok"] is True, body
    assert body["result"].splitlines()[0] == "3 URLs on https://example.com/ through firecrawl (outputs/map.txt)"
    assert firecrawl.key not in json.dumps(body)


def test_bob_may_not_test_a_tool_and_charlie_gets_404(bob_api, charlie_api, workspace):
    assert (
        bob_api.post(TEST, {"arguments": {"action": "fetch", "url": "https://example.com/"}}, format="json").status_code
        == 403
    )
    assert (
        charlie_api.post(
            TEST, {"arguments": {"action": "fetch", "url": "https://example.com/"}}, format="json"
        ).status_code
        == 404
    )


def _store(workspace, name: str, value: str) -> None:
    from vault.actions import do_set_secret

    do_set_secret(workspace.account, None, name, value=value)


def test_a_run_searches_the_accounts_own_engine(alice, workspace, searxng, fake_provider, no_default_engine):
    from runs.actions import check_start_run
    from tests.runs.helpers import agent_file, drive

    workspace.account.search_engine_url = searxng.url
    workspace.account.save(update_fields=["search_engine_url"])
    push(
        workspace,
        {
            "agents/finder/agent.md": agent_file("finder", fake_provider, tools="[web]"),
            "flows/find.md": "---\nname: find\n---\n1. [[finder]] — Find pages about rental inspections.\n",
        },
    )
    fake_provider.reply_tool_use("web", {"action": "search", "query": "rental inspections"})
    fake_provider.reply_text("GOOD found them")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="find"))
    assert run.status == "completed"
    assert searxng.seen[-1]["query"]["q"] == "rental inspections"
    tool_result = fake_provider.requests[1].body["messages"][-1]["content"][0]
    assert not tool_result.get("is_error"), tool_result


def test_a_run_whose_account_has_no_engine_fails_the_search_with_the_plain_sentence(
    alice, workspace, fake_provider, no_default_engine
):
    from runs.actions import check_start_run
    from tests.runs.helpers import agent_file, drive

    push(
        workspace,
        {
            "agents/finder/agent.md": agent_file("finder", fake_provider, tools="[web]"),
            "flows/find.md": "---\nname: find\n---\n1. [[finder]] — Find pages.\n",
        },
    )
    fake_provider.reply_tool_use("web", {"action": "search", "query": "x"})
    fake_provider.reply_text("GOOD")
    drive(check_start_run(workspace=workspace, user=alice, flow="find"))
    tool_result = fake_provider.requests[1].body["messages"][-1]["content"][0]
    assert (tool_result["is_error"], tool_result["content"]) == (True, NO_ENGINE)
