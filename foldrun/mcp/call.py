"""What a tool handler is given about the call: whose it is."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

from accounts.models import Account


@dataclass(frozen=True)
class McpCall:
    """One call on one account's records. `account` is the token's account (the spec's
    "project"); every query a handler makes is scoped to it. `user` is the token's owner;
    `token_id` its public id (`tok_…`), never the token itself. A tool declared `acts=True`
    is refused (`forbidden`) for a read-only member before its handler runs."""

    account: Account
    user: AbstractBaseUser
    token_id: str
    # The token owner's role in the account: a tool that changes something needs a role that may write.
    role: str = "owner"
    can_write: bool = True
