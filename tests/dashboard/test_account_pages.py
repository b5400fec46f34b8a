"""Account home, settings, workspaces, invites and tokens, as people see them."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from accounts.models import ApiToken, Invite, Membership, Workspace, hash_token

from .conftest import write, agent

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/", "/settings/", "/w/rank-desk/", "/library/", "/w/rank-desk/files/a.md"])
def test_every_page_asks_for_a_sign_in_first(client, workspace, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_the_top_bar_names_the_account_and_the_person(alice_web):
    page = alice_web.get("/").content.decode()
    assert '<span class="account-name">Acme</span>' in page
    assert '<span class="email">alice@example.com</span>' in page
    assert 'href="/library/"' in page and 'href="/settings/"' in page


def test_home_lists_each_workspace_with_its_agents_flows_and_last_revision(alice_web, account, workspace, alice):
    write(
        account,
        workspace,
        {
            "agents/ranker/agent.md": agent("ranker", "read"),
            "agents/writer.md": agent("writer", "read"),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[ranker]] — Go.\n",
        },
        author=alice,
        message="first desk",
    )
    response = alice_web.get("/")
    row = response.context["workspaces"][0]
    assert (row["workspace"].name, row["agents"], row["flows"], row["last"].number) == ("rank-desk", 2, 1, 1)
    page = response.content.decode()
    assert 'href="/w/rank-desk/"' in page
    assert 'href="/w/rank-desk/revisions/1/">#1</a>' in page
    assert "push by alice@example.com" in page


def test_alice_creates_a_workspace_and_lands_on_it(alice_web, account):
    response = alice_web.post("/workspaces/create", {"name": "seo-desk"})
    assert response.status_code == 302
    assert response["Location"] == "/w/seo-desk/"
    assert Workspace.objects.filter(account=account, name="seo-desk").exists()


def test_a_bad_workspace_name_is_refused_with_a_sentence_naming_the_field(alice_web, account):
    response = alice_web.post("/workspaces/create", {"name": "Bad Name"}, follow=True)
    assert "name: 'Bad Name' is not a valid workspace name" in html.unescape(response.content.decode())
    assert not Workspace.objects.filter(account=account).exists()


def test_a_duplicate_workspace_name_is_refused(alice_web, workspace):
    response = alice_web.post("/workspaces/create", {"name": "rank-desk"}, follow=True)
    assert "name: a workspace called 'rank-desk' already exists in this account." in html.unescape(
        response.content.decode()
    )


def test_bob_sees_the_workspaces_but_no_create_or_invite_form(bob_web, workspace):
    page = bob_web.get("/").content.decode()
    assert "rank-desk" in page
    assert 'action="/workspaces/create"' not in page
    assert 'action="/settings/members/invite"' not in page


def test_bob_cannot_create_a_workspace(bob_web, account):
    assert bob_web.post("/workspaces/create", {"name": "mine"}).status_code == 403
    assert not Workspace.objects.filter(account=account, name="mine").exists()


def test_bob_cannot_invite_anyone(bob_web, account):
    assert bob_web.post("/settings/members/invite", {"email": "eve@example.com", "role": "owner"}).status_code == 403
    assert not Invite.objects.filter(account=account).exists()


def test_members_are_listed_with_their_roles(alice_web, bob):
    page = alice_web.get("/settings/").content.decode()
    assert '<td>alice@example.com</td><td><span class="badge role">owner</span></td>' in page
    assert '<td>bob@example.com</td><td><span class="badge role">viewer</span></td>' in page


def test_alice_invites_by_email_and_sees_the_invite_pending(alice_web, account):
    response = alice_web.post(
        "/settings/members/invite", {"email": "dana@example.com", "role": "approver"}, follow=True
    )
    invite = Invite.objects.get(account=account)
    assert (invite.email, invite.role) == ("dana@example.com", "approver")
    assert "Invited dana@example.com as approver." in response.content.decode()
    assert "dana@example.com" in alice_web.get("/settings/").content.decode()


def test_inviting_a_member_again_is_refused(alice_web, bob):
    response = alice_web.post("/settings/members/invite", {"email": "bob@example.com", "role": "editor"}, follow=True)
    assert "email: bob@example.com is already a member of this account." in response.content.decode()


def test_a_new_token_is_shown_once_on_the_next_page_and_never_again(alice_web, alice):
    response = alice_web.post("/settings/tokens/create", {"name": "laptop"})
    assert response["Location"] == "/settings/tokens/created"
    shown = alice_web.get("/settings/tokens/created")
    raw = shown.context["raw"]
    token = ApiToken.objects.get(user=alice, name="laptop")
    assert raw.startswith("frt_") and token.token_hash == hash_token(raw)
    assert raw in shown.content.decode()
    assert shown["Cache-Control"].startswith("max-age=0")
    again = alice_web.get("/settings/tokens/created").content.decode()
    assert raw not in again
    assert "This token was already shown once and cannot be shown again." in again
    settings_page = alice_web.get("/settings/").content.decode()
    assert raw not in settings_page
    assert f"<code>{token.hint}…</code>" in settings_page


def test_a_viewer_may_mint_a_token_for_himself(bob_web, bob):
    bob_web.post("/settings/tokens/create", {"name": "reader"})
    assert ApiToken.objects.filter(user=bob, name="reader").exists()


def test_a_revoked_token_stops_working(alice_web, alice):
    alice_web.post("/settings/tokens/create", {"name": "laptop"})
    raw = alice_web.get("/settings/tokens/created").context["raw"]
    token = ApiToken.objects.get(user=alice, name="laptop")
    response = alice_web.post(f"/settings/tokens/{token.public_id}/revoke", follow=True)
    assert "Token laptop" in response.content.decode() and "revoked" in response.content.decode()
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.get("/api/me").status_code == 401


def test_charlie_cannot_revoke_alices_token(alice_web, charlie_web, alice):
    alice_web.post("/settings/tokens/create", {"name": "laptop"})
    token = ApiToken.objects.get(user=alice, name="laptop")
    assert charlie_web.post(f"/settings/tokens/{token.public_id}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_bob_cannot_revoke_alices_token(alice_web, bob_web, alice):
    alice_web.post("/settings/tokens/create", {"name": "laptop"})
    token = ApiToken.objects.get(user=alice, name="laptop")
    assert bob_web.post(f"/settings/tokens/{token.public_id}/revoke").status_code == 404


def test_forms_carry_a_csrf_token_and_a_post_without_one_is_refused(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert 'name="csrfmiddlewaretoken"' in client.get("/").content.decode()
    assert client.post("/workspaces/create", {"name": "sneaky"}).status_code == 403
    assert not Workspace.objects.filter(name="sneaky").exists()


def test_a_get_never_creates_anything(alice_web, account):
    assert alice_web.get("/workspaces/create?name=sneaky").status_code == 405
    assert not Workspace.objects.filter(account=account).exists()


def test_a_refused_post_says_why_in_the_site_layout(bob_web):
    response = bob_web.post("/workspaces/create", {"name": "mine"})
    page = response.content.decode()
    assert response.status_code == 403
    assert "Your role (viewer) can read this account but not change it." in page
    assert "foldrun.css" in page


def test_a_missing_page_is_a_plain_not_found_in_the_site_layout(alice_web):
    response = alice_web.get("/w/nowhere/")
    assert response.status_code == 404
    assert "There is nothing here." in response.content.decode()


def test_a_person_in_two_accounts_switches_which_one_the_pages_show(alice_web, alice, charlie, workspace):
    other = charlie.memberships.get().account
    Membership.objects.create(account=other, user=alice, role="viewer")
    assert "Other Co" in alice_web.get("/settings/").content.decode()
    response = alice_web.post("/settings/account", {"account": other.public_id}, follow=True)
    assert '<span class="account-name">Other Co</span>' in response.content.decode()
    assert alice_web.get("/w/rank-desk/").status_code == 404


def test_nobody_switches_to_an_account_they_are_not_in(alice_web, charlie):
    other = charlie.memberships.get().account
    assert alice_web.post("/settings/account", {"account": other.public_id}).status_code == 404
    assert '<span class="account-name">Acme</span>' in alice_web.get("/").content.decode()


def test_alice_changes_bobs_role_on_the_settings_page(alice_web, bob):
    membership = bob.memberships.get()
    assert f'action="/settings/members/{membership.public_id}/role"' in alice_web.get("/settings/").content.decode()
    response = alice_web.post(f"/settings/members/{membership.public_id}/role", {"role": "editor"}, follow=True)
    assert "bob@example.com is now editor." in response.content.decode()
    membership.refresh_from_db()
    assert membership.role == "editor"


def test_the_last_owner_cannot_step_down(alice_web, alice):
    membership = alice.memberships.get()
    response = alice_web.post(f"/settings/members/{membership.public_id}/role", {"role": "viewer"}, follow=True)
    assert "role: an account needs at least one owner; make someone else owner first." in response.content.decode()
    membership.refresh_from_db()
    assert membership.role == "owner"


def test_alice_removes_bob(alice_web, bob):
    membership = bob.memberships.get()
    alice_web.post(f"/settings/members/{membership.public_id}/remove")
    assert not Membership.objects.filter(pk=membership.pk).exists()


def test_bob_can_neither_change_roles_nor_remove_anyone(bob_web, alice, bob):
    page = bob_web.get("/settings/").content.decode()
    assert '/role"' not in page and '/remove"' not in page
    target = alice.memberships.get()
    assert bob_web.post(f"/settings/members/{target.public_id}/role", {"role": "viewer"}).status_code == 403
    assert bob_web.post(f"/settings/members/{target.public_id}/remove").status_code == 403
    assert Membership.objects.get(pk=target.pk).role == "owner"


def test_charlie_cannot_touch_a_member_of_another_account(charlie_web, bob):
    target = bob.memberships.get()
    assert charlie_web.post(f"/settings/members/{target.public_id}/role", {"role": "owner"}).status_code == 404
    assert charlie_web.post(f"/settings/members/{target.public_id}/remove").status_code == 404
    assert Membership.objects.get(pk=target.pk).role == "viewer"
