from django.urls import path

from . import views

urlpatterns = [
    path("version", views.VersionView.as_view(), name="api-version"),
    path("me", views.MeView.as_view(), name="api-me"),
    path("account", views.AccountView.as_view(), name="api-account"),
    path("auth/token", views.AuthTokenView.as_view(), name="api-auth-token"),
    path("workspaces", views.WorkspaceListView.as_view(), name="api-workspaces"),
    path("workspaces/<str:ws>", views.WorkspaceDetailView.as_view(), name="api-workspace"),
    path("members", views.MemberListView.as_view(), name="api-members"),
    path("members/<str:member_id>", views.MemberDetailView.as_view(), name="api-member"),
    path("invites", views.InviteListView.as_view(), name="api-invites"),
    path("invites/accept", views.InviteAcceptView.as_view(), name="api-invite-accept"),
    path("invites/<str:invite_id>", views.InviteDetailView.as_view(), name="api-invite"),
    path("tokens", views.TokenListView.as_view(), name="api-tokens"),
    path("tokens/<str:token_id>", views.TokenDetailView.as_view(), name="api-token"),
]
