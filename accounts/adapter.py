"""allauth adapter: a new sign-up gets its own account unless an invite awaits it."""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter

from .actions import do_set_up_new_user


class AccountAdapter(DefaultAccountAdapter):
    def save_user(self, request, user, form, commit=True):
        user = super().save_user(request, user, form, commit=commit)
        if commit:
            do_set_up_new_user(user)
        return user
