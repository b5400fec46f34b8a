"""Reading vault secrets, and keeping a signing secret's old value for a day.

Every secret notify needs (a webhook URL given as a secret name, a signing
secret, the account's RESEND_API_KEY and EMAIL_FROM) is read through
`read_secret`, at the moment it is used, never stored in a notify row in
the clear and never passed through the broker.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging

from django.conf import settings

from foldrun import sealing
from vault.actions import resolve_secrets

log = logging.getLogger(__name__)


def read_secret(account, workspace, name: str) -> str | None:
    """The value of secret `name`: the workspace's vault, then the account's.

    Returns None when neither has it.
    """
    resolved = resolve_secrets(workspace, [name], account=account)
    item = resolved.get(name)
    if item is None:
        if name in resolved.failed:
            log.warning("secret %s could not be read: %s", name, resolved.failed[name])
        return None
    return item.value


def link_key() -> bytes:
    """The install's key for tokens and fingerprints: rotating it kills every
    old approve/reject and unsubscribe link at once."""
    configured = getattr(settings, "FOLDRUN_LINK_KEY", "") or settings.SECRET_KEY
    return hashlib.sha256(("foldrun.notify:" + configured).encode()).digest()


def fingerprint(value: str) -> str:
    """A keyed hash of a URL or secret: comparable, not reversible."""
    return hmac.new(link_key(), value.encode(), hashlib.sha256).hexdigest()


def _keys() -> list[bytes]:
    keys = [base64.b64decode(k) for k in getattr(settings, "FOLDRUN_VAULT_KEYS", []) if k]
    if not keys:
        # No vault keys configured (a bare laptop): derive one from SECRET_KEY.
        keys = [hashlib.sha256(("foldrun.notify.store:" + settings.SECRET_KEY).encode()).digest()]
    return [key[:32].ljust(32, b"\0") for key in keys]


def seal(value: str) -> str:
    return base64.b64encode(sealing.seal(_keys()[0], value.encode(), b"notify")).decode()


def unseal(sealed: str) -> str | None:
    if not sealed:
        return None
    try:  # keys are newest first
        return sealing.open_sealed(_keys(), base64.b64decode(sealed), b"notify").decode()
    except (sealing.Unopened, ValueError):
        log.warning("a sealed notify value could not be opened with any vault key")
        return None
