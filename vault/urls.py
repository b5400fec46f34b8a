from django.urls import path

from vault import pages

urlpatterns = [
    path("settings/secrets", pages.secrets_page, name="secrets"),
    path("settings/secrets/set", pages.set_secret, name="secret-set"),
    path("settings/secrets/connect", pages.connect_start, name="secret-connect"),
    path("settings/secrets/providers/check", pages.check_providers, name="providers-check"),
    path("settings/secrets/<str:name>/delete", pages.delete_secret, name="secret-delete"),
    path("w/<str:ws>/settings/secrets", pages.secrets_page, name="ws-secrets"),
    path("w/<str:ws>/settings/secrets/set", pages.set_secret, name="ws-secret-set"),
    path("w/<str:ws>/settings/secrets/connect", pages.connect_start, name="ws-secret-connect"),
    path("w/<str:ws>/settings/secrets/<str:name>/delete", pages.delete_secret, name="ws-secret-delete"),
]
