"""Dashboard pages of the accounts app (the API lives in api_urls.py)."""

from django.urls import path

from . import pages

urlpatterns = [
    path("", pages.home, name="home"),
    path("settings/", pages.settings_page, name="settings"),
    path("settings/account", pages.switch_account, name="account-switch"),
    path("settings/search-engine", pages.set_search_engine, name="search-engine-set"),
    path("workspaces/create", pages.create_workspace, name="workspace-create"),
    path("settings/members/invite", pages.invite_member, name="member-invite"),
    path("settings/members/<str:member_id>/role", pages.change_role, name="member-role"),
    path("settings/members/<str:member_id>/remove", pages.remove_member, name="member-remove"),
    path("settings/tokens/create", pages.create_token, name="token-create"),
    path("settings/tokens/created", pages.token_created, name="token-created"),
    path("settings/tokens/<str:token_id>/revoke", pages.revoke_token, name="token-revoke"),
]
