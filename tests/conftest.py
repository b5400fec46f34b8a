"""The cast: alice owns the account, bob reads it, charlie has his own.

Every endpoint gets a test that charlie sees a 404 and bob cannot write.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from accounts.models import Account, ApiToken, Membership, Role, Workspace, hash_token


def _user(email: str):
    User = get_user_model()
    return User.objects.create_user(username=email.split("@")[0], email=email, password="correct horse battery")


@pytest.fixture
def account(db) -> Account:
    return Account.objects.create(name="Acme")


@pytest.fixture
def alice(account):
    user = _user("alice@example.com")
    Membership.objects.create(account=account, user=user, role=Role.OWNER)
    return user


@pytest.fixture
def bob(account):
    user = _user("bob@example.com")
    Membership.objects.create(account=account, user=user, role=Role.VIEWER)
    return user


@pytest.fixture
def charlie(db):
    user = _user("charlie@example.com")
    other = Account.objects.create(name="Other Co")
    Membership.objects.create(account=other, user=user, role=Role.OWNER)
    return user


@pytest.fixture
def workspace(account) -> Workspace:
    return Workspace.objects.create(account=account, name="rank-desk")


def client_for(user) -> APIClient:
    """An API client carrying a fresh bearer token for `user`'s first account."""
    membership = user.memberships.order_by("created_at").first()
    raw = ApiToken.mint()
    ApiToken.objects.create(user=user, account=membership.account, name="test", token_hash=hash_token(raw), hint=raw[:8])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def alice_api(alice) -> APIClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob) -> APIClient:
    return client_for(bob)


@pytest.fixture
def charlie_api(charlie) -> APIClient:
    return client_for(charlie)
