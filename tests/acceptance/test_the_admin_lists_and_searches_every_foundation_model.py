"""The Django admin has a list and a search for each of the foundation's models, and staff can search each.
(Issue 2, item 7.)"""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client


FOUNDATION_MODELS = [
    "accounts.Account",
    "accounts.Membership",
    "accounts.Workspace",
    "accounts.Profile",
    "accounts.ApiToken",
    "accounts.Invite",
    "library.Changeset",
    "library.LibraryFile",
    "library.Revision",
]


def test_every_foundation_model_is_in_the_admin_with_a_list_and_search():
    registered = {model._meta.label: model_admin for model, model_admin in admin.site._registry.items()}
    lacking = {
        label: (registered[label].list_display, registered[label].search_fields)
        for label in FOUNDATION_MODELS
        if tuple(registered[label].list_display) == ("__str__",) or not registered[label].search_fields
    }
    assert lacking == {}


@pytest.mark.parametrize("label", FOUNDATION_MODELS)
def test_staff_search_each_foundation_list(world, label, django_user_model):
    staff = django_user_model.objects.create_user(
        username="staff", email="staff@example.com", password="x", is_staff=True, is_superuser=True
    )
    web = Client()
    web.force_login(staff)
    app, model = label.lower().split(".")
    response = web.get(f"/admin/{app}/{model}/?q=alice")
    assert response.status_code == 200
