"""Account actions: check_* validates and scopes, do_* changes data atomically."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from .models import Account, Invite, Membership, Profile, Role


@transaction.atomic
def do_set_up_new_user(user) -> Membership:
    """Give a new user their memberships: pending invites to their address,
    else an account of their own with them as owner."""
    Profile.objects.get_or_create(user=user)
    invites = list(
        Invite.objects.select_for_update().filter(
            email__iexact=user.email, accepted_at__isnull=True, expires_at__gt=timezone.now()
        )
    )
    first: Membership | None = None
    for invite in invites:
        membership, _ = Membership.objects.get_or_create(
            account=invite.account, user=user, defaults={"role": invite.role}
        )
        invite.accepted_at = timezone.now()
        invite.save(update_fields=["accepted_at"])
        first = first or membership
    if first is None:
        account = Account.objects.create(name=f"{user.email.split('@')[0]}'s account")
        first = Membership.objects.create(account=account, user=user, role=Role.OWNER)
    Profile.objects.filter(user=user).update(current_account=first.account)
    return first
