"""The host's one reading of FOLDRUN_ALLOW_PRIVATE_URLS, passed in to foldrun.net."""

from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings
from django.core.signals import setting_changed

from foldrun import net


def _apply(**kwargs) -> None:
    if kwargs.get("setting", "FOLDRUN_ALLOW_PRIVATE_URLS") == "FOLDRUN_ALLOW_PRIVATE_URLS":
        net.configure(allow_private=bool(getattr(settings, "FOLDRUN_ALLOW_PRIVATE_URLS", False)))


class NetConfig(AppConfig):
    name = "foldrun.net"
    label = "foldrun_net"
    verbose_name = "outgoing connections"

    def ready(self) -> None:
        _apply()
        # A test that changes the setting (pytest-django's `settings`) changes the policy with it.
        setting_changed.connect(_apply, dispatch_uid="foldrun.net.setting")
