"""The Settings form for the account's search engine, and the Tools tab's Test button (web included)."""

from __future__ import annotations

import pytest

from accounts.models import Account
from tests.dashboard.conftest import write
from tests.web.fakes import Site


@pytest.fixture
def site():
    with Site() as server:
        yield server


def test_alice_sets_the_search_engine_on_settings(alice_web, account, settings):
    settings.FOLDRUN_SEARXNG_URL = None
    page = alice_web.get("/settings/").content.decode()
    assert "None is set, and the install has no default" in page
    answer = alice_web.post("/settings/search-engine", {"search_engine_url": "https://search.example.com"}, follow=True)
    assert "Searching now asks https://search.example.com." in answer.content.decode()
    assert Account.objects.get(pk=account.pk).search_engine_url == "https://search.example.com"
    assert "This account's own: <code>https://search.example.com</code>" in alice_web.get("/settings/").content.decode()


def test_a_bad_url_on_settings_is_a_sentence_and_changes_nothing(alice_web, account):
    answer = alice_web.post("/settings/search-engine", {"search_engine_url": "search dot example"}, follow=True)
    assert "is not an http or https URL such as https://search.example.com." in answer.content.decode()
    assert Account.objects.get(pk=account.pk).search_engine_url == ""


def test_bob_sees_the_engine_but_no_form_and_cannot_post(bob_web, account):
    assert 'name="search_engine_url"' not in bob_web.get("/settings/").content.decode()
    assert bob_web.post("/settings/search-engine", {"search_engine_url": "https://x.example.com"}).status_code == 403
    assert Account.objects.get(pk=account.pk).search_engine_url == ""


def test_the_tools_tab_lists_web_from_the_gallery_and_its_test_button_shows_the_raw_result(
    alice_web, account, workspace, site
):
    write(account, workspace, {"agents/reader/agent.md": "---\nname: reader\ntools: [web]\n---\nRead.\n"})
    page = alice_web.get(f"/w/{workspace.name}/tools/").content.decode()
    assert '<option value="web">web (gallery)</option>' in page
    answer = alice_web.post(
        f"/w/{workspace.name}/tools/",
        {"tool": "web", "agent": "reader", "arguments": f'{{"action": "fetch", "url": "{site.url}/article"}}'},
    )
    body = answer.content.decode()
    assert answer.status_code == 200
    assert '<span class="badge ok">ok</span> web' in body
    assert "# Owner inspections" in body


def test_arguments_that_are_not_json_are_a_sentence(alice_web, workspace):
    body = alice_web.post(f"/w/{workspace.name}/tools/", {"tool": "web", "arguments": "action=fetch"}).content.decode()
    assert "arguments: not JSON — write an object such as" in body


def test_bob_sees_the_tools_but_cannot_test_and_charlie_gets_404(bob_web, charlie_web, workspace):
    assert bob_web.get(f"/w/{workspace.name}/tools/").status_code == 200
    assert bob_web.post(f"/w/{workspace.name}/tools/", {"tool": "web", "arguments": "{}"}).status_code == 403
    assert charlie_web.get(f"/w/{workspace.name}/tools/").status_code == 404
    assert charlie_web.post(f"/w/{workspace.name}/tools/", {"tool": "web", "arguments": "{}"}).status_code == 404
