"""Sign-in, sign-up and sign-out through allauth in the site's layout; the
staff admin; the demo seed."""

from __future__ import annotations

import html
import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from accounts.models import Account, ApiToken, Membership, Workspace, hash_token
from library.models import Changeset

pytestmark = pytest.mark.django_db


def test_the_sign_in_page_wears_the_site_layout(client):
    page = client.get("/accounts/login/").content.decode()
    assert '<link rel="stylesheet" href="/static/foldrun.css">' in page
    assert '<main class="narrow">' in page
    assert 'name="login"' in page and 'name="password"' in page and 'name="csrfmiddlewaretoken"' in page


def test_signing_in_by_email_lands_on_the_account_home(client, alice):
    response = client.post(
        "/accounts/login/", {"login": "alice@example.com", "password": "correct horse battery"}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/"
    assert '<span class="email">alice@example.com</span>' in response.content.decode()


def test_a_wrong_password_is_refused_on_the_same_page(client, alice):
    response = client.post("/accounts/login/", {"login": "alice@example.com", "password": "nope"})
    assert response.status_code == 200
    assert "The email address and/or password you specified are not correct." in response.content.decode()


def test_signing_up_gives_a_new_person_an_account_of_their_own(client):
    response = client.post(
        "/accounts/signup/",
        {"email": "erin@example.com", "password1": "a long enough secret 9", "password2": "a long enough secret 9"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/"
    membership = Membership.objects.get(user__email="erin@example.com")
    assert membership.role == "owner"
    assert f'<span class="account-name">{html.escape(membership.account.name)}</span>' in response.content.decode()


def test_signing_out_is_a_post_from_the_top_bar(alice):
    client = Client()
    client.force_login(alice)
    assert 'action="/accounts/logout/"' in client.get("/").content.decode()
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302


@pytest.fixture
def staff_web(db) -> Client:
    user = get_user_model().objects.create_superuser("staff", "staff@foldrun.dev", "staff password 123")
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "model",
    [
        "accounts/account",
        "accounts/membership",
        "accounts/workspace",
        "accounts/profile",
        "accounts/apitoken",
        "accounts/invite",
        "library/changeset",
        "library/libraryfile",
        "library/revision",
    ],
)
def test_staff_see_every_model_in_the_admin(staff_web, desk, model):
    assert staff_web.get(f"/admin/{model}/").status_code == 200


def test_the_admin_shows_a_tokens_hint_and_never_its_hash(staff_web, alice):
    raw = ApiToken.mint()
    token = ApiToken.objects.create(
        user=alice, account=alice.memberships.get().account, name="laptop", token_hash=hash_token(raw), hint=raw[:8]
    )
    listing = staff_web.get("/admin/accounts/apitoken/").content.decode()
    change = staff_web.get(f"/admin/accounts/apitoken/{token.pk}/change/").content.decode()
    for page in (listing, change):
        assert f"{raw[:8]}…" in page
        assert token.token_hash not in page
        assert raw not in page


def test_revisions_are_read_only_in_the_admin(staff_web, desk):
    changeset = Changeset.objects.filter(workspace=desk).first()
    page = staff_web.get(f"/admin/library/changeset/{changeset.pk}/change/").content.decode()
    assert 'name="_save"' not in page
    assert staff_web.post(f"/admin/library/changeset/{changeset.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Changeset.objects.filter(pk=changeset.pk).exists()


def test_people_who_are_not_staff_are_sent_to_the_admin_login(alice_web):
    response = alice_web.get("/admin/accounts/account/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_seed_demo_creates_the_demo_account_desk_and_library_and_prints_the_sign_in():
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    printed = out.getvalue()
    assert "sign in as demo@foldrun.dev / demo-password-123" in printed
    assert "http://" in printed
    account = Account.objects.get(name="Demo account")
    workspace = Workspace.objects.get(account=account, name="rank-desk")
    push = Changeset.objects.get(workspace=workspace)
    assert (push.kind, push.message, push.author.email) == ("push", "demo desk", "demo@foldrun.dev")
    assert Membership.objects.get(account=account, user__email="demo@foldrun.dev").role == "owner"
    client = Client()
    signed_in = client.post("/accounts/login/", {"login": "demo@foldrun.dev", "password": "demo-password-123"})
    assert signed_in["Location"] == "/"
    page = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get("/library/").content.decode())))
    assert "ranker in rank-desk grants it" in page
    assert "workspace rank-desk overrides it with its own copy rank-desk/tools/sql.md" in page
    assert "web gallery · current" in page


def test_seed_demo_twice_writes_nothing_the_second_time():
    call_command("seed_demo", stdout=io.StringIO())
    before = Changeset.objects.count()
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    assert Changeset.objects.count() == before
    assert Account.objects.filter(name="Demo account").count() == 1
    assert "demo data already up to date" in out.getvalue()
