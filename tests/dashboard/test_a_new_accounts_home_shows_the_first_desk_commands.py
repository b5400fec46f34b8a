"""Issue 35 items 8 and 9: a new account's home shows the three commands that get a first desk running, with
this server's address filled in; the new-workspace field's example is never a name the account already has;
the nav marks the workspace you are in (not Home) and says "Settings"."""

from __future__ import annotations

import html

import pytest

from accounts.models import Workspace

pytestmark = pytest.mark.django_db


def test_a_new_accounts_home_shows_login_init_and_deploy_with_its_own_url(alice_web, account):
    page = html.unescape(alice_web.get("/").content.decode())
    assert '<section class="card" id="first-desk">' in page
    assert "foldrun login --url http://testserver\nfoldrun init my-desk\nfoldrun deploy my-desk --to my-desk\n" in page
    assert "create it below first, or with foldrun workspaces create my-desk" in page.replace("<code>", "").replace(
        "</code>", ""
    )


def test_the_public_url_is_the_one_shown_when_it_is_configured(alice_web, account, settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.acme.example/"
    page = html.unescape(alice_web.get("/").content.decode())
    assert "foldrun login --url https://foldrun.acme.example\n" in page


def test_once_there_is_a_workspace_the_first_desk_card_is_gone(alice_web, workspace):
    assert 'id="first-desk"' not in alice_web.get("/").content.decode()


def test_the_new_workspace_example_is_not_a_name_the_account_has(alice_web, account):
    assert 'placeholder="my-desk"' in alice_web.get("/").content.decode()
    Workspace.objects.create(account=account, name="my-desk")
    Workspace.objects.create(account=account, name="support-desk")
    assert 'placeholder="research-desk"' in alice_web.get("/").content.decode()


def test_the_nav_marks_the_workspace_on_its_pages_and_home_only_at_home(alice_web, workspace):
    home = alice_web.get("/").content.decode()
    assert 'aria-current="page">Home</a>' in home
    for url in ("/w/rank-desk/", "/w/rank-desk/runs/", "/w/rank-desk/triggers/", "/w/rank-desk/tools/"):
        page = alice_web.get(url).content.decode()
        assert 'aria-current="page">Home</a>' not in page, url
        assert 'class="active" aria-current="page">rank-desk</a>' in page, url
    assert ">Settings</a>" in home and "Settings · Tokens" not in home
