from django.urls import path

from vault import views

urlpatterns = [
    path("secrets", views.AccountSecretsView.as_view(), name="api-secrets"),
    path("secrets/<str:name>", views.AccountSecretView.as_view(), name="api-secret"),
    path("workspaces/<str:ws>/secrets", views.WorkspaceSecretsView.as_view(), name="api-ws-secrets"),
    path("workspaces/<str:ws>/secrets/<str:name>", views.WorkspaceSecretView.as_view(), name="api-ws-secret"),
    path("logins", views.LoginsView.as_view(), name="api-logins"),
    path("logins/<str:login_id>", views.LoginView.as_view(), name="api-login"),
    path("account/providers", views.ProvidersView.as_view(), name="api-account-providers"),
    path("probe", views.ProbeView.as_view(), name="api-probe"),
    path("workspaces/<str:ws>/probe", views.ProbeView.as_view(), name="api-ws-probe"),
    path("oauth/start", views.OAuthStartView.as_view(), name="api-oauth-start"),
    path("oauth/redirect-uri", views.OAuthRedirectView.as_view(), name="api-oauth-redirect-uri"),
    path("oauth/callback", views.OAuthCallbackView.as_view(), name="api-oauth-callback"),
]
